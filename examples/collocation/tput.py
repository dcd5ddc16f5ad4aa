"""A stand-in for training: CPU work in steps of 20 ms, logging the samples it got through a
second (as a training loop logs its throughput), for --seconds seconds."""
import argparse
import time

import trainbench

parser = argparse.ArgumentParser()
parser.add_argument("--seconds", type=float, default=8)
parser.add_argument("--batch", type=int, default=64)
parser.add_argument("--seed", type=int, default=0)
args = parser.parse_args()
with trainbench.Run() as run:
    end = time.time() + args.seconds
    step = 0
    while time.time() < end:
        started = time.perf_counter()
        x = 0
        while time.perf_counter() - started < 0.02:
            x += 1
        run.log_metric("throughput_samples_per_second", args.batch / (time.perf_counter() - started), step=step)
        step += 1
