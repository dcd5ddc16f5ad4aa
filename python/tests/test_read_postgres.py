"""trainbench.open("postgresql://...") against a real PostgreSQL server (Debian's, a
throw-away cluster under /tmp, as tests/helpers/postgres_cluster.h starts one): a run
recorded there by `trainbench run`, read back with the calls a local SQLite store takes."""

import glob
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile

import pytest

BINARY = os.environ.get("TRAINBENCH_BINARY")
PYTHON_DIR = os.path.join(os.path.dirname(__file__), "..")
INITDB = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
pytestmark = pytest.mark.skipif(not BINARY or not INITDB, reason="needs TRAINBENCH_BINARY and Debian's postgresql")


@pytest.fixture(scope="module")
def postgres():
    bin_dir = os.path.dirname(INITDB[-1])
    work = tempfile.mkdtemp(prefix="tb-pg-py-")
    as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    if os.geteuid() == 0:
        shutil.chown(work, "postgres")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    data = os.path.join(work, "data")
    subprocess.run(
        as_user + [INITDB[-1], "-D", data, "-A", "trust", "-U", "postgres", "--no-sync"],
        check=True,
        capture_output=True,
    )
    options = "-k %s -p %d -c listen_addresses=127.0.0.1 -c fsync=off" % (work, port)
    subprocess.run(
        as_user
        + [
            os.path.join(bin_dir, "pg_ctl"),
            "-D",
            data,
            "-l",
            os.path.join(work, "server.log"),
            "-w",
            "-o",
            options,
            "start",
        ],
        check=True,
        capture_output=True,
    )
    try:
        subprocess.run(
            [
                "psql",
                "-q",
                "-X",
                "-h",
                "127.0.0.1",
                "-p",
                str(port),
                "-U",
                "postgres",
                "-c",
                "CREATE DATABASE notebook",
            ],
            check=True,
            capture_output=True,
        )
        yield "postgresql://postgres@127.0.0.1:%d/notebook" % port
    finally:
        subprocess.run(
            as_user + [os.path.join(bin_dir, "pg_ctl"), "-D", data, "-m", "fast", "-w", "stop"], capture_output=True
        )
        shutil.rmtree(work, ignore_errors=True)


def test_a_postgresql_store_reads_as_a_sqlite_file_does(postgres, tmp_path):
    import trainbench

    script = tmp_path / "loss.py"
    script.write_text(
        "import trainbench\nwith trainbench.Run() as run:\n"
        "    run.log_param('lr', 0.1)\n"
        "    for i in range(30):\n        run.log_metric('loss', 1.0 / (i + 1), step=i)\n"
    )
    done = subprocess.run(
        [
            BINARY,
            "run",
            "--store",
            postgres,
            "-q",
            "-e",
            "pg",
            "-n",
            "pgloss",
            "-l",
            "top",
            "--",
            sys.executable,
            str(script),
        ],
        env=dict(os.environ, PYTHONPATH=PYTHON_DIR),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    run_id = re.search(r"run ([0-9a-f]{32})", done.stderr).group(1)
    with trainbench.open(postgres) as store:
        runs = store.runs(experiment="pg")
        assert list(runs["id"]) == [run_id] and list(runs["params.lr"]) == ["0.1"]
        loss = store.series("pgloss", "train.loss")  # by name, as on SQLite
        assert list(loss["value"]) == [1.0 / (i + 1) for i in range(30)]
        assert [int(s) for s in loss["step"]] == list(range(30))
