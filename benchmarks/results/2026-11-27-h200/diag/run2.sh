#!/bin/bash
# diagnostic run of 2026-11-27 (see dbg.cuh); OUT gets dbg.txt
cd "$(dirname "$0")"
o=${OUT:-/tmp}/dbg.txt
nv() { nvcc -std=c++17 -rdc=true -arch=sm_90 -I . -I common "$@"; }
for f in loops_warp loops_block loops_kpool loops_wpool; do nv -o $f $f.cu > $f.log 2>&1 & done
nv -DKLAP_PENDING_WAIT_US=0 -o loops_warp_pw0 loops_warp.cu > pw0.log 2>&1 &
nv -DKLAP_PENDING_BUDGET_PERCENT=100 -DKLAP_POOL_FALLBACK_WAIT_US=1 -o loops_warp_b100 loops_warp.cu > b100.log 2>&1 &
nv -o fz1038_warp fz1038_warp.cu > fz.log 2>&1 &
wait
ls -la loops_* >> $o
r() { echo "== $* ($(date +%T))" >> $o; ( timeout -k 2 ${T:-20} "$@" ) >> $o 2>&1; echo "rc=$?" >> $o; }
nvidia-smi -L >> $o
for b in loops_warp loops_block loops_kpool loops_wpool loops_warp_pw0 loops_warp_b100; do r ./$b; done
r ./loops_warp -n 32 -r 6
r ./loops_warp -n 256 -r 1
r ./loops_warp -n 2048 -r 1
r ./loops_warp -b 32
r ./loops_warp -n 2048 -r 6 -s 9
r ./fz1038_warp
T=70 KLAPDBG_MS=60000 r compute-sanitizer --tool synccheck ./loops_warp -n 64 -r 2
T=50 r compute-sanitizer --tool synccheck ./fz1038_warp
cat $o
