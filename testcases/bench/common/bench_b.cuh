// Shared host-side helpers for the CDP benchmarks gc, mstf, mstv, sp and sssp
// (testcases/bench): CUDA error checking, cudaEvent timing, a deterministic PRNG,
// option parsing, the median of repeated runs and the one-line PASS/FAIL report (with the
// first repetition and the median of the others).
// Host code only: all device code lives in the benchmark .cu files.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

// Checks a CUDA runtime call made on the host; on error prints a FAIL line and exits 1.
#define BB_CHECK(call)                                                                \
    do {                                                                              \
        cudaError_t err_ = (call);                                                    \
        if (err_ != cudaSuccess) {                                                    \
            std::printf("FAIL %s: %s:%d: %s -> %s\n", bb::g_name, __FILE__, __LINE__, \
                        #call, cudaGetErrorString(err_));                             \
            std::exit(1);                                                             \
        }                                                                             \
    } while (0)

// Checks for an error after a host-side kernel launch.
#define BB_CHECK_LAUNCH() BB_CHECK(cudaGetLastError())

namespace bb {

// Name of the running benchmark, used in PASS/FAIL lines.
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
    // Uniform double in [0, 1) with 53 random bits.
    double uniform() { return (double)(next() >> 11) * (1.0 / 9007199254740992.0); }
};

// Prints the FAIL line and exits 1.
[[noreturn]] inline void fail(const char *reason) {
    std::printf("FAIL %s: %s\n", g_name, reason);
    std::exit(1);
}

// Returns the integer value of option `flag` (e.g. "-n") from argv, or `def`.
// Exits with a FAIL line when the value is missing or not a number.
inline long long argInt(int argc, char **argv, const char *flag, long long def) {
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], flag) == 0) {
            char *end = nullptr;
            long long v = (i + 1 < argc) ? std::strtoll(argv[i + 1], &end, 0) : 0;
            if (i + 1 >= argc || end == argv[i + 1] || *end != '\0') {
                char msg[96];
                std::snprintf(msg, sizeof msg, "option %s needs an integer value", flag);
                fail(msg);
            }
            return v;
        }
    }
    return def;
}

// Elapsed time between two cudaEvents recorded on the default stream.
struct GpuTimer {
    cudaEvent_t startEv{}, stopEv{};
    GpuTimer() {
        BB_CHECK(cudaEventCreate(&startEv));
        BB_CHECK(cudaEventCreate(&stopEv));
    }
    ~GpuTimer() {
        cudaEventDestroy(startEv);
        cudaEventDestroy(stopEv);
    }
    GpuTimer(const GpuTimer &) = delete;
    GpuTimer &operator=(const GpuTimer &) = delete;
    void start(cudaStream_t s = 0) { BB_CHECK(cudaEventRecord(startEv, s)); }
    void stop(cudaStream_t s = 0) { BB_CHECK(cudaEventRecord(stopEv, s)); }
    // Waits for the stop event and returns the elapsed milliseconds.
    float ms() {
        BB_CHECK(cudaEventSynchronize(stopEv));
        float t = 0.0f;
        BB_CHECK(cudaEventElapsedTime(&t, startEv, stopEv));
        return t;
    }
};

// Raises the device-runtime pending launch pool to at least `count` launches
// (CDP2 has no overflow pool: a launch beyond it fails).
inline void ensurePendingLaunches(long long count) {
    size_t cur = 0;
    BB_CHECK(cudaDeviceGetLimit(&cur, cudaLimitDevRuntimePendingLaunchCount));
    if ((long long)cur < count)
        BB_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, (size_t)count));
}

