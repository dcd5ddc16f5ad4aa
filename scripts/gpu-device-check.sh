#!/usr/bin/env bash
# What one lent GPU server session runs (a few minutes): the GPU and driver, `trainbench
# devices` and scripts/gpu-acceptance.sh against the install that scripts/gpu-pack.sh made,
# everything written under $OUT (the store and logs too) to be read back on the build machine.
#
#   OUT=DIR scripts/gpu-device-check.sh [path/to/trainbench]    (default: gpu-pack/bin/trainbench)
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
tb="${1:-$here/gpu-pack/bin/trainbench}"
out="${OUT:?set OUT to the folder that receives the results}"
mkdir -p "$out"
export PATH="/usr/local/nvidia/bin:/usr/local/cuda/bin:$PATH"
{
  date -u '+%Y-%m-%d %H:%M:%S UTC'
  nvidia-smi --query-gpu=name,driver_version,memory.total,mig.mode.current,compute_mode,persistence_mode --format=csv
  nvidia-smi | sed -n 3p
  command -v python3 && python3 -c 'import os, torch
print("torch", torch.__version__, "cuda", torch.cuda.is_available())
x = torch.randn(2048, 2048, device="cuda" if torch.cuda.is_available() else "cpu"); (x @ x).sum().item()
print("threads of a PyTorch process after its first kernel:", len(os.listdir("/proc/self/task")))'
} > "$out/gpu.txt" 2>&1
"$tb" --version >> "$out/gpu.txt" 2>&1
"$tb" devices > "$out/devices.txt" 2>&1
TRAINBENCH_PYTHON="${TRAINBENCH_PYTHON:-$(command -v python3)}" TB_ACCEPTANCE_KEEP="$out/acceptance" \
  bash "$here/scripts/gpu-acceptance.sh" "$tb" > "$out/acceptance.txt" 2>&1
code=$?
cat "$out/gpu.txt" "$out/acceptance.txt"
exit "$code"
