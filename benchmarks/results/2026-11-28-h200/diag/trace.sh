#!/usr/bin/env bash
# Where the threads of a hanging klap output are (written 2026-11-29 without a GPU; not yet run):
# klap's output of seeds 1038 (warp, block), 1069 (block) and 1012 (kernel), and the runtime-only probe
# ../../2026-11-22-h100-correctness/probes/active_iterations.cu (which hung on 2026-11-28), each
# built with trace.cuh pre-included (the runtime's KLAP_TRACE hook) and the watchdog (dbg.cuh) after
# each host launch. A hung run prints, from a non-blocking stream, the pool state and where every
# parent thread is: inside the device runtime's launch, at a group barrier, waiting for the
# pending-launch budget, or done while its child grids never started (trace.cuh says how to read it).
# A run that ends prints how many threads passed each point.
#
#   diag/trace.sh prepare [DIR=build/trace]      (here, with Java: klap, the fuzz generator)
#   diag/trace.sh run [DIR=build/trace] [REPS=4]  (there, bash + nvcc; output in $OUT/trace.txt)
# Carry DIR. Each binary runs REPS times lazy and once eager (CUDA_MODULE_LOADING=EAGER), 8 s each
# at most: about 2 minutes of a 16-core H200 machine with REPS=4.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"
mode="${1:-}"
dir="${2:-$root/build/trace}"

prepare() {
  local jar="$root/cli/target/klap-all.jar" fz gen seed g
  fz="$(ls "$root"/fuzz/target/klap-fuzz-*.jar 2>/dev/null | grep -v sources | head -1)"
  [ -f "$jar" ] && [ -n "$fz" ] || { echo "trace: build klap first (mvn -q install -DskipTests)" >&2; exit 2; }
  rm -rf "$dir"; mkdir -p "$dir"
  java -jar "$jar" --emit-runtime "$dir" >/dev/null
  cp "$here/trace.cuh" "$root/benchmarks/results/2026-11-27-h200/diag/dbg.cuh" "$dir/"
  gen="$(mktemp -d)"
  # the programs and granularities that hung on 2026-11-28 (1012: once, at kernel granularity)
  for seed in 1038 1069 1012; do
    java -cp "$jar:$fz" klap.fuzz.Main "$gen" 1 "$seed" --shape=random >/dev/null
    cp "$gen/fz_$(printf %06d "$seed")/original.cu" "$dir/s$seed-original.cu"
    case $seed in 1038) gs="warp block" ;; 1069) gs=block ;; *) gs=kernel ;; esac
    for g in $gs; do
      java -jar "$jar" -q --no-runtime-headers --granularity=$g "$dir/s$seed-original.cu" -o "$gen/out.cu"
      python3 "$here/make-watchdog.py" --one "$gen/out.cu" "$dir/s$seed-$g.cu"
    done
  done
  rm -rf "$gen"
  python3 "$here/make-watchdog.py" --one "$root/benchmarks/results/2026-11-22-h100-correctness/probes/active_iterations.cu" \
    "$dir/active_iterations.cu"
  echo "trace: $(ls "$dir"/*.cu | wc -l) sources in $dir"
}

run() {
  local reps="${3:-4}" out="${OUT:-$dir/results}" b i
  mkdir -p "$out"
  cd "$dir" || exit 2
  ls *.cu | sed 's/\.cu$//' | xargs -P "$(nproc)" -I{} sh -c \
    'nvcc -std=c++17 -rdc=true -arch=sm_90 -I . -include trace.cuh -o {}.bin {}.cu >{}.nvcc.log 2>&1 || echo "NVCC FAILED {}: $(grep -m1 error {}.nvcc.log)"'
  for b in *.bin; do
    for ((i = 0; i <= reps; i++)); do
      local rc eager=""
      if [ $i -eq "$reps" ]; then
        eager=" (eager)"
        KLAPDBG_MS=2500 CUDA_MODULE_LOADING=EAGER timeout -k 1 8 "./$b" >"$b.$i.out" 2>&1
      else
        KLAPDBG_MS=2500 timeout -k 1 8 "./$b" >"$b.$i.out" 2>&1
      fi
      rc=$?
      echo "== $b run $i$eager rc=$rc"
      cat "$b.$i.out"
    done
  done | tee "$out/trace.txt"
}

case "$mode" in
  prepare) prepare ;;
  run) run "$@" ;;
  *) sed -n '2,14p' "$0"; exit 2 ;;
esac
