#!/usr/bin/env bash
# The next GPU session's bisection of seed 1038 (and 1069) by site, keeping the program's result:
# each variant is klap's output with ONE device launch site left as written (klap --leave-launch),
# so a variant that still prints the original's RESULT shows that site is not needed for a hang or a
# wrong result, and a wrong RESULT shows as well as a hang. Every binary runs REPS times (the hang
# and the wrong result of 2026-11-28 were not deterministic), also with CUDA_MODULE_LOADING=EAGER.
#
#   diag/leave-one.sh prepare [DIR=build/leave-one]     (here, with Java: klap, the fuzz generator;
#                                                        LEAVE_SEEDS, LEAVE_SHAPE: other programs)
#   diag/leave-one.sh run [DIR=build/leave-one] [REPS=5] (there, bash + nvcc; results in $OUT)
# Carry DIR. Output: leave-one.tsv (program, variant, lazy|eager, runs, pass, wrong, hang, fail) and the
# outputs of every run in leave-one.tgz. About 5 minutes of a 16-core H200 machine with REPS=5.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." && pwd)"
mode="${1:-}"
dir="${2:-$root/build/leave-one}"

prepare() {
  local jar="$root/cli/target/klap-all.jar" fz
  fz="$(ls "$root"/fuzz/target/klap-fuzz-*.jar 2>/dev/null | grep -v sources | head -1)"
  [ -f "$jar" ] && [ -n "$fz" ] || { echo "leave-one: build klap first (mvn -q install -DskipTests)" >&2; exit 2; }
  rm -rf "$dir"; mkdir -p "$dir"
  java -jar "$jar" --emit-runtime "$dir" >/dev/null
  local gen; gen="$(mktemp -d)"
  # LEAVE_SEEDS / LEAVE_SHAPE (2026-11-30): other programs, e.g. LEAVE_SEEDS=74000021 LEAVE_SHAPE=
  # for a default-mix seed (an empty LEAVE_SHAPE passes no --shape)
  local shape="${LEAVE_SHAPE---shape=random}"
  for seed in ${LEAVE_SEEDS:-1038 1069}; do
    java -cp "$jar:$fz" klap.fuzz.Main "$gen" 1 "$seed" $shape >/dev/null
    local p="$dir/s$seed"; mkdir -p "$p"
    cp "$gen/fz_$(printf %06d "$seed")/original.cu" "$p/original.cu"
    # the device launch sites: lines with `<<<` inside __global__/__device__ functions (main is host code)
    awk '/^int main\(/ { exit } /<<</ { print NR }' "$p/original.cu" >"$p/site-lines"
    for g in warp block; do
      java -jar "$jar" -q --no-runtime-headers --granularity=$g "$p/original.cu" -o "$p/$g-all.cu"
      while read -r l; do
        java -jar "$jar" -q --no-runtime-headers --granularity=$g --leave-launch="$l" "$p/original.cu" -o "$p/$g-leave$l.cu"
      done <"$p/site-lines"
    done
  done
  rm -rf "$gen"
  echo "leave-one: $(ls "$dir"/s*/*.cu | wc -l) sources in $dir"
}

# one binary ($1, e.g. s1038/warp-leave99.bin), REPS runs with lazy and with eager module loading
one() {
  local b="$1" reps="$2" p="${1%%/*}" v want
  v="$(basename "$b" .bin)"
  want="$(grep -m1 -o 'RESULT [0-9a-f]*' "$p/original.out")"
  for env in lazy eager; do
    local pass=0 wrong=0 hang=0 fail=0 i rc got
    for ((i = 0; i < reps; i++)); do
      if [ $env = eager ]; then CUDA_MODULE_LOADING=EAGER timeout -k 1 5 "./$b" >"$b.$env.$i.out" 2>&1
      else timeout -k 1 5 "./$b" >"$b.$env.$i.out" 2>&1; fi
      rc=$?
      got="$(grep -m1 -o 'RESULT [0-9a-f]*' "$b.$env.$i.out")"
      if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then hang=$((hang + 1))
      elif [ -n "$got" ] && [ "$got" != "$want" ]; then wrong=$((wrong + 1))
      elif [ $rc -eq 0 ]; then pass=$((pass + 1))
      else fail=$((fail + 1)); fi
    done
    printf '%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\n' "$p" "$v" "$env" "$reps" "$pass" "$wrong" "$hang" "$fail"
  done
}

run() {
  local reps="${3:-5}" out="${OUT:-$dir/results}"
  mkdir -p "$out"
  cd "$dir" || exit 2
  ls s*/*.cu | sed 's/\.cu$//' | xargs -P "$(nproc)" -I{} sh -c \
    'nvcc -std=c++17 -rdc=true -arch=sm_90 -I . -o {}.bin {}.cu >{}.nvcc.log 2>&1 || echo "NVCC FAILED {}"'
  for p in s*/; do timeout -k 1 10 "./${p}original.bin" >"${p}original.out" 2>&1; done
  export -f one
  # 8 binaries at a time: a hang costs 5 s of one slot, not of the whole call
  ls s*/*.bin | xargs -P 8 -I{} bash -c "one {} $reps" | sort | tee "$out/leave-one.tsv"
  tar -czf "$out/leave-one.tgz" s*/*.out s*/site-lines 2>/dev/null
}

case "$mode" in
  prepare) prepare ;;
  run) run "$@" ;;
  *) sed -n '2,11p' "$0"; exit 2 ;;
esac
