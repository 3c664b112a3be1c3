#!/usr/bin/env bash
# The third device call of 2026-11-30 (about 2.5 minutes), after reading the first:
#   prepare (here): bash benchmarks/results/2026-11-30-h200/run3.sh prepare   -> build/dev3
#   run (there):    bash benchmarks/results/2026-11-30-h200/run3.sh run SECONDS (carry build/dev3)
# (a) testcases/src at warp, block and kernel granularity (the first call's pack could not build
#     them: klap rewrote their quote-includes for the pack's layout; gpu-tier now passes
#     --keep-include-paths), each run twice; (b) the two runtime tests whose failures were the
#     tests' own (test_survivor: no launch bounds; test_kernel_rounds: its launcher read the
#     pending error of the original's empty launch); (c) where the threads are in the new hangs:
#     seed 74000021 at warp and block, 74000017 at kernel granularity, with trace.cuh and the watchdog.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
dir="$root/build/dev3"
D="$root/benchmarks/results/2026-11-28-h200/diag"
if [ "${1:-}" = prepare ]; then
  jar="$root/cli/target/klap-all.jar"; fz="$(ls "$root"/fuzz/target/klap-fuzz-*.jar | grep -v sources | head -1)"
  rm -rf "$dir"; mkdir -p "$dir/src" "$dir/trace" "$dir/rt"
  java -jar "$jar" --emit-runtime "$dir/src" >/dev/null; java -jar "$jar" --emit-runtime "$dir/trace" >/dev/null
  cp -r "$root/testcases/src/common" "$dir/src/common"
  for c in "$root"/testcases/src/*.cu; do
    n="$(basename "$c" .cu)"; cp "$c" "$dir/src/$n-original.cu"
    for g in warp block kernel; do java -jar "$jar" -q --no-runtime-headers --granularity=$g "$c" -o "$dir/src/$n-$g.cu"; done
  done
  cp "$D/trace.cuh" "$root/benchmarks/results/2026-11-27-h200/diag/dbg.cuh" "$dir/trace/"
  gen="$(mktemp -d)"
  for s in 74000021 74000017; do
    java -cp "$jar:$fz" klap.fuzz.Main "$gen" 1 "$s" >/dev/null
    case $s in 74000021) gs="warp block" ;; *) gs=kernel ;; esac
    for g in $gs; do
      java -jar "$jar" -q --no-runtime-headers --granularity=$g "$gen/fz_$s/original.cu" -o "$gen/out.cu"
      sed -i "s,#include \"fz_$s/klap/klap.cuh\",#include \"klap/klap.cuh\"," "$gen/out.cu"
      python3 "$D/make-watchdog.py" --one "$gen/out.cu" "$dir/trace/s$s-$g.cu"
    done
  done
  rm -rf "$gen"
  cp "$root"/runtime-lib/src/test/cuda/{test_survivor.cu,test_kernel_rounds.cu,klap_test.cuh} "$dir/rt/"
  ls "$dir"/*/*.cu | wc -l
  exit 0
fi
total="${2:-150}"; out="${OUT:-$dir/out}"; mkdir -p "$out"; t0=$SECONDS
inc="$root/runtime-lib/src/main/resources"
cd "$dir" || exit 2
# build everything at once (16 cores): traces first
{ ls trace/*.cu; ls rt/*.cu; ls src/*.cu; } | xargs -P 16 -I{} sh -c \
  'f={}; d=$(dirname $f); x=""; case $d in trace) x="-include trace.cuh" ;; esac
   nvcc -std=c++17 -rdc=true -arch=sm_90 -I '"$inc"' -I $d -I $d/common $x -o ${f%.cu}.bin $f >${f%.cu}.nvcc.log 2>&1 || echo "NVCC FAILED $f"' >"$out/build.txt"
echo "[$((SECONDS - t0)) s] built: $(ls */*.bin | wc -l) binaries" | tee -a "$out/build.txt"
# (b), (a): the runtime tests and the src programs, twice each, 10 s limit, 4 at a time
( for b in rt/*.bin; do timeout -k 1 20 ./$b >"$b.out" 2>&1; echo "$b rc=$? $(tail -1 "$b.out")"; done >"$out/rt.txt"
  ls src/*.bin | xargs -P 4 -I{} sh -c 'for r in 1 2; do timeout -k 1 10 ./{} >{}.$r.out 2>&1; echo "{} run $r rc=$? $(grep -m1 -oE "(PASS|FAIL).*" {}.$r.out | head -c 160)"; done' | sort >"$out/src.txt" ) &
# (c): the traces, three runs each, 8 s at most per run
for b in trace/*.bin; do
  for i in 1 2 3; do KLAPDBG_MS=2500 timeout -k 1 8 ./$b >"$b.$i.out" 2>&1; echo "== $b run $i rc=$?"; cat "$b.$i.out"; done
  [ $((SECONDS - t0)) -gt $((total - 30)) ] && break
done >"$out/trace.txt" 2>&1
wait
cat "$out/build.txt" "$out/rt.txt" "$out/src.txt"; grep -E '^== |HANG|fz_p.: [0-9]+ parent' "$out/trace.txt"
