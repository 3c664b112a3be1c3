// Host-side helpers for the CDP benchmark programs bfs, bt, qt, bh and ccl
// (testcases/bench/<name>/<name>.cu and <name>_flat.cu): CUDA error checking, cudaEvent timing,
// a deterministic PRNG, option parsing, the median of the repetitions and the one-line
// PASS/FAIL report (with the first repetition and the median of the others). Host code only: all device code lives in the .cu files.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

// Checks a CUDA runtime call made on the host; on error prints a FAIL line and exits 1.
#define CUDA_CHECK(call)                                                              \
    do {                                                                              \
        cudaError_t err_ = (call);                                                    \
        if (err_ != cudaSuccess) {                                                    \
            std::printf("FAIL %s: %s:%d: %s -> %s\n", ba::g_name, __FILE__, __LINE__, \
                        #call, cudaGetErrorString(err_));                             \
            std::exit(1);                                                             \
        }                                                                             \
    } while (0)

// Checks for an error after a host-side kernel launch.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

namespace ba {

// Name of the running benchmark, used in FAIL lines printed by CUDA_CHECK.
inline const char *g_name = "?";

// splitmix64: small, fast and fully deterministic across platforms.
struct Rng {
    uint64_t s;
    explicit Rng(uint64_t seed) : s(seed) {}
    uint64_t next() {
        uint64_t z = (s += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    // Uniform integer in [0, bound) (bound > 0); the modulo bias is irrelevant here.
    uint32_t below(uint32_t bound) { return (uint32_t)(next() % bound); }
    // Uniform float in [0, 1) with 24 random bits.
    float uniform() { return (float)(next() >> 40) * (1.0f / 16777216.0f); }
    // Uniform double in [0, 1) with 53 random bits.
    double uniformD() { return (double)(next() >> 11) * (1.0 / 9007199254740992.0); }
};

// Returns the integer value of option `flag` (e.g. "-n") from argv, or `def`.
// Exits with a FAIL line when the value is missing or not a number.
inline long long argInt(int argc, char **argv, const char *flag, long long def) {
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], flag) == 0) {
            char *end = nullptr;
            long long v = (i + 1 < argc) ? std::strtoll(argv[i + 1], &end, 0) : 0;
            if (i + 1 >= argc || end == argv[i + 1] || *end != '\0') {
                std::printf("FAIL %s: option %s needs an integer value\n", g_name, flag);
                std::exit(1);
            }
            return v;
        }
    }
    return def;
}

// Elapsed time between two cudaEvents recorded on a stream (default: the legacy default
// stream, which waits for and is waited on by all blocking streams).
struct GpuTimer {
    cudaEvent_t startEv{}, stopEv{};
    GpuTimer() {
        CUDA_CHECK(cudaEventCreate(&startEv));
        CUDA_CHECK(cudaEventCreate(&stopEv));
    }
    ~GpuTimer() {
        cudaEventDestroy(startEv);
        cudaEventDestroy(stopEv);
    }
    GpuTimer(const GpuTimer &) = delete;
    GpuTimer &operator=(const GpuTimer &) = delete;
    void start(cudaStream_t s = 0) { CUDA_CHECK(cudaEventRecord(startEv, s)); }
    void stop(cudaStream_t s = 0) { CUDA_CHECK(cudaEventRecord(stopEv, s)); }
    // Waits for the stop event and returns the elapsed milliseconds.
    float ms() {
        CUDA_CHECK(cudaEventSynchronize(stopEv));
        float t = 0.0f;
        CUDA_CHECK(cudaEventElapsedTime(&t, startEv, stopEv));
        return t;
    }
};

// Raises the device-runtime pending launch pool to at least `count` launches
// (CDP2 has no overflow pool: a launch beyond it fails).
inline void ensurePendingLaunches(long long count) {
    size_t cur = 0;
    CUDA_CHECK(cudaDeviceGetLimit(&cur, cudaLimitDevRuntimePendingLaunchCount));
    if ((long long)cur < count)
        CUDA_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, (size_t)count));
}

// Median of the repetition times (mean of the two middle values for an even count).
inline float median(std::vector<float> v) {
    if (v.empty()) return 0.0f;
    std::sort(v.begin(), v.end());
    size_t m = v.size() / 2;
    return (v.size() % 2) ? v[m] : 0.5f * (v[m - 1] + v[m]);
}

// Parses -r REPS (default 1, at least 1).
inline int argReps(int argc, char **argv) {
    long long r = argInt(argc, argv, "-r", 1);
    if (r < 1 || r > 100000) {
        std::printf("FAIL %s: -r needs 1..100000\n", g_name);
        std::exit(1);
    }
    return (int)r;
}

// Median of v[from..] (mean of the two middle values for an even count); 0 if none.
inline float medianFrom(const std::vector<float> &v, size_t from) {
    if (from >= v.size()) return 0.0f;
    return median(std::vector<float>(v.begin() + (long)from, v.end()));
}

// Prints the single result line and returns the process exit code. `launches` < 0: the
// number of device-side launches is not reported.
inline int report(bool ok, float ms, const char *reason, long long launches = -1) {
    if (!ok)
        std::printf("FAIL %s: %s\n", g_name, reason);
    else if (launches >= 0)
        std::printf("PASS %s time_ms=%.3f launches=%lld\n", g_name, ms, launches);
    else
        std::printf("PASS %s time_ms=%.3f\n", g_name, ms);
    return ok ? 0 : 1;
}

// Prints the result line of a passing run from the time of every repetition, in order:
//   PASS NAME time_ms=<median of all> [launches=<n>] first_ms=<repetition 1> [warm_ms=<median
//   of repetitions 2..R>] reps=<R>
// time_ms and launches come first, as before, so older parsers still read the line; warm_ms is
// left out when there is one repetition only. A failure prints `FAIL NAME: reason` as above.
inline int report(bool ok, const std::vector<float> &times, const char *reason, long long launches = -1) {
    if (!ok || times.empty()) return report(false, 0.0f, reason ? reason : "no repetition timed", launches);
    std::printf("PASS %s time_ms=%.3f", g_name, median(times));
    if (launches >= 0) std::printf(" launches=%lld", launches);
    std::printf(" first_ms=%.3f", times[0]);
    if (times.size() > 1) std::printf(" warm_ms=%.3f", medianFrom(times, 1));
    std::printf(" reps=%zu\n", times.size());
    return 0;
}

}  // namespace ba
