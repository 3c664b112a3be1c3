#include <cstdio>
typedef int& IntRef;
// skip empty tiles: advances t (through a reference parameter spelled with a typedef)
__device__ void skipEmpty(IntRef t, const int* in, int n) { while (t < n && in[t] == 0) ++t; }

__global__ void K(const int* in, int* out, int n, int t, int acc)
{
    __shared__ int st;
    if (threadIdx.x == 0) { skipEmpty(t, in, n); st = t; }
    __syncthreads();
    if (threadIdx.x == 0 && st < n) out[st] = acc;
    if (threadIdx.x == 0 && t + 1 < n) K<<<1, blockDim.x>>>(in, out, n, t + 1, acc + 1);
}
int main() {
    const int n = 12; int hin[n] = {1,0,0,1,1,0,1,0,0,0,1,1};
    int *in, *out; cudaMalloc(&in, sizeof hin); cudaMalloc(&out, sizeof hin);
    cudaMemcpy(in, hin, sizeof hin, cudaMemcpyHostToDevice); cudaMemset(out, 0xff, sizeof hin);
    K<<<1, 32>>>(in, out, n, 0, 0); cudaDeviceSynchronize();
    int h[n]; cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
    // CPU reference
    int ref[n]; for (int i = 0; i < n; ++i) ref[i] = -1;
    for (int t = 0, acc = 0; t < n; ++t, ++acc) { int s = t; while (s < n && hin[s] == 0) ++s; if (s < n) ref[s] = acc; t = s; }
    bool ok = true; for (int i = 0; i < n; ++i) ok &= h[i] == ref[i];
    printf("%s\n", ok ? "PASS" : "FAIL");
}
