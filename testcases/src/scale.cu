// scale: a huge parent grid in which a sparse, thread-dependent subset of threads launches a tiny
// child each, repeated by the host without synchronizing (issue 11: memory that scales).
//
// parent<<<ceil(n / 256), 256>>>(out, n, rep): thread t < n launches
//     work<<<1 + h % 2, 32>>>(out, t, rep)      if h % every == 0, h = mix(t, rep)
// and returns early when t >= n (a guard). work adds 1 to out[(t * 64 + blockIdx.x * 32 +
// threadIdx.x) % slots] with atomicAdd. The host enqueues `reps` parent launches back to back
// into one stream (no synchronization in between), then checks every slot against the CPU count.
// With -n 16777216 (2^24 parent threads) and the default -e 8, two million child grids are
// launched per repetition: far more than CDP2's pending-launch buffer holds, which klap's
// aggregated launches must stay within (or throttle to), without running out of pool memory.
//
// Options: -n parent threads (1 << 16)  -e one in `every` threads launches (8)
//          -r repetitions enqueued without synchronizing (4)  -m slots (1 << 20)

#include "common/check.cuh"

#include <vector>

__host__ __device__ inline unsigned scaleMix(unsigned a, unsigned b) {
    unsigned h = a * 0x9e3779b1u ^ (b + 0x7f4a7c15u);
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    return h;
}

__global__ void work(unsigned *out, unsigned t, unsigned slots) {
    unsigned i = (t * 64u + blockIdx.x * 32u + threadIdx.x) % slots;
    atomicAdd(&out[i], 1u);
}

__global__ void parent(unsigned *out, unsigned n, unsigned every, unsigned rep, unsigned slots) {
    unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    unsigned h = scaleMix(t, rep);
    if (h % every == 0u) work<<<1u + h % 2u, 32>>>(out, t, slots);
}

int main(int argc, char **argv) {
    tc::g_name = "scale";
    const long long n = tc::argInt(argc, argv, "-n", 1 << 16);
    const long long every = tc::argInt(argc, argv, "-e", 8);
    const long long reps = tc::argInt(argc, argv, "-r", 4);
    const long long slots = tc::argInt(argc, argv, "-m", 1 << 20);
    if (n < 1 || n > (1LL << 26) || every < 1 || reps < 1 || reps > 1000 || slots < 64 || slots > (1LL << 26))
        return tc::report(false, 0, "bad options (need 1<=n<=2^26, e>=1, 1<=r<=1000, 64<=m<=2^26)");

    std::vector<unsigned> expect((size_t)slots, 0u);
    long long launches = 0;
    for (long long r = 0; r < reps; ++r)
        for (long long t = 0; t < n; ++t) {
            unsigned h = scaleMix((unsigned)t, (unsigned)r);
            if (h % (unsigned)every != 0u) continue;
            ++launches;
            for (unsigned b = 0; b < 1u + h % 2u; ++b)
                for (unsigned x = 0; x < 32u; ++x) ++expect[(size_t)(((unsigned)t * 64u + b * 32u + x) % (unsigned)slots)];
        }
    // The original (CDP) program needs a pending-launch slot for each child of one repetition
    // that has not started yet; klap's output sizes or throttles its own launches.
    tc::ensurePendingLaunches(launches / reps + 1024 < (1 << 22) ? launches / reps + 1024 : (1 << 22));

    unsigned *out = nullptr;
    CUDA_CHECK(cudaMalloc(&out, (size_t)slots * sizeof(unsigned)));
    CUDA_CHECK(cudaMemset(out, 0, (size_t)slots * sizeof(unsigned)));
    tc::GpuTimer timer;
    timer.start();
    const unsigned grid = (unsigned)((n + 255) / 256);
    for (long long r = 0; r < reps; ++r) {
        parent<<<grid, 256>>>(out, (unsigned)n, (unsigned)every, (unsigned)r, (unsigned)slots);
        CUDA_CHECK_LAUNCH();
    }
    timer.stop();
    float ms = timer.ms();
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<unsigned> got((size_t)slots);
    CUDA_CHECK(cudaMemcpy(got.data(), out, (size_t)slots * sizeof(unsigned), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(out));
    for (long long i = 0; i < slots; ++i)
        if (got[(size_t)i] != expect[(size_t)i]) {
            char why[160];
            std::snprintf(why, sizeof why, "slot %lld = %u, expected %u (%lld launches)", i, got[(size_t)i],
                          expect[(size_t)i], launches);
            return tc::report(false, ms, why);
        }
    return tc::report(true, ms, "");
}