// Median of the measured times (the upper one of the two middle values for even counts).
inline float median(std::vector<float> v) {
    if (v.empty()) return 0.0f;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Prints the single result line and returns the process exit code.
inline int report(bool ok, float ms, const char *reason) {
    if (ok)
        std::printf("PASS %s time_ms=%.3f\n", g_name, ms);
    else
        std::printf("FAIL %s: %s\n", g_name, reason);
    return ok ? 0 : 1;
}

// Median of v[from..] (mean of the two middle values for an even count); 0 if none. Unlike
// median() above (kept for time_ms), an even count averages the two middle values.
inline float medianFrom(const std::vector<float> &v, size_t from) {
    if (from >= v.size()) return 0.0f;
    std::vector<float> w(v.begin() + (long)from, v.end());
    std::sort(w.begin(), w.end());
    size_t m = w.size() / 2;
    return (w.size() % 2) ? w[m] : 0.5f * (w[m - 1] + w[m]);
}

// Prints the result line of a passing run from the time of every repetition, in order:
//   PASS NAME time_ms=<median of all> first_ms=<repetition 1> [warm_ms=<median of
//   repetitions 2..R>] reps=<R>
// time_ms comes first, as before, so older parsers still read the line; warm_ms is left out
// when there is one repetition only. A failure prints `FAIL NAME: reason` as above.
inline int report(bool ok, const std::vector<float> &times, const char *reason) {
    if (!ok || times.empty()) return report(false, 0.0f, reason ? reason : "no repetition timed");
    std::printf("PASS %s time_ms=%.3f first_ms=%.3f", g_name, median(times), times[0]);
    if (times.size() > 1) std::printf(" warm_ms=%.3f", medianFrom(times, 1));
    std::printf(" reps=%zu\n", times.size());
    return 0;
}

// As report() above, with the throughput appended: ` <unit>=<work / seconds>`, where the time is
// the warm median (repetitions 2..R) or, for one repetition, the first. `work` is what one
// repetition processes in the unit's numerator, e.g. bytes read plus written divided by 1e9 for
// unit "gbps" (GB/s), or rays for unit "rays_per_s". Used by the promotion benchmarks
// (testcases/promotion, KLAP Table I reports their throughput, section IV-C).
inline int report(bool ok, const std::vector<float> &times, const char *reason, const char *unit, double work) {
    if (!ok || times.empty()) return report(false, 0.0f, reason ? reason : "no repetition timed");
    std::printf("PASS %s time_ms=%.3f first_ms=%.3f", g_name, median(times), times[0]);
    const float ms = times.size() > 1 ? medianFrom(times, 1) : times[0];
    if (times.size() > 1) std::printf(" warm_ms=%.3f", ms);
    std::printf(" reps=%zu %s=%.6g\n", times.size(), unit, ms > 0.0f ? work / (ms * 1e-3) : 0.0);
    return 0;
}

// ---- used by testcases/promotion and testcases/np (their common/ links to this file) ----------

// printf-style formatting (at most 255 characters are kept), for bb::fail reasons.
template <class... Args>
std::string format(const char *fmt, Args... args)
{
    char buf[256];
    std::snprintf(buf, sizeof buf, fmt, args...);
    return buf;
}

// `count` elements of T in device memory (cudaMalloc), freed (cudaFree) when the buffer goes out
// of scope. Not copyable. Allocation, copies and memsets go through BB_CHECK. The destructor
// ignores cudaFree's result: it runs after the program's last checked synchronization, and must
// not print a second line after the report.
template <class T>
class DeviceBuffer {
public:
    explicit DeviceBuffer(size_t count) : count_(count) { BB_CHECK(cudaMalloc(&ptr_, sizeof(T) * count)); }
    // A buffer of host.size() elements holding a copy of host.
    explicit DeviceBuffer(const std::vector<T> &host) : DeviceBuffer(host.size()) { upload(host); }
    ~DeviceBuffer() { (void)cudaFree(ptr_); }
    DeviceBuffer(const DeviceBuffer &) = delete;
    DeviceBuffer &operator=(const DeviceBuffer &) = delete;

    T *get() const { return ptr_; }
    size_t size() const { return count_; }
    // Copies host (host.size() <= size() elements) to the start of the buffer (cudaMemcpy).
    void upload(const std::vector<T> &host)
    {
        BB_CHECK(cudaMemcpy(ptr_, host.data(), sizeof(T) * host.size(), cudaMemcpyHostToDevice));
    }
    // The first `count` (<= size()) elements, copied back (cudaMemcpy).
    std::vector<T> download(size_t count) const
    {
        std::vector<T> host(count);
        BB_CHECK(cudaMemcpy(host.data(), ptr_, sizeof(T) * count, cudaMemcpyDeviceToHost));
        return host;
    }
    // Sets every byte of the buffer to `byte` (cudaMemset): 0xff makes ints -1.
    void fillBytes(int byte) { BB_CHECK(cudaMemset(ptr_, byte, sizeof(T) * count_)); }

private:
    T *ptr_ = nullptr;
    size_t count_;
};

// The repetition loop of the promotion and CUDA-NP programs. For r = 0 .. reps - 1:
//   reset(); *err = 0 (when err is not null); cudaDeviceSynchronize();
//   timed (cudaEvents on the default stream): run(), then cudaGetLastError() is checked (a run()
//       with several launches checks those before its last itself);
//   cudaDeviceSynchronize(), which waits for the whole chain of launches: an error
//       cudaErrorLaunchMaxDepthExceeded fails with "device launch failed (nesting depth?)";
//   *err != 0 (a device-side launch failed, e.g. beyond the nesting depth) fails the same way;
//   check(r), which fails the program on a wrong result.
// Returns the times of the repetitions in milliseconds, in order (for bb::report).
// err: the CDP versions' device flag, one int that a kernel sets when its launch fails; nullptr
// for the flat versions.
template <class Reset, class Run, class Check>
std::vector<float> repeat(long long reps, int *err, Reset reset, Run run, Check check)
{
    bb::GpuTimer timer;
    std::vector<float> times;
    for (long long r = 0; r < reps; ++r) {
        reset();
        if (err) BB_CHECK(cudaMemset(err, 0, sizeof(int)));
        BB_CHECK(cudaDeviceSynchronize());
        timer.start();
        run();
        BB_CHECK_LAUNCH();
        timer.stop();
        const cudaError_t e = cudaDeviceSynchronize();
        if (e == cudaErrorLaunchMaxDepthExceeded) bb::fail("device launch failed (nesting depth?)");
        BB_CHECK(e);
        if (err) {
            int failed = 0;
            BB_CHECK(cudaMemcpy(&failed, err, sizeof(int), cudaMemcpyDeviceToHost));
            if (failed) bb::fail("device launch failed (nesting depth?)");
        }
        const float ms = timer.ms();
        check((int)r);
        times.push_back(ms);
    }
    return times;
}

// Copies ref.size() floats of `got` back and fails the program ("repetition R: NAME[i] = g,
// expected e") at the first i with |g - ref[i]| > relTol * |ref[i]| (NaN fails too). rep is
// 0-based; `name` names the output array.
inline void expectClose(const DeviceBuffer<float> &got, const std::vector<double> &ref, double relTol, int rep,
                        const char *name)
{
    const std::vector<float> host = got.download(ref.size());
    for (size_t i = 0; i < ref.size(); ++i) {
        const double err = std::fabs((double)host[i] - ref[i]);
        if (!(err <= relTol * std::fabs(ref[i])))
            fail(format("repetition %d: %s[%zu] = %.9g, expected %.9g", rep + 1, name, i, (double)host[i], ref[i])
                     .c_str());
    }
}

}  // namespace bb
