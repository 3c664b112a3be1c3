// big_smem: a parent that takes the whole default 48 KiB of dynamic shared memory.
//
// Each block of smemParent stages its slice of the input in 48 KiB of dynamic shared memory (the
// most a kernel without static shared memory may ask for without cudaFuncSetAttribute, CUDA
// programming guide, "Shared Memory"); each thread whose value is odd then launches a child that
// counts it. klap's block-granularity parent gets static shared memory of its own (the scan scratch
// of klap::block_group), which lowers that default to less than 48 KiB: without
// klap::host_smem raising the limit, the launch fails with "invalid argument" (found by reading,
// 2026-11-27; no GPU was lent). The launch goes once into the NULL stream and once into a stream
// of its own (both host-launch forms klap rewrites).
//
// Options: -n parent threads (65536)  -b parent block (256)

#include "common/check.cuh"

#include <vector>

constexpr int kSmemBytes = 48 * 1024;

__global__ void countOdd(int *hits, int i) { atomicAdd(&hits[i], 1); }

__global__ void smemParent(const int *in, int *hits, int n) {
    extern __shared__ int tile[];  // kSmemBytes: only blockDim.x ints are used
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? in[i] : 0;
    __syncthreads();
    if (i < n && (tile[threadIdx.x] & 1)) countOdd<<<1, 1>>>(hits, i);
}

int main(int argc, char **argv) {
    tc::g_name = "big_smem";
    const int n = (int)tc::argInt(argc, argv, "-n", 65536);
    const int block = (int)tc::argInt(argc, argv, "-b", 256);
    if (n < 1 || n > (1 << 22) || block < 1 || block > 1024)
        return tc::report(false, 0, "bad options (need 1<=n<=2^22, 1<=b<=1024)");
    tc::ensurePendingLaunches(n + 1024LL);
    std::vector<int> h(n);
    for (int i = 0; i < n; ++i) h[i] = (i * 7 + 3) % 5;
    int *dIn = nullptr, *dHits = nullptr;
    CUDA_CHECK(cudaMalloc(&dIn, sizeof(int) * n));
    CUDA_CHECK(cudaMalloc(&dHits, sizeof(int) * n));
    CUDA_CHECK(cudaMemcpy(dIn, h.data(), sizeof(int) * n, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dHits, 0, sizeof(int) * n));
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreate(&s));
    tc::GpuTimer timer;
    timer.start();
    smemParent<<<(n + block - 1) / block, block, kSmemBytes>>>(dIn, dHits, n);
    CUDA_CHECK_LAUNCH();
    timer.stop();
    float ms = timer.ms();
    CUDA_CHECK(cudaDeviceSynchronize());
    smemParent<<<(n + block - 1) / block, block, kSmemBytes, s>>>(dIn, dHits, n);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaStreamSynchronize(s));
    CUDA_CHECK(cudaStreamDestroy(s));
    std::vector<int> hits(n);
    CUDA_CHECK(cudaMemcpy(hits.data(), dHits, sizeof(int) * n, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(dIn));
    CUDA_CHECK(cudaFree(dHits));
    for (int i = 0; i < n; ++i) {
        const int want = (h[i] & 1) ? 2 : 0;
        if (hits[i] != want) {
            char msg[160];
            std::snprintf(msg, sizeof msg, "hits[%d] = %d, want %d", i, hits[i], want);
            return tc::report(false, ms, msg);
        }
    }
    return tc::report(true, ms, "");
}
