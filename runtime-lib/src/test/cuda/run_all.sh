#!/usr/bin/env bash
# Builds and runs every runtime-library test program on a machine with a GPU (no Java needed):
#   runtime-lib/src/test/cuda/run_all.sh [build-dir]
# Every *.cu here is one program; every sub-directory with .cu files is one program linked from
# them (multi_tu). The *.cuh files are shared headers. The programs are built in parallel
# (KLAP_TEST_JOBS nvcc processes, default: the number of cores), then run one after another, each
# with a time limit of KLAP_TEST_TIMEOUT seconds (default 300; most programs also stop themselves
# with kt_watchdog).
# One line per program: "<name> PASS|FAIL (<seconds> s)"; exit status 1 if any failed.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
inc="$here/../../main/resources"
out="${1:-${TMPDIR:-/tmp}/klap-runtime-tests}"
jobs="${KLAP_TEST_JOBS:-$(nproc 2>/dev/null || echo 4)}"
limit="${KLAP_TEST_TIMEOUT:-300}"
mkdir -p "$out"
nvcc_flags=(-std=c++17 -rdc=true -arch=sm_90 -I "$inc")
status=0
names=()
build() {  # name sources...: writes $out/$name, or $out/$name.build-failed
  local name="$1"; shift
  rm -f "$out/$name" "$out/$name.build-failed"
  nvcc "${nvcc_flags[@]}" -o "$out/$name" "$@" >"$out/$name.build.log" 2>&1 || touch "$out/$name.build-failed"
}
run() {
  local name="$1" t0 t1 rc r
  if [ -e "$out/$name.build-failed" ] || [ ! -x "$out/$name" ]; then
    echo "$name FAIL (build, see $out/$name.build.log)"; status=1; return
  fi
  t0=$(date +%s.%N)
  timeout "$limit" "$out/$name" >"$out/$name.log" 2>&1; rc=$?
  t1=$(date +%s.%N)
  if [ $rc -eq 0 ] && grep -q PASS "$out/$name.log"; then r=PASS; else r=FAIL; status=1; fi
  [ $rc -eq 124 ] && echo "(killed after $limit s)" >>"$out/$name.log"
  printf '%s %s (%.2f s)\n' "$name" "$r" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')"
  if [ $r = FAIL ]; then sed 's/^/    /' "$out/$name.log" | tail -25; fi
}
running=0
for f in "$here"/*.cu; do
  n="$(basename "$f" .cu)"; names+=("$n")
  build "$n" "$f" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
done
for d in "$here"/*/; do
  ls "$d"*.cu >/dev/null 2>&1 || continue
  n="$(basename "$d")"; names+=("$n")
  build "$n" "$d"*.cu &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait -n; running=$((running - 1)); fi
done
wait
for n in "${names[@]}"; do run "$n"; done
exit $status
