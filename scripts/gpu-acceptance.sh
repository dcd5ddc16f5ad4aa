#!/usr/bin/env bash
# Checks trainbench against the real NVIDIA driver in a few minutes, on a GPU server:
# devices found; a run on CUDA with nvml+smi+dcgmi whose three listeners agree on power,
# utilization and memory; the energy counter against integrated power; two collocated runs
# whose energy shares add up to the GPU's; MPS on the last GPU when there are two or more;
# MIG where a GPU is in MIG mode. Prints a table of checks with figures; exits non-zero
# when a check fails. Without a GPU it says so and exits 0.
#
#   scripts/gpu-acceptance.sh [path/to/trainbench]
#
# CI runs it against the simulated GPU of sim/ (TRAINBENCH_NVML_LIBRARY, TRAINBENCH_SIM_SCENARIO
# and sim/bin first on PATH), so it cannot rot. The workload is a small CUDA-or-CPU loop
# (tb_gpu_load in python/, or `sleep` when no interpreter with PyTorch is around).
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
tb="${1:-$here/build/trainbench}"
[ -x "$tb" ] || { echo "gpu-acceptance: no trainbench at $tb (build first: scripts/build.sh)" >&2; exit 2; }
work="$(mktemp -d /tmp/trainbench-gpu-acceptance-XXXXXX)"
trap 'rm -rf "$work"' EXIT
store="$work/acceptance.db"
failed=0
printf '%-46s %-6s %s\n' "check" "result" "figures"
check() {  # name, ok (0/1), figures
  local result=PASS
  [ "$2" -eq 0 ] || { result=FAIL; failed=1; }
  printf '%-46s %-6s %s\n' "$1" "$result" "$3"
}
skip() { printf '%-46s %-6s %s\n' "$1" "SKIP" "$2"; }

devices="$("$tb" devices 2>&1)"
gpus="$(printf '%s\n' "$devices" | awk '/^index/{on=1; next} on && /^[0-9]+ /{n++} /^listeners/{on=0} END{print n+0}')"
if [ "$gpus" -eq 0 ]; then
  echo "gpu-acceptance: no NVIDIA GPU here (trainbench devices: $(printf '%s' "$devices" | grep -m1 GPUs))"
  exit 0
fi
check "devices found" 0 "$gpus GPU(s); $(printf '%s\n' "$devices" | awk '/^driver/{print "driver", $2}')"

# The workload: seconds of GPU work (PyTorch on CUDA where present), else a sleep.
py="${TRAINBENCH_PYTHON:-/usr/bin/python3}"
load=("$py" -c 'import sys,time
try:
    import torch; d="cuda" if torch.cuda.is_available() else "cpu"; x=torch.randn(2048,2048,device=d)
except Exception: torch=None
end=time.time()+float(sys.argv[1])
while time.time()<end:
    if torch: x=(x@x).tanh()
    else: time.sleep(0.05)' )
[ -x "$py" ] || load=(sleep)

stat() {  # run, metric, labels-substring -> "count mean"
  "$tb" export --store "$store" "$1" --metric "$2" --format csv 2>/dev/null |
    awk -F, -v want="$3" 'NR>1 && index($0, want) {s+=$NF; n++} END{if (n) printf "%d %.6g\n", n, s/n; else print "0 0"}'
}
within() {  # a b tolerance(ratio) -> 0 when |a-b| <= tol*max(|a|,|b|)
  awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN{d=a-b; if (d<0) d=-d; m=(a<0?-a:a); if ((b<0?-b:b)>m) m=(b<0?-b:b); exit !(d<=t*m+1e-9)}'
}

"$tb" run --store "$store" -q -n listeners -i 500ms -l nvml+smi+dcgmi --devices 0 -- "${load[@]}" 8 > /dev/null 2>&1
for pair in "gpu.power.draw_watts:0.10" "gpu.utilization.gpu_ratio:0.25" "gpu.memory.used_bytes:0.05"; do
  metric=${pair%%:*}; tol=${pair##*:}
  read -r nn nv <<< "$(stat listeners "$metric" "listener" | head -1)"
  read -r cn nvml_v <<< "$("$tb" export --store "$store" listeners --metric "$metric" --format csv 2>/dev/null |
    awk -F, 'NR>1 && $0 !~ /listener=/ {s+=$NF; n++} END{if (n) printf "%d %.6g\n", n, s/n; else print "0 0"}')"
  read -r sn smi_v <<< "$(stat listeners "$metric" "listener=smi")"
  read -r dn dcgmi_v <<< "$(stat listeners "$metric" "listener=dcgmi")"
  if [ "$cn" -eq 0 ] || [ "$sn" -eq 0 ]; then
    skip "$metric: nvml vs smi" "nvml $cn samples, smi $sn"
  else
    within "$nvml_v" "$smi_v" "$tol"; check "$metric: nvml vs smi (±$tol)" $? "nvml $nvml_v, smi $smi_v"
  fi
  if [ "$dn" -gt 0 ] && [ "$cn" -gt 0 ]; then
    within "$nvml_v" "$dcgmi_v" "$tol"; check "$metric: nvml vs dcgmi (±$tol)" $? "nvml $nvml_v, dcgmi $dcgmi_v"
  fi
  : "$nn" "$nv"
done

# Energy counter against power integrated over the run.
series() { "$tb" export --store "$store" "$1" --metric "$2" --format csv 2>/dev/null | awk -F, -v want="$3" 'NR>1 && $0 !~ /listener=/ && index($0, want)'; }
# CSV columns: run_id, metric, labels, time_ms, step, value.
counter="$(series listeners gpu.energy.consumed_joules gpu=0 | awk -F, 'NR==1{a=$NF; t0=$4} {b=$NF; t1=$4} END{if (NR>1) print b-a, t0, t1}')"
integrated="$(series listeners gpu.power.draw_watts gpu=0 | awk -F, 'NR>1{s+=(p+$NF)/2*($4-t)/1000} {p=$NF; t=$4} END{print s+0}')"
if [ -n "$counter" ]; then
  read -r joules _ _ <<< "$counter"
  within "$joules" "$integrated" 0.15; check "energy counter vs integrated power (±15%)" $? "counter $joules J, integrated $integrated J"
else
  skip "energy counter vs integrated power" "no energy counter on GPU 0"
fi

# Two collocated runs: their shares of GPU 0's energy add up to the GPU's.
"$tb" run --store "$store" -q -n shareA -w share -i 500ms -l nvml --devices 0 -- "${load[@]}" 6 > /dev/null 2>&1 &
"$tb" run --store "$store" -q -n shareB -w share -i 500ms -l nvml --devices 0 -- "${load[@]}" 6 > /dev/null 2>&1
wait
last() { series "$1" "$2" gpu=0 | awk -F, 'NR==1{a=$NF} {b=$NF} END{print b-a+0}'; }
a="$(last shareA proc.gpu.energy_joules)"; b="$(last shareB proc.gpu.energy_joules)"
# The GPU's energy over the time either run ran (one may start later on a loaded machine):
# both runs' power samples merged in time order.
whole="$( { series shareA gpu.power.draw_watts gpu=0; series shareB gpu.power.draw_watts gpu=0; } | sort -t, -k4,4n |
  awk -F, 'NR>1 && $4>t {s+=(p+$NF)/2*($4-t)/1000} NR==1 || $4>t {p=$NF; t=$4} END{print s+0}')"
