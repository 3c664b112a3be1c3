// sc_flat: stream compaction (KLAP Table I, promotion part), version without dynamic
// parallelism, for comparison with sc.cu.
//
// Copies the elements of `in` that are not 0 to `out`, in input order, and writes their
// number to *count. Same tiles as sc.cu (TILE = BLOCK * ITEMS elements), one block per tile,
// in three host-launched steps:
//   scCount    counts the nonzero elements of each tile (block-wide reduction);
//   cub::DeviceScan::ExclusiveSum over the tile counts (plus a trailing 0) -> each tile's
//              output offset and, in the last entry, the total;
//   scScatter  scans its tile again, stages the kept items packed in shared memory and copies
//              them to out[offset ..]; the last block writes *count.
// Every dataset runs (no nesting limit).
//
// Options: -n elements (204800 = 25 tiles)  -s seed (1)  -r repetitions (1)
// Output: PASS sc_flat time_ms=.. first_ms=.. [warm_ms=..] reps=.. gbps=..  or  FAIL sc_flat: ..

#include "common/bench_b.cuh"
#include "common/promo_flat.cuh"
#include "common/promo_host.cuh"

constexpr int BLOCK = 512;
constexpr int ITEMS = 16;
constexpr int TILE = BLOCK * ITEMS;  // 8192
constexpr long long MEDIUM = 25LL * TILE;

using Tiles = pb::FlatTiles<BLOCK, ITEMS>;

// The kept elements: the nonzero ones.
struct NonZero {
    __device__ bool operator()(int x) const { return x != 0; }
};

// Counts the nonzero elements of tile blockIdx.x into tileCounts[blockIdx.x].
__global__ void scCount(const int *in, int n, int *tileCounts)
{
    __shared__ Tiles::CountStorage sm;
    int v[ITEMS];
    const unsigned keep = Tiles::loadAndFlag(in, n, v, sm.load, NonZero());
    Tiles::writeCount(keep, sm.reduce, tileCounts);
}

// Writes the nonzero elements of tile blockIdx.x to out[tileOffsets[blockIdx.x] ..].
__global__ void scScatter(const int *in, int *out, int n, const int *tileOffsets, int *count)
{
    __shared__ Tiles::ScatterStorage sm;
    int v[ITEMS];
    const unsigned keep = Tiles::loadAndFlag(in, n, v, sm.load, NonZero());
    Tiles::scatterPacked(v, keep, sm, out, tileOffsets, count);
}

int main(int argc, char **argv)
{
    bb::g_name = "sc_flat";
    const pb::TileOptions opt = pb::tileOptions(argc, argv, TILE, MEDIUM);
    // Input: about half the elements are 0, the others random positive ints (as in sc.cu).
    const pb::CountedProblem problem = pb::compactionProblem(opt.n, opt.seed);
    return pb::runCountScanScatter(opt, problem, BLOCK, scCount, scScatter);
}
