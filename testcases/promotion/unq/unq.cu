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

#include <cub/cub.cuh>

#include <climits>

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
    const long long nArg = bb::argInt(argc, argv, "-n", MEDIUM);
    const long long seed = bb::argInt(argc, argv, "-s", 1);
    const long long reps = bb::argInt(argc, argv, "-r", 1);
    if (nArg < 1 || nArg > INT_MAX - TILE) bb::fail("-n must be in 1 .. 2^31 - 8193");
    if (reps < 1 || reps > 100000) bb::fail("-r must be in 1 .. 100000");
    const int n = (int)nArg;
    const int tiles = (int)((nArg + TILE - 1) / TILE);

    // Input: runs of equal values, each run 1..8 long, each value in [0, 10^6) and different
    // from the previous run's.
    std::vector<int> h(n);
    bb::Rng rng((uint64_t)seed);
    for (int i = 0, value = -1; i < n;) {
        int next;
        do next = (int)rng.below(1000000u);
        while (next == value);
        value = next;
        for (int len = 1 + (int)rng.below(8); len > 0 && i < n; --len) h[i++] = value;
    }

    // CPU reference, computed once.
    std::vector<int> ref;
    for (int i = 0; i < n; ++i)
        if (i == 0 || h[i] != h[i - 1]) ref.push_back(h[i]);
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
        unqTile<<<1, BLOCK>>>(dIn, dOut, n, 0, 0, dCount, dErr);
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
