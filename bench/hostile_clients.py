#!/usr/bin/env python3
"""What hostile clients cost `trainbench serve` (docs/SECURITY.md, docs/PERFORMANCE.md).

Run as: /usr/bin/python3 bench/hostile_clients.py build/trainbench

Starts `trainbench serve` on a fresh store on loopback, then
  1. opens 3 connections that each announce a 1 GiB upload (Content-Length) and send 100
     bytes, and reads the server's resident memory before and after;
  2. opens 150 connections that each send one byte of a request head (slowloris) and
     times an ordinary request beside them.
Prints one line per figure.
"""
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request


def resident_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def main():
    binary = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/trainbench")
    with tempfile.TemporaryDirectory() as d:
        store = os.path.join(d, "trainbench.db")
        subprocess.run(
            [binary, "run", "-q", "-l", "top", "--store", store, "--", "true"], check=True, stdout=subprocess.DEVNULL
        )
        port = free_port()
        server = subprocess.Popen(
            [binary, "serve", "--store", store, "--port", str(port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        url = "http://127.0.0.1:%d" % port
        try:
            for _ in range(100):
                try:
                    urllib.request.urlopen(url + "/api/v1/experiments").read()
                    break
                except OSError:
                    time.sleep(0.05)
            before = resident_kib(server.pid)
            announcing = []
            for _ in range(3):
                s = socket.create_connection(("127.0.0.1", port))
                s.sendall(
                    b"PUT /api/2.0/mlflow-artifacts/artifacts/0/x/artifacts/f HTTP/1.1\r\n"
                    b"Host: x\r\nContent-Length: 1073741824\r\n\r\n" + b"a" * 100
                )
                announcing.append(s)
            time.sleep(1)
            after = resident_kib(server.pid)
            print(
                "3 connections announcing 1 GiB each: resident memory %.1f MB -> %.1f MB"
                % (before / 1024, after / 1024)
            )
            slow = []
            for _ in range(150):
                s = socket.create_connection(("127.0.0.1", port))
                s.sendall(b"G")
                slow.append(s)
            time.sleep(1)
            start = time.monotonic()
            urllib.request.urlopen(url + "/api/v1/experiments").read()
            print("a request beside 150 connections holding 1-byte heads: %.3f s" % (time.monotonic() - start))
            for s in announcing + slow:
                s.close()
        finally:
            server.terminate()
            server.wait()


if __name__ == "__main__":
    main()
