#include <cstdio>
struct Tile { int base; __device__ Tile() : base(blockIdx.x * 32) {} };
// one tile of 32 per link; the tile's base comes from a helper (block_base) in a header
__global__ void K(int* out, int n, int t)
{
    Tile tl; int base = tl.base + t * 32;   // blockIdx.x * 32 + t * 32: the host launches 1 block
    if (base + (int)threadIdx.x < n) out[base + threadIdx.x] = t;
    if (threadIdx.x == 0 && (t + 1) * 32 < n) K<<<1, 32>>>(out, n, t + 1);
}
int main() {
    const int n = 32 * 10; int *out; cudaMalloc(&out, n * sizeof(int)); cudaMemset(out, 0xff, n * sizeof(int));
    K<<<1, 32>>>(out, n, 0); cudaDeviceSynchronize();
    int h[n]; cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
    bool ok = true; for (int i = 0; i < n; ++i) ok &= h[i] == i / 32;
    printf("%s\n", ok ? "PASS" : "FAIL");
}
