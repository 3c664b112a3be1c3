// The parent kernel launches one child grid per segment (a device-side launch): klap aggregates
// the launches of a block (or warp) into one.
#include "segments.h"

__global__ void fillSegment(int *out, int len, int value) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < len) out[i] = value;
}

__global__ void fillAll(const int *offsets, int n, int *out) {
    int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= n) return;
    int start = offsets[s];
    int len = offsets[s + 1] - start;
    if (len > 0) {
        fillSegment<<<(len + 63) / 64, 64>>>(out + start, len, s + 1);
    }
}

cudaError_t fill_segments(const int *d_offsets, int n, int *d_out) {
    cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, n + 64);
    fillAll<<<(n + 127) / 128, 128>>>(d_offsets, n, d_out);
    cudaError_t e = cudaGetLastError();
    return e != cudaSuccess ? e : cudaDeviceSynchronize();
}
