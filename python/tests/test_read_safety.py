"""What `trainbench.open` hands other users and hostile servers: a local store's private
server has no secret on its command line and answers only this user; a server that stalls or
sends without end raises StoreError instead of holding or growing the client."""

import os
import socket
import subprocess
import sys
import threading
import time

import pytest

from conftest import BINARY, PYTHON_DIR
from test_read import column

sys.path.insert(0, PYTHON_DIR)
pytestmark = pytest.mark.skipif(not BINARY, reason="TRAINBENCH_BINARY (the built trainbench) not set")

ASK_AS_NOBODY = """
import sys, urllib.request, urllib.error
try:
    urllib.request.urlopen(sys.argv[1] + "/api/v1/runs", timeout=10)
    print("answered")
except urllib.error.HTTPError as e:
    print(e.code)
"""


def test_a_local_stores_private_server_holds_no_secret_and_answers_only_this_user(store):
    import trainbench

    db, run_id = store
    opened = trainbench.open(db, binary=BINARY)
    assert run_id in list(column(opened.runs(), "id"))
    with open("/proc/%d/cmdline" % opened._server.pid, "rb") as f:
        argv = f.read().split(b"\0")
    assert not any(b"token" in a for a in argv), argv  # what any user's `ps` shows
    if os.geteuid() != 0:
        pytest.skip("another user is tried only as root")
    stranger = subprocess.run(
        ["runuser", "-u", "nobody", "--", "/usr/bin/python3", "-c", ASK_AS_NOBODY, opened._remote.url],
        capture_output=True,
        text=True,
    )
    assert stranger.stdout.strip() == "403", stranger.stdout + stranger.stderr
    opened.close()


def hostile_server(answer):
    """A server on loopback that reads a request and then calls answer(connection)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    stop = threading.Event()

    def serve():
        connection, _ = listener.accept()
        connection.recv(65536)
        try:
            answer(connection, stop)
        except OSError:
            pass
        connection.close()

    threading.Thread(target=serve, daemon=True).start()
    return "http://127.0.0.1:%d" % listener.getsockname()[1], stop


def endless(connection, stop):
    connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
    piece = b"%x\r\n%s\r\n" % (1 << 16, b"[" * (1 << 16))
    while not stop.is_set():
        connection.sendall(piece)


def trickle(connection, stop):
    connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n")
    while not stop.is_set():
        connection.sendall(b" ")
        time.sleep(0.5)


def test_a_server_sending_without_end_is_stopped_at_the_size_limit():
    import trainbench

    url, stop = hostile_server(endless)
    with pytest.raises(trainbench.StoreError, match="more than 4194304 bytes"):
        trainbench.open(url, max_bytes=4 << 20).runs()
    stop.set()


def test_a_server_trickling_its_answer_is_stopped_at_the_time_out():
    import trainbench

    url, stop = hostile_server(trickle)
    started = time.monotonic()
    with pytest.raises(trainbench.StoreError, match="longer than 2 s"):
        trainbench.open(url, timeout=2).runs()
    stop.set()
    assert time.monotonic() - started < 30  # not the hours the trickle would take


def test_one_run_with_latin1_bytes_hides_no_run(store, tmp_path):
    import shutil
    import sqlite3

    import trainbench

    db, run_id = store
    copy = str(tmp_path / "latin1.db")
    shutil.copy(db, copy)
    with sqlite3.connect(copy) as c:  # an old store, or one written by a tool in Latin-1
        c.execute(
            "UPDATE runs SET name = CAST(X'636166E9' AS TEXT),"
            " command = CAST(X'707974686F6E33207472E96E2E7079' AS TEXT) WHERE id = ?",
            (run_id,),
        )
    opened = trainbench.open(copy, binary=BINARY)
    try:
        runs = opened.runs()
        assert list(column(runs, "id")) == [run_id]
        assert list(column(runs, "name")) == ["caf\\xe9"]  # the byte shown, as trainbench shows it everywhere
    finally:
        opened.close()
