"""The parsing half of radT's host listeners, for bench/sampler_cost: radT reads `top -b`
and `ps -L` output as text in Python and picks its numbers out line by line. This does
the same work on captured output (without sending anything to MLflow) and prints the
CPU microseconds it spent per top refresh and per ps call.

    python3 bench/radt_parse.py TOP_OUTPUT PS_OUTPUT PS_CALLS
"""
import sys
import time


def parse_top(lines):
    """Per refresh: memory and swap lines, and CPU/memory percent of python processes."""
    samples, cpu, mem, refreshes = [], 0.0, 0.0, 0
    for line in lines:
        line = line.lstrip()
        if line.startswith(("top", "Tasks", "%", "PID")) or not line:
            if line.startswith("top"):
                refreshes += 1
                samples.append((cpu, mem))
                cpu, mem = 0.0, 0.0
            continue
        words = line.split()
        if words[0] in ("KiB", "MiB") and len(words) > 8:
            if words[1] == "Mem":
                samples.append(float(words[7]) / 1000)
            elif words[1] == "Swap:":
                samples.append(float(words[6]) / 1000)
        elif len(words) > 11 and words[11].startswith("python"):
            cpu += float(words[8])
            mem += float(words[9])
    return refreshes, samples


def parse_ps(text):
    out = []
    for line in text.splitlines()[1:]:
        pid, tid, psr, cpu, mem = [w for w in line.strip().split(" ") if w.strip()]
        out.append((f"PS - CPU {psr}", float(cpu)))
        out.append((f"PS - MEM {psr}", float(mem)))
    return out


def main():
    top_lines = open(sys.argv[1]).read().splitlines(keepends=True)
    ps_text = open(sys.argv[2]).read()
    ps_calls = int(sys.argv[3])
    start = time.process_time()
    refreshes, _ = parse_top(top_lines)
    top_us = (time.process_time() - start) * 1e6 / max(refreshes, 1)
    start = time.process_time()
    for _ in range(ps_calls):
        parse_ps(ps_text)
    ps_us = (time.process_time() - start) * 1e6 / ps_calls
    print(f"{top_us:.1f} {ps_us:.1f}")


if __name__ == "__main__":
    main()
