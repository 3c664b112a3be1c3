// mv: matrix-vector multiplication y = A x (CUDA-NP's MV), the BASELINE input of klap's
// CUDA-NP transform (no dynamic parallelism).
//
// A is h x w floats, row-major; x has w elements, y has h. One thread per row `row`, blocks of
// 128 threads, ceil(h / 128) blocks:
//   sequential part (master): row from the thread index; arow points to that row (a thread
//       past the last row points to row h-1, reads it and stores nothing).
//   #pragma np parallel for reduction(+:sum) copyin(arow)
//   np loop over the row j = 0 .. w-1: sum += arow[j] * x[j]
//       (the 32 threads of a warp read 32 different rows, w floats apart: uncoalesced; this is
//       the access pattern that slave threads spread over consecutive j make coalesced).
//   sequential part (master): y[row] = sum, past the last row nothing.
//
// Input values are k / 16 with k in 1..16 (bb::Rng, seed -s), so every product is a multiple
// of 2^-8 and every partial sum (at most w <= 65536) is exact in float, in any order.
//
// Options: -n rows h (2048)  -m columns w = the loop's trip count (default: -n)
//          -s seed (1)  -r repetitions (1)
// Output: PASS mv time_ms=.. first_ms=.. [warm_ms=..] reps=.. gbps=..  or  FAIL mv: <reason>

#include "common/bench_b.cuh"

#include <cmath>

constexpr int BLOCK = 128;
constexpr double REL_TOL = 1e-6;  // see README.md ("Check")

__global__ void mvKernel(const float *a, const float *x, float *y, int w, int h)
{
    // Sequential part: this thread's row (clamped, so that every thread runs the same loop).
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    const float *arow = a + (size_t)min(row, h - 1) * w;
    float sum = 0.0f;

    // The parallel loop: the dot product of row `row` with x.
#pragma np parallel for reduction(+:sum) copyin(arow)
    for (int j = 0; j < w; j++) {
        sum += arow[j] * x[j];
    }

    // Sequential part: store the result.
    if (row < h) y[row] = sum;
}

int main(int argc, char **argv)
{
    bb::g_name = "mv";
    const long long hArg = bb::argInt(argc, argv, "-n", 2048);
    const long long wArg = bb::argInt(argc, argv, "-m", hArg);
    const long long seed = bb::argInt(argc, argv, "-s", 1);
    const long long reps = bb::argInt(argc, argv, "-r", 1);
    if (hArg < 1 || hArg > 65536) bb::fail("-n must be in 1 .. 65536");
    if (wArg < 1 || wArg > 65536) bb::fail("-m must be in 1 .. 65536 (exact sums)");
    if (wArg * hArg > (1LL << 30)) bb::fail("-n * -m must be at most 2^30 (4 GiB matrix)");
    if (reps < 1 || reps > 100000) bb::fail("-r must be in 1 .. 100000");
    const int h = (int)hArg, w = (int)wArg;
    const size_t elems = (size_t)w * h;

    // Input: A (h x w, row-major) and x (w), values k / 16 with k uniform in 1..16.
    std::vector<float> hA(elems), hX(w);
    bb::Rng rng((uint64_t)seed);
    for (size_t e = 0; e < elems; ++e) hA[e] = (float)(1 + rng.below(16)) / 16.0f;
    for (int j = 0; j < w; ++j) hX[j] = (float)(1 + rng.below(16)) / 16.0f;

    // CPU reference, computed once, in double.
    std::vector<double> ref(h, 0.0);
    for (int i = 0; i < h; ++i) {
        const float *rowA = &hA[(size_t)i * w];
        double s = 0.0;
        for (int j = 0; j < w; ++j) s += (double)rowA[j] * hX[j];
        ref[i] = s;
    }

    const bb::DeviceBuffer<float> dA(hA), dX(hX);
    bb::DeviceBuffer<float> dY(h);
    const int grid = (h + BLOCK - 1) / BLOCK;
    const std::vector<float> times = bb::repeat(
        reps, nullptr, [&] { dY.fillBytes(0xff); },  // NaN: an unwritten y fails
        [&] { mvKernel<<<grid, BLOCK>>>(dA.get(), dX.get(), dY.get(), w, h); },
        [&](int r) { bb::expectClose(dY, ref, REL_TOL, r, "y"); });
    // Work: A and x read once, y written once.
    const double work = 4.0 * ((double)elems + w + h) / 1e9;
    return bb::report(true, times, nullptr, "gbps", work);
}
