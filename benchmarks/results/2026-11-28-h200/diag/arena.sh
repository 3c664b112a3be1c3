#!/usr/bin/env bash
# The next GPU session's check of kernel granularity's record arena (issue 11, "scale"; written on
# 2026-11-29 without a GPU): the inputs whose records the static pool cannot hold, as the original,
# at kernel granularity (the arena, by default, for launches whose records would need more than
# a quarter of the pool) and at warp and block granularity (since 2026-11-30, second session: such
# host launches run in chunks of blocks, klap/chunk.cuh), each REPS times:
#   scale -n 16777216 -r 2   (2^24 parent threads, 2 M launches a repetition, 2 repetitions queued)
#   scale -n 16777216 -e 1 -r 1   (2^24 launches at one site: beyond the 24-bit record index of before)
#   pool_order               (64 K parents whose children take a 2 KiB argument: 137 MB of records;
#                             "memory pool too small" on 2026-11-28)
#   pool_order -n 1048576
# and every testcases/src program at kernel granularity with -DKLAP_KERNEL_ARENA_MIN_BYTES=0 (every
# host launch gets an arena; gpu-tier's kernel-arena variant does the same).
#
#   diag/arena.sh prepare [DIR=build/arena]            (here, with Java)
#   diag/arena.sh run [DIR=build/arena] [REPS=2]       (there, bash + nvcc; results in $OUT or DIR)
# Carry DIR. Output: arena.tsv (program, variant, arguments, run, status, last line) and the logs.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../../.." && pwd)"
mode="${1:-}"
dir="${2:-$root/build/arena}"

prepare() {
  local jar="$root/cli/target/klap-all.jar"
  [ -f "$jar" ] || { echo "arena: build klap first (mvn -q install -DskipTests)" >&2; exit 2; }
  rm -rf "$dir"; mkdir -p "$dir"
  java -jar "$jar" --emit-runtime "$dir" >/dev/null
  cp -r "$root/testcases/src/common" "$dir/common"
  local c n
  for c in "$root"/testcases/src/*.cu; do
    n="$(basename "$c" .cu)"
    cp "$c" "$dir/$n-original.cu"
    java -jar "$jar" -q --no-runtime-headers --granularity=warp "$c" -o "$dir/$n-warp.cu"
    java -jar "$jar" -q --no-runtime-headers --granularity=block "$c" -o "$dir/$n-block.cu"
    java -jar "$jar" -q --no-runtime-headers --granularity=kernel "$c" -o "$dir/$n-kernel.cu"
    sed '1i #define KLAP_KERNEL_ARENA_MIN_BYTES 0ull' "$dir/$n-kernel.cu" >"$dir/$n-arena0.cu"
  done
  echo "arena: $(ls "$dir"/*.cu | wc -l) sources in $dir"
}

run() {
  local reps="${3:-2}" res="${OUT:-$dir}" jobs
  jobs="$(nproc 2>/dev/null || echo 8)"
  cd "$dir" || exit 2
  ls ./*.cu | xargs -P "$jobs" -I{} bash -c \
    'f={}; nvcc -std=c++17 -rdc=true -arch=sm_90 -I . -I common -o "${f%.cu}.bin" "$f" >"${f%.cu}.nvcc.log" 2>&1 || echo "build failed: ${f%.cu}"'
  : >"$res/arena.tsv"
  one() {  # binary, arguments...
    local b="$1" r rc last; shift
    for ((r = 1; r <= reps; r++)); do
      timeout 120 "./$b.bin" "$@" >"$b.$r.log" 2>&1; rc=$?
      last="$(tail -1 "$b.$r.log" | tr '\t' ' ')"
      printf '%s\t%s\t%d\t%d\t%s\n' "$b" "$*" "$r" "$rc" "$last" >>"$res/arena.tsv"
    done
  }
  local v
  for v in original warp block kernel; do
    one "scale-$v" -n 16777216 -r 2
    one "scale-$v" -n 16777216 -e 1 -r 1
    one "pool_order-$v"
    one "pool_order-$v" -n 1048576
  done
  for b in ./*-arena0.bin ./*-original.bin; do one "$(basename "${b%.bin}")"; done
  cp ./*.log "$res/" 2>/dev/null
  cat "$res/arena.tsv"
}

case "$mode" in
  prepare) prepare ;;
  run) run "$@" ;;
  *) echo "usage: diag/arena.sh prepare|run [DIR] [REPS]" >&2; exit 2 ;;
esac
