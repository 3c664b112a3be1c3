#!/usr/bin/env bash
# Memory ordering or timing? (written 2026-11-30 after that day's GPU session; not yet run on a GPU:
# its prepare and run were checked here, all 16 binaries built, each run stopping at "no CUDA driver")
# klap's outputs of seeds 74000021 (warp, block) and 74000017 (kernel) hung in 14 of 18 runs without
# ../../2026-11-28-h200/diag/trace.cuh and in 0 of 9 with it (README.md, calls 3 and 4). The trace
# hook does two things at each step of an aggregated launch (klap::trace_point): a __noinline__
# call with atomics, and a __threadfence(). This script builds the same programs (plus seed 1069 at
# block granularity, --shape=random, which still hung traced) with KLAP_TRACE replaced by:
#   none    nothing (the hook is empty, as in a normal build)
#   fence   __threadfence() alone
#   call    a __noinline__ call that does nothing (changes timing and register allocation only)
#   sleep   __nanosleep(200) (timing only)
#   serial  one device launch at a time per warp: a lock (hashed by block and warp) taken before each
#           launch klap's runtime makes (as written: points 4, 8; aggregated: 11, 20) and given back
#           after it (5, 9, 12, 21); nothing else. If this alone cures the hangs, what stops the
#           device runtime is lanes of one warp inside its launch at once (launch_divergence mode 2
#           hangs, mode 4, the lanes taking turns, passes; active_iterations hung with two lanes of
#           one warp inside the launch), and klap's flush must take turns per warp.
# and, with --points, `fence` at ONE trace point at a time (config.cuh's trace_point numbers), to
# find the step whose missing ordering lets a child grid read stale slots or records.
# Every binary has the watchdog (dbg.cuh) after each host launch and runs REPS times, 6 s at most.
#
#   diag/fence.sh prepare [DIR=build/fence] [--points]   (here, with Java)
#   diag/fence.sh run [DIR=build/fence] [REPS=8]         (there, bash + nvcc; fence.tsv in $OUT)
# Carry DIR. fence.tsv: program, variant, runs, pass, hang, fail (other exit: e.g. an illegal address).
# About 3 minutes of a 16-core H200 machine with REPS=8 and no --points (20 binaries); --points
# adds 30 per program (about 10 minutes: use it with one seed, FENCE_SEEDS=74000021 for its warp and
# block programs).
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"
mode="${1:-}"
dir="${2:-$root/build/fence}"

hook() {  # variant name -> the header that defines KLAP_TRACE
  case "$1" in
    none) echo '#pragma once' ;;
    fence) printf '#pragma once\n#define KLAP_TRACE(point) __threadfence()\n' ;;
    call) printf '#pragma once\nstatic __device__ __noinline__ void klapf_nop(int) {}\n#define KLAP_TRACE(point) klapf_nop(static_cast<int>(point))\n' ;;
    sleep) printf '#pragma once\n#define KLAP_TRACE(point) __nanosleep(200)\n' ;;
    serial) cat <<'HOOK'
#pragma once
// one launch at a time per warp (fence.sh "serial"); a thread holds at most one lock, and only
// around a launch, which does not wait for other threads: no cycle, so no deadlock
static __device__ unsigned klapf_locks[4096];
static __device__ __forceinline__ void klapf_serial(int p) {
  const unsigned long long b = blockIdx.x + static_cast<unsigned long long>(gridDim.x) * (blockIdx.y + static_cast<unsigned long long>(gridDim.y) * blockIdx.z);
  const unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  unsigned* l = &klapf_locks[static_cast<unsigned>(((b * 32ull + t / 32u) * 0x9E3779B97F4A7C15ull) >> 52)];
  if (p == 4 || p == 8 || p == 11 || p == 20) {
    unsigned ns = 32;
    while (atomicCAS(l, 0u, 1u) != 0u) { __nanosleep(ns); if (ns < 1024u) ns *= 2u; }
    __threadfence();
  } else if (p == 5 || p == 9 || p == 12 || p == 21) {
    __threadfence();
    atomicExch(l, 0u);
  }
}
#define KLAP_TRACE(point) klapf_serial(static_cast<int>(point))
HOOK
    ;;
    p*) printf '#pragma once\n#define KLAP_TRACE(point) do { if (static_cast<int>(point) == %d) __threadfence(); } while (0)\n' "${1#p}" ;;
  esac
}

