// dims: launch configurations, argument kinds and control flow around device launches.
//
// dimsParent (2-D thread blocks of 32x4) has two launch sites with two different child
// kernels:
//  - site A, under a divergent `if (t % 3 != 0)`: childA<<<dim3(gx, gy), blockA, shmem>>>
//    with a per-thread 2-D grid, a 2-D block passed in as a dim3 kernel parameter and a
//    per-thread amount of dynamic shared memory (extern __shared__ in childA);
//  - site B, after an early `return` of the threads with t % 5 == 4:
//    childB<unsigned int><<<1 + t % 4, dim3(4, 2, 2)>>>, a template kernel with a 3-D block.
// Both children call __device__ helpers that read blockIdx/blockDim/gridDim/threadIdx and
// atomically add a hash of (site, parent thread, salt, all indices and dimensions) to the
// output slot of that (parent thread, child block, child thread). The host checks that every
// slot holds exactly one hash (a second execution would double it) and untouched slots are 0.
//
// Options: -n parent threads (5000)  -s salt (12345)

#include "common/check.cuh"

#include <vector>

constexpr int A_MAX_BLOCKS = 3 * 2;  // gridA is at most 3 x 2 blocks
constexpr int B_MAX_BLOCKS = 4;      // gridB is at most 4 blocks
constexpr int B_THREADS = 4 * 2 * 2; // blockB = (4, 2, 2)

__host__ __device__ inline unsigned int mix(unsigned int h, unsigned int v) {
    h ^= v + 0x9e3779b9u + (h << 6) + (h >> 2);
    return h * 0x85ebca6bu;
}

// Hash identifying one child thread; odd, so that a doubled value never equals it.
__host__ __device__ inline unsigned int childHash(int site, int parent, unsigned int salt, unsigned int bx,
                                                  unsigned int by, unsigned int bz, unsigned int gx,
                                                  unsigned int gy, unsigned int gz, unsigned int dx,
                                                  unsigned int dy, unsigned int dz, unsigned int tx,
                                                  unsigned int ty, unsigned int tz) {
    unsigned int h = mix(0x12345u, (unsigned int)site);
    h = mix(h, (unsigned int)parent);
    h = mix(h, salt);
    h = mix(h, bx);
    h = mix(h, by);
    h = mix(h, bz);
    h = mix(h, gx);
    h = mix(h, gy);
    h = mix(h, gz);
    h = mix(h, dx);
    h = mix(h, dy);
    h = mix(h, dz);
    h = mix(h, tx);
    h = mix(h, ty);
    h = mix(h, tz);
    return h | 1u;
}

