// Device cudaMemcpyAsync into the block's NULL stream, then the self-launch into the same stream:
// CDP orders the child after the copy (stream order), so link t+1 reads the value link t copied.
#include <cstdio>
__global__ void K(const int* src, int* slot, int* out, int t, int n) {
    if (threadIdx.x == 0) {
        out[t] = *slot;  // the value the parent copied before launching this link
        if (t + 1 < n) {
            cudaMemcpyAsync(slot, src + t + 1, sizeof(int), cudaMemcpyDeviceToDevice, 0);
            K<<<1, 32>>>(src, slot, out, t + 1, n);
        }
    }
}
int main() {
    const int n = 20;
    int h[n], *src, *slot, *out;
    for (int i = 0; i < n; ++i) h[i] = 1000 + i;
    cudaMalloc(&src, n * sizeof(int)); cudaMalloc(&slot, sizeof(int)); cudaMalloc(&out, n * sizeof(int));
    cudaMemcpy(src, h, sizeof h, cudaMemcpyHostToDevice);
    cudaMemcpy(slot, h, sizeof(int), cudaMemcpyHostToDevice);
    cudaMemset(out, 0, sizeof h);
    K<<<1, 32>>>(src, slot, out, 0, n);
    cudaError_t e = cudaDeviceSynchronize();
    int r[n]; cudaMemcpy(r, out, sizeof r, cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int i = 0; i < n; ++i) bad += r[i] != h[i];
    printf("%s memcpy_async: %d wrong of %d (%s)\n", bad || e ? "FAIL" : "PASS", bad, n, cudaGetErrorString(e));
    return bad != 0;
}
