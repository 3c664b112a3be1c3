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
#include "common/promo_host.cuh"

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
    const pb::SightOptions opt = pb::sightOptions(argc, argv, 25LL * TILE - 1);
    // Terrain: a random walk with a slight upward drift (fixed seed).
    const pb::SightProblem problem = pb::sightProblem(opt.n, opt.seed, OBSERVER_HEIGHT);
    // At most one launch per nesting level is pending at a time.
    bb::ensurePendingLaunches(32);
    pb::DeviceBuffer<int> dErr(1);
    return pb::runSight(opt, problem, dErr.get(), [&](const float *alt, unsigned char *vis) {
        losTile<<<1, BLOCK>>>(alt, vis, (int)opt.n, problem.h0, 0, -INFINITY, dErr.get());
    });
}
