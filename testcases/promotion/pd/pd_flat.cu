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
#include "common/promo_host.cuh"

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
    const pb::MatrixOptions opt = pb::matrixOptions(argc, argv, TILE);
    // Initial buffer: the matrix (random values in [0, 1)) at the start, garbage after it.
    const pb::InPlaceProblem problem = pb::paddingProblem(opt, GARBAGE);
    pb::DeviceBuffer<int> dSync(opt.tiles + 1);  // [0]: ticket, [1 .. tiles]: flags
    return pb::runInPlace(opt, problem, nullptr, [&](float *buf) {
        BB_CHECK(cudaMemsetAsync(dSync.get(), 0, sizeof(int) * (opt.tiles + 1)));
        pdFlat<<<opt.tiles, BLOCK>>>(buf, (int)opt.rows, (int)opt.cols, (int)opt.pad, opt.tiles, dSync.get(),
                                     dSync.get() + 1);
    });
}
