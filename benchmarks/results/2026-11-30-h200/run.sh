#!/usr/bin/env bash
# The device call of 2026-11-30 (one call, about 9 minutes of a 16-core H200 machine), prepared here:
#   scripts/gpu-session prepare --fuzz-first 74000001 --fuzz-count 60 --chain-count 8 --np-count 8
#   D=benchmarks/results/2026-11-28-h200/diag
#   $D/trace.sh prepare build/device/trace; $D/leave-one.sh prepare build/device/leave-one
#   (then rm -rf build/device/leave-one/s1069: seed 1038 alone); $D/arena.sh prepare build/device/arena
# and run there with `bash benchmarks/results/2026-11-30-h200/run.sh SECONDS`, carrying build/device.
# At once: the where-are-the-threads trace of the hanging seeds (README "Next GPU session" item 1),
# the packs, probes and runtime-lib tests (items 2-13; gpu-session --packs-only), the site
# bisection of seed 1038 (leave-one, 3 runs lazy and 3 eager per variant) and the arena runs
# (item 7), and the bench set compiled for a timing call after it. Everything comes back as one archive and a summary (8 files at most come back).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
total="${1:-540}"
dev="$root/build/device"
D="$root/benchmarks/results/2026-11-28-h200/diag"
res="$dev/results30"; rm -rf "$res"; mkdir -p "$res"/{session,trace,leave,arena}
t0=$SECONDS
at() { echo "[$((SECONDS - t0)) s] $*"; }
at "start: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
(OUT="$res/trace" timeout -k 5 $((total * 55 / 100)) bash "$D/trace.sh" run "$dev/trace" 3 >"$res/trace.log" 2>&1; at "trace done") &
(OUT="$res/session" timeout -k 5 $((total - 30)) bash "$root/scripts/gpu-session" run $((total - 45)) --packs-only >"$res/session.log" 2>&1; at "packs done") &
(OUT="$res/leave" timeout -k 5 $((total * 60 / 100)) nice -n 5 bash "$D/leave-one.sh" run "$dev/leave-one" 3 >"$res/leave.log" 2>&1
 at "leave-one done"
 left=$((total - 40 - (SECONDS - t0)))
 [ $left -gt 30 ] && OUT="$res/arena" timeout -k 5 $left bash "$D/arena.sh" run "$dev/arena" 2 >"$res/arena.log" 2>&1
 at "arena done") &
# the bench set's binaries for a timing call right after this one (the machine stays warm; that
# call carries nothing, so build/device stays there): `bash build/device/bench/run.sh --run-only ...`
(timeout -k 5 $((total - 20)) nice -n 10 bash "$dev/bench/run.sh" --compile-only --jobs 2 >"$res/bench-compile.log" 2>&1; at "bench compiled") &
wait
at "all done"
tar -C "$res" -czf "${OUT:-$dev}/results.tgz" . 2>/dev/null
cp "$res/session/gpu1.tsv" "$res/session/gpu2.tsv" "$res/session/runtime-tests.txt" "$res/session/probes.txt" "${OUT:-$dev}/" 2>/dev/null
echo "== packs summary"; tail -n 60 "$res/session.log"
echo "== leave-one"; cat "$res/leave/leave-one.tsv" 2>/dev/null
echo "== arena"; cat "$res/arena/arena.tsv" 2>/dev/null | head -40
echo "== trace (rc lines)"; grep -E '^== ' "$res/trace/trace.txt" 2>/dev/null
