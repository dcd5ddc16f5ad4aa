"""Reading a trainbench store from Python: the same calls on a local store (a SQLite file, a
postgresql:// URI) and on `trainbench serve` (http://host:port, with its token).

    import trainbench
    store = trainbench.open("trainbench.db")     # or "postgresql://...", "http://host:8080"
    runs = store.runs(experiment="resnet", workload="bs*", status="FINISHED")
    s = store.series(runs, ["gpu.power.draw_watts", "train.loss"])
    store.events(runs); store.phases(runs); store.report("resnet")

Points travel in trainbench's columnar export (typed arrays, read without parsing): from a
local store through the `trainbench export` binary into a mapped file, from a server through
/api/v1/export. The rest is the server's JSON API: a local store starts a private
`trainbench serve` on loopback the first time it needs one (it answers this user's processes
only, known from the connection: no secret on a command line), stopped by close() or at exit.
Every request has a time-out and every answer a size limit: a server that stalls or sends
without end is an error, never a hang. Tables are pandas DataFrames where pandas is installed, else dicts of
columns (_columns.py).
"""

import atexit
import difflib
import http.client
import io
import json
import mmap
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

from . import _columns, _transport

RUN_ID = re.compile(r"^[0-9a-f]{32}$")


class StoreError(Exception):
    """What went wrong, in the words of the command or server that said it, and what to do."""


def open(source, token=None, binary=None, timeout=120, max_bytes=4 << 30):  # noqa: A001 - as in the docs
    """A store to read: a SQLite file, a postgresql:// URI, or http(s)://host:port of
    `trainbench serve` (`token`: its access token, else TRAINBENCH_TOKEN). `binary`: the
    trainbench command for a local store (default: TRAINBENCH_BINARY, else on PATH).
    `timeout`: seconds a server's answer may take in all; `max_bytes`: the largest answer."""
    if not isinstance(source, str) or not source:
        raise StoreError("trainbench.open takes a SQLite file, a postgresql:// URI or http://host:port")
    if source.startswith(("http://", "https://")):
        return _Remote(source, token or os.environ.get("TRAINBENCH_TOKEN"), timeout, max_bytes)
    if not source.startswith(("postgresql://", "postgres://")) and not os.path.exists(source):
        raise StoreError("no store at %s (a SQLite file, a postgresql:// URI or http://host:port)" % source)
    return _Local(source, binary or os.environ.get("TRAINBENCH_BINARY") or shutil.which("trainbench"))


_SCRIPT_PREFIX = "train."  # how the store keeps a script's metric apart from the listeners'


def _named_as_logged(part, asked):
    """A script's metric named as the script logged it ("loss", not the store's train.loss)."""
    if part.metric.startswith(_SCRIPT_PREFIX) and asked != part.metric:
        part.metric = part.metric[len(_SCRIPT_PREFIX) :]


def _names(items, what):
    if isinstance(items, str):
        return [items]
    if isinstance(items, dict) and "id" in items:  # runs() without pandas
        return list(items["id"])
    if hasattr(items, "columns") and "id" in items.columns:  # runs()'s DataFrame
        return list(items["id"])
    items = list(items)
    if not items or not all(isinstance(i, str) and i for i in items):
        raise StoreError("name the %s as a string or a list of strings" % what)
    return items


