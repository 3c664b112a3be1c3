// klap/chunk.cuh on the GPU: a host launch cut into chunks by klap::host_chunked, the way
// generated code makes it (a parent, its twin taking klap::chunk, shadows of the built-ins from
// klap::chunk_enter), with a need that forces chunks of 3 (and 7, 1000) blocks.
//   A. every thread of a 1-D, 2-D and 3-D grid records the blockIdx, gridDim, threadIdx and blockDim
//      it sees: each original block runs exactly once, with its original indices;
//   B. an aggregated launch per block (klap::agg_begin / flush, as block granularity emits it) in
//      the twin: every child runs once with its parent's arguments, across chunks;
//   C. order: the chunks of one launch run one after another in its stream, and each starts after
//      the previous chunk's children: a child of chunk k writes a flag that every block of chunk
//      k+1 reads (the original grid gives no such order; the chunked one must);
//   D. a grid that fits is launched once as written (klap_c null), with its grid unchanged.
// Prints "test_chunk: PASS" or the failed checks.
#include "klap/klap.cuh"
#include "klap_test.cuh"

struct seen {
  uint3 block;
  dim3 grid;
  uint3 thread;
  dim3 bdim;
};

// The parent as written would use the built-ins; the twin sees the chunk's original ones.
__global__ void record_klap_chunk(seen* out, unsigned* count, klap::chunk klap_chunk) {
  klap::vctx klap_v = klap::chunk_enter(klap_chunk);
  [[maybe_unused]] const uint3 threadIdx = klap_v.threadIdx;
  [[maybe_unused]] const uint3 blockIdx = klap_v.blockIdx;
  [[maybe_unused]] const dim3 blockDim = klap_v.blockDim;
  [[maybe_unused]] const dim3 gridDim = klap_v.gridDim;
  {
    const unsigned long long b = blockIdx.x + static_cast<unsigned long long>(gridDim.x) * (blockIdx.y + static_cast<unsigned long long>(gridDim.y) * blockIdx.z);
    const unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    const unsigned long long i = b * (blockDim.x * blockDim.y * blockDim.z) + t;
    out[i] = seen{blockIdx, gridDim, threadIdx, blockDim};
    atomicAdd(&count[i], 1u);
  }
}
__global__ void record(seen* out, unsigned* count) {
  const unsigned long long b = blockIdx.x + static_cast<unsigned long long>(gridDim.x) * (blockIdx.y + static_cast<unsigned long long>(gridDim.y) * blockIdx.z);
  const unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const unsigned long long i = b * (blockDim.x * blockDim.y * blockDim.z) + t;
  out[i] = seen{blockIdx, gridDim, threadIdx, blockDim};
  atomicAdd(&count[i], 1u);
}

// B/C: one aggregated launch per block of the parent; the child adds its parent thread's value.
struct args_child {
  unsigned* hits;
  unsigned* flags;
  unsigned t;
};
__global__ void child_agg(const klap::launch_cfg* klap_cfg, unsigned klap_n, const args_child* klap_args) {
  klap::vctx v;
  unsigned parent;
  if (!klap::child_enter(klap_cfg, klap_n, v, parent)) return;
  const args_child a = klap_args[parent];
  klap::child_release(klap_cfg, klap_n);
  if (v.threadIdx.x == 0 && v.blockIdx.x == 0) {
    atomicAdd(&a.hits[a.t], 1u);
    // C: the child of parent thread t marks its block's flag (the block of t)
    atomicExch(&a.flags[a.t / 64u], 1u);
  }
}
__global__ void child(unsigned* hits, unsigned* flags, unsigned t) {
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    atomicAdd(&hits[t], 1u);
    atomicExch(&flags[t / 64u], 1u);
  }
}

