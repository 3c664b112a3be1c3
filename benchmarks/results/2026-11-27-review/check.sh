#!/usr/bin/env bash
# Builds and runs the reproducers of the 2026-11-27 review (no GPU was lent that day).
#   prepare (here, with Java):  check.sh prepare OUT [KLAP_JAR]   transforms each reproducer
#   run (on a GPU machine):     check.sh run OUT                  builds with nvcc and runs each
# (or, faster, in parallel with the rest of a GPU session: scripts/gpu-tier prepare --progs OUT)
# Every reproducer prints PASS or FAIL. The original must print PASS, and so must every klap
# variant of the current klap (the jar of 32096ba printed FAIL, hung or failed nvcc on them).
set -u
here="$(cd "$(dirname "$0")" && pwd)"
mode="${1:?prepare|run}"; out="${2:?OUT}"
case "$mode" in
prepare)
  jar="${3:-$here/../../../cli/target/klap-all.jar}"
  mkdir -p "$out"
  forms="$here/../../../promotion/src/test/resources/promote/forms"  # the promotion reproducers are test fixtures
  for f in "$here"/repro/*.cu "$forms"/rv2_memcpy_async.cu "$forms"/rv2_helper_launch.cu "$forms"/rv2_pass_written.cu \
           "$forms"/rv2_overlap_binding.cu; do
    n="$(basename "$f" .cu)"; n="${n/#rv2_/D_}"; d="$out/$n"; mkdir -p "$d"; cp "$f" "$d/original.cu"
    cp -r "$here/repro/hdr" "$here/repro/inc" "$d/"
    case "$n" in
      D_*) variants="p pa po pao" ;;
      *) variants="warp block kernel" ;;
    esac
    for v in $variants; do
      case "$v" in
        p|pa|po|pao) opt="--promote=$(echo "$v" | tr a-z A-Z)" ;;
        *) opt="--granularity=$v" ;;
      esac
      java -jar "$jar" $opt -q "$d/original.cu" -o "$d/$v.cu" 2>"$d/$v.klap.log" \
        || { echo "klap refused $n $v"; echo "klap refused" >"$d/$v.refused"; }
    done
    echo "original $variants" >"$d/variants"  # the layout of scripts/gpu-tier prepare --progs
  done ;;
run)
  status=0
  for d in "$out"/*/; do
    n="$(basename "$d")"
    for src in "$d"original.cu "$d"warp.cu "$d"block.cu "$d"kernel.cu "$d"p.cu "$d"pa.cu "$d"po.cu "$d"pao.cu; do
      [ -f "$src" ] || continue
      v="$(basename "$src" .cu)"
      if ! nvcc -std=c++17 -rdc=true -arch=sm_90 -I"$d" "$src" -o "$d/$v.bin" >"$d/$v.nvcc.log" 2>&1; then
        echo "$n $v NVCC-FAIL"; status=1; continue
      fi
      r="$(timeout 60 "$d/$v.bin" 2>&1 | grep -o 'PASS\|FAIL' | head -1)"
      echo "$n $v ${r:-HANG-OR-CRASH}"
      [ "$r" = PASS ] || status=1
    done
  done
  exit $status ;;
esac