class _Store:
    _all_runs = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        pass

    def _json(self, path, query=None):
        return json.loads(self._get(path, query or {}))

    def _ids(self, runs):
        """Whole run ids for ids, id prefixes or names; an ambiguous prefix or an unknown
        name says which runs there are."""
        names = _names(runs, "runs")
        if all(RUN_ID.match(n) for n in names):
            return names
        if self._all_runs is None:
            self._all_runs = self._json("/api/v1/runs", {"summary": "0"})["runs"]
        out = []
        for n in names:
            if RUN_ID.match(n):
                out.append(n)
                continue
            hits = [r for r in self._all_runs if r["id"].startswith(n)] or [r for r in self._all_runs if r["name"] == n]
            if len(hits) > 1 and hits[0]["name"] != n:
                raise StoreError(
                    "'%s' is the start of %d runs: %s"
                    % (n, len(hits), ", ".join("%s (%s)" % (r["id"][:12], r["name"]) for r in hits[:10]))
                )
            if not hits:
                close = difflib.get_close_matches(n, [r["name"] for r in self._all_runs], 5)
                raise StoreError("no run '%s'%s" % (n, "; names close to it: " + ", ".join(close) if close else ""))
            out.append(max(hits, key=lambda r: r["start_ms"])["id"])  # a name: its newest run
        return out

    def series(self, runs, metrics, every=None, budget=None):
        """Every point of `metrics` (a name or a list) of `runs` (ids, id prefixes, names, or
        a runs() table) as one long table: run_id, metric, the labels as columns, time (UTC),
        elapsed (s since the run started), step, value (_columns.long_table). `every` ("1s",
        "500ms", "2min" or seconds): a row an interval from each run's start, the mean of
        its points, rather than every point. `budget` (N points a series): the points a chart
        of N draws, thinned as the chart thins them (each of N/4 buckets keeps its first,
        lowest, highest and last point: every spike stays, at its own time), without steps,
        values to the chart's 6 significant digits."""
        every_ms = _columns.parse_every(every) if every is not None else None
        if budget is not None and (not isinstance(budget, int) or budget < 4):
            raise StoreError("budget is a number of points a series, at least 4")
        ids = self._ids(runs)
        parts = []
        for metric in _names(metrics, "metrics"):
            try:
                got = (
                    self._thinned(ids, metric, budget) if budget else _columns.read_series(self._columnar(ids, metric))
                )
                for part in got:  # a script's metric by the name it was logged as, as asked
                    _named_as_logged(part, metric)
                parts += got
            except StoreError as e:
                if "metric" not in str(e):
                    raise
                known = [m["metric"] for m in self._json("/api/v1/metrics", {"runs": ",".join(ids)})["metrics"]]
                close = difflib.get_close_matches(metric, known, 5, 0.4)
                raise StoreError("%s%s" % (e, "; metrics close to it: " + ", ".join(close) if close else "")) from None
        if every_ms:
            parts = [_columns.resample(p, every_ms) for p in parts]
        return _columns.long_table(parts)

    def _thinned(self, ids, metric, budget):
        """The chart's own thinning, from the server's /api/v1/series (x as Unix ms)."""
        answer = self._json(
            "/api/v1/series", {"runs": ",".join(ids), "metric": metric, "x": "wall", "budget": budget, "exact": 1}
        )
        listed = self._json("/api/v1/runs", {"ids": ",".join(ids), "summary": "0"})["runs"]  # one read for all
        starts = {r["id"]: r["start_ms"] for r in listed}
        out = []
        for s in answer["series"]:
            head = {
                "run_id": s["run"],
                "metric": s.get("metric", metric),
                "labels": s["labels"],
                "unit": s.get("unit", ""),
            }
            head["start_ms"] = starts.get(s["run"])
            values = [float("nan") if v is None else v for v in s["y"]]
            times = [int(x) for x in s["x"]]
            if _columns.numpy is not None:
                times, values = _columns.numpy.array(times, dtype="int64"), _columns.numpy.array(
                    values, dtype="float64"
                )
            out.append(_columns.Series(head, times, values, None))
        return out

    def runs(self, experiment=None, workload=None, status=None, lifecycle="active"):
        """One row a run: id, name, experiment, workload, letter, status, lifecycle, start,
        end, duration (s), command, devices, collocation, host, nodes, params.*, tags.*
        (MLflow's mlflow.* among them); per metric M (from one source: nvml, else smi, else
        dcgmi) M.mean, M.min and M.max over the run; per metric K the script logged, by that
        name, K.mean, K.min, K.max (NaN left out) and metrics.K, MLflow's latest value; from
        its analysis steady_seconds, throughput, epoch_seconds, energy_joules (its GPUs'),
        cpu_energy_joules, samples,
        energy_per_sample_joules, training_seconds (how long it trained) and per key metric
        M.steady_mean, M.steady_p50 and M.steady_p95 over the steady state, as the report
        gives them. `workload` may be a pattern ("bs*"); `lifecycle`: "active" (MLflow's default: not the runs deleted
        through its API), "deleted" or "all"."""
        query = {"format": "columnar", "lifecycle": lifecycle}
        for key, value in (("experiment", experiment), ("workload", workload), ("status", status)):
            if value:
                query[key] = value
        return _columns.run_table(self._get("/api/v1/runs", query))

    def events(self, runs):
        """One row an event: run_id, time, elapsed (s since the run started), kind, label."""
        ids = self._ids(runs)
        answer = self._json("/api/v1/events", {"runs": ",".join(ids)})["runs"]
        rows = [
            dict(run_id=r["run"], time=e["time_ms"], elapsed=e.get("relative_s"), kind=e["kind"], label=e["label"])
            for r in answer
            for e in r["events"]
        ]
        return _columns.table(rows, ["time"], ["run_id", "time", "elapsed", "kind", "label"])

    def phases(self, runs):
        """One row a phase trainbench found in a run: run_id, kind, start, end, detail."""
        rows = []
        for run_id in self._ids(runs):
            for p in self._json("/api/v1/runs/%s/phases" % run_id)["phases"]:
                rows.append(
                    dict(
                        run_id=run_id, kind=p["kind"], start=p["start_ms"], end=p["end_ms"], detail=p.get("detail", "")
                    )
                )
        return _columns.table(rows, ["start", "end"], ["run_id", "kind", "start", "end", "detail"])

    def report(self, experiment):
        """`trainbench report`'s table of an experiment, a row a workload."""
        text = self._get("/api/v1/experiments/%s/report" % urllib.parse.quote(experiment, safe=""), {"format": "csv"})
        return _columns.csv_table(text.decode())


