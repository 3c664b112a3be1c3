#!/usr/bin/env bash
# Builds and runs every runtime-library test program on a machine with a GPU (no Java needed):
#   runtime-lib/src/test/cuda/run_all.sh [build-dir]
# Every *.cu file here is one program; every sub-directory with *.cu files is one program linked
# from all of them (-rdc). One line per program: "<name> PASS|FAIL (<seconds> s)"; a program that
# runs longer than KLAP_TEST_TIMEOUT seconds (default 60) is killed and FAILs. bench_* programs
# also print their "first_run <step> <ms>" lines. Exit status 1 if any program failed.
# Builds run in parallel (KLAP_TEST_JOBS, default: the number of CPUs); programs run one at a time.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
inc="$here/../../main/resources"
out="${1:-${TMPDIR:-/tmp}/klap-runtime-tests}"
limit="${KLAP_TEST_TIMEOUT:-60}"
jobs="${KLAP_TEST_JOBS:-$(nproc 2>/dev/null || echo 2)}"
mkdir -p "$out"
nvcc_flags=(-std=c++17 -rdc=true -arch=sm_90 -I "$inc")
status=0
build() {  # name sources...
  local name="$1"; shift
  if nvcc "${nvcc_flags[@]}" -o "$out/$name" "$@" >"$out/$name.build.log" 2>&1; then
    echo ok >"$out/$name.built"
  else
    rm -f "$out/$name.built"
  fi
}
run() {
  local name="$1" t0 t1 rc r
  if [ ! -f "$out/$name.built" ]; then
    echo "$name FAIL (build, see $out/$name.build.log)"; tail -20 "$out/$name.build.log" | sed 's/^/    /'
    status=1; return
  fi
  t0=$(date +%s.%N)
  timeout --kill-after=5 "$limit" "$out/$name" >"$out/$name.log" 2>&1; rc=$?
  t1=$(date +%s.%N)
  if [ $rc -eq 0 ] && grep -q PASS "$out/$name.log"; then r=PASS; else r=FAIL; status=1; fi
  [ $rc -eq 124 ] || [ $rc -eq 137 ] && echo "timeout after ${limit} s" >>"$out/$name.log"
  printf '%s %s (%.2f s)\n' "$name" "$r" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')"
  case "$name" in bench_*) grep '^first_run ' "$out/$name.log" | sed 's/^/    /' ;; esac
  [ $r = FAIL ] && sed 's/^/    /' "$out/$name.log" | tail -25
}
names=()
for f in "$here"/*.cu; do
  n="$(basename "$f" .cu)"; names+=("$n")
  build "$n" "$f" &
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do sleep 0.2; done
done
for d in "$here"/*/; do
  ls "$d"*.cu >/dev/null 2>&1 || continue
  n="$(basename "$d")"; names+=("$n")
  build "$n" "$d"*.cu &
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do sleep 0.2; done
done
wait
for n in "${names[@]}"; do run "$n"; done
exit $status
