#!/bin/bash
cd "$(dirname "$0")"; o=${OUT:-/tmp}/dbg2.txt
nv() { nvcc -std=c++17 -rdc=true -arch=sm_90 -I . -I common "$@"; }
for f in lw_nolb lk_nolb orig orig_lb orig_tail; do nv -o $f $f.cu > $f.log 2>&1 & done; wait
r() { echo "== $*" >> $o; ( KLAPDBG_MS=3000 timeout -k 2 8 "$@" ) >> $o 2>&1; echo "rc=$?" >> $o; }
for b in orig orig_lb orig_tail lw_nolb lk_nolb; do r ./$b; done
r ./orig_tail -n 32 -r 6
r ./lw_nolb -n 32 -r 2
for f in *.log; do [ -s $f ] && { echo "== $f"; grep -m3 error $f; } >> $o; done
cat $o