// The parent's twin: blocks of 64 threads; thread t (original index) launches one child if t % 3 != 0.
// C: every block of the chunk that starts at block f checks that the flag of block f - 1 is set
// when f - 1 belongs to an earlier chunk (its children ended before this chunk started).
__global__ void __launch_bounds__(1024) parent_klap_chunk(unsigned* hits, unsigned* flags, unsigned* late, unsigned per,
                                                          klap::chunk klap_chunk) {
  klap::vctx klap_v = klap::chunk_enter(klap_chunk);
  [[maybe_unused]] const uint3 blockIdx = klap_v.blockIdx;
  {
    klap::block_group g = klap::block_group::hardware();
    const unsigned t = blockIdx.x * 64u + threadIdx.x;
    if (threadIdx.x == 0 && blockIdx.x % per == 0 && blockIdx.x > 0) {
      // the last block of the previous chunk launched children whose flags must all be set now
      for (unsigned b = blockIdx.x - per; b < blockIdx.x; ++b)
        if (atomicAdd(&flags[b], 0u) == 0u) atomicAdd(late, 1u);
    }
    auto s = klap::agg_begin<args_child>(g, klap::on_full::launch_as_written);
    if (t % 3u != 0u) s.record(dim3(1), dim3(32), 0u, cudaStream_t(0), args_child{hits, flags, t});
    s.flush(g,
            [&](dim3 gd, dim3 bd, unsigned sm, cudaStream_t st, const klap::launch_cfg* c, unsigned n, const args_child* a,
                const args_child&) -> cudaError_t {
              cudaError_t pre = cudaPeekAtLastError();
              child_agg<<<gd, bd, sm, st>>>(c, n, a);
              return klap::launch_result(pre);
            },
            [&](dim3 gd, dim3 bd, unsigned sm, cudaStream_t st, const args_child& a) -> cudaError_t {
              cudaError_t pre = cudaPeekAtLastError();
              child<<<gd, bd, sm, st>>>(a.hits, a.flags, a.t);
              return klap::launch_result(pre);
            });
  }
}

static klap::chunk_need need_for(unsigned long long per) {
  return klap::chunk_need{static_cast<unsigned long long>(KLAP_POOL_SIZE_BYTES) / 2ull / per, 0ull};
}

static void part_a(dim3 grid, dim3 block, unsigned long long per, bool expect_chunks) {
  const unsigned long long blocks = static_cast<unsigned long long>(grid.x) * grid.y * grid.z;
  const unsigned long long threads = blocks * block.x * block.y * block.z;
  seen* out;
  unsigned* count;
  KT_CUDA(cudaMalloc(&out, threads * sizeof(seen)));
  KT_CUDA(cudaMalloc(&count, threads * sizeof(unsigned)));
  KT_CUDA(cudaMemset(count, 0, threads * sizeof(unsigned)));
  int launches = 0, chunks = 0;
  klap::host_chunked(grid, block, [&](dim3) { return need_for(per); }, [&](dim3 g, const klap::chunk* c) {
    ++launches;
    if (!c) {
      record<<<g, block>>>(out, count);
    } else {
      ++chunks;
      record_klap_chunk<<<g, block>>>(out, count, *c);
    }
  });
  KT_CUDA(cudaGetLastError());
  KT_CUDA(cudaDeviceSynchronize());
  KT_EXPECT((chunks > 0) == expect_chunks, "grid (%u,%u,%u): %d chunks", grid.x, grid.y, grid.z, chunks);
  std::vector<seen> h(threads);
  std::vector<unsigned> n(threads);
  KT_CUDA(cudaMemcpy(h.data(), out, threads * sizeof(seen), cudaMemcpyDeviceToHost));
  KT_CUDA(cudaMemcpy(n.data(), count, threads * sizeof(unsigned), cudaMemcpyDeviceToHost));
  const unsigned bt = block.x * block.y * block.z;
  for (unsigned long long i = 0; i < threads; ++i) {
    const unsigned long long b = i / bt;
    const unsigned t = static_cast<unsigned>(i % bt);
    const seen& s = h[i];
    KT_EXPECT(n[i] == 1u, "grid (%u,%u,%u) thread %llu ran %u times", grid.x, grid.y, grid.z, i, n[i]);
    KT_EXPECT(s.block.x == b % grid.x && s.block.y == (b / grid.x) % grid.y && s.block.z == b / (grid.x * grid.y),
              "block %llu saw blockIdx (%u,%u,%u)", b, s.block.x, s.block.y, s.block.z);
    KT_EXPECT(s.grid.x == grid.x && s.grid.y == grid.y && s.grid.z == grid.z, "block %llu saw gridDim (%u,%u,%u)", b,
              s.grid.x, s.grid.y, s.grid.z);
    KT_EXPECT(s.thread.x == t % block.x && s.thread.y == (t / block.x) % block.y && s.thread.z == t / (block.x * block.y),
              "thread %llu saw threadIdx (%u,%u,%u)", i, s.thread.x, s.thread.y, s.thread.z);
    KT_EXPECT(s.bdim.x == block.x && s.bdim.y == block.y && s.bdim.z == block.z, "thread %llu saw another blockDim", i);
  }
  KT_CUDA(cudaFree(out));
  KT_CUDA(cudaFree(count));
}

