// los: line of sight (KLAP Table I, promotion part), CDP2 version.
//
// An observer stands at height h0 above point 0 of a terrain profile alt[0..n-1] (unit
// spacing). Point i >= 1 is visible iff its slope (alt[i] - h0) / i is >= the maximum slope of
// the points 1..i-1 (point 1 is always visible; point 0 is marked visible). Output: one flag
// (0/1 byte) per point.
//
// The kernel losTile handles one tile of TILE = BLOCK * ITEMS points with one block and then
// launches itself for the next tile; the host launches tile 0 only:
//   independent prologue: load the tile's altitudes, compute the slopes, block-wide exclusive
//                         max-scan of the slopes (cub::BlockScan) and the tile's maximum;
//   #pragma klap overlap
//   launch:   thread 0 launches losTile for tile + 1 with the postponed running maximum
//             fmaxf(runningMax, tileMax);
//   epilogue: write the tile's flags, comparing each slope with the maximum of runningMax and
//             the slopes before it in the tile.
// The chain is at most 25 tiles deep (CUDA's nesting limit 24): a longer input fails to
// launch, which is reported as "FAIL los: device launch failed (nesting depth?)".
//
// Options: -n points (51199 = 25 tiles)  -s seed (1)  -r repetitions (1)
// Output: PASS los time_ms=.. first_ms=.. [warm_ms=..] reps=.. gbps=..  or  FAIL los: <reason>

#include "common/bench_b.cuh"

#include <cub/block/block_scan.cuh>
#include <cuda/functional>

#include <cmath>
#include <vector>

static constexpr int BLOCK = 256;
static constexpr int ITEMS = 8;
static constexpr int TILE = BLOCK * ITEMS;
static constexpr float OBSERVER_HEIGHT = 1000.0f;

using BlockMaxScan = cub::BlockScan<float, BLOCK>;

// One tile of the profile: points tile * TILE .. tile * TILE + TILE - 1, ITEMS consecutive
// points per thread. runningMax is the maximum slope of all points of the earlier tiles.
__global__ void losTile(const float *alt, unsigned char *vis, int n, float h0, int tile,
                        float runningMax, int *err) {
    __shared__ typename BlockMaxScan::TempStorage scanTemp;
    const int first = tile * TILE + threadIdx.x * ITEMS;
    float slope[ITEMS];   // -inf for point 0 and past the end: neutral for max
    float before[ITEMS];  // maximum slope of the tile's points before each point
    for (int k = 0; k < ITEMS; ++k) {
        const int i = first + k;
        slope[k] = (i >= 1 && i < n) ? (alt[i] - h0) / (float)i : -INFINITY;
    }
    float tileMax;
    BlockMaxScan(scanTemp).ExclusiveScan(slope, before, -INFINITY, cuda::maximum<float>{},
                                         tileMax);

#pragma klap overlap
    // Everything above reads only this tile's input (never written) and writes registers and
    // shared memory; it uses no postponed parameter.
    if (threadIdx.x == 0 && (tile + 1) * TILE < n) {
        losTile<<<1, blockDim.x>>>(alt, vis, n, h0, tile + 1, fmaxf(runningMax, tileMax), err);
        if (cudaGetLastError() != cudaSuccess) atomicExch(err, 1);  // e.g. nesting depth
    }
    for (int k = 0; k < ITEMS; ++k) {
        const int i = first + k;
        if (i < n) vis[i] = (i == 0 || slope[k] >= fmaxf(runningMax, before[k])) ? 1 : 0;
    }
}

int main(int argc, char **argv) {
    bb::g_name = "los";
    const long long n = bb::argInt(argc, argv, "-n", 25LL * TILE - 1);
    const uint64_t seed = (uint64_t)bb::argInt(argc, argv, "-s", 1);
    const int reps = (int)bb::argInt(argc, argv, "-r", 1);
    // i converts to float exactly for i < 2^24, so the CPU slopes equal the GPU ones.
    if (n < 2 || n > (1LL << 24) || reps < 1) return bb::report(false, 0, "bad options");

    // Terrain: a random walk with a slight upward drift (fixed seed).
    std::vector<float> alt(n);
    {
        bb::Rng rng(seed);
        double a = 0.0;
        for (long long i = 0; i < n; ++i) {
            alt[i] = (float)a;
            a += 0.05 + 2.0 * (rng.uniform() - 0.5);
        }
    }
    const float h0 = alt[0] + OBSERVER_HEIGHT;

    // CPU reference, with the same float arithmetic as the GPU (max is exact in any order).
    std::vector<unsigned char> ref(n);
    {
        float best = -INFINITY;
        ref[0] = 1;
        for (long long i = 1; i < n; ++i) {
            const float s = (alt[i] - h0) / (float)i;
            ref[i] = s >= best ? 1 : 0;
            best = std::fmax(best, s);
        }
    }

    // At most one launch per nesting level is pending at a time.
    bb::ensurePendingLaunches(32);

    float *dAlt = nullptr;
    unsigned char *dVis = nullptr;
    int *dErr = nullptr;
    BB_CHECK(cudaMalloc(&dAlt, sizeof(float) * n));
    BB_CHECK(cudaMalloc(&dVis, n));
    BB_CHECK(cudaMalloc(&dErr, sizeof(int)));
    BB_CHECK(cudaMemcpy(dAlt, alt.data(), sizeof(float) * n, cudaMemcpyHostToDevice));

    std::vector<unsigned char> vis(n);
    std::vector<float> times;
    bb::GpuTimer timer;
    for (int r = 0; r < reps; ++r) {
        BB_CHECK(cudaMemset(dVis, 0xff, n));  // neither 0 nor 1: unwritten flags are caught
        BB_CHECK(cudaMemset(dErr, 0, sizeof(int)));
        BB_CHECK(cudaDeviceSynchronize());
        timer.start();
        losTile<<<1, BLOCK>>>(dAlt, dVis, (int)n, h0, 0, -INFINITY, dErr);
        BB_CHECK_LAUNCH();
        timer.stop();
        const cudaError_t e = cudaDeviceSynchronize();  // waits for the whole chain
        if (e == cudaErrorLaunchMaxDepthExceeded) bb::fail("device launch failed (nesting depth?)");
        BB_CHECK(e);
        int err = 0;
        BB_CHECK(cudaMemcpy(&err, dErr, sizeof(int), cudaMemcpyDeviceToHost));
        if (err) bb::fail("device launch failed (nesting depth?)");
        times.push_back(timer.ms());

        BB_CHECK(cudaMemcpy(vis.data(), dVis, n, cudaMemcpyDeviceToHost));
        for (long long i = 0; i < n; ++i) {
            if (vis[i] != ref[i]) {
                char msg[160];
                std::snprintf(msg, sizeof msg, "vis[%lld] = %d, expected %d (repetition %d)", i,
                              (int)vis[i], (int)ref[i], r);
                return bb::report(false, 0, msg);
            }
        }
    }
    BB_CHECK(cudaFree(dAlt));
    BB_CHECK(cudaFree(dVis));
    BB_CHECK(cudaFree(dErr));
    // One repetition reads n altitudes and writes n flags.
    const double gb = (double)n * (sizeof(float) + 1) / 1e9;
    return bb::report(true, times, nullptr, "gbps", gb);
}
