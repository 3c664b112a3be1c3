# Bisection of a hanging program's device launch sites (GPU session 2026-11-28, call 2).
# usage: python3 bisect.py ORIGINAL.cu OUTDIR [but]
# Writes OUTDIR/sites.txt (one line per launch `NAME<<<...>>>(...)` inside a __global__ or
# __device__ function: index, line, text) and, for each site K, only_K.cu (every other device
# launch replaced by `(void)0`) and, with `but`, but_K.cu (site K alone replaced). The variants are
# then transformed by klap like the original and run with a time limit (bisect-run.sh): they
# compute other results, only whether they finish matters.
import re, sys, os
src = open(sys.argv[1]).read()
out = sys.argv[2]; os.makedirs(out, exist_ok=True)
lines = src.split('\n')
# find device functions' extents by brace depth at top level
sites = []
depth = 0; header = ''; in_dev = False
pos = 0
starts = []
for i, l in enumerate(lines):
    if depth == 0 and l.strip() and not l.startswith(' ') and not l.startswith('}'):
        header = l
        in_dev = ('__global__' in l or '__device__' in l) and '__host__' not in l
    if in_dev:
        for m in re.finditer(r'\b[A-Za-z_][\w:]*(?:<[^<>;]*>)?\s*<<<', l):
            sites.append((i, m.start()))
    depth += l.count('{') - l.count('}')
def span(i, c):
    l = lines[i]
    j = l.index('>>>', c) + 3
    while l[j] != '(':
        j += 1
    d = 0
    for k in range(j, len(l)):
        if l[k] == '(':
            d += 1
        elif l[k] == ')':
            d -= 1
            if d == 0:
                return c, k + 1
    raise Exception('no end at line %d' % (i + 1))
spans = [(i,) + span(i, c) for i, c in sites]
def emit(name, keep):
    ls = list(lines)
    # replace from right to left within a line
    for i, a, b in sorted(spans, key=lambda s: (s[0], -s[1])):
        if (i, a, b) in keep:
            continue
        ls[i] = ls[i][:a] + '(void)0' + ls[i][b:]
    open(os.path.join(out, name), 'w').write('\n'.join(ls))
with open(os.path.join(out, 'sites.txt'), 'w') as f:
    for n, (i, a, b) in enumerate(spans):
        f.write('%d\tline %d\t%s\n' % (n, i + 1, lines[i][a:b][:80]))
for n, s in enumerate(spans):
    emit('only_%02d.cu' % n, {s})
    if len(sys.argv) > 3:
        emit('but_%02d.cu' % n, set(spans) - {s})
print(len(spans))
