// PO/PAO: the part before the pragma reads p->lo; the dependent part writes p->lo through a
// structured binding before launching the next link. KLAP III-C condition 2 is violated, so the
// overlap must be dropped. Expected: out[t] == t (each link sees the value its parent stored).
#include <cstdio>
struct Range { int lo, hi; };
__global__ void K(Range* p, int* out, int t, int n) {
    int seen = p->lo;            // independent part (claimed): reads p->lo
#pragma klap overlap
    if (threadIdx.x == 0) {
        out[t] = seen;
        auto& [lo, hi] = *p;
        lo = t + 1;              // the next link must see this
        if (t + 1 < n) K<<<1, 32>>>(p, out, t + 1, n);
    }
}
int main() {
    const int n = 16;
    Range* p; int* out; cudaMalloc(&p, sizeof(Range)); cudaMalloc(&out, n * sizeof(int));
    cudaMemset(p, 0, sizeof(Range));
    K<<<1, 32>>>(p, out, 0, n);
    cudaError_t e = cudaDeviceSynchronize();
    int r[n]; cudaMemcpy(r, out, sizeof r, cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int t = 0; t < n; ++t) bad += r[t] != t;
    printf("%s overlap_binding: %d wrong of %d (%s)\n", bad || e ? "FAIL" : "PASS", bad, n, cudaGetErrorString(e));
    return bad != 0;
}
