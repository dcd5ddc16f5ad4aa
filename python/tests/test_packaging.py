"""Installing trainbench's Python packages with pip, into a real virtual environment
(offline: --no-index, the machine's setuptools): the client never touches an installed
radT's files, and the radT-compatible module, for machines without radT, serves `import
radt` and `python -m radt`. Run: pytest-3 python/tests."""

import os
import subprocess
import sys
import textwrap

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PYTHON_DIR = os.path.dirname(HERE)


def _venv(tmp_path):
    venv = tmp_path / "venv"
    made = subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", str(venv)], capture_output=True, text=True
    )
    if made.returncode != 0:
        pytest.skip("no venv module with pip here (Debian: python3-venv): " + made.stderr[-200:])
    return venv / "bin" / "python"


def _pip_install(python, path, cwd):
    done = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-index", "--no-build-isolation", str(path)],
        capture_output=True,
        text=True,
        cwd=cwd,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def _fake_radt(tmp_path):
    """A stand-in for radT's own distribution: its `radt` package and `python -m radt`."""
    src = tmp_path / "radt-src"
    (src / "radt").mkdir(parents=True)
    (src / "pyproject.toml").write_text(
        textwrap.dedent(
            """\
        [build-system]
        requires = ["setuptools>=61"]
        build-backend = "setuptools.build_meta"
        [project]
        name = "radt"
        version = "0.2.29"
        [tool.setuptools]
        packages = ["radt"]
        """
        )
    )
    (src / "radt" / "__init__.py").write_text("THE_REAL_RADT = True\n")
    (src / "radt" / "__main__.py").write_text("print('the real radT')\n")
    return src


def _site_file(python, module):
    return subprocess.run(
        [str(python), "-c", f"import {module}; print({module}.__file__)"], capture_output=True, text=True, cwd="/"
    ).stdout.strip()


def test_installing_the_client_beside_radt_leaves_radts_files_alone(tmp_path):
    python = _venv(tmp_path)
    _pip_install(python, _fake_radt(tmp_path), tmp_path)
    radt_init = _site_file(python, "radt")
    before = open(radt_init).read()
    _pip_install(python, PYTHON_DIR, tmp_path)
    assert open(radt_init).read() == before
    assert _site_file(python, "trainbench").endswith("trainbench/__init__.py")
    ran = subprocess.run([str(python), "-m", "radt"], capture_output=True, text=True, cwd="/")
    assert ran.stdout.strip() == "the real radT", ran.stdout + ran.stderr
    listed = subprocess.run([str(python), "-m", "pip", "show", "-f", "trainbench"], capture_output=True, text=True)
    assert "radt/" not in listed.stdout, listed.stdout


def test_the_radt_compatible_module_serves_import_radt_and_python_m_radt(tmp_path):
    python = _venv(tmp_path)
    _pip_install(python, PYTHON_DIR, tmp_path)
    _pip_install(python, os.path.join(PYTHON_DIR, "radt-compat"), tmp_path)
    imported = subprocess.run(
        [str(python), "-c", "import radt, trainbench; print(radt.run.RADTBenchmark.__name__)"],
        capture_output=True,
        text=True,
        cwd="/",
    )
    assert imported.stdout.strip() == "RADTBenchmark", imported.stderr
    # `python -m radt` runs trainbench (here: its --version, through TRAINBENCH_BINARY).
    binary = os.environ.get("TRAINBENCH_BINARY")
    if not binary:
        pytest.skip("TRAINBENCH_BINARY names no trainbench to run")
    ran = subprocess.run(
        [str(python), "-m", "radt", "--version"],
        capture_output=True,
        text=True,
        cwd="/",
        env={**os.environ, "TRAINBENCH_BINARY": binary},
    )
    assert ran.returncode == 0 and "trainbench" in ran.stdout, ran.stdout + ran.stderr
    # Nothing was left in the source tree by the builds.
    assert not os.path.exists(os.path.join(PYTHON_DIR, "radt-compat", "radt"))
