"""The report's collocation table rebuilt from DataFrames, as a notebook would: each run's
throughput over its steady state (the phases trainbench found), per workload the mean per
run and the sum of runs that trained together, and the speed-up of a collocated workload
against the same runs alone.

    /usr/bin/python3 examples/collocation_table.py STORE EXPERIMENT [--check]

With --check it compares each figure with `trainbench report EXPERIMENT --format csv`,
and each run's throughput with the one `store.runs()` gives (within 2 %), and exits
non-zero where one differs. Needs pandas (python3-pandas).
"""

import io
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import pandas  # noqa: E402
import trainbench  # noqa: E402

THROUGHPUT = "train.throughput_samples_per_second"


def steady_throughput(store, runs):
    """Per run, the mean of its throughput a second at a time over its steady state, the
    seconds of other phases inside it (idle, stalls, dips, the script's own) left out."""
    phases = store.phases(runs)
    seconds = store.series(runs, THROUGHPUT, every="1s")
    out = {}
    for run_id, points in seconds.groupby("run_id", observed=True):
        own = phases[phases["run_id"] == run_id]
        steady = own[own["kind"] == "steady"]
        if steady.empty:
            continue
        start, end = steady["start"].iloc[0], steady["end"].iloc[0]
        keep = (points["time"] >= start) & (points["time"] < end)
        for _, p in own[~own["kind"].isin(["steady", "warm-up", "start-up", "after"])].iterrows():
            # A second is left out when a phase covers half of it or more.
            second = points["time"]
            covered = second.clip(lower=p["start"]) - (second + pandas.Timedelta(seconds=1)).clip(upper=p["end"])
            keep &= ~(-covered >= pandas.Timedelta(milliseconds=500))
        out[run_id] = points.loc[keep, "value"].mean()
    return out


def collocation_table(store, experiment):
    runs = store.runs(experiment=experiment)
    # runs["throughput"] is the store's own figure (its analysis); this one is rebuilt.
    runs["rebuilt"] = runs["id"].map(steady_throughput(store, runs))
    table = runs.groupby("workload").agg(runs=("id", "size"), per_run=("rebuilt", "mean"), combined=("rebuilt", "sum"))
    # Against the same runs alone: a workload of one run of the same script with the same
    # params, its seed and device aside (what `trainbench report` calls the same run).
    params = sorted(c for c in runs.columns if c.startswith("params.") and c not in ("params.seed", "params.device"))
    script = runs["command"].str.extract(r"([^/\s]+\.py)\b", expand=False).fillna(runs["command"])
    runs["identity"] = script + runs[params].astype(str).agg("|".join, axis=1) if params else script
    alone = runs[runs["workload"].map(table["runs"]) == 1].set_index("identity")["rebuilt"]
    speedups = {}
    for workload, members in runs.groupby("workload"):
        if len(members) < 2 or not members["identity"].isin(alone.index).all():
            continue
        speedups[workload] = table.loc[workload, "combined"] / alone[members["identity"]].mean()
    table["speed-up"] = pandas.Series(speedups, dtype=float)
    return table, runs


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    store_path, experiment = sys.argv[1], sys.argv[2]
    with trainbench.open(store_path) as store:
        table, runs = collocation_table(store, experiment)
        print(table.round(3).to_string())
        if "--check" not in sys.argv:
            return
        binary = os.environ.get("TRAINBENCH_BINARY", "trainbench")
        csv = subprocess.run(
            [binary, "report", "--store", store_path, experiment, "--format", "csv"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        report = pandas.read_csv(io.StringIO(csv)).set_index("workload")
        wrong = []
        for workload, row in table.iterrows():
            for ours, theirs in [
                ("per_run", "samples/s per run"),
                ("combined", "samples/s combined"),
                ("speed-up", "speed-up"),
            ]:
                want = report.loc[workload, theirs]
                have = row[ours]
                if pandas.isna(want) and (pandas.isna(have) or ours != "per_run"):
                    continue
                if pandas.isna(want) or pandas.isna(have) or abs(have - want) > 0.02 * abs(want):
                    wrong.append("%s %s: %s from the DataFrames, %s in the report" % (workload, ours, have, want))
        for _, run in runs.iterrows():  # each run's, against the store's runs() table
            if abs(run["rebuilt"] - run["throughput"]) > 0.02 * abs(run["throughput"]):
                wrong.append(
                    "run %s: %s samples/s rebuilt, %s in runs()" % (run["name"], run["rebuilt"], run["throughput"])
                )
        print("\n".join(wrong) if wrong else "every figure within 2 % of trainbench report's and runs()'")
        sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
