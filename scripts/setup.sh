#!/usr/bin/env bash
# Installs every Debian package trainbench needs to build, test and run its demo, and the
# web UI's npm packages (web/node_modules, from web/package-lock.json).
# Idempotent: packages already present are not touched, `apt-get update` runs only when
# something is missing, and npm runs only when the lock file changed. Must run as root (or
# with sudo available) on Debian 12.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config git dpkg-dev curl
  libsqlite3-dev libzstd-dev libcli11-dev libfmt-dev nlohmann-json3-dev libcpp-httplib-dev zlib1g-dev libdeflate-dev libpq-dev postgresql libyaml-cpp-dev
  libcairo2-dev libpango1.0-dev fonts-dejavu-core poppler-utils
  libgtest-dev libgmock-dev libbenchmark-dev
  clang-format clang-tidy clang libclang-rt-14-dev wrk
  procps sqlite3 shellcheck flake8 black python3-pytest
  slurmctld slurmd slurm-client munge
  python3 python3-torch python3-sklearn python3-numpy python3-pandas python3-venv python3-setuptools python3-yaml
  chromium
)
# Node and npm: the machine's own when present (npm 10 or newer), else Debian's.
if ! command -v npm > /dev/null || ! command -v node > /dev/null; then
  packages+=(nodejs npm)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} Debian packages present"
else
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "setup: run as root or install sudo; missing: ${missing[*]}" >&2; exit 1; }
    sudo="sudo"
  fi
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The web UI's build tools and uPlot. playwright-core brings no browser: the tests use
# Debian's chromium.
web="$(dirname "$0")/../web"
if [ ! -f "$web/node_modules/.package-lock.json" ] || [ "$web/package-lock.json" -nt "$web/node_modules/.package-lock.json" ]; then
  echo "setup: npm ci in web/"
  (cd "$web" && npm ci --no-audit --no-fund --loglevel=error)
else
  echo "setup: web/node_modules up to date"
fi

# The arm64 cross toolchain and qemu-user, and arm64 libraries unpacked into build-arm64/
# (not installed), for the arm64 build and its tests under emulation (arm64.unit_tests).
bash "$(dirname "$0")/arm64-test.sh" --prepare
