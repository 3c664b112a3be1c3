# The watchdog variants of call 4 (GPU session 2026-11-28): klap's output of seeds 1038 (warp,
# block) and 1069 (block) as call 1 built it (packs.tgz: res1/logs.tgz, progs/fz_00NNNN/*.cu), with
# `#include "dbg.cuh"` (../../2026-11-27-h200/diag/dbg.cuh) before main and klapdbg_wait("fz_pN")
# after each host launch of a parent; _nopN drops that parent's host launch.
# usage: python3 make-watchdog.py PROGS OUTDIR
import re, sys
progs, out = sys.argv[1], sys.argv[2]
def mk(src, name, drop=None):
    res = []
    for l in open(src).read().split('\n'):
        if l.startswith('int main('):
            res.append('#include "dbg.cuh"')
        m = re.match(r'^  (fz_p\d)<<<', l)
        if m and drop == m.group(1):
            res.append('  // dropped: ' + l.strip())
            continue
        res.append(l)
        if m:
            res.append('  klapdbg_wait("%s");' % m.group(1))
    open('%s/%s.cu' % (out, name), 'w').write('\n'.join(res))
for g, seed, drops in (('warp', '1038', (None, 'fz_p0', 'fz_p1')), ('block', '1038', (None,)),
                       ('block', '1069', (None, 'fz_p0', 'fz_p1'))):
    for d in drops:
        mk('%s/fz_00%s/%s.cu' % (progs, seed, g), g[0] + seed + ('' if d is None else '_no' + d[3:]), d)
# w1038_ff / w1038_null: every recorded stream (cudaStream_t)0 -> cudaStreamFireAndForget, and back
w = open(out + '/w1038.cu').read()
open(out + '/w1038_ff.cu', 'w').write(w.replace('(cudaStream_t)0,', '(cudaStream_t)cudaStreamFireAndForget,'))
open(out + '/w1038_null.cu', 'w').write(w.replace('(cudaStream_t)(cudaStreamFireAndForget),', '(cudaStream_t)0,'))
