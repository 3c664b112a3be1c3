// upd_flat: unpadding in place (KLAP Table I, promotion part) without dynamic parallelism.
//
// Same problem, input and check as upd.cu: the rows x cols matrix stored with row pitch
// cols + pad is re-laid out in place with row pitch cols; the rest of the buffer is untouched.
// One single-pass kernel with adjacent synchronization (as in data sliding): one block per
// tile of TILE = BLOCK * ITEMS padded positions, the same tiles and per-tile code as upd.cu.
//   - Each block takes a ticket (atomicAdd) and handles tile = ticket, so tiles are started
//     from the first to the last, and a block only ever waits for a tile whose block has
//     already started (no deadlock, whatever the scheduling order).
//   - It reads its tile's matrix elements into registers (positions >= tile * TILE).
//   - Thread 0 waits until flag[tile - 1] is set (tile - 1 and, transitively, every earlier
//     tile has read its input), then sets flag[tile] (release); the other threads wait at a
//     barrier. Then the block writes the elements to their destinations (< (tile + 1) * TILE).
// The reads of all tiles overlap; only the flag hand-off is serial. See upd.cu for why a
// tile's writes can only hit input of lower-numbered tiles.
//
// Options: -n rows (50 = 25 tiles)  -c cols (1000)  -p pad (20)  -s seed (1)  -r repetitions (1)
// Output: PASS upd_flat time_ms=.. first_ms=.. [warm_ms=..] reps=.. gbps=..
//         or FAIL upd_flat: <reason>

#include "common/bench_b.cuh"
#include "common/promo_host.cuh"

#include <cuda/atomic>

#include <vector>

static constexpr int BLOCK = 512;
static constexpr int ITEMS = 4;
static constexpr int TILE = BLOCK * ITEMS;
static constexpr float GARBAGE = -12345.0f;  // initial content of the padding

using DeviceFlag = cuda::atomic_ref<int, cuda::thread_scope_device>;

__global__ void updFlat(float *buf, int rows, int cols, int pad, int *ticket, int *flag) {
    __shared__ int sTile;
    if (threadIdx.x == 0) sTile = atomicAdd(ticket, 1);
    __syncthreads();
    const int tile = sTile;
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
    __syncthreads();  // the whole tile has read its input
    if (threadIdx.x == 0) {
        if (tile > 0) {
            DeviceFlag prev(flag[tile - 1]);
            while (prev.load(cuda::memory_order_acquire) == 0) __nanosleep(32);
        }
        DeviceFlag(flag[tile]).store(1, cuda::memory_order_release);
    }
    __syncthreads();  // every earlier tile has read its input: overwriting it is safe
    for (int k = 0; k < ITEMS; ++k)
        if (dst[k] >= 0) buf[dst[k]] = v[k];
}

int main(int argc, char **argv) {
    bb::g_name = "upd_flat";
    const pb::MatrixOptions opt = pb::matrixOptions(argc, argv, TILE);
    // Initial buffer: the matrix (random values in [0, 1)) with row pitch cols + pad, garbage
    // in the padding.
    const pb::InPlaceProblem problem = pb::unpaddingProblem(opt, GARBAGE);
    pb::DeviceBuffer<int> dSync(opt.tiles + 1);  // [0]: ticket, [1 .. tiles]: flags
    return pb::runInPlace(opt, problem, nullptr, [&](float *buf) {
        BB_CHECK(cudaMemsetAsync(dSync.get(), 0, sizeof(int) * (opt.tiles + 1)));
        updFlat<<<opt.tiles, BLOCK>>>(buf, (int)opt.rows, (int)opt.cols, (int)opt.pad, dSync.get(), dSync.get() + 1);
    });
}
