// sc: stream compaction (KLAP Table I, promotion part), CDP2 version.
//
// Copies the elements of `in` that are not 0 to `out`, in input order, and writes their
// number to *count. One single-block grid (BLOCK threads) per tile of TILE = BLOCK * ITEMS
// elements; the grid of tile t launches the grid of tile t + 1 (the kernel calls itself), so
// the chain is as deep as there are tiles:
//   prologue (independent): load the tile, count each thread's nonzero items, block-wide
//       exclusive scan -> each item's position in the tile and the tile's count; stage the
//       kept items, packed, in shared memory.
//   #pragma klap overlap
//   launch: thread 0 launches scTile for tile + 1 with offset + tileCount (postponed).
//   epilogue: copy the staged items to out[offset ..]; the last tile writes *count.
// CUDA's nesting limit (24) allows at most 25 tiles; beyond, the launch fails, the kernel sets
// *err and the program prints FAIL.
//
// Options: -n elements (204800 = 25 tiles)  -s seed (1)  -r repetitions (1)
// Output: PASS sc time_ms=.. first_ms=.. [warm_ms=..] reps=.. gbps=..  or  FAIL sc: <reason>

#include "common/bench_b.cuh"
#include "common/promo_host.cuh"

#include <cub/cub.cuh>

constexpr int BLOCK = 512;
constexpr int ITEMS = 16;
constexpr int TILE = BLOCK * ITEMS;  // 8192
constexpr long long MEDIUM = 25LL * TILE;

using TileLoad = cub::BlockLoad<int, BLOCK, ITEMS, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
using TileScan = cub::BlockScan<int, BLOCK>;

// One tile: `tile` is its index, `offset` the number of nonzero elements of all earlier tiles
// (the postponed argument: known only once the previous tile has been scanned).
__global__ void scTile(const int *in, int *out, int n, int tile, int offset, int *count, int *err)
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
    int kept = 0;
    for (int i = 0; i < ITEMS; ++i)
        kept += (first + i < valid && v[i] != 0);
    __syncthreads();  // sm.load is reused by the scan
    int pos = 0, tileCount = 0;
    TileScan(sm.scan).ExclusiveSum(kept, pos, tileCount);
    __syncthreads();  // sm.scan is reused by the stage
    for (int i = 0; i < ITEMS; ++i)
        if (first + i < valid && v[i] != 0) sm.stage[pos++] = v[i];
    __syncthreads();

#pragma klap overlap
    // --- dependent part: the next tile starts at output position offset + tileCount.
    if (threadIdx.x == 0 && (tile + 1) * TILE < n) {
        scTile<<<1, blockDim.x>>>(in, out, n, tile + 1, offset + tileCount, count, err);
        if (cudaGetLastError() != cudaSuccess) atomicExch(err, 1);  // e.g. nesting depth
    }

    // --- epilogue: coalesced copy of the packed tile; the last tile writes the total.
    for (int k = threadIdx.x; k < tileCount; k += blockDim.x)
        out[offset + k] = sm.stage[k];
    if (threadIdx.x == 0 && (tile + 1) * TILE >= n) *count = offset + tileCount;
}

int main(int argc, char **argv)
{
    bb::g_name = "sc";
    const pb::TileOptions opt = pb::tileOptions(argc, argv, TILE, MEDIUM);
    // Input: about half the elements are 0, the others random positive ints.
    const pb::CountedProblem problem = pb::compactionProblem(opt.n, opt.seed);
    pb::DeviceBuffer<int> dErr(1);
    bb::ensurePendingLaunches(opt.tiles + 2048LL);  // at most one child per tile
    return pb::runCounted(opt, problem, dErr.get(), [] {}, [&](const pb::CountedBuffers &d) {
        scTile<<<1, BLOCK>>>(d.in.get(), d.out.get(), opt.n, 0, 0, d.count.get(), dErr.get());
    });
}
