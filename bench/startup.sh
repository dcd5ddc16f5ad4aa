#!/usr/bin/env bash
# What trainbench costs around a command it runs, and at its own start: the fixed part of
# what a training script pays (issue 20, goal 5), measured in wall time on whole processes.
#
#   bench/startup.sh [rounds=21] [other trainbench binary to compare with]
#
# For each binary, each round, alternating between the binaries:
#   --help        `trainbench --help` from exec to exit (the loader and static start-up);
#   before exec   `trainbench run` from its exec to the moment its command starts (the
#                 command is `bash -c 'echo $EPOCHREALTIME'`, which prints when it began);
#   after exit    from that moment to trainbench's exit (the command's own few ms of
#                 bash included, the same on both sides);
#   run wall      the whole `trainbench run`;
#   ls            `trainbench ls` of the store those runs went into (opening a store and
#                 reading it: what every command does first).
#   floor         an empty program linked with the binary's own libraries (its NEEDED
#                 entries), exec to exit: what the loader and the libraries' own start-up
#                 cost before trainbench's code runs at all;
#   without httplib  the same without libcpp-httplib (and so without the OpenSSL and
#                 brotli libraries Debian's build of it brings).
# Also the shared libraries the loader maps before main. Prints medians in milliseconds
# and, with a second binary, the ratios. Runs use this machine's listeners, a store of their
# own and the tracking API: what `trainbench run` does by default.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-21}
binaries=(build/trainbench)
[[ -n ${2:-} ]] && binaries+=("$2")
for b in "${binaries[@]}"; do
  [[ -x $b ]] || { echo "no executable $b: build it first (bash scripts/build.sh)" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The empty programs, for each binary: floor.K and bare.K (without cpp-httplib).
for ((k = 0; k < ${#binaries[@]}; k++)); do
  mapfile -t needed < <(readelf -d "${binaries[$k]}" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/-l:\1/p')
  echo 'int main() { return 0; }' > "$work/empty.cc"
  g++ -O2 "$work/empty.cc" -o "$work/floor.$k" -Wl,--no-as-needed "${needed[@]}"
  without=()
  for l in "${needed[@]}"; do [[ $l == -l:libcpp-httplib* ]] || without+=("$l"); done
  g++ -O2 "$work/empty.cc" -o "$work/bare.$k" -Wl,--no-as-needed "${without[@]}"
done

now() { echo "$EPOCHREALTIME"; }
ms() { echo "($2 - $1) * 1000" | bc -l; }

for ((r = 0; r < rounds; r++)); do
  for ((i = 0; i < ${#binaries[@]}; i++)); do
    # the binaries take turns going first
    b=${binaries[$(((i + r) % ${#binaries[@]}))]}
    key=$(((i + r) % ${#binaries[@]}))
    t0=$(now)
    "$b" --help > /dev/null
    t1=$(now)
    ms "$t0" "$t1" >> "$work/help.$key"
    t0=$(now)
    "$work/floor.$key"
    t1=$(now)
    ms "$t0" "$t1" >> "$work/floor.ms.$key"
    t0=$(now)
    "$work/bare.$key"
    t1=$(now)
    ms "$t0" "$t1" >> "$work/bare.ms.$key"
    t0=$(now)
    # shellcheck disable=SC2016 # the command's own bash expands it
    started=$("$b" run --store "$work/store.$key.db" -n startup -- bash -c 'echo $EPOCHREALTIME' 2> /dev/null)
    t1=$(now)
    ms "$t0" "$started" >> "$work/before.$key"
    ms "$started" "$t1" >> "$work/after.$key"
    ms "$t0" "$t1" >> "$work/wall.$key"
    t0=$(now)
    "$b" ls --store "$work/store.$key.db" > /dev/null
    t1=$(now)
    ms "$t0" "$t1" >> "$work/ls.$key"
  done
done

median() { sort -g "$1" | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
libraries() { ldd "$1" | grep -c '=>'; }

printf '%-16s' "median ms"
for b in "${binaries[@]}"; do printf '%28s' "$b"; done
[[ ${#binaries[@]} -eq 2 ]] && printf '%12s' "ratio"
printf '\n'
for what in floor.ms bare.ms help before after wall ls; do
  case $what in
    floor.ms) label="floor" ;;
    bare.ms) label="without httplib" ;;
    help) label="--help" ;;
    before) label="before exec" ;;
    after) label="after exit" ;;
    wall) label="run wall" ;;
    ls) label="ls" ;;
  esac
  printf '%-16s' "$label"
  values=()
  for ((k = 0; k < ${#binaries[@]}; k++)); do
    values+=("$(median "$work/$what.$k")")
    printf '%28.1f' "${values[$k]}"
  done
  [[ ${#binaries[@]} -eq 2 ]] && printf '%11.2fx' "$(echo "${values[1]} / ${values[0]}" | bc -l)"
  printf '\n'
done
printf '%-16s' "libraries"
for b in "${binaries[@]}"; do printf '%28d' "$(libraries "$b")"; done
printf '\n'
echo "$rounds rounds; 'ratio' is the second binary's median over the first's"
