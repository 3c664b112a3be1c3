#!/bin/bash
# diagnostic call 4 of 2026-11-28 (call 3 ran these at once into one file: unreadable): fz_001038
# warp/block and fz_001069 block with the watchdog (dbg.cuh) after each host launch, one parent
# alone, knobs, and the children's streams changed; one at a time, one output file each
cd "$(dirname "$0")"; o=${OUT:-/tmp}/diag.txt
nv() { nvcc -std=c++17 -rdc=true -arch=sm_90 -I . "$@"; }
for f in w1038 w1038_nop0 w1038_nop1 b1038 b1069 b1069_nop0 b1069_nop1 w1038_ff w1038_null; do nv -o $f $f.cu > $f.log 2>&1 & done
nv -DKLAP_PENDING_WAIT_US=0 -o w1038_pw0 w1038.cu > a.log 2>&1 &
nv -DKLAP_PENDING_BUDGET_PERCENT=100 -o w1038_b100 w1038.cu > b.log 2>&1 &
nv -DKLAP_POOL_SIZE_BYTES=1073741824ull -o w1038_pool1g w1038.cu > c.log 2>&1 &
nv -DKLAP_PENDING_LAUNCH_LIMIT=262144 -o w1038_pl256k w1038.cu > d.log 2>&1 &
nv -DKLAP_POOL_SEGMENT_BYTES=4096ull -o w1038_seg4k w1038.cu > e.log 2>&1 &
nv -DKLAP_POOL_FALLBACK_WAIT_US=1 -o w1038_fw1 w1038.cu > f.log 2>&1 &
wait; grep -l ' error' *.log
for b in w1038 w1038 w1038_nop0 w1038_nop1 b1038 b1069 b1069_nop0 b1069_nop1 w1038_ff w1038_null w1038_pw0 w1038_b100 w1038_pool1g w1038_pl256k w1038_seg4k w1038_fw1; do
  KLAPDBG_MS=2500 timeout -k 2 8 ./$b > $b.out 2>&1; rc=$?
  echo "== $b rc=$rc: $(tr '\n' ' ' < $b.out | cut -c1-400)" | tee -a $o
done
