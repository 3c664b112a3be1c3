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

#include <cub/cub.cuh>

#include <climits>

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
    const long long nArg = bb::argInt(argc, argv, "-n", MEDIUM);
    const long long seed = bb::argInt(argc, argv, "-s", 1);
    const long long reps = bb::argInt(argc, argv, "-r", 1);
    if (nArg < 1 || nArg > INT_MAX - TILE) bb::fail("-n must be in 1 .. 2^31 - 8193");
    if (reps < 1 || reps > 100000) bb::fail("-r must be in 1 .. 100000");
    const int n = (int)nArg;
    const int tiles = (int)((nArg + TILE - 1) / TILE);

    // Input: about half the elements are 0, the others random positive ints.
    std::vector<int> h(n);
    bb::Rng rng((uint64_t)seed);
    for (int i = 0; i < n; ++i)
        h[i] = (rng.next() & 1) ? 0 : (int)(1 + rng.below(0x7ffffffe));

    // CPU reference, computed once.
    std::vector<int> ref;
    ref.reserve(n);
    for (int x : h)
        if (x != 0) ref.push_back(x);
    const int refCount = (int)ref.size();

    int *dIn = nullptr, *dOut = nullptr, *dCount = nullptr, *dErr = nullptr;
    BB_CHECK(cudaMalloc(&dIn, sizeof(int) * n));
    BB_CHECK(cudaMalloc(&dOut, sizeof(int) * n));
    BB_CHECK(cudaMalloc(&dCount, sizeof(int)));
    BB_CHECK(cudaMalloc(&dErr, sizeof(int)));
    BB_CHECK(cudaMemcpy(dIn, h.data(), sizeof(int) * n, cudaMemcpyHostToDevice));
    bb::ensurePendingLaunches(tiles + 2048LL);  // at most one child per tile

    bb::GpuTimer timer;
    std::vector<float> times;
    std::vector<int> got(n);
    for (long long r = 0; r < reps; ++r) {
        BB_CHECK(cudaMemset(dOut, 0xff, sizeof(int) * n));
        BB_CHECK(cudaMemset(dCount, 0xff, sizeof(int)));
        BB_CHECK(cudaMemset(dErr, 0, sizeof(int)));
        BB_CHECK(cudaDeviceSynchronize());

        timer.start();
        scTile<<<1, BLOCK>>>(dIn, dOut, n, 0, 0, dCount, dErr);
        BB_CHECK_LAUNCH();
        timer.stop();
        const float ms = timer.ms();
        BB_CHECK(cudaDeviceSynchronize());

        int err = 0, count = -1;
        BB_CHECK(cudaMemcpy(&err, dErr, sizeof(int), cudaMemcpyDeviceToHost));
        if (err) bb::fail("device launch failed (nesting depth?)");
        BB_CHECK(cudaMemcpy(&count, dCount, sizeof(int), cudaMemcpyDeviceToHost));
        char msg[128];
        if (count != refCount) {
            std::snprintf(msg, sizeof msg, "count %d, expected %d", count, refCount);
            bb::fail(msg);
        }
        BB_CHECK(cudaMemcpy(got.data(), dOut, sizeof(int) * refCount, cudaMemcpyDeviceToHost));
        for (int i = 0; i < refCount; ++i)
            if (got[i] != ref[i]) {
                std::snprintf(msg, sizeof msg, "out[%d] = %d, expected %d", i, got[i], ref[i]);
                bb::fail(msg);
            }
        times.push_back(ms);
    }

    BB_CHECK(cudaFree(dIn));
    BB_CHECK(cudaFree(dOut));
    BB_CHECK(cudaFree(dCount));
    BB_CHECK(cudaFree(dErr));
    // Work: n ints read, refCount ints and the count written.
    const double work = (4.0 * n + 4.0 * refCount + 4.0) / 1e9;
    return bb::report(true, times, nullptr, "gbps", work);
}
