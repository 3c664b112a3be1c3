// Probe (2026-11-30): promotion/src/test/resources/promote/forms/rv3_cub_device.cu as written, a plain CDP2
// program: does CUB's device-wide reduction launch from device code and order before the self-launch?
// A CUB device-wide algorithm called from device code launches its kernels into the block's NULL
// stream (relocatable build), then the self-launch into the same stream: CDP orders link t+1 after
// the reduction, so it reads the sum link t asked for. Promoted, the successor would not wait for it.
#include <cstdio>
#include <cub/device/device_reduce.cuh>
__global__ void K(const int* src, int* sum, void* tmp, size_t bytes, int* out, int t, int n) {
    if (threadIdx.x == 0) {
        out[t] = *sum;  // the sum the parent's reduction wrote before this link started
        if (t + 1 < n) {
            cub::DeviceReduce::Sum(tmp, bytes, src, sum, t + 1);
            K<<<1, 32>>>(src, sum, tmp, bytes, out, t + 1, n);
        }
    }
}
int main() {
    const int n = 20;
    int h[n], *src, *sum, *out;
    for (int i = 0; i < n; ++i) h[i] = i + 1;
    cudaMalloc(&src, n * sizeof(int)); cudaMalloc(&sum, sizeof(int)); cudaMalloc(&out, n * sizeof(int));
    cudaMemcpy(src, h, sizeof h, cudaMemcpyHostToDevice);
    cudaMemset(sum, 0, sizeof(int));
    size_t bytes = 0;
    cub::DeviceReduce::Sum(nullptr, bytes, src, sum, n);
    void* tmp = nullptr;
    cudaMalloc(&tmp, bytes);
    K<<<1, 32>>>(src, sum, tmp, bytes, out, 0, n);
    cudaError_t e = cudaDeviceSynchronize();
    int r[n]; cudaMemcpy(r, out, sizeof r, cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int t = 0; t < n; ++t) bad += r[t] != t * (t + 1) / 2;
    printf("%s cub_device: %d wrong of %d (%s)\n", bad || e ? "FAIL" : "PASS", bad, n, cudaGetErrorString(e));
    return bad != 0;
}
