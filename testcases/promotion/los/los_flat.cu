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
#include "common/promo_host.cuh"

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
    const pb::SightOptions opt = pb::sightOptions(argc, argv, 25LL * TILE - 1);
    const int tiles = (int)((opt.n + TILE - 1) / TILE);
    // Terrain: a random walk with a slight upward drift (fixed seed), as in los.cu.
    const pb::SightProblem problem = pb::sightProblem(opt.n, opt.seed, OBSERVER_HEIGHT);

    pb::DeviceBuffer<float> dTileMax(tiles), dTilePrefix(tiles);
    size_t scanTempBytes = 0;
    BB_CHECK(cub::DeviceScan::ExclusiveScan(nullptr, scanTempBytes, dTileMax.get(), dTilePrefix.get(),
                                            cuda::maximum<float>{}, -INFINITY, tiles));
    pb::DeviceBuffer<unsigned char> dScanTemp(scanTempBytes > 0 ? scanTempBytes : 1);
    // Same nominal work as los: n altitudes read and n flags written (the second read of the
    // altitudes by losFlags and the tile maxima are not counted).
    return pb::runSight(opt, problem, nullptr, [&](const float *alt, unsigned char *vis) {
        losTileMax<<<tiles, BLOCK>>>(alt, (int)opt.n, problem.h0, dTileMax.get());
        BB_CHECK_LAUNCH();
        BB_CHECK(cub::DeviceScan::ExclusiveScan(dScanTemp.get(), scanTempBytes, dTileMax.get(),
                                                dTilePrefix.get(), cuda::maximum<float>{}, -INFINITY, tiles));
        losFlags<<<tiles, BLOCK>>>(alt, vis, (int)opt.n, problem.h0, dTilePrefix.get());
    });
}
