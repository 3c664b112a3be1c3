#!/usr/bin/env bash
# Builds and runs every runtime-library test program on a machine with a GPU (no Java needed):
#   runtime-lib/src/test/cuda/run_all.sh [build-dir]
# One line per program: "<name> PASS|FAIL (<seconds> s)"; exit status 1 if any failed.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
inc="$here/../../main/resources"
out="${1:-${TMPDIR:-/tmp}/klap-runtime-tests}"
mkdir -p "$out"
nvcc_flags=(-std=c++17 -rdc=true -arch=sm_90 -I "$inc")
status=0
build() {  # name sources...
  local name="$1"; shift
  if ! nvcc "${nvcc_flags[@]}" -o "$out/$name" "$@" >"$out/$name.build.log" 2>&1; then
    echo "$name FAIL (build, see $out/$name.build.log)"; status=1; return 1
  fi
}
run() {
  local name="$1" t0 t1 rc
  t0=$(date +%s.%N)
  "$out/$name" >"$out/$name.log" 2>&1; rc=$?
  t1=$(date +%s.%N)
  if [ $rc -eq 0 ] && grep -q PASS "$out/$name.log"; then r=PASS; else r=FAIL; status=1; fi
  printf '%s %s (%.2f s)\n' "$name" "$r" "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')"
  [ $r = FAIL ] && sed 's/^/    /' "$out/$name.log" | tail -25
}
for f in "$here"/*.cu; do
  n="$(basename "$f" .cu)"; build "$n" "$f" && run "$n"
done
for d in "$here"/*/; do
  ls "$d"*.cu >/dev/null 2>&1 || continue
  n="$(basename "$d")"; build "$n" "$d"*.cu && run "$n"
done
exit $status
