// los_flat: line of sight (KLAP Table I, promotion part) without dynamic parallelism.
//
// Same problem, input and check as los.cu: an observer at height h0 above point 0 of the
// terrain profile alt[0..n-1]; point i >= 1 is visible iff (alt[i] - h0) / i >= the maximum
// slope of the points 1..i-1. Reduce-then-scan over tiles of TILE = BLOCK * ITEMS points:
//   1. losTileMax (one block per tile): the maximum slope of each tile (cub::BlockReduce);
//   2. cub::DeviceScan::ExclusiveScan (from the host) of the tile maxima with max: the
//      maximum slope of all points before each tile;
//   3. losFlags (one block per tile): block-wide exclusive max-scan of the tile's slopes,
//      combined with the tile's prefix, gives each point's flag.
// Runs every dataset (there is no chain of launches).
//
// Options: -n points (51199 = 25 tiles)  -s seed (1)  -r repetitions (1)
// Output: PASS los_flat time_ms=.. first_ms=.. [warm_ms=..] reps=.. gbps=..
//         or FAIL los_flat: <reason>

#include "common/bench_b.cuh"

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>
#include <cuda/functional>

#include <cmath>
#include <vector>

static constexpr int BLOCK = 256;
static constexpr int ITEMS = 8;
static constexpr int TILE = BLOCK * ITEMS;
static constexpr float OBSERVER_HEIGHT = 1000.0f;

// The slopes of a thread's ITEMS consecutive points; -inf for point 0 and past the end.
__device__ __forceinline__ void loadSlopes(const float *alt, int n, float h0, int first,
                                           float (&slope)[ITEMS]) {
    for (int k = 0; k < ITEMS; ++k) {
        const int i = first + k;
        slope[k] = (i >= 1 && i < n) ? (alt[i] - h0) / (float)i : -INFINITY;
    }
}

__global__ void losTileMax(const float *alt, int n, float h0, float *tileMax) {
    using Reduce = cub::BlockReduce<float, BLOCK>;
    __shared__ typename Reduce::TempStorage temp;
    float slope[ITEMS];
    loadSlopes(alt, n, h0, blockIdx.x * TILE + threadIdx.x * ITEMS, slope);
    const float m = Reduce(temp).Reduce(slope, cuda::maximum<float>{});
    if (threadIdx.x == 0) tileMax[blockIdx.x] = m;  // valid in thread 0
}

__global__ void losFlags(const float *alt, unsigned char *vis, int n, float h0,
                         const float *tilePrefix) {
    using Scan = cub::BlockScan<float, BLOCK>;
    __shared__ typename Scan::TempStorage temp;
    const int first = blockIdx.x * TILE + threadIdx.x * ITEMS;
    float slope[ITEMS], before[ITEMS];
    loadSlopes(alt, n, h0, first, slope);
    Scan(temp).ExclusiveScan(slope, before, tilePrefix[blockIdx.x], cuda::maximum<float>{});
    for (int k = 0; k < ITEMS; ++k) {
        const int i = first + k;
        if (i < n) vis[i] = (i == 0 || slope[k] >= before[k]) ? 1 : 0;
    }
}

int main(int argc, char **argv) {
    bb::g_name = "los_flat";
    const long long n = bb::argInt(argc, argv, "-n", 25LL * TILE - 1);
    const uint64_t seed = (uint64_t)bb::argInt(argc, argv, "-s", 1);
    const int reps = (int)bb::argInt(argc, argv, "-r", 1);
    // i converts to float exactly for i < 2^24, so the CPU slopes equal the GPU ones.
    if (n < 2 || n > (1LL << 24) || reps < 1) return bb::report(false, 0, "bad options");
    const int tiles = (int)((n + TILE - 1) / TILE);

    // Terrain: a random walk with a slight upward drift (fixed seed), as in los.cu.
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

    float *dAlt = nullptr, *dTileMax = nullptr, *dTilePrefix = nullptr;
    unsigned char *dVis = nullptr;
    void *dScanTemp = nullptr;
    size_t scanTempBytes = 0;
    BB_CHECK(cudaMalloc(&dAlt, sizeof(float) * n));
    BB_CHECK(cudaMalloc(&dVis, n));
    BB_CHECK(cudaMalloc(&dTileMax, sizeof(float) * tiles));
    BB_CHECK(cudaMalloc(&dTilePrefix, sizeof(float) * tiles));
    BB_CHECK(cub::DeviceScan::ExclusiveScan(nullptr, scanTempBytes, dTileMax, dTilePrefix,
                                            cuda::maximum<float>{}, -INFINITY, tiles));
    BB_CHECK(cudaMalloc(&dScanTemp, scanTempBytes > 0 ? scanTempBytes : 1));
    BB_CHECK(cudaMemcpy(dAlt, alt.data(), sizeof(float) * n, cudaMemcpyHostToDevice));

    std::vector<unsigned char> vis(n);
    std::vector<float> times;
    bb::GpuTimer timer;
    for (int r = 0; r < reps; ++r) {
        BB_CHECK(cudaMemset(dVis, 0xff, n));  // neither 0 nor 1: unwritten flags are caught
        BB_CHECK(cudaDeviceSynchronize());
        timer.start();
        losTileMax<<<tiles, BLOCK>>>(dAlt, (int)n, h0, dTileMax);
        BB_CHECK_LAUNCH();
        BB_CHECK(cub::DeviceScan::ExclusiveScan(dScanTemp, scanTempBytes, dTileMax, dTilePrefix,
                                                cuda::maximum<float>{}, -INFINITY, tiles));
        losFlags<<<tiles, BLOCK>>>(dAlt, dVis, (int)n, h0, dTilePrefix);
        BB_CHECK_LAUNCH();
        timer.stop();
        times.push_back(timer.ms());
        BB_CHECK(cudaDeviceSynchronize());

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
    BB_CHECK(cudaFree(dTileMax));
    BB_CHECK(cudaFree(dTilePrefix));
    BB_CHECK(cudaFree(dScanTemp));
    // Same nominal work as los: n altitudes read and n flags written (the second read of the
    // altitudes by losFlags and the tile maxima are not counted).
    const double gb = (double)n * (sizeof(float) + 1) / 1e9;
    return bb::report(true, times, nullptr, "gbps", gb);
}
