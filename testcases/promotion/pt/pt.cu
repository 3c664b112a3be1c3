// pt: stable partition (KLAP Table I, promotion part), CDP2 version.
//
// Partitions `in` by the predicate x % 3 == 0: the elements that satisfy it are packed at the
// front of `out` in input order, the others from the back in input order (the k-th of them at
// out[n - 1 - k]); *count receives the number of selected elements. One single-block grid
// (BLOCK threads) per tile of TILE = BLOCK * ITEMS elements; the grid of tile t launches the
// grid of tile t + 1 (the kernel calls itself), so the chain is as deep as there are tiles:
//   prologue (independent): load the tile, block-wide exclusive scan of the selected flags ->
//       each item's position among the tile's selected (or rejected) items; stage the tile in
//       shared memory partitioned: selected items first, then the rejected ones.
//   #pragma klap overlap
//   launch: thread 0 launches ptTile for tile + 1 with front + tileSelected and
//       back + tileRejected (both postponed).
//   epilogue: copy the staged items to out[front ..] and out[n - 1 - back ..] (downwards);
//       the last tile writes *count.
// CUDA's nesting limit (24) allows at most 25 tiles; beyond, the launch fails, the kernel sets
// *err and the program prints FAIL.
//
// Options: -n elements (204800 = 25 tiles)  -s seed (1)  -r repetitions (1)
// Output: PASS pt time_ms=.. first_ms=.. [warm_ms=..] reps=.. gbps=..  or  FAIL pt: <reason>

#include "common/bench_b.cuh"
#include "common/promo_host.cuh"

#include <cub/cub.cuh>

constexpr int BLOCK = 512;
constexpr int ITEMS = 16;
constexpr int TILE = BLOCK * ITEMS;  // 8192
constexpr long long MEDIUM = 25LL * TILE;

using TileLoad = cub::BlockLoad<int, BLOCK, ITEMS, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
using TileScan = cub::BlockScan<int, BLOCK>;

__host__ __device__ inline bool selected(int x) { return x % 3 == 0; }

// One tile: `tile` is its index; `front` and `back` (postponed: known only once the previous
// tile has been scanned) are the numbers of selected and of rejected elements of all earlier
// tiles.
__global__ void ptTile(const int *in, int *out, int n, int tile, int front, int back, int *count,
                       int *err)
{
    __shared__ union {
        TileLoad::TempStorage load;
        TileScan::TempStorage scan;
        int stage[TILE];
    } sm;

    // --- independent prologue: reads only this tile of the input (never written) and the
    //     pass-through / induction parameters; writes registers and shared memory only.
    const int base = tile * TILE;
    const int valid = min(TILE, n - base);
    const int first = (int)threadIdx.x * ITEMS;  // blocked: item i of this thread is first + i
    int v[ITEMS];
    TileLoad(sm.load).Load(in + base, v, valid, 0);
    int sel = 0;
    for (int i = 0; i < ITEMS; ++i)
        sel += (first + i < valid && selected(v[i]));
    __syncthreads();  // sm.load is reused by the scan
    int pos = 0, tileSel = 0;
    TileScan(sm.scan).ExclusiveSum(sel, pos, tileSel);
    __syncthreads();  // sm.scan is reused by the stage
    // pos = selected items of the tile before item j, so j - pos = rejected items before it.
    for (int i = 0; i < ITEMS; ++i) {
        const int j = first + i;
        if (j < valid) {
            if (selected(v[i])) sm.stage[pos++] = v[i];
            else sm.stage[tileSel + (j - pos)] = v[i];
        }
    }
    __syncthreads();

#pragma klap overlap
    // --- dependent part: the next tile continues both running counts.
    if (threadIdx.x == 0 && (tile + 1) * TILE < n) {
        ptTile<<<1, blockDim.x>>>(in, out, n, tile + 1, front + tileSel, back + (valid - tileSel),
                                  count, err);
        if (cudaGetLastError() != cudaSuccess) atomicExch(err, 1);  // e.g. nesting depth
    }

    // --- epilogue: selected items upwards from out[front], rejected downwards from
    //     out[n - 1 - back]; the last tile writes the number of selected elements.
    for (int k = threadIdx.x; k < valid; k += blockDim.x) {
        if (k < tileSel) out[front + k] = sm.stage[k];
        else out[n - 1 - (back + (k - tileSel))] = sm.stage[k];
    }
    if (threadIdx.x == 0 && (tile + 1) * TILE >= n) *count = front + tileSel;
}

int main(int argc, char **argv)
{
    bb::g_name = "pt";
    const pb::TileOptions opt = pb::tileOptions(argc, argv, TILE, MEDIUM);
    // Input: random ints in [0, 10^9); about a third of them are selected.
    const pb::CountedProblem problem = pb::partitionProblem(opt.n, opt.seed, selected);
    pb::DeviceBuffer<int> dErr(1);
    bb::ensurePendingLaunches(opt.tiles + 2048LL);  // at most one child per tile
    return pb::runCounted(opt, problem, dErr.get(), [] {}, [&](const pb::CountedBuffers &d) {
        ptTile<<<1, BLOCK>>>(d.in.get(), d.out.get(), opt.n, 0, 0, 0, d.count.get(), dErr.get());
    });
}
