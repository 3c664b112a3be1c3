#include <cstdio>
namespace util { __device__ __forceinline__ int load(const int* p) { return __ldg(p); } }
// prefix sum over tiles, each link reads the carry the previous link wrote into carry[t]
__global__ void K(int* data, int* carry, int n, int t)
{
    __shared__ int c;
    if (threadIdx.x == 0) c = (t == 0) ? 0 : util::load(carry + t);   // carry[t] written by link t-1 before its launch
    __syncthreads();
    int i = t * 32 + threadIdx.x;
    int v = i < n ? data[i] : 0;
    // block inclusive scan (tiny, naive)
    __shared__ int s[32]; s[threadIdx.x] = v; __syncthreads();
    if (threadIdx.x == 0) { for (int k = 1; k < 32; ++k) s[k] += s[k - 1]; carry[t + 1] = c + s[31]; }
    __syncthreads();
    if (i < n) data[i] = c + s[threadIdx.x];
    if (threadIdx.x == 0 && (t + 1) * 32 < n) K<<<1, 32>>>(data, carry, n, t + 1);
}
int main() {
    const int n = 320; int h[n]; for (int i = 0; i < n; ++i) h[i] = 1;
    int *d, *carry; cudaMalloc(&d, sizeof h); cudaMalloc(&carry, 64 * sizeof(int));
    cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
    K<<<1, 32>>>(d, carry, n, 0); cudaDeviceSynchronize();
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    bool ok = true; for (int i = 0; i < n; ++i) ok &= h[i] == i + 1;
    printf("%s\n", ok ? "PASS" : "FAIL");
}
