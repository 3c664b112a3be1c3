# The watchdog variants of call 4 (GPU session 2026-11-28): klap's output of seeds 1038 (warp,
# block) and 1069 (block) as call 1 built it (packs.tgz: res1/logs.tgz, progs/fz_00NNNN/*.cu), with
# `#include "dbg.cuh"` (../../2026-11-27-h200/diag/dbg.cuh) before main and klapdbg_wait("fz_pN")
# after each host launch of a parent; _nopN drops that parent's host launch.
# usage: python3 make-watchdog.py PROGS OUTDIR
#        python3 make-watchdog.py --one SRC OUT.cu   (one program: the watchdog after every host launch
#        written `  NAME<<<...` or `  (NAME<<<...` in main; used by trace.sh)
import re, sys
def mk_to(src, dst, drop=None):
    res, in_main = [], False
    for l in open(src).read().split('\n'):
        if l.startswith('int main('):
            res.append('#include "dbg.cuh"')
            in_main = True
        m = re.match(r'^  \(?(\w+)<<<', l) if in_main else None
        if m and drop == m.group(1):
            res.append('  // dropped: ' + l.strip())
            continue
        res.append(l)
        if m:
            res.append('  klapdbg_wait("%s");' % m.group(1))
    open(dst, 'w').write('\n'.join(res))
if sys.argv[1] == '--one':
    mk_to(sys.argv[2], sys.argv[3])
    sys.exit(0)
progs, out = sys.argv[1], sys.argv[2]
def mk(src, name, drop=None):
    mk_to(src, '%s/%s.cu' % (out, name), drop)
for g, seed, drops in (('warp', '1038', (None, 'fz_p0', 'fz_p1')), ('block', '1038', (None,)),
                       ('block', '1069', (None, 'fz_p0', 'fz_p1'))):
    for d in drops:
        mk('%s/fz_00%s/%s.cu' % (progs, seed, g), g[0] + seed + ('' if d is None else '_no' + d[3:]), d)
# w1038_ff / w1038_null: every recorded stream (cudaStream_t)0 -> cudaStreamFireAndForget, and back
w = open(out + '/w1038.cu').read()
open(out + '/w1038_ff.cu', 'w').write(w.replace('(cudaStream_t)0,', '(cudaStream_t)cudaStreamFireAndForget,'))
open(out + '/w1038_null.cu', 'w').write(w.replace('(cudaStream_t)(cudaStreamFireAndForget),', '(cudaStream_t)0,'))
