"""Reading a trainbench store from Python: the same calls on a local store (a SQLite file, a
postgresql:// URI) and on `trainbench serve` (http://host:port, with its token).

    import trainbench
    store = trainbench.open("trainbench.db")     # or "postgresql://...", "http://host:8080"
    s = store.series(["3711ea73", "8936596b"], ["gpu.power.draw_watts", "train.loss"])

Points travel in trainbench's columnar export (typed arrays, read without parsing): from a
local store through the `trainbench export` binary, from a server through /api/v1/export.
"""

import io
import json
import mmap
import os
import shutil
import subprocess
import tempfile
import urllib.error
import urllib.parse
import urllib.request

from . import _columns


class StoreError(Exception):
    """What went wrong, in the words of the command or server that said it."""


def open(source, token=None, binary=None):  # noqa: A001 - trainbench.open, as in the docs
    """A store to read: a SQLite file, a postgresql:// URI, or http(s)://host:port of
    `trainbench serve` (`token`: its access token, else TRAINBENCH_TOKEN). `binary`: the
    trainbench command for a local store (default: TRAINBENCH_BINARY, else on PATH)."""
    if not isinstance(source, str) or not source:
        raise StoreError("trainbench.open takes a SQLite file, a postgresql:// URI or http://host:port")
    if source.startswith(("http://", "https://")):
        return _Remote(source, token or os.environ.get("TRAINBENCH_TOKEN"))
    if not source.startswith(("postgresql://", "postgres://")) and not os.path.exists(source):
        raise StoreError("no store at %s (a SQLite file, a postgresql:// URI or http://host:port)" % source)
    return _Local(source, binary or os.environ.get("TRAINBENCH_BINARY") or shutil.which("trainbench"))


def _names(items, what):
    if isinstance(items, str):
        return [items]
    if hasattr(items, "columns") and "id" in getattr(items, "columns", []):  # store.runs()'s DataFrame
        return list(items["id"])
    items = list(items)
    if not items or not all(isinstance(i, str) and i for i in items):
        raise StoreError("name the %s as a string or a list of strings" % what)
    return items


class _Store:
    def series(self, runs, metrics):
        """Every point of `metrics` (a name or a list) of `runs` (ids, id prefixes or names
        on a local store; whole ids on a server), as one long table (_columns.long_table)."""
        parts = []
        for metric in _names(metrics, "metrics"):
            parts += _columns.read_series(self._columnar(_names(runs, "runs"), metric))
        return _columns.long_table(parts)


class _Local(_Store):
    def __init__(self, source, binary):
        if not binary:
            raise StoreError("no trainbench command found: put it on PATH or set TRAINBENCH_BINARY")
        self.source, self.binary = source, binary

    def _columnar(self, runs, metric):
        """The binary's export written to a file in memory (/dev/shm) and mapped: no pipe to
        copy 240 MB through (a pipe cost 0.4 s of 10M points here), and the columns view the
        mapping. The file is gone once mapped; the mapping lives as long as the columns."""
        fd, path = tempfile.mkstemp(suffix=".tbcols", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
        os.close(fd)
        try:
            command = [self.binary, "export", "--store", self.source, "--format", "columnar", "--metric", metric]
            done = subprocess.run(command + ["-o", path] + runs, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            if done.returncode != 0:
                raise StoreError(done.stderr.decode(errors="replace").strip().replace("trainbench: error: ", ""))
            with io.open(path, "rb") as f:
                return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        finally:
            os.unlink(path)


class _Remote(_Store):
    def __init__(self, url, token):
        self.url, self.token = url.rstrip("/"), token

    def _get(self, path, query):
        request = urllib.request.Request(self.url + path + "?" + urllib.parse.urlencode(query))
        if self.token:
            request.add_header("Authorization", "Bearer " + self.token)
        try:
            with urllib.request.urlopen(request) as answer:
                return answer.read()
        except urllib.error.HTTPError as e:
            text = e.read().decode(errors="replace").strip()
            try:  # the server's JSON error: its message
                text = json.loads(text).get("message", text)
            except ValueError:
                pass
            raise StoreError("%s (HTTP %d from %s)" % (text, e.code, self.url)) from None
        except urllib.error.URLError as e:
            raise StoreError("cannot reach %s: %s" % (self.url, e.reason)) from None

    def _columnar(self, runs, metric):
        return self._get("/api/v1/export", {"runs": ",".join(runs), "metric": metric, "format": "columnar"})
