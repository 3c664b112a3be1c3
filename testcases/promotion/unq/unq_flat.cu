// unq_flat: unique (KLAP Table I, promotion part), version without dynamic parallelism, for
// comparison with unq.cu.
//
// Removes consecutive duplicates: keeps in[i] when i == 0 or in[i] != in[i - 1], packed in
// input order in `out`, and writes their number to *count. Same tiles as unq.cu, one block per
// tile, in three host-launched steps:
//   unqCount    counts the kept elements of each tile (block-wide reduction);
//   cub::DeviceScan::ExclusiveSum over the tile counts (plus a trailing 0) -> each tile's
//               output offset and, in the last entry, the total;
//   unqScatter  flags and scans its tile again, stages the kept items packed in shared memory
//               and copies them to out[offset ..]; the last block writes *count.
// Every dataset runs (no nesting limit).
//
// Options: -n elements (204800 = 25 tiles)  -s seed (1)  -r repetitions (1)
// Output: PASS unq_flat time_ms=.. first_ms=.. [warm_ms=..] reps=.. gbps=..  or  FAIL unq_flat: ..

#include "common/bench_b.cuh"
#include "common/promo_flat.cuh"
#include "common/promo_host.cuh"

constexpr int BLOCK = 512;
constexpr int ITEMS = 16;
constexpr int TILE = BLOCK * ITEMS;  // 8192
constexpr long long MEDIUM = 25LL * TILE;

using Tiles = pb::FlatTiles<BLOCK, ITEMS>;

// Loads tile blockIdx.x into v and returns the mask of this thread's kept items (bit i: item i,
// element first + i of the tile): those that differ from their predecessor, and element 0 of the
// input. lastOf: BLOCK ints of shared memory. `load` may be reused afterwards.
__device__ unsigned loadAndFlag(const int *in, int n, int (&v)[ITEMS], Tiles::Load::TempStorage &load,
                                int *lastOf)
{
    const int base = blockIdx.x * TILE;
    const int first = (int)threadIdx.x * ITEMS;
    const int valid = Tiles::load(in, n, v, load);
    lastOf[threadIdx.x] = v[ITEMS - 1];
    __syncthreads();
    int prev = v[0];  // element 0 of the input: always kept
    if (threadIdx.x > 0) prev = lastOf[threadIdx.x - 1];
    else if (blockIdx.x > 0) prev = in[base - 1];
    unsigned keep = 0;
    for (int i = 0; i < ITEMS; ++i) {
        const bool head = (base + first + i == 0) || v[i] != (i == 0 ? prev : v[i - 1]);
        if (first + i < valid && head) keep |= 1u << i;
    }
    return keep;
}

// Counts the kept elements of tile blockIdx.x into tileCounts[blockIdx.x].
__global__ void unqCount(const int *in, int n, int *tileCounts)
{
    __shared__ Tiles::CountStorage sm;
    __shared__ int lastOf[BLOCK];
    int v[ITEMS];
    const unsigned keep = loadAndFlag(in, n, v, sm.load, lastOf);
    Tiles::writeCount(keep, sm.reduce, tileCounts);
}

// Writes the kept elements of tile blockIdx.x to out[tileOffsets[blockIdx.x] ..].
__global__ void unqScatter(const int *in, int *out, int n, const int *tileOffsets, int *count)
{
    __shared__ Tiles::ScatterStorage sm;
    __shared__ int lastOf[BLOCK];
    int v[ITEMS];
    const unsigned keep = loadAndFlag(in, n, v, sm.load, lastOf);
    Tiles::scatterPacked(v, keep, sm, out, tileOffsets, count);
}

int main(int argc, char **argv)
{
    bb::g_name = "unq_flat";
    const pb::TileOptions opt = pb::tileOptions(argc, argv, TILE, MEDIUM);
    // Input (as in unq.cu): runs of equal values, each run 1..8 long, each value in [0, 10^6)
    // and different from the previous run's.
    const pb::CountedProblem problem = pb::uniqueProblem(opt.n, opt.seed);
    return pb::runCountScanScatter(opt, problem, BLOCK, unqCount, unqScatter);
}
