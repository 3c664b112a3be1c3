// Code shared by the flat versions (no dynamic parallelism) of sc, pt and unq
// (testcases/promotion/NAME/NAME_flat.cu). Each handles n ints in tiles of BLOCK * ITEMS, one
// block of BLOCK threads per tile, in three host-launched steps:
//   count    kernel: thread 0 writes its tile's number of kept items to tileCounts[tile]
//            (FlatTiles::writeCount, a block-wide reduction);
//   scan     cub::DeviceScan::ExclusiveSum over the tiles + 1 counts (the last one stays 0) ->
//            each tile's output offset and, in the last entry, the total (TileOffsets);
//   scatter  kernel: the tile again, each kept item's position in the tile
//            (FlatTiles::scanFlags), staged in shared memory and copied to the output
//            (FlatTiles::scatterPacked for sc and unq; pt stages its partition itself); the
//            last block writes the total to *count (FlatTiles::writeTotal).
// The programs keep their kernels (names, signatures, launch shapes) and what differs between
// them: which items are kept, and pt's partitioned staging. The CDP versions do not use this
// header: klap's promotion pass reads their kernels as written.
#pragma once

#include "bench_b.cuh"
#include "promo_host.cuh"

#include <cub/cub.cuh>

namespace pb {

// Device helpers for tiles of TILE = BLOCK * ITEMS ints, blocked: item i of thread t is element
// t * ITEMS + i of the tile. "keep" is a thread's mask of kept items (bit i: item i). To be
// called by all BLOCK threads of the block (they contain block-wide collectives).
template <int BLOCK, int ITEMS>
struct FlatTiles {
    static constexpr int TILE = BLOCK * ITEMS;
    using Load = cub::BlockLoad<int, BLOCK, ITEMS, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
    using Scan = cub::BlockScan<int, BLOCK>;
    using Reduce = cub::BlockReduce<int, BLOCK>;

    // Shared memory of a count kernel and of a scatter kernel: each member is used in turn,
    // separated by __syncthreads().
    union CountStorage {
        typename Load::TempStorage load;
        typename Reduce::TempStorage reduce;
    };
    union ScatterStorage {
        typename Load::TempStorage load;
        typename Scan::TempStorage scan;
        int stage[TILE];
    };

    // Loads tile blockIdx.x of in[0 .. n) into v (0 past the end) and returns its number of
    // valid elements, min(TILE, n - blockIdx.x * TILE).
    static __device__ int load(const int *in, int n, int (&v)[ITEMS], typename Load::TempStorage &temp)
    {
        const int base = blockIdx.x * TILE;
        const int valid = min(TILE, n - base);
        Load(temp).Load(in + base, v, valid, 0);
        return valid;
    }

    // Loads tile blockIdx.x into v and returns the mask of this thread's valid items x with
    // keep(x). Ends with a __syncthreads(): `temp` may be reused afterwards.
    template <class Keep>
    static __device__ unsigned loadAndFlag(const int *in, int n, int (&v)[ITEMS],
                                           typename Load::TempStorage &temp, Keep keep)
    {
        const int valid = load(in, n, v, temp);
        const int first = (int)threadIdx.x * ITEMS;
        unsigned flags = 0;
        for (int i = 0; i < ITEMS; ++i)
            if (first + i < valid && keep(v[i])) flags |= 1u << i;
        __syncthreads();
        return flags;
    }

    // The count step: thread 0 writes the block's number of kept items to tileCounts[blockIdx.x].
    static __device__ void writeCount(unsigned keep, typename Reduce::TempStorage &temp, int *tileCounts)
    {
        const int total = Reduce(temp).Sum(__popc(keep));
        if (threadIdx.x == 0) tileCounts[blockIdx.x] = total;
    }

    // Block-wide exclusive sum of the kept items: pos = the kept items of the tile before this
    // thread's first; returns the tile's number of kept items. Ends with a __syncthreads():
    // `temp` may be reused afterwards.
    static __device__ int scanFlags(unsigned keep, typename Scan::TempStorage &temp, int &pos)
    {
        int tileCount = 0;
        Scan(temp).ExclusiveSum(__popc(keep), pos, tileCount);
        __syncthreads();
        return tileCount;
    }

    // The last block writes the total, the last entry of the scanned offsets, to *count.
    static __device__ void writeTotal(const int *tileOffsets, int *count)
    {
        if (threadIdx.x == 0 && blockIdx.x == gridDim.x - 1) *count = tileOffsets[gridDim.x];
    }

    // The scatter step of sc and unq: the kept items of v, packed in input order, to
    // out[tileOffsets[blockIdx.x] ..]; the last block writes *count.
    static __device__ void scatterPacked(const int (&v)[ITEMS], unsigned keep, ScatterStorage &sm, int *out,
                                         const int *tileOffsets, int *count)
    {
        int pos = 0;
        const int tileCount = scanFlags(keep, sm.scan, pos);
        for (int i = 0; i < ITEMS; ++i)
            if (keep & (1u << i)) sm.stage[pos++] = v[i];
        __syncthreads();
        const int offset = tileOffsets[blockIdx.x];
        for (int k = threadIdx.x; k < tileCount; k += blockDim.x)
            out[offset + k] = sm.stage[k];
        writeTotal(tileOffsets, count);
    }
};

// Host side of the scan step for `tiles` tiles: tileCounts and tileOffsets (tiles + 1 ints each)
// and cub's temporary storage. CUDA errors go through BB_CHECK.
class TileOffsets {
public:
    explicit TileOffsets(int tiles)
        : tiles_(tiles), counts_(tiles + 1), offsets_(tiles + 1), tempBytes_(scanBytes(counts_, offsets_)),
          temp_(tempBytes_)
    {
    }
    int *counts() const { return counts_.get(); }
    const int *offsets() const { return offsets_.get(); }
    // Before a repetition: every count to 0 (the trailing one stays 0: the total).
    void reset() { counts_.fillBytes(0); }
    // offsets[b] = counts[0] + .. + counts[b - 1], for b = 0 .. tiles (on the default stream).
    void scan()
    {
        BB_CHECK(cub::DeviceScan::ExclusiveSum(temp_.get(), tempBytes_, counts_.get(), offsets_.get(), tiles_ + 1));
    }

private:
    static size_t scanBytes(const DeviceBuffer<int> &counts, const DeviceBuffer<int> &offsets)
    {
        size_t bytes = 0;
        BB_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, counts.get(), offsets.get(), (int)counts.size()));
        return bytes;
    }

    int tiles_;
    DeviceBuffer<int> counts_, offsets_;
    size_t tempBytes_;
    DeviceBuffer<unsigned char> temp_;
};

// Runs the flat sc, pt or unq (see runCounted()); the GPU part of a repetition is
// count<<<tiles, block>>>(in, n, tileCounts), the scan, and
// scatter<<<tiles, block>>>(in, out, n, tileOffsets, count).
template <class Count, class Scatter>
int runCountScanScatter(const TileOptions &opt, const CountedProblem &p, int block, Count count, Scatter scatter)
{
    TileOffsets offsets(opt.tiles);
    return runCounted(opt, p, nullptr, [&] { offsets.reset(); }, [&](const CountedBuffers &d) {
        count<<<opt.tiles, block>>>(d.in.get(), opt.n, offsets.counts());
        BB_CHECK_LAUNCH();
        offsets.scan();
        scatter<<<opt.tiles, block>>>(d.in.get(), d.out.get(), opt.n, offsets.offsets(), d.count.get());
    });
}

}  // namespace pb