class _Busy(Exception):
    """The server answered 429: too many large reads at once."""


class _Remote(_Store):
    def __init__(self, url, token, timeout=120, max_bytes=4 << 30):
        self.url, self.token, self.timeout, self.max_bytes = url.rstrip("/"), token, timeout, max_bytes

    def _read(self, answer, limit):
        try:
            return _transport.read_bounded(answer, limit, self.timeout)
        except _transport.AnswerTooLarge:
            raise StoreError(
                "%s sent more than %d bytes; ask for fewer runs or points, or raise "
                "trainbench.open(..., max_bytes=)" % (self.url, limit)
            ) from None
        except TimeoutError:
            raise StoreError(
                "%s took longer than %d s to answer (trainbench.open(..., timeout=))" % (self.url, self.timeout)
            ) from None

    def _get(self, path, query):
        """The answer's body; a server busy with other large reads (429) is asked again, each
        second, within the time-out."""
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                return self._get_once(path, query)
            except _Busy:
                if time.monotonic() + 1 > deadline:
                    raise StoreError(
                        "%s stayed busy with other large reads for %d s (HTTP 429); ask again "
                        "later or for fewer runs" % (self.url, self.timeout)
                    ) from None
                time.sleep(1)

    def _get_once(self, path, query):
        request = urllib.request.Request(self.url + path + ("?" + urllib.parse.urlencode(query) if query else ""))
        if self.token:
            request.add_header("Authorization", "Bearer " + self.token)
        try:
            with urllib.request.urlopen(request, timeout=min(self.timeout, 60)) as answer:
                return self._read(answer, self.max_bytes)
        except urllib.error.HTTPError as e:
            text = self._read(e, 1 << 20).decode(errors="replace").strip()
            if e.code == 429:
                raise _Busy() from None
            try:  # the server's JSON error: its message
                text = json.loads(text).get("message", text)
            except ValueError:
                pass
            raise StoreError("%s (HTTP %d from %s)" % (text, e.code, self.url)) from None
        except urllib.error.URLError as e:
            raise StoreError("cannot reach %s: %s" % (self.url, e.reason)) from None
        except (OSError, http.client.HTTPException) as e:  # a time-out, a broken or malformed answer
            raise StoreError(
                "%s did not answer as a trainbench server: %s" % (self.url, e or type(e).__name__)
            ) from None

    def _columnar(self, ids, metric):
        return self._get("/api/v1/export", {"runs": ",".join(ids), "metric": metric, "format": "columnar"})


class _Local(_Store):
    def __init__(self, source, binary):
        if not binary:
            raise StoreError("no trainbench command found: put it on PATH or set TRAINBENCH_BINARY")
        self.source, self.binary = source, binary
        self._server = None
        self._remote = None

    def _get(self, path, query):
        if self._remote is None:  # a private server on loopback, for the JSON calls
            # No token: it answers this user's processes only (the peer's uid, from the
            # connection), and a token on its command line would be in every user's `ps`.
            self._server = subprocess.Popen(
                [self.binary, "serve", "--store", self.source, "--port", "0"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            line = self._server.stdout.readline()
            found = re.search(r"http://127\.0\.0\.1:\d+", line)
            if not found:
                self.close()
                raise StoreError("trainbench serve did not start: %s" % (line.strip() or "no answer"))
            self._remote = _Remote(found.group(0), None)
            atexit.register(self.close)
        return self._remote._get(path, query)

    def close(self):
        """Stops the private server, if one was started."""
        if self._server is not None:
            self._server.terminate()
            self._server.wait()
            self._server.stdout.close()
            self._server.stderr.close()
            self._server = self._remote = None

    def _columnar(self, ids, metric):
        """The binary's export written to a file in memory (/dev/shm) and mapped: no pipe to
        copy 240 MB through (a pipe cost 0.4 s of 10M points here), and the columns view the
        mapping. The file is gone once mapped; the mapping lives as long as the columns."""
        fd, path = tempfile.mkstemp(suffix=".tbcols", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
        os.close(fd)
        try:
            command = [self.binary, "export", "--store", self.source, "--format", "columnar", "--metric", metric]
            done = subprocess.run(command + ["-o", path] + ids, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            if done.returncode != 0:
                raise StoreError(done.stderr.decode(errors="replace").strip().replace("trainbench: error: ", ""))
            with io.open(path, "rb") as f:
                return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        finally:
            os.unlink(path)
