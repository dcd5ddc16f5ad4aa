#!/usr/bin/env bash
# Checks trainbench against the real NVIDIA driver in a few minutes, on a GPU server:
# devices found; a run on CUDA with nvml+smi+dcgmi whose three listeners agree on power,
# utilization and memory; the energy counter against integrated power; two collocated runs
# whose energy shares add up to the GPU's; two MPS clients on one GPU whose energy shares
# add up to the GPU's counter; the nvml listener's CPU per GPU per tick against its budget
# (0.3 ms); a workload of two runs training together (TB_ACCEPTANCE_TRAIN_SECONDS of steps
# each, 30 by default) whose report (overlap, steady throughput, speed-up) matches the steps
# the script logged; MIG where a GPU is in MIG mode. Prints a table of checks with figures
# and a table of what each NVML call costs on this driver; exits non-zero when a check
# fails. Without a GPU it says so and exits 0.
#
#   scripts/gpu-acceptance.sh [path/to/trainbench]
#
# TB_ACCEPTANCE_KEEP=DIR keeps the store and the schedulers' logs in DIR (to look at them
# on another machine: scripts/gpu-pack.sh says how a build travels to a GPU server).
#
# CI runs it against the simulated GPU of sim/ (TRAINBENCH_NVML_LIBRARY, TRAINBENCH_SIM_SCENARIO
# and sim/bin first on PATH), so it cannot rot. The workload is a small CUDA-or-CPU loop
# (tb_gpu_load in python/, or `sleep` when no interpreter with PyTorch is around).
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
tb="${1:-$here/build/trainbench}"
[ -x "$tb" ] || { echo "gpu-acceptance: no trainbench at $tb (build first: scripts/build.sh)" >&2; exit 2; }
work="$(mktemp -d /tmp/trainbench-gpu-acceptance-XXXXXX)"
keep="${TB_ACCEPTANCE_KEEP:-}"
trap '[ -z "$keep" ] || { mkdir -p "$keep" && cp -r "$work"/. "$keep"/; }; rm -rf "$work"' EXIT
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

# run, metric, labels-substring ("" for nvml's rows, which carry no listener=) -> "count median".
# The median, not the mean: the listeners sample at different moments, so a mean weighs the
# seconds a value changes (memory as the process allocates, the last tick after it left)
# differently for each; on a real H200 the means of memory used were 8 % apart while every
# steady sample agreed to 0.03 %.
stat() {
  "$tb" export --store "$store" "$1" --metric "$2" --format csv 2>/dev/null |
    awk -F, -v want="$3" 'NR>1 && (want == "" ? $0 !~ /listener=/ : index($0, want)) {print $NF}' | sort -g |
    awk '{v[NR]=$1} END{if (NR) printf "%d %.6g\n", NR, (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2); else print "0 0"}'
}
within() {  # a b tolerance(ratio) -> 0 when |a-b| <= tol*max(|a|,|b|)
  awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN{d=a-b; if (d<0) d=-d; m=(a<0?-a:a); if ((b<0?-b:b)>m) m=(b<0?-b:b); exit !(d<=t*m+1e-9)}'
}

