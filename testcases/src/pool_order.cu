// pool_order: one thread's two launches, the first aggregated, the second launched as written.
//
// Each thread of orderParent launches writer (its slot of a gets i + 1), then reader (copies a[i]
// into b[i]) into the NULL stream: reader must see writer's value. reader takes a 2 KiB argument,
// so with a small pool (klap --pool-size=64K, scripts/gpu-tier's *-pool64k variants) the slots of
// a warp's or block's reader launches never fit: that site always runs in direct mode (each thread
// launches as written) while writer is aggregated. A direct launch that overtook the group's
// aggregated writer launch (issue 11's fallback, found by review) leaves b[i] = 0.
//
// Options: -n parent threads (65536)  -b parent block (256)

#include "common/check.cuh"

#include <vector>

struct Payload {
    int pad[512];  // 2 KiB: 32 of them are more than a 64 KiB pool
};

__global__ void writer(int *a, int i) { a[i] = i + 1; }

__global__ void reader(const int *a, int *b, int i, Payload p) { b[i] = a[i] + p.pad[i % 512]; }

__global__ void orderParent(int *a, int *b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    writer<<<1, 1>>>(a, i);
    Payload p{};
    reader<<<1, 1>>>(a, b, i, p);
}

int main(int argc, char **argv) {
    tc::g_name = "pool_order";
    const int n = (int)tc::argInt(argc, argv, "-n", 65536);
    const int block = (int)tc::argInt(argc, argv, "-b", 256);
    if (n < 1 || n > (1 << 22) || block < 1 || block > 1024)
        return tc::report(false, 0, "bad options (need 1<=n<=2^22, 1<=b<=1024)");
    tc::ensurePendingLaunches(2LL * n + 1024);
    int *dA = nullptr, *dB = nullptr;
    CUDA_CHECK(cudaMalloc(&dA, sizeof(int) * n));
    CUDA_CHECK(cudaMalloc(&dB, sizeof(int) * n));
    CUDA_CHECK(cudaMemset(dA, 0, sizeof(int) * n));
    CUDA_CHECK(cudaMemset(dB, 0, sizeof(int) * n));
    tc::GpuTimer timer;
    timer.start();
    orderParent<<<(n + block - 1) / block, block>>>(dA, dB, n);
    CUDA_CHECK_LAUNCH();
    timer.stop();
    float ms = timer.ms();
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<int> b(n);
    CUDA_CHECK(cudaMemcpy(b.data(), dB, sizeof(int) * n, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(dA));
    CUDA_CHECK(cudaFree(dB));
    for (int i = 0; i < n; ++i) {
        if (b[i] != i + 1) {
            char msg[160];
            std::snprintf(msg, sizeof msg, "b[%d] = %d, want %d (a reader ran before its writer)", i, b[i], i + 1);
            return tc::report(false, ms, msg);
        }
    }
    return tc::report(true, ms, "");
}