// Linear thread index within the block.
__device__ int threadInBlock() {
    return (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
}

// Output slot of this thread: linear block index * threads per block + thread in block.
__device__ int outputSlot() {
    int block = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
    return block * (blockDim.x * blockDim.y * blockDim.z) + threadInBlock();
}

__device__ unsigned int myHash(int site, int parent, unsigned int salt) {
    return childHash(site, parent, salt, blockIdx.x, blockIdx.y, blockIdx.z, gridDim.x, gridDim.y,
                     gridDim.z, blockDim.x, blockDim.y, blockDim.z, threadIdx.x, threadIdx.y,
                     threadIdx.z);
}

// Dynamic shared memory: one word per thread plus `extra` words filled by thread 0.
__global__ void childA(unsigned int *out, int parent, unsigned int salt, int extra) {
    extern __shared__ unsigned int sh[];
    const int nt = blockDim.x * blockDim.y * blockDim.z;
    const int lt = threadInBlock();
    sh[lt] = (unsigned int)(lt * 7 + parent);
    if (lt == 0) {
        for (int k = 0; k < extra; ++k) sh[nt + k] = (unsigned int)(k ^ parent);
    }
    __syncthreads();
    bool ok = sh[nt - 1 - lt] == (unsigned int)((nt - 1 - lt) * 7 + parent);
    for (int k = 0; k < extra; ++k) ok = ok && sh[nt + k] == (unsigned int)(k ^ parent);
    atomicAdd(&out[outputSlot()], ok ? myHash(0, parent, salt) : 2u);
}

template <typename T>
__global__ void childB(T *out, int parent, T salt) {
    atomicAdd(&out[outputSlot()], (T)myHash(1, parent, (unsigned int)salt));
}

__global__ void dimsParent(unsigned int *outA, unsigned int *outB, int n, unsigned int salt, dim3 blockA,
                           int slotsA) {
    int t = (blockIdx.x * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    if (t >= n) return;

    if (t % 3 != 0) {
        dim3 gridA(1 + (t / 7) % 3, 1 + (t / 3) % 2);
        int extra = (t % 4) * 4;
        size_t shmem = (blockA.x * blockA.y * blockA.z + extra) * sizeof(unsigned int);
        childA<<<gridA, blockA, shmem>>>(outA + (size_t)t * slotsA, t, salt, extra);
    }

    if (t % 5 == 4) return;
    childB<unsigned int><<<1 + t % 4, dim3(4, 2, 2)>>>(outB + (size_t)t * B_MAX_BLOCKS * B_THREADS, t,
                                                        salt ^ 0x5bd1e995u);
}

// Checks one parent thread's region of `slots` words for a child grid gx x gy of blocks bd.
static bool checkRegion(const unsigned int *out, int slots, bool launched, int site, int parent,
                        unsigned int salt, unsigned int gx, unsigned int gy, dim3 bd, char *msg,
                        size_t msgLen) {
    const int nt = (int)(bd.x * bd.y * bd.z);
    const int used = launched ? (int)(gx * gy) * nt : 0;
    for (int s = 0; s < slots; ++s) {
        unsigned int expected = 0;
        if (s < used) {
            unsigned int block = s / nt, thread = s % nt;
            expected = childHash(site, parent, salt, block % gx, block / gx, 0, gx, gy, 1, bd.x, bd.y,
                                 bd.z, thread % bd.x, (thread / bd.x) % bd.y, thread / (bd.x * bd.y));
        }
        if (out[s] != expected) {
            const char *what = expected == 0 ? "written although no child thread owns it"
                               : out[s] == 0 ? "not written (child thread missing)"
                               : out[s] == 2 * expected ? "written twice"
                                                        : "wrong indices or shared memory";
            std::snprintf(msg, msgLen, "site %c, parent thread %d, slot %d: %s (got %08x, expected %08x)",
                          'A' + site, parent, s, what, out[s], expected);
            return false;
        }
    }
    return true;
}

int main(int argc, char **argv) {
    tc::g_name = "dims";
    const int n = (int)tc::argInt(argc, argv, "-n", 5000);
    const unsigned int salt = (unsigned int)tc::argInt(argc, argv, "-s", 12345);
    if (n < 1 || n > (1 << 22)) return tc::report(false, 0, "bad options (need 1 <= n <= 4194304)");

    const dim3 blockA(8, 4, 1);
    const dim3 blockB(4, 2, 2);
    const int slotsA = A_MAX_BLOCKS * (int)(blockA.x * blockA.y * blockA.z);
    const int slotsB = B_MAX_BLOCKS * B_THREADS;
    const size_t sizeA = (size_t)n * slotsA, sizeB = (size_t)n * slotsB;

    tc::ensurePendingLaunches(2LL * n + 1024);

    unsigned int *dA = nullptr, *dB = nullptr;
    CUDA_CHECK(cudaMalloc(&dA, sizeof(unsigned int) * sizeA));
    CUDA_CHECK(cudaMalloc(&dB, sizeof(unsigned int) * sizeB));
    CUDA_CHECK(cudaMemset(dA, 0, sizeof(unsigned int) * sizeA));
    CUDA_CHECK(cudaMemset(dB, 0, sizeof(unsigned int) * sizeB));

    const dim3 parentBlock(32, 4);
    const int perBlock = (int)(parentBlock.x * parentBlock.y);
    tc::GpuTimer timer;
    timer.start();
    dimsParent<<<(n + perBlock - 1) / perBlock, parentBlock>>>(dA, dB, n, salt, blockA, slotsA);
    CUDA_CHECK_LAUNCH();
    timer.stop();
    float ms = timer.ms();
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<unsigned int> a(sizeA), b(sizeB);
    CUDA_CHECK(cudaMemcpy(a.data(), dA, sizeof(unsigned int) * sizeA, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(b.data(), dB, sizeof(unsigned int) * sizeB, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(dA));
    CUDA_CHECK(cudaFree(dB));

    char msg[256];
    for (int t = 0; t < n; ++t) {
        bool okA = checkRegion(&a[(size_t)t * slotsA], slotsA, t % 3 != 0, 0, t, salt, 1 + (t / 7) % 3,
                               1 + (t / 3) % 2, blockA, msg, sizeof msg);
        if (!okA) return tc::report(false, 0, msg);
        bool okB = checkRegion(&b[(size_t)t * slotsB], slotsB, t % 5 != 4, 1, t, salt ^ 0x5bd1e995u,
                               1 + t % 4, 1, blockB, msg, sizeof msg);
        if (!okB) return tc::report(false, 0, msg);
    }
    return tc::report(true, ms, nullptr);
}