"$tb" run --store "$store" -q -n listeners -i 500ms -l nvml+smi+dcgmi --devices 0 -- "${load[@]}" 8 > /dev/null 2>&1
for pair in "gpu.power.draw_watts:0.10" "gpu.utilization.gpu_ratio:0.25" "gpu.memory.used_bytes:0.05"; do
  metric=${pair%%:*}; tol=${pair##*:}
  read -r cn nvml_v <<< "$(stat listeners "$metric" "")"
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

# MPS: two clients on GPU 0 (the last GPU not in MIG mode where there are several).
mps_gpu="$(printf '%s\n' "$devices" | awk '/^index/{on=1; next} on && /^[0-9]+ / && !/MIG mode/{g=$1} /^listeners/{on=0} END{print g}')"
if [ -n "$mps_gpu" ] && [ -x "$py" ] && command -v nvidia-cuda-mps-control > /dev/null; then
  [ "$gpus" -ge 2 ] && [ "$mps_gpu" -gt 0 ] && [ -n "${TRAINBENCH_SIM_SCENARIO:-}" ] && mps_gpu=0  # the simulated GPU 0 knows the load
  printf 'Experiment,Workload,Status,Run,Devices,Collocation,File,Listeners,Params\nacceptance,mps,,,%s,MPS,load.py,nvml,6\nacceptance,mps,,,%s,MPS,load.py,nvml,6\n' \
    "$mps_gpu" "$mps_gpu" > "$work/mps.csv"
  { if command -v cuda-visible-devices > /dev/null; then  # the simulated GPU's CUDA stand-in
      printf 'import subprocess\nif subprocess.run(["cuda-visible-devices"]).returncode: raise SystemExit(1)\n'
    fi
    printf '%s\n' "${load[2]}"; } > "$work/load.py"
  "$tb" schedule --store "$store" --python "$py" "$work/mps.csv" > "$work/mps.log" 2>&1
  code=$?
  check "MPS, 2 clients on GPU $mps_gpu: both finish" "$code" "$(grep -c FINISHED "$work/mps.csv") of 2 rows FINISHED"
  # Their energy shares against the GPU's own counter over the workload.
  mps_runs="$("$tb" ls --store "$store" acceptance 2>/dev/null | awk '$1 ~ /^[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]$/ && /load.py/ {print $1}')"
  sum=0; first=""; lastc=""
  for r in $mps_runs; do
    e="$("$tb" export --store "$store" "$r" --metric proc.gpu.energy_joules --format csv 2>/dev/null | awk -F, 'NR>1{b=$NF} END{print b+0}')"
    sum="$(awk -v a="$sum" -v b="$e" 'BEGIN{print a+b}')"
    read -r f l <<< "$("$tb" export --store "$store" "$r" --metric gpu.energy.consumed_joules --format csv 2>/dev/null |
      awk -F, 'NR==2{f=$NF} NR>1{l=$NF} END{print f+0, l+0}')"
    first="$(awk -v a="${first:-$f}" -v b="$f" 'BEGIN{print (b<a)?b:a}')"; lastc="$(awk -v a="${lastc:-$l}" -v b="$l" 'BEGIN{print (b>a)?b:a}')"
  done
  gpu_j="$(awk -v a="$first" -v b="$lastc" 'BEGIN{print b-a}')"
  if [ "$(awk -v g="$gpu_j" 'BEGIN{print (g>0)}')" = 1 ]; then
    within "$sum" "$gpu_j" 0.15; check "MPS clients' energy adds up to the GPU (±15%)" $? "runs $sum J; GPU counter $gpu_j J"
  else
    skip "MPS clients' energy adds up to the GPU" "no energy counter readings"
  fi
  grep -q "split equally" <<< "$("$tb" show --store "$store" "$(echo "$mps_runs" | head -1)" 2>/dev/null)"
  check "MPS run says how its share was split" $? "$(echo "$mps_runs" | wc -w) runs"
else
  skip "MPS on one GPU" "needs nvidia-cuda-mps-control and $py"
fi

# The nvml listener's own CPU time per GPU per 1-s tick, one run on GPU 0 (the ticks at the
# run's ends, which read the energy counter, aside): the budget is 0.3 ms.
"$tb" run --store "$store" -q -n cost -i 1s -l nvml --devices 0 -- "${load[@]}" 20 > /dev/null 2>&1
per_tick="$("$tb" export --store "$store" cost --metric trainbench.listener.cpu_seconds --format csv 2>/dev/null |
  awk -F, 'NR>1 && /listener=nvml/ {v[n++]=$NF} END{for (i=1;i<n-1;i++) s+=v[i]; if (n>2) printf "%.3f", s/(n-2)*1000; else print "-"}')"
