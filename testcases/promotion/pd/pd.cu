// pd: padding in place (KLAP Table I, promotion part), CDP2 version.
//
// A rows x cols row-major matrix of floats stored at the start of a buffer of
// rows * (cols + pad) floats is re-laid out in place with row pitch cols + pad; the padding
// elements become 0. Output position j (row r = j / pitch, column c = j % pitch) takes the
// matrix element at src(j) = r * cols + c = j - r * pad <= j, or 0 if c >= cols.
//
// The output positions are split into tiles of TILE = BLOCK * ITEMS. Elements move right, so
// the tiles are processed from the LAST to the first: the host launches pdTile for the last
// tile, and each tile launches itself for tile - 1:
//   independent prologue: read the sources of the tile's outputs into registers;
//   #pragma klap overlap
//   __syncthreads(): every thread of the block has read its sources;
//   launch:   thread 0 launches pdTile for tile - 1 (no postponed argument: the launch
//             only orders the tiles);
//   epilogue: write the tile's outputs.
// Why this is correct: tile t reads positions in [t * TILE - rows * pad, (t + 1) * TILE) and
// writes [t * TILE, (t + 1) * TILE).
//  - The tiles before t in the chain (t + 1, t + 2, ..., whose epilogues may still run) write
//    only positions >= (t + 1) * TILE: never a source of tile t. So the prologue is
//    independent of every earlier tile and may run as early as promotion wants.
//  - The tiles after t (t - 1, ..., 0) read only positions < t * TILE: tile t never
//    overwrites their sources.
//  - Tile t's writes do overwrite sources of tile t itself (ordered by the barrier) and of
//    tiles t + 1, t + 2, ...; those tiles read them before launching (transitively) tile t.
//    This ordering, "tile t writes after all earlier tiles of the chain have read", is the
//    inter-block dependence that the launch (and promotion's release/acquire) must keep.
// The chain is at most 25 tiles deep (CUDA's nesting limit 24): a longer input fails to
// launch, which is reported as "FAIL pd: device launch failed (nesting depth?)".
//
// Options: -n rows (50 = 25 tiles)  -c cols (1000)  -p pad (20)  -s seed (1)  -r repetitions (1)
// Output: PASS pd time_ms=.. first_ms=.. [warm_ms=..] reps=.. gbps=..  or  FAIL pd: <reason>

#include "common/bench_b.cuh"
#include "common/promo_host.cuh"

#include <vector>

static constexpr int BLOCK = 512;
static constexpr int ITEMS = 4;
static constexpr int TILE = BLOCK * ITEMS;
static constexpr float GARBAGE = -12345.0f;  // initial content of the buffer's tail

// One tile of output positions: tile * TILE + k * BLOCK + threadIdx.x for k < ITEMS
// (striped, so that every access of a warp is contiguous).
__global__ void pdTile(float *buf, int rows, int cols, int pad, int tile, int *err) {
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

#pragma klap overlap
    // Above: reads of positions < (tile + 1) * TILE only, which no earlier tile of the chain
    // writes; no global write, no postponed parameter.
    __syncthreads();  // the whole tile has read its sources before anything overwrites them
    if (threadIdx.x == 0 && tile > 0) {
        pdTile<<<1, blockDim.x>>>(buf, rows, cols, pad, tile - 1, err);
        if (cudaGetLastError() != cudaSuccess) atomicExch(err, 1);  // e.g. nesting depth
    }
    for (int k = 0; k < ITEMS; ++k) {
        const int j = tile * TILE + k * BLOCK + threadIdx.x;
        if (j < total) buf[j] = v[k];
    }
}

int main(int argc, char **argv) {
    bb::g_name = "pd";
    const pb::MatrixOptions opt = pb::matrixOptions(argc, argv, TILE);
    // Initial buffer: the matrix (random values in [0, 1)) at the start, garbage after it.
    const pb::InPlaceProblem problem = pb::paddingProblem(opt, GARBAGE);
    // At most one launch per nesting level is pending at a time.
    bb::ensurePendingLaunches(32);
    pb::DeviceBuffer<int> dErr(1);
    return pb::runInPlace(opt, problem, dErr.get(), [&](float *buf) {
        pdTile<<<1, BLOCK>>>(buf, (int)opt.rows, (int)opt.cols, (int)opt.pad, opt.tiles - 1, dErr.get());
    });
}
