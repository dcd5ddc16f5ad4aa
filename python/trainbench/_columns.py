"""trainbench's columnar export read into columns: numpy arrays viewing the answer's bytes
(numpy.frombuffer, no copy) when numpy is installed, else Python lists; a pandas DataFrame
when pandas is.

The format (src/query/export.h): b"TBCOLS1\\n", then a frame a series: its header's length
(uint32 little endian), the header (JSON: run_id, metric, labels, unit, count, steps,
start_ms), zeros up to a multiple of 8 bytes from the start, `count` int64 time_ms,
`count` float64 values and, when "steps", `count` int64 steps (NO_STEP, the smallest
int64: none; a script may log negative steps)."""

import array
import csv
import io
import json
import re
import struct
import sys

NO_STEP = -(2**63)  # a point without a step, in the format and in plain numpy columns

MAGIC = b"TBCOLS1\n"

try:  # optional: the client is importable without them
    import numpy
except ImportError:  # pragma: no cover - exercised by the tests that hide it
    numpy = None
try:
    import pandas
except ImportError:
    pandas = None


class Series:
    """One series of the answer: its header's fields and its three columns."""

    def __init__(self, head, times, values, steps):
        self.run_id = head["run_id"]
        self.metric = head["metric"]
        self.labels = head["labels"]
        self.unit = head.get("unit", "")
        self.start_ms = head.get("start_ms")
        self.times, self.values, self.steps = times, values, steps

    def __len__(self):
        return len(self.times)


def _column(buffer, code, count, offset):
    if numpy is not None:
        return numpy.frombuffer(buffer, dtype="<i8" if code == "q" else "<f8", count=count, offset=offset)
    column = array.array(code)
    column.frombytes(bytes(memoryview(buffer)[offset : offset + 8 * count]))
    if sys.byteorder != "little":
        column.byteswap()
    return column.tolist()


def read_series(buffer):
    """The series of a columnar answer (bytes or bytearray), in its order."""
    if bytes(buffer[: len(MAGIC)]) != MAGIC:
        raise ValueError("not trainbench's columnar export (it starts with %r)" % bytes(buffer[:8]))
    out = []
    offset = len(MAGIC)
    while offset < len(buffer):
        (length,) = struct.unpack_from("<I", buffer, offset)
        head = json.loads(bytes(buffer[offset + 4 : offset + 4 + length]))
        offset += 4 + length
        offset += -offset % 8
        count = head["count"]
        times = _column(buffer, "q", count, offset)
        values = _column(buffer, "d", count, offset + 8 * count)
        offset += 16 * count
        steps = None
        if head.get("steps"):
            steps = _column(buffer, "q", count, offset)
            offset += 8 * count
        out.append(Series(head, times, values, steps))
    return out


def _split_labels(labels):
    return dict(part.split("=", 1) for part in labels.split(",") if "=" in part)


def long_table(series):
    """One row a point: run_id, metric, the labels as columns (gpu, pid, listener, ...),
    time (UTC; Unix ms in plain lists), elapsed (seconds since the run started), step (missing: NO_STEP in
    numpy columns, None in lists, <NA> in a DataFrame), value. A DataFrame with pandas, with each metric's
    unit in .attrs["units"]; else a dict of columns (numpy arrays, else lists)."""
    keys = sorted({k for s in series for k in _split_labels(s.labels)})
    units = {s.metric: s.unit for s in series}
    if numpy is not None:
        return _numpy_table(series, keys, units)
    table = {name: [] for name in ["run_id", "metric"] + keys + ["time", "elapsed", "step", "value"]}
    for s in series:
        n = len(s)
        labels = _split_labels(s.labels)
        table["run_id"] += [s.run_id] * n
        table["metric"] += [s.metric] * n
        for k in keys:
            table[k] += [labels.get(k)] * n
        table["time"] += s.times  # Unix ms, without numpy
        start = s.start_ms if s.start_ms is not None else (s.times[0] if n else 0)
        table["elapsed"] += [(t - start) / 1000.0 for t in s.times]
        table["step"] += [None if v == NO_STEP else v for v in s.steps] if s.steps is not None else [None] * n
        table["value"] += s.values
    table["units"] = units
    return table


