// Host-side helpers shared by the promotion benchmarks of testcases/promotion (sc, pt, unq, los,
// pd, upd; each in a CDP version NAME.cu and a flat one NAME_flat.cu), on top of
// common/bench_b.cuh (options, timing, PRNG, the one-line PASS/FAIL report, DeviceBuffer, the
// repetition loop repeat):
//   - expectEqual, expectCount: copy results back and fail with the first mismatch;
//   - per benchmark family, the options, the input with its CPU reference (computed once) and
//     the run* function that holds the family's buffers, checks and throughput; the programs
//     pass in only what differs: their launches.
// Host code only: the kernels stay in the .cu files (klap's promotion pass reads the CDP ones
// there, as written), the device helpers of the flat sc, pt and unq are in common/promo_flat.cuh.
//
// Errors: a failing CUDA call prints `FAIL NAME: file:line: call -> error` and exits 1
// (BB_CHECK); a bad option or a wrong result prints `FAIL NAME: reason` and exits 1 (bb::fail).
// Either way the program prints exactly one line. Sizes are element counts unless a name says
// bytes; times are milliseconds.
#pragma once

#include "bench_b.cuh"

#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace pb {

// The generic helpers live in bench_b.cuh (shared with testcases/np); their names here as before.
using bb::DeviceBuffer;
using bb::format;
using bb::repeat;

// Copies the first ref.size() elements of `got` back and compares them with ref (operator!=).
// At the first index i where they differ, fails the program with the reason
// describe(i, got[i], ref[i]) (a std::string).
template <class T, class Describe>
void expectEqual(const DeviceBuffer<T> &got, const std::vector<T> &ref, Describe describe)
{
    const std::vector<T> host = got.download(ref.size());
    for (size_t i = 0; i < ref.size(); ++i)
        if (host[i] != ref[i]) bb::fail(describe((long long)i, host[i], ref[i]).c_str());
}

// Fails with "count C, expected E" unless the device int count[0] equals `expected`.
inline void expectCount(const DeviceBuffer<int> &count, int expected)
{
    const int got = count.download(1)[0];
    if (got != expected) bb::fail(format("count %d, expected %d", got, expected).c_str());
}

// ---- sc, pt, unq: n ints in, an output array and a count ---------------------------------------

// Options of sc, pt and unq: -n elements (default defaultN), -s seed (1), -r repetitions (1).
// Fails with "-n must be in 1 .. 2^31 - <tile + 1>" or "-r must be in 1 .. 100000".
struct TileOptions {
    int n;           // elements, 1 .. INT_MAX - tile
    uint64_t seed;
    long long reps;  // 1 .. 100000
    int tiles;       // ceil(n / tile)
};

inline TileOptions tileOptions(int argc, char **argv, int tile, long long defaultN)
{
    const long long n = bb::argInt(argc, argv, "-n", defaultN);
    const long long seed = bb::argInt(argc, argv, "-s", 1);
    const long long reps = bb::argInt(argc, argv, "-r", 1);
    if (n < 1 || n > INT_MAX - tile) bb::fail(format("-n must be in 1 .. 2^31 - %d", tile + 1).c_str());
    if (reps < 1 || reps > 100000) bb::fail("-r must be in 1 .. 100000");
    return {(int)n, (uint64_t)seed, reps, (int)((n + tile - 1) / tile)};
}

// An input of sc, pt or unq and what the GPU must make of it.
struct CountedProblem {
    std::vector<int> input;  // n elements
    std::vector<int> ref;    // the expected start of out: count elements (sc, unq), all n (pt)
    int count;               // the expected *count
};

// sc: about half the elements are 0, the others uniform in 1 .. 2^31 - 2; the reference keeps
// the nonzero ones in order.
inline CountedProblem compactionProblem(int n, uint64_t seed)
{
    CountedProblem p;
    p.input.resize(n);
    bb::Rng rng(seed);
    for (int i = 0; i < n; ++i)
        p.input[i] = (rng.next() & 1) ? 0 : (int)(1 + rng.below(0x7ffffffe));
    for (int x : p.input)
        if (x != 0) p.ref.push_back(x);
    p.count = (int)p.ref.size();
    return p;
}

