"""radt.schedule_external(args, df, group_name=None): radT 0.2.29's external scheduling, an
experiment given as a table instead of a file, run by trainbench.

`args` are radT's options as on its command line (["-r"], ["-t", "30"]); `df` a pandas
DataFrame (or a list of dicts) with an experiment file's columns (Experiment, Workload,
Status, Run, Devices, Collocation, File, Listeners, Params, and Name where given). The table
is written to a CSV beside the working directory's files and scheduled as `trainbench
[ARGS] table.csv` would; the Status and Run cells trainbench writes back are copied into
`df` (a DataFrame is updated in place), as radT updates its frame. `group_name` nests every
run under a parent run of that name (or that run id), as radT's group does. Returns
trainbench's exit code. The trainbench command is TRAINBENCH_BINARY, else `trainbench` on PATH.
"""

import csv
import os
import shutil
import subprocess
import tempfile


def _rows(df):
    if hasattr(df, "to_dict"):
        return df.to_dict("records")
    return [dict(r) for r in df]


def schedule_external(args, df, group_name=None):
    binary = os.environ.get("TRAINBENCH_BINARY") or shutil.which("trainbench")
    if not binary:
        raise RuntimeError(
            "radt.schedule_external: no trainbench command found: put it on PATH or set TRAINBENCH_BINARY"
        )
    rows = _rows(df)
    if not rows:
        return 0
    columns = list(rows[0].keys())
    for needed in ("Status", "Run"):
        if needed not in columns:
            columns.append(needed)
    fd, path = tempfile.mkstemp(suffix=".csv", prefix="radt-external-", dir=os.getcwd())
    try:
        with os.fdopen(fd, "w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=columns)
            writer.writeheader()
            for row in rows:
                writer.writerow(
                    {k: "" if row.get(k) is None or str(row.get(k)) == "nan" else row.get(k) for k in columns}
                )
        group = ["--group", str(group_name)] if group_name else []
        code = subprocess.call([binary] + [str(a) for a in args] + group + [path])
        with open(path, newline="") as f:
            written = list(csv.DictReader(f))
    finally:
        os.unlink(path)
    for i, row in enumerate(written[: len(rows)]):
        for key in ("Status", "Run"):
            if hasattr(df, "at"):
                df.at[df.index[i], key] = row.get(key, "")
            elif isinstance(df[i], dict):
                df[i][key] = row.get(key, "")
    return code
