// pd_flat: padding in place (KLAP Table I, promotion part) without dynamic parallelism.
//
// Same problem, input and check as pd.cu: the rows x cols matrix at the start of a buffer of
// rows * (cols + pad) floats is re-laid out in place with row pitch cols + pad, padding = 0.
// One single-pass kernel with adjacent synchronization (as in data sliding): one block per
// output tile of TILE = BLOCK * ITEMS positions, the same tiles and per-tile code as pd.cu.
//   - Each block takes a ticket (atomicAdd) and handles tile = tiles - 1 - ticket, so tiles
//     are started from the last to the first, and a block only ever waits for a tile whose
//     block has already started (no deadlock, whatever the scheduling order).
//   - It reads the sources of its outputs into registers (positions < (tile + 1) * TILE).
//   - Thread 0 waits until flag[tile + 1] is set (tile + 1 and, transitively, every later
//     tile has read its sources), then sets flag[tile] (release); the other threads wait at a
//     barrier. Then the block writes its outputs [tile * TILE, (tile + 1) * TILE).
// The reads of all tiles overlap; only the flag hand-off is serial. See pd.cu for why a tile's
// writes can only hit sources of later-numbered tiles.
//
// Options: -n rows (50 = 25 tiles)  -c cols (1000)  -p pad (20)  -s seed (1)  -r repetitions (1)
// Output: PASS pd_flat time_ms=.. first_ms=.. [warm_ms=..] reps=.. gbps=..
//         or FAIL pd_flat: <reason>

#include "common/bench_b.cuh"

#include <cuda/atomic>

#include <vector>

static constexpr int BLOCK = 512;
static constexpr int ITEMS = 4;
static constexpr int TILE = BLOCK * ITEMS;
static constexpr float GARBAGE = -12345.0f;  // initial content of the buffer's tail

using DeviceFlag = cuda::atomic_ref<int, cuda::thread_scope_device>;

__global__ void pdFlat(float *buf, int rows, int cols, int pad, int tiles, int *ticket,
                       int *flag) {
    __shared__ int sTile;
    if (threadIdx.x == 0) sTile = tiles - 1 - atomicAdd(ticket, 1);
    __syncthreads();
    const int tile = sTile;
    const int pitch = cols + pad;
    const int total = rows * pitch;
    float v[ITEMS];
    for (int k = 0; k < ITEMS; ++k) {
        const int j = tile * TILE + k * BLOCK + threadIdx.x;
        v[k] = 0.0f;
        if (j < total) {
            const int r = j / pitch, c = j - r * pitch;
            if (c < cols) v[k] = buf[r * cols + c];
        }
    }
    __syncthreads();  // the whole tile has read its sources
    if (threadIdx.x == 0) {
        if (tile + 1 < tiles) {
            DeviceFlag next(flag[tile + 1]);
            while (next.load(cuda::memory_order_acquire) == 0) __nanosleep(32);
        }
        DeviceFlag(flag[tile]).store(1, cuda::memory_order_release);
    }
    __syncthreads();  // every later tile has read its sources: overwriting them is safe
    for (int k = 0; k < ITEMS; ++k) {
        const int j = tile * TILE + k * BLOCK + threadIdx.x;
        if (j < total) buf[j] = v[k];
    }
}

int main(int argc, char **argv) {
    bb::g_name = "pd_flat";
    const long long rows = bb::argInt(argc, argv, "-n", 50);
    const long long cols = bb::argInt(argc, argv, "-c", 1000);
    const long long pad = bb::argInt(argc, argv, "-p", 20);
    const uint64_t seed = (uint64_t)bb::argInt(argc, argv, "-s", 1);
    const int reps = (int)bb::argInt(argc, argv, "-r", 1);
    if (rows < 1 || cols < 1 || pad < 0 || reps < 1 || rows * (cols + pad) > (1LL << 30))
        return bb::report(false, 0, "bad options");
    const long long pitch = cols + pad, total = rows * pitch, elems = rows * cols;
    const int tiles = (int)((total + TILE - 1) / TILE);

    // Initial buffer: the matrix (random values in [0, 1)) at the start, garbage after it.
    std::vector<float> init(total, GARBAGE);
    {
        bb::Rng rng(seed);
        for (long long i = 0; i < elems; ++i) init[i] = (float)rng.uniform();
    }
    // CPU reference: the padded layout.
    std::vector<float> ref(total);
    for (long long r = 0; r < rows; ++r)
        for (long long c = 0; c < pitch; ++c)
            ref[r * pitch + c] = c < cols ? init[r * cols + c] : 0.0f;

    float *dBuf = nullptr;
    int *dSync = nullptr;  // [0]: ticket, [1 .. tiles]: flags
    BB_CHECK(cudaMalloc(&dBuf, sizeof(float) * total));
    BB_CHECK(cudaMalloc(&dSync, sizeof(int) * (tiles + 1)));

    std::vector<float> out(total);
    std::vector<float> times;
    bb::GpuTimer timer;
    for (int r = 0; r < reps; ++r) {
        BB_CHECK(cudaMemcpy(dBuf, init.data(), sizeof(float) * total, cudaMemcpyHostToDevice));
        BB_CHECK(cudaDeviceSynchronize());
        timer.start();
        BB_CHECK(cudaMemsetAsync(dSync, 0, sizeof(int) * (tiles + 1)));
        pdFlat<<<tiles, BLOCK>>>(dBuf, (int)rows, (int)cols, (int)pad, tiles, dSync, dSync + 1);
        BB_CHECK_LAUNCH();
        timer.stop();
        times.push_back(timer.ms());
        BB_CHECK(cudaDeviceSynchronize());

        BB_CHECK(cudaMemcpy(out.data(), dBuf, sizeof(float) * total, cudaMemcpyDeviceToHost));
        for (long long j = 0; j < total; ++j) {
            if (out[j] != ref[j]) {
                char msg[192];
                std::snprintf(msg, sizeof msg,
                              "buf[%lld] (row %lld, col %lld) = %g, expected %g (repetition %d)",
                              j, j / pitch, j % pitch, out[j], ref[j], r);
                return bb::report(false, 0, msg);
            }
        }
    }
    BB_CHECK(cudaFree(dBuf));
    BB_CHECK(cudaFree(dSync));
    // One repetition reads the rows * cols matrix and writes rows * pitch floats.
    const double gb = (double)(elems + total) * sizeof(float) / 1e9;
    return bb::report(true, times, nullptr, "gbps", gb);
}