// pt: uniform in 0 .. 10^9 - 1; the reference holds the elements x with selected(x) at the front
// and the others from the back (the k-th at n - 1 - k), both in input order; count = the
// selected ones.
template <class Selected>
CountedProblem partitionProblem(int n, uint64_t seed, Selected selected)
{
    CountedProblem p;
    p.input.resize(n);
    bb::Rng rng(seed);
    for (int i = 0; i < n; ++i) p.input[i] = (int)rng.below(1000000000u);
    p.ref.resize(n);
    int front = 0, back = 0;
    for (int x : p.input) {
        if (selected(x)) p.ref[front++] = x;
        else p.ref[n - 1 - back++] = x;
    }
    p.count = front;
    return p;
}

// unq: runs of equal values, each run 1..8 long, each value in [0, 10^6) and different from the
// previous run's; the reference keeps element 0 and each element that differs from the one
// before it.
inline CountedProblem uniqueProblem(int n, uint64_t seed)
{
    CountedProblem p;
    p.input.resize(n);
    bb::Rng rng(seed);
    for (int i = 0, value = -1; i < n;) {
        int next;
        do next = (int)rng.below(1000000u);
        while (next == value);
        value = next;
        for (int len = 1 + (int)rng.below(8); len > 0 && i < n; --len) p.input[i++] = value;
    }
    for (int i = 0; i < n; ++i)
        if (i == 0 || p.input[i] != p.input[i - 1]) p.ref.push_back(p.input[i]);
    p.count = (int)p.ref.size();
    return p;
}

// The device side of sc, pt and unq: the input, out (n ints) and *count (one int).
struct CountedBuffers {
    DeviceBuffer<int> in, out, count;

    explicit CountedBuffers(const CountedProblem &p) : in(p.input), out(p.input.size()), count(1) {}
    // Before a repetition: out and *count to -1, so that what the GPU does not write is caught.
    void reset()
    {
        out.fillBytes(0xff);
        count.fillBytes(0xff);
    }
    // After it: *count, then out[0 .. p.ref.size()) ("out[i] = x, expected y").
    void check(const CountedProblem &p) const
    {
        expectCount(count, p.count);
        expectEqual(out, p.ref, [](long long i, int got, int want) {
            return format("out[%d] = %d, expected %d", (int)i, got, want);
        });
    }
};

// Runs sc, pt or unq and prints the result line; returns main's exit code. Copies p.input to the
// device, then repeats (see repeat()): CountedBuffers::reset(), reset(); gpu(buffers), timed;
// CountedBuffers::check(p). Throughput: n ints read, ref.size() ints and the count written, over
// the time (bb::report, "gbps"). err: as in repeat().
template <class Reset, class Gpu>
int runCounted(const TileOptions &opt, const CountedProblem &p, int *err, Reset reset, Gpu gpu)
{
    CountedBuffers d(p);
    const std::vector<float> times = repeat(
        opt.reps, err,
        [&] {
            d.reset();
            reset();
        },
        [&] { gpu(d); }, [&](int) { d.check(p); });
    const double work = (4.0 * opt.n + 4.0 * p.ref.size() + 4.0) / 1e9;
    return bb::report(true, times, nullptr, "gbps", work);
}

// ---- los: a terrain profile, one visibility flag per point -------------------------------------

// Options of los: -n points (default defaultN), -s seed (1), -r repetitions (1). Fails with
// "bad options" unless 2 <= n <= 2^24 (so that (float)i is exact) and reps >= 1.
struct SightOptions {
    long long n;
    uint64_t seed;
    int reps;
};