if [ "$(awk -v a="$a" -v b="$b" 'BEGIN{print (a+b>0)}')" = 1 ]; then
  sum="$(awk -v a="$a" -v b="$b" 'BEGIN{print a+b}')"
  within "$sum" "$whole" 0.25; check "collocated shares add up to the GPU (±25%)" $? "A $a J + B $b J = $sum J; GPU $whole J"
else
  skip "collocated shares add up to the GPU" "no per-process readings (NVML lists no processes to this user)"
fi

# MPS on the last GPU that is not in MIG mode, where there are two or more.
last_gpu="$(printf '%s\n' "$devices" | awk '/^index/{on=1; next} on && /^[0-9]+ / && !/MIG mode/{g=$1} /^listeners/{on=0} END{print g}')"
if [ "$gpus" -ge 2 ] && [ -n "$last_gpu" ] && [ "$last_gpu" -gt 0 ] && command -v nvidia-cuda-mps-control > /dev/null; then
  printf 'Experiment,Workload,Status,Run,Devices,Collocation,File,Listeners,Params\nacceptance,mps,,,%s,MPS,load.py,nvml,4\nacceptance,mps,,,%s,MPS,load.py,nvml,4\n' \
    "$last_gpu" "$last_gpu" > "$work/mps.csv"
  printf '%s\n' "${load[2]}" > "$work/load.py"
  if command -v cuda-visible-devices > /dev/null; then  # the simulated GPU's CUDA stand-in
    printf 'import subprocess, sys\nsys.exit(subprocess.run(["cuda-visible-devices"]).returncode)\n' > "$work/load.py"
  fi
  "$tb" schedule --store "$store" --python "$py" "$work/mps.csv" > "$work/mps.log" 2>&1
  code=$?
  check "MPS on GPU $last_gpu: both runs finish" "$code" "$(grep -c FINISHED "$work/mps.csv") of 2 rows FINISHED"
else
  skip "MPS on the last GPU" "needs two GPUs and nvidia-cuda-mps-control"
fi

# MIG, where a GPU is in MIG mode with a device.
mig_uuid="$(printf '%s\n' "$devices" | awk '/^ +MIG /{for (i=1;i<=NF;i++) if ($i ~ /^MIG-/) {print $i; exit}}')"
if [ -n "$mig_uuid" ]; then
  "$tb" run --store "$store" -q -n mig -i 500ms -l smi+dcgmi --devices "$mig_uuid" -- "${load[@]}" 4 > /dev/null 2>&1
  watched="$("$tb" export --store "$store" mig --metric gpu.power.draw_watts --format csv 2>/dev/null | awk -F, 'NR>1' | grep -o 'gpu=[0-9]*' | sort -u | tr '\n' ' ')"
  [ "$(printf '%s' "$watched" | wc -w)" -eq 1 ]; check "MIG run watches only its GPU" $? "$mig_uuid -> ${watched:-nothing}"
else
  skip "MIG" "no GPU in MIG mode with a MIG device"
fi

[ "$failed" -eq 0 ] && echo "gpu-acceptance: all checks passed" || echo "gpu-acceptance: some checks FAILED"
exit "$failed"
