// upd: unpadding in place (KLAP Table I, promotion part), CDP2 version.
//
// The inverse of pd: a rows x cols row-major matrix of floats stored with row pitch
// cols + pad in a buffer of rows * (cols + pad) floats is re-laid out in place with row pitch
// cols (the matrix then occupies the first rows * cols floats; the rest of the buffer is left
// as it was). Padded position j (row r = j / pitch, column c = j % pitch, c < cols) moves to
// dst(j) = r * cols + c = j - r * pad <= j.
//
// The padded positions are split into tiles of TILE = BLOCK * ITEMS. Elements move left, so
// the tiles are processed from the first to the last: the host launches updTile for tile 0,
// and each tile launches itself for tile + 1:
//   independent prologue: read the tile's matrix elements into registers;
//   #pragma klap overlap
//   __syncthreads(): every thread of the block has read its elements;
//   launch:   thread 0 launches updTile for tile + 1 (no postponed argument: the launch
//             only orders the tiles);
//   epilogue: write the elements to their destinations.
// Why this is correct: tile t reads positions [t * TILE, (t + 1) * TILE) and writes
// destinations in [t * TILE - rows * pad, (t + 1) * TILE).
//  - The tiles before t in the chain (t - 1, ..., 0, whose epilogues may still run) write
//    only positions < t * TILE: never a position tile t reads. So the prologue is
//    independent of every earlier tile and may run as early as promotion wants.
//  - The tiles after t (t + 1, ...) read only positions >= (t + 1) * TILE: tile t never
//    overwrites their input.
//  - Tile t's writes do overwrite input of tile t itself (ordered by the barrier) and of
//    tiles t - 1, t - 2, ...; those tiles read it before launching (transitively) tile t.
//    This ordering, "tile t writes after all earlier tiles of the chain have read", is the
//    inter-block dependence that the launch (and promotion's release/acquire) must keep.
// The chain is at most 25 tiles deep (CUDA's nesting limit 24): a longer input fails to
// launch, which is reported as "FAIL upd: device launch failed (nesting depth?)".
//
// Options: -n rows (50 = 25 tiles)  -c cols (1000)  -p pad (20)  -s seed (1)  -r repetitions (1)
// Output: PASS upd time_ms=.. first_ms=.. [warm_ms=..] reps=.. gbps=..  or  FAIL upd: <reason>

#include "common/bench_b.cuh"

#include <vector>

static constexpr int BLOCK = 512;
static constexpr int ITEMS = 4;
static constexpr int TILE = BLOCK * ITEMS;
static constexpr float GARBAGE = -12345.0f;  // initial content of the padding

// One tile of padded positions: tile * TILE + k * BLOCK + threadIdx.x for k < ITEMS
// (striped, so that the accesses of a warp are contiguous within a row).
__global__ void updTile(float *buf, int rows, int cols, int pad, int tile, int *err) {
    const int pitch = cols + pad;
    const int total = rows * pitch;
    float v[ITEMS];
    int dst[ITEMS];  // -1: padding or past the end, nothing to move
    for (int k = 0; k < ITEMS; ++k) {
        const int j = tile * TILE + k * BLOCK + threadIdx.x;
        dst[k] = -1;
        v[k] = 0.0f;
        if (j < total) {
            const int r = j / pitch, c = j - r * pitch;
            if (c < cols) {
                dst[k] = r * cols + c;
                v[k] = buf[j];
            }
        }
    }

#pragma klap overlap
    // Above: reads of positions >= tile * TILE only, which no earlier tile of the chain
    // writes; no global write, no postponed parameter.
    __syncthreads();  // the whole tile has read its input before anything overwrites it
    if (threadIdx.x == 0 && (tile + 1) * TILE < rows * (cols + pad)) {
        updTile<<<1, blockDim.x>>>(buf, rows, cols, pad, tile + 1, err);
        if (cudaGetLastError() != cudaSuccess) atomicExch(err, 1);  // e.g. nesting depth
    }
    for (int k = 0; k < ITEMS; ++k)
        if (dst[k] >= 0) buf[dst[k]] = v[k];
}

int main(int argc, char **argv) {
    bb::g_name = "upd";
    const long long rows = bb::argInt(argc, argv, "-n", 50);
    const long long cols = bb::argInt(argc, argv, "-c", 1000);
    const long long pad = bb::argInt(argc, argv, "-p", 20);
    const uint64_t seed = (uint64_t)bb::argInt(argc, argv, "-s", 1);
    const int reps = (int)bb::argInt(argc, argv, "-r", 1);
    if (rows < 1 || cols < 1 || pad < 0 || reps < 1 || rows * (cols + pad) > (1LL << 30))
        return bb::report(false, 0, "bad options");
    const long long pitch = cols + pad, total = rows * pitch, elems = rows * cols;

    // Initial buffer: the matrix (random values in [0, 1)) with row pitch cols + pad, garbage
    // in the padding.
    std::vector<float> init(total, GARBAGE);
    {
        bb::Rng rng(seed);
        for (long long r = 0; r < rows; ++r)
            for (long long c = 0; c < cols; ++c) init[r * pitch + c] = (float)rng.uniform();
    }
    // CPU reference: the compact matrix, then the untouched rest of the buffer.
    std::vector<float> ref(init);
    for (long long r = 0; r < rows; ++r)
        for (long long c = 0; c < cols; ++c) ref[r * cols + c] = init[r * pitch + c];

    // At most one launch per nesting level is pending at a time.
    bb::ensurePendingLaunches(32);

    float *dBuf = nullptr;
    int *dErr = nullptr;
    BB_CHECK(cudaMalloc(&dBuf, sizeof(float) * total));
    BB_CHECK(cudaMalloc(&dErr, sizeof(int)));

    std::vector<float> out(total);
    std::vector<float> times;
    bb::GpuTimer timer;
    for (int r = 0; r < reps; ++r) {
        BB_CHECK(cudaMemcpy(dBuf, init.data(), sizeof(float) * total, cudaMemcpyHostToDevice));
        BB_CHECK(cudaMemset(dErr, 0, sizeof(int)));
        BB_CHECK(cudaDeviceSynchronize());
        timer.start();
        updTile<<<1, BLOCK>>>(dBuf, (int)rows, (int)cols, (int)pad, 0, dErr);
        BB_CHECK_LAUNCH();
        timer.stop();
        const cudaError_t e = cudaDeviceSynchronize();  // waits for the whole chain
        if (e == cudaErrorLaunchMaxDepthExceeded) bb::fail("device launch failed (nesting depth?)");
        BB_CHECK(e);
        int err = 0;
        BB_CHECK(cudaMemcpy(&err, dErr, sizeof(int), cudaMemcpyDeviceToHost));
        if (err) bb::fail("device launch failed (nesting depth?)");
        times.push_back(timer.ms());

        BB_CHECK(cudaMemcpy(out.data(), dBuf, sizeof(float) * total, cudaMemcpyDeviceToHost));
        for (long long j = 0; j < total; ++j) {
            if (out[j] != ref[j]) {
                char msg[192];
                std::snprintf(msg, sizeof msg, "buf[%lld] = %g, expected %g (%s, repetition %d)",
                              j, out[j], ref[j], j < elems ? "matrix" : "tail", r);
                return bb::report(false, 0, msg);
            }
        }
    }
    BB_CHECK(cudaFree(dBuf));
    BB_CHECK(cudaFree(dErr));
    // One repetition reads and writes the rows * cols matrix elements.
    const double gb = (double)(2 * elems) * sizeof(float) / 1e9;
    return bb::report(true, times, nullptr, "gbps", gb);
}