inline SightOptions sightOptions(int argc, char **argv, long long defaultN)
{
    const long long n = bb::argInt(argc, argv, "-n", defaultN);
    const uint64_t seed = (uint64_t)bb::argInt(argc, argv, "-s", 1);
    const int reps = (int)bb::argInt(argc, argv, "-r", 1);
    if (n < 2 || n > (1LL << 24) || reps < 1) bb::fail("bad options");
    return {n, seed, reps};
}

struct SightProblem {
    std::vector<float> alt;          // n altitudes
    float h0;                        // the observer's height, above point 0
    std::vector<unsigned char> ref;  // n expected flags (0 or 1)
};

// The terrain is a random walk with a slight upward drift (alt[0] = 0, steps 0.05 + U(-1, 1));
// the observer stands observerHeight above point 0. The reference uses the same float
// arithmetic as the GPU (max is exact in any order).
inline SightProblem sightProblem(long long n, uint64_t seed, float observerHeight)
{
    SightProblem p;
    p.alt.resize(n);
    bb::Rng rng(seed);
    double a = 0.0;
    for (long long i = 0; i < n; ++i) {
        p.alt[i] = (float)a;
        a += 0.05 + 2.0 * (rng.uniform() - 0.5);
    }
    p.h0 = p.alt[0] + observerHeight;
    p.ref.resize(n);
    float best = -INFINITY;
    p.ref[0] = 1;
    for (long long i = 1; i < n; ++i) {
        const float s = (p.alt[i] - p.h0) / (float)i;
        p.ref[i] = s >= best ? 1 : 0;
        best = std::fmax(best, s);
    }
    return p;
}

// Runs los and prints the result line; returns main's exit code. Copies the altitudes to the
// device, then repeats (see repeat()): every flag to 0xff (neither 0 nor 1: unwritten flags are
// caught); gpu(alt, vis), timed; all n flags against p.ref ("vis[i] = x, expected y (repetition
// r)"). Throughput: n altitudes read and n flags written (bb::report, "gbps"). err: as in repeat().
template <class Gpu>
int runSight(const SightOptions &opt, const SightProblem &p, int *err, Gpu gpu)
{
    DeviceBuffer<float> alt(p.alt);
    DeviceBuffer<unsigned char> vis(opt.n);
    const std::vector<float> times = repeat(
        opt.reps, err, [&] { vis.fillBytes(0xff); }, [&] { gpu(alt.get(), vis.get()); },
        [&](int r) {
            expectEqual(vis, p.ref, [r](long long i, unsigned char got, unsigned char want) {
                return format("vis[%lld] = %d, expected %d (repetition %d)", i, (int)got, (int)want, r);
            });
        });
    const double work = (double)opt.n * (sizeof(float) + 1) / 1e9;
    return bb::report(true, times, nullptr, "gbps", work);
}

// ---- pd, upd: a rows x cols float matrix re-laid out in place ----------------------------------

// Options of pd and upd: -n rows (50), -c cols (1000), -p pad (20), -s seed (1), -r repetitions
// (1). Fails with "bad options" unless rows, cols >= 1, pad >= 0, reps >= 1 and
// rows * (cols + pad) <= 2^30.
struct MatrixOptions {
    long long rows, cols, pad;
    uint64_t seed;
    int reps;
    long long pitch;  // cols + pad
    long long total;  // rows * pitch: the buffer, in floats
    long long elems;  // rows * cols: the matrix
    int tiles;        // ceil(total / tile)
};

inline MatrixOptions matrixOptions(int argc, char **argv, int tile)
{
    MatrixOptions o;
    o.rows = bb::argInt(argc, argv, "-n", 50);
    o.cols = bb::argInt(argc, argv, "-c", 1000);
    o.pad = bb::argInt(argc, argv, "-p", 20);
    o.seed = (uint64_t)bb::argInt(argc, argv, "-s", 1);
    o.reps = (int)bb::argInt(argc, argv, "-r", 1);
    if (o.rows < 1 || o.cols < 1 || o.pad < 0 || o.reps < 1 || o.rows * (o.cols + o.pad) > (1LL << 30))
        bb::fail("bad options");
    o.pitch = o.cols + o.pad;
    o.total = o.rows * o.pitch;
    o.elems = o.rows * o.cols;
    o.tiles = (int)((o.total + tile - 1) / tile);
    return o;
}