prepare() {
  local jar="$root/cli/target/klap-all.jar" fz points=0
  [ "${3:-}" = --points ] && points=1
  fz="$(ls "$root"/fuzz/target/klap-fuzz-*.jar 2>/dev/null | grep -v sources | head -1)"
  [ -f "$jar" ] && [ -n "$fz" ] || { echo "fence: build klap first (mvn -q install -DskipTests)" >&2; exit 2; }
  rm -rf "$dir"; mkdir -p "$dir"
  java -jar "$jar" --emit-runtime "$dir" >/dev/null
  cp "$root/benchmarks/results/2026-11-27-h200/diag/dbg.cuh" "$dir/"
  local gen s g v shape out; gen="$(mktemp -d)"
  for s in ${FENCE_SEEDS:-74000021 74000017 1069}; do
    shape=(); [ $s = 1069 ] && shape=(--shape=random)
    java -cp "$jar:$fz" klap.fuzz.Main "$gen" 1 "$s" "${shape[@]}" >/dev/null
    out="$gen/fz_$(printf %06d "$s")"
    case $s in 74000021) gs="warp block" ;; 74000017) gs=kernel ;; *) gs=block ;; esac
    for g in $gs; do
      # the output next to its input, so that its #include "klap/klap.cuh" names the copy in $dir
      java -jar "$jar" -q --no-runtime-headers --granularity=$g "$out/original.cu" -o "$out/$g.cu"
      python3 "$root/benchmarks/results/2026-11-28-h200/diag/make-watchdog.py" --one "$out/$g.cu" "$dir/s$s-$g.cu"
    done
  done
  rm -rf "$gen"
  local variants="none fence call sleep serial"
  # the parent-side points 1-23 and the child-side ones 32-38 (config.cuh's trace_point)
  [ $points -eq 1 ] && variants="$variants $(seq -f 'p%g' 1 23 | tr '\n' ' ') $(seq -f 'p%g' 32 38 | tr '\n' ' ')"
  for v in $variants; do hook "$v" >"$dir/hook-$v.cuh"; done
  echo "$variants" >"$dir/variants"
  echo "fence: $(ls "$dir"/s*.cu | wc -l) programs x $(wc -w <"$dir/variants") hooks in $dir"
}

run() {
  local reps="${3:-8}" out="${OUT:-$dir/results}"
  mkdir -p "$out"
  cd "$dir" || exit 2
  local jobs=""; for s in s*.cu; do for v in $(cat variants); do jobs="$jobs ${s%.cu}@$v"; done; done
  # the hook must come before the runtime headers: -include puts it first
  printf '%s\n' $jobs | xargs -P "$(nproc)" -I{} sh -c \
    'j={}; p=${j%@*}; v=${j#*@}; nvcc -std=c++17 -rdc=true -arch=sm_90 -I . -include hook-$v.cuh -o $p.$v.bin $p.cu >$p.$v.nvcc.log 2>&1 || echo "NVCC FAILED $p $v"'
  one() {
    local b="$1" reps="$2" pass=0 hang=0 fail=0 i rc
    for ((i = 0; i < reps; i++)); do
      KLAPDBG_MS=2500 timeout -k 1 6 "./$b" >"$b.$i.out" 2>&1; rc=$?
      if [ $rc -eq 3 ] || [ $rc -eq 124 ] || [ $rc -eq 137 ]; then hang=$((hang + 1))
      elif [ $rc -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
    done
    local p="${b%%.*}" v="${b#*.}"; v="${v%.bin}"
    printf '%s\t%s\t%d\t%d\t%d\t%d\n' "$p" "$v" "$reps" "$pass" "$hang" "$fail"
  }
  export -f one
  # 8 binaries at a time: the GPU's load changes the timing too, so the same for every variant
  ls ./*.bin | sed 's,^\./,,' | xargs -P 8 -I{} bash -c "one {} $reps" | sort | tee "$out/fence.tsv"
  tar -czf "$out/fence-outputs.tgz" ./*.out 2>/dev/null
}

case "$mode" in
  prepare) prepare "$@" ;;
  run) run "$@" ;;
  *) sed -n '2,21p' "$0"; exit 2 ;;
esac
