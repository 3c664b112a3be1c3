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

#include <cub/cub.cuh>

#include <climits>

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
    const long long nArg = bb::argInt(argc, argv, "-n", MEDIUM);
    const long long seed = bb::argInt(argc, argv, "-s", 1);
    const long long reps = bb::argInt(argc, argv, "-r", 1);
    if (nArg < 1 || nArg > INT_MAX - TILE) bb::fail("-n must be in 1 .. 2^31 - 8193");
    if (reps < 1 || reps > 100000) bb::fail("-r must be in 1 .. 100000");
    const int n = (int)nArg;
    const int tiles = (int)((nArg + TILE - 1) / TILE);

    // Input: random ints in [0, 10^9); about a third of them are selected.
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
        ptTile<<<1, BLOCK>>>(dIn, dOut, n, 0, 0, 0, dCount, dErr);
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
    BB_CHECK(cudaFree(dErr));
    // Work: n ints read, n ints and the count written.
    const double work = (8.0 * n + 4.0) / 1e9;
    return bb::report(true, times, nullptr, "gbps", work);
}
