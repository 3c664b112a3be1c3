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

#include <cub/cub.cuh>

#include <climits>

constexpr int BLOCK = 512;
constexpr int ITEMS = 16;
constexpr int TILE = BLOCK * ITEMS;  // 8192
constexpr long long MEDIUM = 25LL * TILE;

using TileLoad = cub::BlockLoad<int, BLOCK, ITEMS, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
using TileScan = cub::BlockScan<int, BLOCK>;
using TileReduce = cub::BlockReduce<int, BLOCK>;

__host__ __device__ inline bool selected(int x) { return x % 3 == 0; }

// Counts the selected elements of tile blockIdx.x into tileCounts[blockIdx.x].
__global__ void ptCount(const int *in, int n, int *tileCounts)
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
    int sel = 0;
    for (int i = 0; i < ITEMS; ++i)
        sel += (first + i < valid && selected(v[i]));
    __syncthreads();
    const int total = TileReduce(sm.reduce).Sum(sel);
    if (threadIdx.x == 0) tileCounts[blockIdx.x] = total;
}

// Writes tile blockIdx.x: selected items from out[front], rejected ones down from
// out[n - 1 - back], where front = tileOffsets[blockIdx.x] and back = base - front.
__global__ void ptScatter(const int *in, int *out, int n, const int *tileOffsets, int *count)
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
    int sel = 0;
    for (int i = 0; i < ITEMS; ++i)
        sel += (first + i < valid && selected(v[i]));
    __syncthreads();
    int pos = 0, tileSel = 0;
    TileScan(sm.scan).ExclusiveSum(sel, pos, tileSel);
    __syncthreads();
    for (int i = 0; i < ITEMS; ++i) {
        const int j = first + i;
        if (j < valid) {
            if (selected(v[i])) sm.stage[pos++] = v[i];
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
    if (threadIdx.x == 0 && blockIdx.x == gridDim.x - 1) *count = tileOffsets[gridDim.x];
}

int main(int argc, char **argv)
{
    bb::g_name = "pt_flat";
    const long long nArg = bb::argInt(argc, argv, "-n", MEDIUM);
    const long long seed = bb::argInt(argc, argv, "-s", 1);
    const long long reps = bb::argInt(argc, argv, "-r", 1);
    if (nArg < 1 || nArg > INT_MAX - TILE) bb::fail("-n must be in 1 .. 2^31 - 8193");
    if (reps < 1 || reps > 100000) bb::fail("-r must be in 1 .. 100000");
    const int n = (int)nArg;
    const int tiles = (int)((nArg + TILE - 1) / TILE);

    // Input: random ints in [0, 10^9) (as in pt.cu); about a third of them are selected.
    std::vector<int> h(n);
    bb::Rng rng((uint64_t)seed);
    for (int i = 0; i < n; ++i) h[i] = (int)rng.below(1000000000u);

    // CPU reference, computed once.
    std::vector<int> ref(n);
    int refCount = 0, rejected = 0;
    for (int x : h) {
        if (selected(x)) ref[refCount++] = x;
        else ref[n - 1 - rejected++] = x;
    }

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
        ptCount<<<tiles, BLOCK>>>(dIn, n, dTileCounts);
        BB_CHECK_LAUNCH();
        BB_CHECK(cub::DeviceScan::ExclusiveSum(dScanTemp, scanTempBytes, dTileCounts, dTileOffsets,
                                               tiles + 1));
        ptScatter<<<tiles, BLOCK>>>(dIn, dOut, n, dTileOffsets, dCount);
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
        BB_CHECK(cudaMemcpy(got.data(), dOut, sizeof(int) * n, cudaMemcpyDeviceToHost));
        for (int i = 0; i < n; ++i)
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
    // Work, as in pt.cu: n ints read, n ints and the count written.
    const double work = (8.0 * n + 4.0) / 1e9;
    return bb::report(true, times, nullptr, "gbps", work);
}
