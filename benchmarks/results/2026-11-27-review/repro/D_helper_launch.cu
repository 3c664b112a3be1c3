// The link launches a worker grid through a helper function, into the block's NULL stream, then
// launches the next link into the same stream: CDP runs the next link after the worker finished.
// Link t+1 reads what link t's worker wrote. Expected out[t] == 100 + t - 1 for t >= 1.
#include <cstdio>
__global__ void work(int* slot, int v) { if (threadIdx.x == 0) *slot = v; }
__device__ void prepare(int* slot, int v) { work<<<1, 32>>>(slot, v); }
__global__ void K(int* slot, int* out, int t, int n) {
    if (threadIdx.x == 0) {
        out[t] = *slot;                   // written by the previous link's worker grid
        if (t + 1 < n) {
            prepare(slot, 100 + t);
            K<<<1, 32>>>(slot, out, t + 1, n);
        }
    }
}
int main() {
    const int n = 16;
    int *slot, *out; cudaMalloc(&slot, sizeof(int)); cudaMalloc(&out, n * sizeof(int));
    cudaMemset(slot, 0, sizeof(int));
    K<<<1, 32>>>(slot, out, 0, n);
    cudaError_t e = cudaDeviceSynchronize();
    int r[n]; cudaMemcpy(r, out, sizeof r, cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int t = 1; t < n; ++t) bad += r[t] != 100 + t - 1;
    printf("%s helper_launch: %d wrong of %d (%s)\n", bad || e ? "FAIL" : "PASS", bad, n - 1, cudaGetErrorString(e));
    return bad != 0;
}
