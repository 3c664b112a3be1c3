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
#include "common/promo_host.cuh"

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
    const pb::MatrixOptions opt = pb::matrixOptions(argc, argv, TILE);
    // Initial buffer: the matrix (random values in [0, 1)) with row pitch cols + pad, garbage
    // in the padding.
    const pb::InPlaceProblem problem = pb::unpaddingProblem(opt, GARBAGE);
    // At most one launch per nesting level is pending at a time.
    bb::ensurePendingLaunches(32);
    pb::DeviceBuffer<int> dErr(1);
    return pb::runInPlace(opt, problem, dErr.get(), [&](float *buf) {
        updTile<<<1, BLOCK>>>(buf, (int)opt.rows, (int)opt.cols, (int)opt.pad, 0, dErr.get());
    });
}
