#!/bin/bash
# bisection of the hanging programs of 2026-11-28 call 1 (call 2 of the session): each variant keeps one device launch site
# (only_NN) or drops one (but_NN); built here, run with a 6 s limit
cd "$(dirname "$0")"; R=$(pwd)
bld() { d=$(dirname $1); b=$(basename $1 .cu); x=(); [ -f $d/main.cu ] && x=($d/main.cu)
  nvcc -std=c++17 -rdc=true -arch=sm_90 -I $R -I $d -o $d/$b.bin $1 "${x[@]}" > $d/$b.nvcc.log 2>&1 || echo "NVCCFAIL $1"; }
export -f bld; export R
nvcc -std=c++17 -rdc=true -arch=sm_90 -o probe probe.cu && for a in "5" "5 256 6" "0 32 1" "0 32 2" "5 32 1" "1 32 6" "0 33 6"; do echo "probe $a: $(timeout -k 1 8 ./probe $a 2>&1 | tail -1) (rc $?)"; done | tee ${OUT:-.}/probe.txt &
ls */*_*.cu | grep -v main.cu | xargs -P 16 -n 1 bash -c 'bld "$0"'
wait; echo "built at $SECONDS s"
rn() { b=${1%.bin}; timeout -k 1 5 ./$1 > $b.out 2>&1; rc=$?; echo -e "$b\t$rc\t$(grep -m1 -o 'PASS\|FAIL' $b.out)"; }
export -f rn
ls */*.bin | xargs -P 8 -n 1 bash -c 'rn "$0"' | sort > ${OUT:-.}/bisect.tsv
echo "ran at $SECONDS s"
awk -F'\t' '$2==124||$2==137' ${OUT:-.}/bisect.tsv
cat */sites.txt > /dev/null; for d in */; do echo "$d"; cat $d/sites.txt; done > ${OUT:-.}/sites.txt
