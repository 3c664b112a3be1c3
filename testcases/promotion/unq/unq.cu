// unq: unique (KLAP Table I, promotion part), CDP2 version.
//
// Removes consecutive duplicates: keeps in[i] when i == 0 or in[i] != in[i - 1], packed in
// input order in `out`, and writes their number to *count. One single-block grid (BLOCK
// threads) per tile of TILE = BLOCK * ITEMS elements; the grid of tile t launches the grid of
// tile t + 1 (the kernel calls itself), so the chain is as deep as there are tiles:
//   prologue (independent): load the tile and the element before it (in[tile * TILE - 1]; the
//       input is never written), flag the items that differ from their predecessor,
//       block-wide exclusive scan of the flags -> each kept item's position in the tile and
//       the tile's count; stage the kept items, packed, in shared memory.
//   #pragma klap overlap
//   launch: thread 0 launches unqTile for tile + 1 with offset + tileCount (postponed).
//   epilogue: copy the staged items to out[offset ..]; the last tile writes *count.
// CUDA's nesting limit (24) allows at most 25 tiles; beyond, the launch fails, the kernel sets
// *err and the program prints FAIL.
//
// Options: -n elements (204800 = 25 tiles)  -s seed (1)  -r repetitions (1)
// Output: PASS unq time_ms=.. first_ms=.. [warm_ms=..] reps=.. gbps=..  or  FAIL unq: <reason>

#include "common/bench_b.cuh"
#include "common/promo_host.cuh"

#include <cub/cub.cuh>

constexpr int BLOCK = 512;
constexpr int ITEMS = 16;
constexpr int TILE = BLOCK * ITEMS;  // 8192
constexpr long long MEDIUM = 25LL * TILE;

using TileLoad = cub::BlockLoad<int, BLOCK, ITEMS, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
using TileScan = cub::BlockScan<int, BLOCK>;

// One tile: `tile` is its index, `offset` the number of kept elements of all earlier tiles
// (the postponed argument: known only once the previous tile has been scanned).
__global__ void unqTile(const int *in, int *out, int n, int tile, int offset, int *count, int *err)
{
    __shared__ union {
        TileLoad::TempStorage load;
        TileScan::TempStorage scan;
        int stage[TILE];
    } sm;
    __shared__ int lastOf[BLOCK];  // each thread's last item: the next thread's predecessor

    // --- independent prologue: reads only this tile of the input and the element before it
    //     (the input is never written) and the pass-through / induction parameters; writes
    //     registers and shared memory only.
    const int base = tile * TILE;
    const int valid = min(TILE, n - base);
    const int first = (int)threadIdx.x * ITEMS;  // blocked: item i of this thread is first + i
    int v[ITEMS];
    TileLoad(sm.load).Load(in + base, v, valid, 0);
    lastOf[threadIdx.x] = v[ITEMS - 1];
    __syncthreads();  // lastOf is complete; sm.load is free for the scan
    int prev = v[0];  // element 0 of the input: always kept (its flag is forced below)
    if (threadIdx.x > 0) prev = lastOf[threadIdx.x - 1];
    else if (tile > 0) prev = in[base - 1];
    unsigned keep = 0;  // bit i: item i of this thread is kept
    for (int i = 0; i < ITEMS; ++i) {
        const bool head = (base + first + i == 0) || v[i] != (i == 0 ? prev : v[i - 1]);
        if (first + i < valid && head) keep |= 1u << i;
    }
    int pos = 0, tileCount = 0;
    TileScan(sm.scan).ExclusiveSum(__popc(keep), pos, tileCount);
    __syncthreads();  // sm.scan is reused by the stage
    for (int i = 0; i < ITEMS; ++i)
        if (keep & (1u << i)) sm.stage[pos++] = v[i];
    __syncthreads();

#pragma klap overlap
    // --- dependent part: the next tile starts at output position offset + tileCount.
    if (threadIdx.x == 0 && (tile + 1) * TILE < n) {
        unqTile<<<1, blockDim.x>>>(in, out, n, tile + 1, offset + tileCount, count, err);
        if (cudaGetLastError() != cudaSuccess) atomicExch(err, 1);  // e.g. nesting depth
    }

    // --- epilogue: coalesced copy of the packed tile; the last tile writes the total.
    for (int k = threadIdx.x; k < tileCount; k += blockDim.x)
        out[offset + k] = sm.stage[k];
    if (threadIdx.x == 0 && (tile + 1) * TILE >= n) *count = offset + tileCount;
}

int main(int argc, char **argv)
{
    bb::g_name = "unq";
    const pb::TileOptions opt = pb::tileOptions(argc, argv, TILE, MEDIUM);
    // Input: runs of equal values, each run 1..8 long, each value in [0, 10^6) and different
    // from the previous run's.
    const pb::CountedProblem problem = pb::uniqueProblem(opt.n, opt.seed);
    pb::DeviceBuffer<int> dErr(1);
    bb::ensurePendingLaunches(opt.tiles + 2048LL);  // at most one child per tile
    return pb::runCounted(opt, problem, dErr.get(), [] {}, [&](const pb::CountedBuffers &d) {
        unqTile<<<1, BLOCK>>>(d.in.get(), d.out.get(), opt.n, 0, 0, d.count.get(), dErr.get());
    });
}
