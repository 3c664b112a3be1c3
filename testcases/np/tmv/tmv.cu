// tmv: transposed matrix-vector multiplication y = A^T x (CUDA-NP's TMV, paper Figure 2),
// the BASELINE input of klap's CUDA-NP transform (no dynamic parallelism).
//
// A is h x w floats, row-major; x has h elements, y has w. One thread per output element
// (column) `col`, blocks of 128 threads, ceil(w / 128) blocks:
//   sequential part (master): col from the thread index; rows = h, or 0 past the last column.
//   #pragma np parallel for reduction(+:sum) copyin(col, rows)
//   np loop over the column's rows i = 0 .. rows-1: sum += A[i][col] * x[i]
//       (a warp reads 32 consecutive floats of one row per iteration: coalesced).
//   sequential part (master): y[col] = sum, past the last column nothing.
// Only w / 128 blocks exist (16 for the default 2048 columns): the loop's 2048 iterations per
// thread are the nested parallelism CUDA-NP gives to slave threads.
//
// Input values are k / 16 with k in 1..16 (bb::Rng, seed -s), so every product is a multiple
// of 2^-8 and every partial sum (at most h <= 65536) is exact in float, in any order.
//
// Options: -n columns w (2048)  -m rows h = the loop's trip count (default: -n)
//          -s seed (1)  -r repetitions (1)
// Output: PASS tmv time_ms=.. first_ms=.. [warm_ms=..] reps=.. gbps=..  or  FAIL tmv: <reason>

#include "common/bench_b.cuh"

#include <cmath>

constexpr int BLOCK = 128;
constexpr double REL_TOL = 1e-6;  // see README.md ("Check")

__global__ void tmvKernel(const float *a, const float *x, float *y, int w, int h)
{
    // Sequential part: this thread's column; a thread past the last column runs no iteration.
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int rows = col < w ? h : 0;
    float sum = 0.0f;

    // The parallel loop: the dot product of column col with x.
#pragma np parallel for reduction(+:sum) copyin(col, rows)
    for (int i = 0; i < rows; i++) {
        sum += a[(size_t)i * w + col] * x[i];
    }

    // Sequential part: store the result.
    if (col < w) y[col] = sum;
}

int main(int argc, char **argv)
{
    bb::g_name = "tmv";
    const long long wArg = bb::argInt(argc, argv, "-n", 2048);
    const long long hArg = bb::argInt(argc, argv, "-m", wArg);
    const long long seed = bb::argInt(argc, argv, "-s", 1);
    const long long reps = bb::argInt(argc, argv, "-r", 1);
    if (wArg < 1 || wArg > 65536) bb::fail("-n must be in 1 .. 65536");
    if (hArg < 1 || hArg > 65536) bb::fail("-m must be in 1 .. 65536 (exact sums)");
    if (wArg * hArg > (1LL << 30)) bb::fail("-n * -m must be at most 2^30 (4 GiB matrix)");
    if (reps < 1 || reps > 100000) bb::fail("-r must be in 1 .. 100000");
    const int w = (int)wArg, h = (int)hArg;
    const size_t elems = (size_t)w * h;

    // Input: A (h x w, row-major) and x (h), values k / 16 with k uniform in 1..16.
    std::vector<float> hA(elems), hX(h);
    bb::Rng rng((uint64_t)seed);
    for (size_t e = 0; e < elems; ++e) hA[e] = (float)(1 + rng.below(16)) / 16.0f;
    for (int i = 0; i < h; ++i) hX[i] = (float)(1 + rng.below(16)) / 16.0f;

    // CPU reference, computed once, in double (row by row, so A is read in order).
    std::vector<double> ref(w, 0.0);
    for (int i = 0; i < h; ++i) {
        const float *rowA = &hA[(size_t)i * w];
        const double xi = hX[i];
        for (int c = 0; c < w; ++c) ref[c] += (double)rowA[c] * xi;
    }

    const bb::DeviceBuffer<float> dA(hA), dX(hX);
    bb::DeviceBuffer<float> dY(w);
    const int grid = (w + BLOCK - 1) / BLOCK;
    const std::vector<float> times = bb::repeat(
        reps, nullptr, [&] { dY.fillBytes(0xff); },  // NaN: an unwritten y fails
        [&] { tmvKernel<<<grid, BLOCK>>>(dA.get(), dX.get(), dY.get(), w, h); },
        [&](int r) { bb::expectClose(dY, ref, REL_TOL, r, "y"); });
    // Work: A and x read once, y written once.
    const double work = 4.0 * ((double)elems + h + w) / 1e9;
    return bb::report(true, times, nullptr, "gbps", work);
}