struct InPlaceProblem {
    std::vector<float> init;  // the buffer before (total floats)
    std::vector<float> ref;   // the buffer expected after (total floats)
    bool padding;             // pd (a mismatch names its row and column) or upd
    double gigabytes;         // what one repetition reads and writes, in GB
};

// The rows x cols matrix (values uniform in [0, 1), row-major) laid out with row pitch `pitch`
// over a copy of `buf`.
inline std::vector<float> placeRows(std::vector<float> buf, const std::vector<float> &matrix,
                                    const MatrixOptions &o, long long pitch)
{
    for (long long r = 0; r < o.rows; ++r)
        for (long long c = 0; c < o.cols; ++c) buf[r * pitch + c] = matrix[r * o.cols + c];
    return buf;
}

inline std::vector<float> randomMatrix(const MatrixOptions &o)
{
    std::vector<float> m(o.elems);
    bb::Rng rng(o.seed);
    for (long long i = 0; i < o.elems; ++i) m[i] = (float)rng.uniform();
    return m;
}

// pd: the matrix at the start of the buffer (row pitch cols), `garbage` after it; expected: row
// pitch cols + pad with zero padding. Work: the matrix read, the whole buffer written.
inline InPlaceProblem paddingProblem(const MatrixOptions &o, float garbage)
{
    const std::vector<float> m = randomMatrix(o);
    return {placeRows(std::vector<float>(o.total, garbage), m, o, o.cols),
            placeRows(std::vector<float>(o.total, 0.0f), m, o, o.pitch), true,
            (double)(o.elems + o.total) * sizeof(float) / 1e9};
}

// upd: the matrix with row pitch cols + pad, `garbage` in the padding; expected: the matrix with
// row pitch cols at the start, the rest of the buffer as it was. Work: the matrix read and
// written.
inline InPlaceProblem unpaddingProblem(const MatrixOptions &o, float garbage)
{
    const std::vector<float> m = randomMatrix(o);
    std::vector<float> init = placeRows(std::vector<float>(o.total, garbage), m, o, o.pitch);
    std::vector<float> ref = placeRows(init, m, o, o.cols);
    return {init, ref, false, (double)(2 * o.elems) * sizeof(float) / 1e9};
}

// Runs pd or upd and prints the result line; returns main's exit code. Repeats (see repeat()):
// the buffer (o.total floats) set to p.init; gpu(buf), timed; the whole buffer against p.ref
// (pd: "buf[j] (row r, col c) = x, expected y (repetition r)", upd: "buf[j] = x, expected y
// (matrix|tail, repetition r)"). Throughput: p.gigabytes (bb::report, "gbps"). err: as in repeat().
template <class Gpu>
int runInPlace(const MatrixOptions &o, const InPlaceProblem &p, int *err, Gpu gpu)
{
    DeviceBuffer<float> buf(o.total);
    const std::vector<float> times = repeat(
        o.reps, err, [&] { buf.upload(p.init); }, [&] { gpu(buf.get()); },
        [&](int r) {
            expectEqual(buf, p.ref, [&](long long j, float got, float want) {
                if (p.padding)
                    return format("buf[%lld] (row %lld, col %lld) = %g, expected %g (repetition %d)", j,
                                  j / o.pitch, j % o.pitch, got, want, r);
                return format("buf[%lld] = %g, expected %g (%s, repetition %d)", j, got, want,
                              j < o.elems ? "matrix" : "tail", r);
            });
        });
    return bb::report(true, times, nullptr, "gbps", p.gigabytes);
}

}  // namespace pb
