// A parameter written through a structured binding by reference (KS) or a by-reference
// init-capture of a lambda (KL) is passed on "unchanged" by name: the successor must get the
// written value. Expected out[t] == 10 * t in both chains.
#include <cstdio>
struct Range { int lo, hi; };
__global__ void KS(Range r, int* out, int t, int n) {
    auto& [lo, hi] = r;
    if (threadIdx.x == 0) {
        out[t] = lo;
        lo += 10;  // the next link starts 10 further on
        if (t + 1 < n) KS<<<1, 32>>>(r, out, t + 1, n);
    }
}
__global__ void KL(int base, int* out, int t, int n) {
    if (threadIdx.x == 0) {
        out[t] = base;
        auto bump = [&b = base](int d) { b += d; };
        bump(10);
        if (t + 1 < n) KL<<<1, 32>>>(base, out, t + 1, n);
    }
}
int main() {
    const int n = 8;
    int *o1, *o2; cudaMalloc(&o1, n * sizeof(int)); cudaMalloc(&o2, n * sizeof(int));
    KS<<<1, 32>>>(Range{0, 100}, o1, 0, n);
    KL<<<1, 32>>>(0, o2, 0, n);
    cudaError_t e = cudaDeviceSynchronize();
    int a[n], b[n]; cudaMemcpy(a, o1, sizeof a, cudaMemcpyDeviceToHost); cudaMemcpy(b, o2, sizeof b, cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int i = 0; i < n; ++i) bad += (a[i] != 10 * i) + (b[i] != 10 * i);
    printf("%s pass_written: %d wrong of %d (%s)\n", bad || e ? "FAIL" : "PASS", bad, 2 * n, cudaGetErrorString(e));
    return bad != 0;
}