def _numpy_table(series, keys, units):
    """Columns without a copy where one is not needed: the values view the answer's bytes;
    a string a series (run, metric, labels) is a category, its codes a constant per series."""
    lengths = [len(s) for s in series]
    total = sum(lengths)

    def joined(parts, dtype):
        return parts[0] if len(parts) == 1 else numpy.concatenate(parts) if parts else numpy.empty(0, dtype)

    def codes_of(per_series):  # the index of each row's value among the sorted distinct ones
        categories = sorted({v for v in per_series if v is not None})
        small = numpy.int8 if len(categories) < 127 else numpy.int32
        parts = [
            numpy.full(n, categories.index(v) if v is not None else -1, dtype=small)
            for v, n in zip(per_series, lengths)
        ]
        return categories, joined(parts, small)

    times = joined([s.times for s in series], numpy.int64)
    elapsed = numpy.empty(total, numpy.float64)
    at = 0
    for s, n in zip(series, lengths):
        start = s.start_ms if s.start_ms is not None else (int(s.times[0]) if n else 0)
        numpy.subtract(s.times, start, out=elapsed[at : at + n], casting="unsafe")
        at += n
    elapsed *= 1e-3
    steps = joined(
        [s.steps if s.steps is not None else numpy.full(len(s), NO_STEP, numpy.int64) for s in series], numpy.int64
    )
    values = joined([s.values for s in series], numpy.float64)
    strings = {"run_id": [s.run_id for s in series], "metric": [s.metric for s in series]}
    for k in keys:
        strings[k] = [_split_labels(s.labels).get(k) for s in series]
    if pandas is None:
        table = {}
        for name, per_series in strings.items():
            categories, codes = codes_of(per_series)
            table[name] = numpy.array(categories + [None], dtype=object)[codes]
        table.update({"time": times.view("datetime64[ms]"), "elapsed": elapsed, "step": steps, "value": values})
        table["units"] = units
        return table
    frame = {}
    for name, per_series in strings.items():
        categories, codes = codes_of(per_series)
        frame[name] = pandas.Categorical.from_codes(codes, categories=categories)
    # As nanoseconds, pandas's unit, wrapped without parsing (to_datetime took 1.5 s for 10M).
    frame["time"] = pandas.arrays.DatetimeArray(
        numpy.multiply(times, 1_000_000).view("datetime64[ns]"), dtype=pandas.DatetimeTZDtype(tz="UTC")
    )
    frame["elapsed"] = elapsed
    frame["step"] = pandas.arrays.IntegerArray(steps, steps == NO_STEP)  # no step: <NA>
    frame["value"] = values
    table = pandas.DataFrame(frame, copy=False)
    table.attrs["units"] = units
    return table


def table(rows, times=(), columns=()):
    """Rows (dicts) as one table: a DataFrame with `times` as UTC datetimes (from Unix ms)
    with pandas, else a dict of lists (`columns`, then every key of any row; None where a
    row lacks it): no rows is a table with its columns and none of its rows. Built a column
    at a time (a DataFrame of 10,000 dicts of 100 keys took 0.75 s)."""
    n = len(rows)
    data = {name: [None] * n for name in columns}
    for i, row in enumerate(rows):
        for k, v in row.items():
            column = data.get(k)
            if column is None:
                column = data[k] = [None] * n
            column[i] = v
    if pandas is None:
        return data
    frame = pandas.DataFrame(data, columns=list(data))
    for name in times:
        if name in frame:
            frame[name] = pandas.to_datetime(frame[name], unit="ms", utc=True)
    return frame


def csv_table(text):
    """CSV text (a header line, then rows) as a table; numbers as numbers."""
    if pandas is not None:
        return pandas.read_csv(io.StringIO(text))
    rows = list(csv.DictReader(io.StringIO(text)))

    def number(v):
        try:
            return float(v) if v not in ("", None) else None
        except ValueError:
            return v

    return {k: [number(r[k]) for r in rows] for k in (rows[0].keys() if rows else [])}


