// pt_flat: stable partition (KLAP Table I, promotion part), version without dynamic
// parallelism, for comparison with pt.cu.
//
// Partitions `in` by the predicate x % 3 == 0: the selected elements packed at the front of
// `out` in input order, the others from the back in input order (the k-th at out[n - 1 - k]);
// *count receives the number of selected elements. Same tiles as pt.cu, one block per tile, in
// three host-launched steps:
//   ptCount    counts the selected elements of each tile (block-wide reduction);
//   cub::DeviceScan::ExclusiveSum over the tile counts (plus a trailing 0) -> the number of
//              selected elements before each tile and, in the last entry, the total; the
//              rejected ones before tile b are b * TILE minus that;
//   ptScatter  scans its tile again, stages it partitioned in shared memory and copies the
//              selected items upwards, the rejected ones downwards; the last block writes *count.
// Every dataset runs (no nesting limit).
//
// Options: -n elements (204800 = 25 tiles)  -s seed (1)  -r repetitions (1)
// Output: PASS pt_flat time_ms=.. first_ms=.. [warm_ms=..] reps=.. gbps=..  or  FAIL pt_flat: ..

#include "common/bench_b.cuh"
#include "common/promo_flat.cuh"
#include "common/promo_host.cuh"

constexpr int BLOCK = 512;
constexpr int ITEMS = 16;
constexpr int TILE = BLOCK * ITEMS;  // 8192
constexpr long long MEDIUM = 25LL * TILE;

using Tiles = pb::FlatTiles<BLOCK, ITEMS>;

__host__ __device__ inline bool selected(int x) { return x % 3 == 0; }

// The kept elements: the selected ones.
struct Selected {
    __device__ bool operator()(int x) const { return selected(x); }
};

// Counts the selected elements of tile blockIdx.x into tileCounts[blockIdx.x].
__global__ void ptCount(const int *in, int n, int *tileCounts)
{
    __shared__ Tiles::CountStorage sm;
    int v[ITEMS];
    const unsigned keep = Tiles::loadAndFlag(in, n, v, sm.load, Selected());
    Tiles::writeCount(keep, sm.reduce, tileCounts);
}

// Writes tile blockIdx.x: selected items from out[front], rejected ones down from
// out[n - 1 - back], where front = tileOffsets[blockIdx.x] and back = base - front.
__global__ void ptScatter(const int *in, int *out, int n, const int *tileOffsets, int *count)
{
    __shared__ Tiles::ScatterStorage sm;
    const int base = blockIdx.x * TILE;
    const int valid = min(TILE, n - base);
    const int first = (int)threadIdx.x * ITEMS;
    int v[ITEMS];
    const unsigned keep = Tiles::loadAndFlag(in, n, v, sm.load, Selected());
    int pos = 0;
    const int tileSel = Tiles::scanFlags(keep, sm.scan, pos);
    // pos = selected items of the tile before item j, so j - pos = rejected items before it.
    for (int i = 0; i < ITEMS; ++i) {
        const int j = first + i;
        if (j < valid) {
            if (keep & (1u << i)) sm.stage[pos++] = v[i];
            else sm.stage[tileSel + (j - pos)] = v[i];
        }
    }
    __syncthreads();
    const int front = tileOffsets[blockIdx.x];
    const int back = base - front;
    for (int k = threadIdx.x; k < valid; k += blockDim.x) {
        if (k < tileSel) out[front + k] = sm.stage[k];
        else out[n - 1 - (back + (k - tileSel))] = sm.stage[k];
    }
    Tiles::writeTotal(tileOffsets, count);
}

int main(int argc, char **argv)
{
    bb::g_name = "pt_flat";
    const pb::TileOptions opt = pb::tileOptions(argc, argv, TILE, MEDIUM);
    // Input: random ints in [0, 10^9) (as in pt.cu); about a third of them are selected.
    const pb::CountedProblem problem = pb::partitionProblem(opt.n, opt.seed, selected);
    return pb::runCountScanScatter(opt, problem, BLOCK, ptCount, ptScatter);
}
