// Host-launched kernels only (no device-side launches): klap-nvcc gives this file to nvcc as is.
#include "segments.h"

__global__ void countWrong(const int *offsets, int n, const int *out, unsigned long long *wrong) {
    int s = blockIdx.x;
    if (s >= n) return;
    for (int i = offsets[s] + threadIdx.x; i < offsets[s + 1]; i += blockDim.x) {
        if (out[i] != s + 1) atomicAdd(wrong, 1ull);
    }
}

long long count_wrong(const int *d_offsets, int n, const int *d_out) {
    unsigned long long *d_wrong = nullptr, wrong = 0;
    if (cudaMalloc(&d_wrong, sizeof wrong) != cudaSuccess) return -1;
    cudaMemset(d_wrong, 0, sizeof wrong);
    countWrong<<<n, 128>>>(d_offsets, n, d_out, d_wrong);
    bool ok = cudaMemcpy(&wrong, d_wrong, sizeof wrong, cudaMemcpyDeviceToHost) == cudaSuccess;
    cudaFree(d_wrong);
    return ok ? (long long)wrong : -1;
}