RUNS_MAGIC = b"TBRUNS1\n"


def run_table(buffer):
    """/api/v1/runs?format=columnar as a table, a row a run: a DataFrame with start and end
    as UTC datetimes and each number column's unit in .attrs["units"]; without pandas a dict
    of columns (numbers as numpy arrays, NaN for none, else lists; start and end in Unix
    ms) with the units under "units"."""
    if bytes(buffer[: len(RUNS_MAGIC)]) != RUNS_MAGIC:
        raise ValueError("not trainbench's table of runs (it starts with %r)" % bytes(buffer[:8]))
    offset = len(RUNS_MAGIC)
    (length,) = struct.unpack_from("<I", buffer, offset)
    head = json.loads(bytes(buffer[offset + 4 : offset + 4 + length]))
    offset += 4 + length
    offset += -offset % 8
    count, units, columns = head["count"], head["units"], {}
    for name in head["columns"]:
        if name in units:
            columns[name] = _column(buffer, "d", count, offset)
            offset += 8 * count
        else:
            columns[name] = head["text"][name]
    if pandas is None:
        columns["units"] = units
        return columns
    for name in ("start", "end"):  # whole ms as nanoseconds (through floats they came out 1 ms off)
        ms = columns[name]
        missing = numpy.isnan(ms)
        ns = numpy.where(missing, 0, ms).astype(numpy.int64) * 1_000_000
        columns[name] = pandas.DatetimeIndex(
            numpy.where(missing, numpy.datetime64("NaT"), ns.view("datetime64[ns]"))
        ).tz_localize("UTC")
    frame = pandas.DataFrame(columns)  # one block of numbers (separate columns warn on insertion)
    frame.attrs["units"] = {k: v for k, v in units.items() if k not in ("start", "end")}
    return frame


def parse_every(every):
    """ "1s", "500ms", "2min", "1h" or seconds as a number -> milliseconds (at least 1)."""
    if isinstance(every, (int, float)) and every > 0:
        return max(1, int(round(every * 1000)))
    found = re.fullmatch(r"\s*([0-9.]+)\s*(ms|s|min|h)\s*", str(every))
    if not found or float(found.group(1)) <= 0:
        raise ValueError("every takes a duration such as '1s', '500ms', '2min', '1h' or seconds, not %r" % (every,))
    return max(1, int(round(float(found.group(1)) * {"ms": 1, "s": 1000, "min": 60000, "h": 3600000}[found.group(2)])))


def resample(s, every_ms):
    """A series on a regular grid from its run's start: a row an interval that holds points,
    at the interval's start, with their mean (NaN values left out) and the interval's last
    step."""
    start = s.start_ms if s.start_ms is not None else (int(s.times[0]) if len(s) else 0)
    head = {"run_id": s.run_id, "metric": s.metric, "labels": s.labels, "unit": s.unit, "start_ms": start}
    if numpy is None:
        sums, last_step = {}, {}
        for i, (t, v) in enumerate(zip(s.times, s.values)):
            b = (t - start) // every_ms
            total, n = sums.get(b, (0.0, 0))
            sums[b] = (total + v, n + 1) if v == v else (total, n)
            if s.steps is not None:
                last_step[b] = s.steps[i]
        keys = sorted(sums)
        values = [sums[b][0] / sums[b][1] if sums[b][1] else float("nan") for b in keys]
        steps = [last_step[b] for b in keys] if s.steps is not None else None
        return Series(head, [start + b * every_ms for b in keys], values, steps)
    buckets = (s.times - start) // every_ms
    keys, first = numpy.unique(buckets, return_index=True)
    index = numpy.searchsorted(keys, buckets)
    finite = ~numpy.isnan(s.values)
    counts = numpy.bincount(index[finite], minlength=len(keys))
    sums = numpy.bincount(index[finite], weights=s.values[finite], minlength=len(keys))
    with numpy.errstate(invalid="ignore", divide="ignore"):
        values = sums / counts
    steps = None
    if s.steps is not None:
        last = numpy.append(first[1:], len(buckets)) - 1
        steps = s.steps[last]
    return Series(head, start + keys * every_ms, values, steps)
