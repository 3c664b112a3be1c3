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

#include <cub/cub.cuh>

#include <climits>

constexpr int BLOCK = 512;
constexpr int ITEMS = 16;
constexpr int TILE = BLOCK * ITEMS;  // 8192
constexpr long long MEDIUM = 25LL * TILE;

using TileLoad = cub::BlockLoad<int, BLOCK, ITEMS, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
using TileScan = cub::BlockScan<int, BLOCK>;
using TileReduce = cub::BlockReduce<int, BLOCK>;

// Counts the nonzero elements of tile blockIdx.x into tileCounts[blockIdx.x].
__global__ void scCount(const int *in, int n, int *tileCounts)
{
    __shared__ union {
        TileLoad::TempStorage load;
        TileReduce::TempStorage reduce;
    } sm;
    const int base = blockIdx.x * TILE;
    const int valid = min(TILE, n - base);
    const int first = (int)threadIdx.x * ITEMS;
    int v[ITEMS];
    TileLoad(sm.load).Load(in + base, v, valid, 0);
    int kept = 0;
    for (int i = 0; i < ITEMS; ++i)
        kept += (first + i < valid && v[i] != 0);
    __syncthreads();
    const int total = TileReduce(sm.reduce).Sum(kept);
    if (threadIdx.x == 0) tileCounts[blockIdx.x] = total;
}

// Writes the nonzero elements of tile blockIdx.x to out[tileOffsets[blockIdx.x] ..].
__global__ void scScatter(const int *in, int *out, int n, const int *tileOffsets, int *count)
{
    __shared__ union {
        TileLoad::TempStorage load;
        TileScan::TempStorage scan;
        int stage[TILE];
    } sm;
    const int base = blockIdx.x * TILE;
    const int valid = min(TILE, n - base);
    const int first = (int)threadIdx.x * ITEMS;
    int v[ITEMS];
    TileLoad(sm.load).Load(in + base, v, valid, 0);
    int kept = 0;
    for (int i = 0; i < ITEMS; ++i)
        kept += (first + i < valid && v[i] != 0);
    __syncthreads();
    int pos = 0, tileCount = 0;
    TileScan(sm.scan).ExclusiveSum(kept, pos, tileCount);
    __syncthreads();
    for (int i = 0; i < ITEMS; ++i)
        if (first + i < valid && v[i] != 0) sm.stage[pos++] = v[i];
    __syncthreads();
    const int offset = tileOffsets[blockIdx.x];
    for (int k = threadIdx.x; k < tileCount; k += blockDim.x)
        out[offset + k] = sm.stage[k];
    if (threadIdx.x == 0 && blockIdx.x == gridDim.x - 1) *count = tileOffsets[gridDim.x];
}

int main(int argc, char **argv)
{
    bb::g_name = "sc_flat";
    const long long nArg = bb::argInt(argc, argv, "-n", MEDIUM);
    const long long seed = bb::argInt(argc, argv, "-s", 1);
    const long long reps = bb::argInt(argc, argv, "-r", 1);
    if (nArg < 1 || nArg > INT_MAX - TILE) bb::fail("-n must be in 1 .. 2^31 - 8193");
    if (reps < 1 || reps > 100000) bb::fail("-r must be in 1 .. 100000");
    const int n = (int)nArg;
    const int tiles = (int)((nArg + TILE - 1) / TILE);

    // Input: about half the elements are 0, the others random positive ints (as in sc.cu).
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

    int *dIn = nullptr, *dOut = nullptr, *dCount = nullptr, *dTileCounts = nullptr,
        *dTileOffsets = nullptr;
    BB_CHECK(cudaMalloc(&dIn, sizeof(int) * n));
    BB_CHECK(cudaMalloc(&dOut, sizeof(int) * n));
    BB_CHECK(cudaMalloc(&dCount, sizeof(int)));
    BB_CHECK(cudaMalloc(&dTileCounts, sizeof(int) * (tiles + 1)));
    BB_CHECK(cudaMalloc(&dTileOffsets, sizeof(int) * (tiles + 1)));
    BB_CHECK(cudaMemcpy(dIn, h.data(), sizeof(int) * n, cudaMemcpyHostToDevice));
    void *dScanTemp = nullptr;
    size_t scanTempBytes = 0;
    BB_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, scanTempBytes, dTileCounts, dTileOffsets,
                                           tiles + 1));
    BB_CHECK(cudaMalloc(&dScanTemp, scanTempBytes));

    bb::GpuTimer timer;
    std::vector<float> times;
    std::vector<int> got(n);
    for (long long r = 0; r < reps; ++r) {
        BB_CHECK(cudaMemset(dOut, 0xff, sizeof(int) * n));
        BB_CHECK(cudaMemset(dCount, 0xff, sizeof(int)));
        BB_CHECK(cudaMemset(dTileCounts, 0, sizeof(int) * (tiles + 1)));  // trailing 0
        BB_CHECK(cudaDeviceSynchronize());

        timer.start();
        scCount<<<tiles, BLOCK>>>(dIn, n, dTileCounts);
        BB_CHECK_LAUNCH();
        BB_CHECK(cub::DeviceScan::ExclusiveSum(dScanTemp, scanTempBytes, dTileCounts, dTileOffsets,
                                               tiles + 1));
        scScatter<<<tiles, BLOCK>>>(dIn, dOut, n, dTileOffsets, dCount);
        BB_CHECK_LAUNCH();
        timer.stop();
        const float ms = timer.ms();
        BB_CHECK(cudaDeviceSynchronize());

        int count = -1;
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
    BB_CHECK(cudaFree(dTileCounts));
    BB_CHECK(cudaFree(dTileOffsets));
    BB_CHECK(cudaFree(dScanTemp));
    // Work, as in sc.cu: n ints read, refCount ints and the count written.
    const double work = (4.0 * n + 4.0 * refCount + 4.0) / 1e9;
    return bb::report(true, times, nullptr, "gbps", work);
}