if [ "$per_tick" != "-" ]; then
  awk -v c="$per_tick" 'BEGIN{exit !(c<=0.3)}'; check "nvml listener CPU per GPU per tick (<= 0.3 ms)" $? "$per_tick ms"
else
  skip "nvml listener CPU per GPU per tick" "no listener cost series"
fi

# Two runs training together against one alone: the report's overlap, throughput and
# speed-up against the steps the script logged.
seconds="${TB_ACCEPTANCE_TRAIN_SECONDS:-30}"
cat > "$work/steps.py" <<'PY'
import sys, time, trainbench
try:
    # On a machine without a GPU (the simulator's CI) small matrices: steps of milliseconds,
    # so two runs sharing two cores still log many steps each (2048 there made a step take
    # seconds, and a run that logged one step had no training window to overlap).
    import torch; d = "cuda" if torch.cuda.is_available() else "cpu"
    n = 2048 if d == "cuda" else 256; x = torch.randn(n, n, device=d)
except Exception:
    torch = None
end = time.time() + float(sys.argv[1])
with trainbench.Run() as run:
    while time.time() < end:
        with run.step_timer(samples=256):
            if torch:
                for _ in range(4): x = (x @ x).tanh()
                if d == "cuda": torch.cuda.synchronize()
            else:
                time.sleep(0.05)
PY
printf 'Experiment,Workload,Status,Run,Devices,Collocation,File,Listeners,Params\ntogether,alone,,,0,-,steps.py,nvml,%s\ntogether,pair,,,0,-,steps.py,nvml,%s\ntogether,pair,,,0,-,steps.py,nvml,%s --seed 1\n' \
  "$seconds" "$seconds" "$seconds" > "$work/together.csv"
"$tb" schedule --store "$store" --python "$py" "$work/together.csv" > "$work/together.log" 2>&1
csv="$("$tb" report --store "$store" together --format csv 2>&1)"
cell() { awk -F, -v w="$1" -v c="$2" 'NR==1{for (i=1;i<=NF;i++) h[$i]=i; next} $2==w{print $h[c]}' <<< "$csv"; }
overlap="$(cell pair "trained together")"
awk -v o="$overlap" 'BEGIN{n=split(o,p,"/"); if (n!=2) exit 1; for (i=1;i<=n;i++) if (p[i]+0<80) exit 1}'
check "pair trained together (>= 80% each)" $? "${overlap:-no figure}"
logged=0
for r in $("$tb" ls --store "$store" together 2>/dev/null | awk '/pair/{w=1} /workload alone/{w=0} w && $1 ~ /^[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]$/ {print $1}'); do
  m="$("$tb" export --store "$store" "$r" --metric train.throughput_samples_per_second --format csv 2>/dev/null | awk -F, 'NR>1{s+=$NF; n++} END{print (n? s/n : 0)}')"
  logged="$(awk -v a="$logged" -v b="$m" 'BEGIN{print a+b}')"
done
combined="$(cell pair "samples/s combined")"
if [ -n "$combined" ]; then
  within "$combined" "$logged" 0.15; check "combined throughput vs the steps logged (±15%)" $? "report $combined, steps $logged samples/s"
  check "speed-up reported" "$([ -n "$(cell pair speed-up)" ]; echo $?)" "$(cell pair speed-up)x vs alone $(cell alone "samples/s per run") samples/s"
else
  check "combined throughput vs the steps logged" 1 "no combined figure: $(tail -3 <<< "$csv")"
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

# What each NVML call costs on this driver (the nvml listener's cadences rest on it).
echo
"$tb" devices --call-costs 2>&1 | sed -n '/^NVML call costs/,$p'
echo
[ "$failed" -eq 0 ] && echo "gpu-acceptance: all checks passed" || echo "gpu-acceptance: some checks FAILED"
exit "$failed"
