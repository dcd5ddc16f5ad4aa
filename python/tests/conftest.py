"""What the client's tests share: a small tracking endpoint in the test's process that records
every request, and the metrics it was sent; a store with one run made by the built binary."""

import http.server
import json
import os
import re
import subprocess
import sys
import threading

import pytest


class Endpoint(http.server.ThreadingHTTPServer):
    """Records every request; answers `status` (200 by default)."""

    def __init__(self):
        self.requests = []
        self.status = 200
        super().__init__(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def uri(self):
        return "http://127.0.0.1:%d" % self.server_address[1]


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        is_json = self.command != "PUT"  # an artifact's upload is its bytes
        self.server.requests.append((self.path, dict(self.headers), json.loads(body or b"{}") if is_json else body))
        answer = b"{}" if self.server.status == 200 else b'{"message": "refused on purpose"}'
        self.send_response(self.server.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    do_PUT = do_POST

    def log_message(self, *args):
        pass


@pytest.fixture
def endpoint(monkeypatch):
    for name in (
        "TRAINBENCH_TRACKING_URI",
        "TRAINBENCH_RUN_ID",
        "MLFLOW_TRACKING_URI",
        "MLFLOW_RUN_ID",
        "TRAINBENCH_TOKEN",
        "MLFLOW_TRACKING_TOKEN",
        "RANK",
        "TRAINBENCH_MAX_EPOCHS",
    ):
        monkeypatch.delenv(name, raising=False)
    server = Endpoint()
    yield server
    server.shutdown()


def metrics_sent(server):
    return [m for path, _, body in server.requests if path.endswith("/log-batch") for m in body["metrics"]]


BINARY = os.environ.get("TRAINBENCH_BINARY")
PYTHON_DIR = os.path.join(os.path.dirname(__file__), "..")

SCRIPT = """
import time, trainbench
with trainbench.Run() as run:
    run.log_param("lr", 0.1)
    for i in range(50):
        if i % 25 == 0:
            run.epoch()
        run.log_metric("loss", 2.0 / (i + 1), step=i * 10)
        time.sleep(0.01)
"""


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """A store with one run: a loss logged at steps 0, 10, ..., and the top listener's samples."""
    tmp = tmp_path_factory.mktemp("read")
    db = str(tmp / "t.db")
    script = tmp / "loss.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, PYTHONPATH=PYTHON_DIR)
    done = subprocess.run(
        [
            BINARY,
            "run",
            "--store",
            db,
            "-q",
            "-n",
            "loss",
            "-l",
            "top",
            "-i",
            "100ms",
            "--",
            sys.executable,
            str(script),
        ],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    run_id = re.search(r"run ([0-9a-f]{32})", done.stderr).group(1)
    return db, run_id
