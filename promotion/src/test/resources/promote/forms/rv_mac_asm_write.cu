#include <cstdio>
// a PTX helper macro (common in hand-tuned code); it writes its first operand
#define ASM_ADD(r, a, b) asm("add.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b))
__global__ void K(int* out, int n, unsigned t, int acc)
{
    ASM_ADD(t, t, 1u);                                  // t += 1: this link works on t + 1
    if (threadIdx.x == 0 && t < (unsigned)n) out[t] = acc;
    if (threadIdx.x == 0 && t + 1 < (unsigned)n) K<<<1, blockDim.x>>>(out, n, t + 1, acc + 1);
}
int main() {   // original: links t = 0, 2, 4, 6, 8 write out[1], out[3], ... = 0, 1, 2, ...
    const int n = 10; int* d; cudaMalloc(&d, n * sizeof(int)); cudaMemset(d, 0xff, n * sizeof(int));
    K<<<1, 32>>>(d, n, 0u, 0); cudaDeviceSynchronize();
    int h[n]; cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    bool ok = true; for (int i = 0; i < n; ++i) ok &= h[i] == (i % 2 ? i / 2 : -1);
    printf("%s\n", ok ? "PASS" : "FAIL");
}
