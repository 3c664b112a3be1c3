#!/usr/bin/env bash
# Builds and runs the self-checking reproducers of the aggregation review of 2026-12-01 (no GPU was
# lent that day; each was traced by hand in the output of klap 8cd8926).
#   prepare (here, with Java):  check.sh prepare OUT [KLAP_JAR]   transforms each reproducer
#   run (on a GPU machine):     check.sh run OUT                  builds with nvcc and runs each
# Each program exits 0 when its result is the one the program as written computes. The original
# and every klap variant must: PASS (exit 0), FAIL (another exit status), HANG (60 s), NVCC-FAIL.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
mode="${1:?prepare|run}"; out="${2:?OUT}"
case "$mode" in
prepare)
  jar="${3:-$here/../../../cli/target/klap-all.jar}"
  mkdir -p "$out"
  for f in "$here"/repro/*.cu; do
    n="$(basename "$f" .cu)"; d="$out/$n"; mkdir -p "$d"; cp "$f" "$d/original.cu"
    for g in warp block kernel; do
      java -jar "$jar" --granularity="$g" -q "$d/original.cu" -o "$d/$g.cu" 2>"$d/$g.klap.log" \
        || echo "klap refused $n $g"
    done
  done ;;
run)
  status=0
  for d in "$out"/*/; do
    n="$(basename "$d")"
    for src in "$d"original.cu "$d"warp.cu "$d"block.cu "$d"kernel.cu; do
      [ -f "$src" ] || continue
      v="$(basename "$src" .cu)"
      if ! nvcc -std=c++17 -rdc=true -arch=sm_90 "$src" -o "$d/$v.bin" >"$d/$v.nvcc.log" 2>&1; then
        echo "$n $v NVCC-FAIL"; status=1; continue
      fi
      timeout 60 "$d/$v.bin" >"$d/$v.out" 2>&1; rc=$?
      case $rc in 0) r=PASS ;; 124) r=HANG ;; *) r="FAIL($rc)" ;; esac
      echo "$n $v $r"
      [ "$r" = PASS ] || status=1
    done
  done
  exit $status ;;
esac