int main() {
  kt_watchdog("test_chunk", 60);
  // A, D
  part_a(dim3(10), dim3(64), 3, true);
  part_a(dim3(7, 5), dim3(8, 4), 4, true);
  part_a(dim3(5, 3, 4), dim3(4, 2, 3), 7, true);
  part_a(dim3(3000), dim3(256), 1000, true);
  part_a(dim3(10, 2), dim3(64), 100, false);
  // B, C: 200 blocks of 64 threads in chunks of 3
  {
    const unsigned blocks = 200, per = 3, threads = blocks * 64u;
    unsigned *hits, *flags, *late;
    KT_CUDA(cudaMalloc(&hits, threads * sizeof(unsigned)));
    KT_CUDA(cudaMalloc(&flags, blocks * sizeof(unsigned)));
    KT_CUDA(cudaMalloc(&late, sizeof(unsigned)));
    KT_CUDA(cudaMemset(hits, 0, threads * sizeof(unsigned)));
    KT_CUDA(cudaMemset(flags, 0, blocks * sizeof(unsigned)));
    KT_CUDA(cudaMemset(late, 0, sizeof(unsigned)));
    int chunks = 0;
    klap::host_chunked(dim3(blocks), dim3(64), [&](dim3) { return need_for(per); }, [&](dim3 g, const klap::chunk* c) {
      KT_EXPECT(c != nullptr, "a chunked launch went out whole");
      if (c) {
        ++chunks;
        parent_klap_chunk<<<g, 64, 0, klap::host_prepare(0, klap::host_warps(g, 64))>>>(hits, flags, late, per, *c);
      }
    });
    KT_CUDA(cudaGetLastError());
    KT_CUDA(cudaDeviceSynchronize());
    KT_EXPECT(klap::host_pool_error() == 0u, "klap reported a device error");
    KT_EXPECT(chunks == static_cast<int>((blocks + per - 1) / per), "%d chunks", chunks);
    std::vector<unsigned> h(threads), f(blocks);
    unsigned l = 0;
    KT_CUDA(cudaMemcpy(h.data(), hits, threads * sizeof(unsigned), cudaMemcpyDeviceToHost));
    KT_CUDA(cudaMemcpy(f.data(), flags, blocks * sizeof(unsigned), cudaMemcpyDeviceToHost));
    KT_CUDA(cudaMemcpy(&l, late, sizeof(unsigned), cudaMemcpyDeviceToHost));
    for (unsigned t = 0; t < threads; ++t)
      KT_EXPECT(h[t] == (t % 3u != 0u ? 1u : 0u), "thread %u's child ran %u times", t, h[t]);
    for (unsigned b = 0; b < blocks; ++b) KT_EXPECT(f[b] == 1u, "block %u's children never ran", b);
    KT_EXPECT(l == 0u, "%u blocks of a later chunk started before the children of the chunk before", l);
    KT_CUDA(cudaFree(hits));
    KT_CUDA(cudaFree(flags));
    KT_CUDA(cudaFree(late));
  }
  return kt_finish("test_chunk");
}
