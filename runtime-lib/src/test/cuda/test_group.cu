// Tests of klap/group.cuh: block and warp groups and their collectives (scan, max, sum, broadcast)
// on hardware blocks with a partial last warp (3-D block of 105 threads), on virtual blocks whose
// tail threads have exited (klap::block_group::virtual_block), on partial warps
// (warp_group::of), and on non-contiguous lane masks (warp_group::from_mask, warp_group::active).
// Every collective is called in a loop of ITERS rounds to check that shared scratch is reused
// safely. The host recomputes every result.
#include "klap/klap.cuh"
#include "klap_test.cuh"
#include <vector>

constexpr int ITERS = 3;

struct out_rec {             // one per (thread, iteration)
  unsigned long long scan;   // block scan of x
  unsigned mx;               // block max of y
  unsigned long long bc;     // block broadcast of x from rank src
  unsigned long long sum;    // block sum of x
  unsigned long long wscan;  // warp_group::of(block) scan of x
  unsigned long long wsum;   // its sum
  unsigned wsize;            // its size
  unsigned wmask;            // its mask
};

__host__ __device__ inline unsigned long long xval(unsigned blk, unsigned rank, int it) {
  return 1ull + rank * (it + 1ull) + 1000ull * blk + (rank % 7 == 3 ? (1ull << 40) : 0ull);
}
__host__ __device__ inline unsigned yval(unsigned blk, unsigned rank, int it) {
  return (rank * 7919u + blk * 31u + it * 101u) % 1009u;
}
__host__ __device__ inline unsigned srcrank(int it, unsigned size) { return (it * 37u + 5u) % size; }

template <class G>
__device__ void run_block(const G& g, unsigned blk, out_rec* out) {
  for (int it = 0; it < ITERS; ++it) {
    const unsigned r = g.rank();
    const unsigned long long x = xval(blk, r, it);
    out_rec o;
    o.scan = klap::group_inclusive_scan(g, x);
    o.mx = klap::group_max(g, yval(blk, r, it));
    o.bc = klap::group_broadcast(g, x, srcrank(it, g.size()));
    o.sum = klap::group_sum(g, x);
    const klap::warp_group w = klap::warp_group::of(g);
    o.wscan = klap::group_inclusive_scan(w, x);
    o.wsum = klap::group_sum(w, x);
    o.wsize = w.size();
    o.wmask = w.mask();
    out[(blk * ITERS + it) * g.size() + r] = o;
  }
}

__global__ void hw_kernel(out_rec* out) {
  run_block(klap::block_group::hardware(), blockIdx.x, out);
}

// Hardware block of 1-D `blockDim.x` threads carrying a virtual block `vb` (<= blockDim.x threads).
__global__ void virtual_kernel(out_rec* out, dim3 vb, unsigned* exited_ok) {
  klap::vctx v{};
  v.blockDim = vb;
  if (threadIdx.x >= vb.x * vb.y * vb.z) {
    atomicAdd(exited_ok, 1u);
    return;  // exited, as after klap::child_enter returned false
  }
  run_block(klap::block_group::virtual_block(v), blockIdx.x, out);
}

struct lane_rec {
  unsigned mask;
  unsigned long long scan;
  unsigned mx;
  unsigned long long bc;
  unsigned rank;
};

__host__ __device__ inline bool pick(unsigned gtid) { return ((gtid * 7u) % 5u) < 2u || (gtid % 32u) == 31u; }
__host__ __device__ inline unsigned long long lval(unsigned gtid) { return 3ull * gtid + 1ull; }

// Non-contiguous masks. Part 1: from_mask(__ballot_sync(pick)) -- deterministic mask.
// Part 2: active() inside a divergent branch -- whatever lanes arrived together; checked against
// the recorded mask. Blocks of 45 threads: the second warp is partial (13 lanes).
__global__ void mask_kernel(lane_rec* fm, lane_rec* ac) {
  const unsigned gtid = blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned live = klap::warp_group::of(klap::block_group::hardware()).mask();  // live lanes
  const bool p = pick(gtid);
  const unsigned m = __ballot_sync(live, p);
  lane_rec r{};
  if (p) {
    for (int it = 0; it < ITERS; ++it) {  // repeated: all lanes of m stay together
      const klap::warp_group w = klap::warp_group::from_mask(m);
      r.mask = w.mask();
      r.rank = w.rank();
      r.scan = klap::group_inclusive_scan(w, lval(gtid) + it);
      r.mx = klap::group_max(w, static_cast<unsigned>((gtid * 13u + it) % 97u));
      r.bc = klap::group_broadcast(w, lval(gtid) + it, (w.size() - 1u) / 2u);
    }
    fm[gtid] = r;
  }
  if (gtid % 3u != 1u) {
    const klap::warp_group w = klap::warp_group::active();
    lane_rec a{};
    a.mask = w.mask();
    a.rank = w.rank();
    a.scan = klap::group_inclusive_scan(w, lval(gtid));
    a.mx = klap::group_max(w, static_cast<unsigned>((gtid * 13u) % 97u));
    a.bc = klap::group_broadcast(w, lval(gtid), w.size() - 1u);
    ac[gtid] = a;
  }
}

static void check_block(const std::vector<out_rec>& out, unsigned nblk, unsigned size, const char* what) {
  for (unsigned b = 0; b < nblk; ++b)
    for (int it = 0; it < ITERS; ++it) {
      unsigned long long total = 0;
      unsigned mx = 0;
      for (unsigned r = 0; r < size; ++r) {
        total += xval(b, r, it);
        mx = std::max(mx, yval(b, r, it));
      }
      unsigned long long run = 0;
      for (unsigned r = 0; r < size; ++r) {
        const out_rec& o = out[(b * ITERS + it) * size + r];
        run += xval(b, r, it);
        KT_EXPECT(o.scan == run, "%s blk %u it %d rank %u scan %llu want %llu", what, b, it, r, o.scan, run);
        KT_EXPECT(o.sum == total, "%s blk %u it %d rank %u sum %llu want %llu", what, b, it, r, o.sum, total);
        KT_EXPECT(o.mx == mx, "%s blk %u it %d rank %u max %u want %u", what, b, it, r, o.mx, mx);
        const unsigned long long bc = xval(b, srcrank(it, size), it);
        KT_EXPECT(o.bc == bc, "%s blk %u it %d rank %u bcast %llu want %llu", what, b, it, r, o.bc, bc);
        const unsigned first = r & ~31u, live = std::min(32u, size - first);
        const unsigned wmask = live == 32 ? 0xFFFFFFFFu : ((1u << live) - 1u);
        unsigned long long ws = 0, wt = 0;
        for (unsigned q = first; q < first + live; ++q) {
          if (q <= r) ws += xval(b, q, it);
          wt += xval(b, q, it);
        }
        KT_EXPECT(o.wsize == live && o.wmask == wmask, "%s blk %u rank %u warp size %u mask %x", what, b, r, o.wsize, o.wmask);
        KT_EXPECT(o.wscan == ws, "%s blk %u it %d rank %u warp scan %llu want %llu", what, b, it, r, o.wscan, ws);
        KT_EXPECT(o.wsum == wt, "%s blk %u it %d rank %u warp sum %llu want %llu", what, b, it, r, o.wsum, wt);
      }
    }
}

static unsigned mx_last(unsigned g) { return (g * 13u + (ITERS - 1)) % 97u; }
static unsigned mx_zero(unsigned g) { return (g * 13u) % 97u; }

int main() {
  // 1. hardware blocks of 7x5x3 = 105 threads (warps of 32, 32, 32, 9)
  {
    const unsigned nblk = 2, size = 105;
    out_rec* d;
    KT_CUDA(cudaMalloc(&d, sizeof(out_rec) * nblk * ITERS * size));
    hw_kernel<<<nblk, dim3(7, 5, 3)>>>(d);
    KT_CUDA(cudaGetLastError());
    KT_CUDA(cudaDeviceSynchronize());
    std::vector<out_rec> h(nblk * ITERS * size);
    KT_CUDA(cudaMemcpy(h.data(), d, sizeof(out_rec) * h.size(), cudaMemcpyDeviceToHost));
    check_block(h, nblk, size, "hardware 7x5x3");
    KT_CUDA(cudaFree(d));
  }
  // 2. virtual blocks inside 1-D hardware blocks of 128 threads; the tail threads exit first
  const dim3 vbs[] = {dim3(7, 11, 1), dim3(5, 4, 3), dim3(64, 1, 1), dim3(1, 1, 1), dim3(128, 1, 1)};
  for (const dim3& vb : vbs) {
    const unsigned nblk = 3, size = vb.x * vb.y * vb.z;
    out_rec* d;
    unsigned* exited;
    KT_CUDA(cudaMalloc(&d, sizeof(out_rec) * nblk * ITERS * size));
    KT_CUDA(cudaMalloc(&exited, sizeof(unsigned)));
    KT_CUDA(cudaMemset(exited, 0, sizeof(unsigned)));
    virtual_kernel<<<nblk, 128>>>(d, vb, exited);
    KT_CUDA(cudaGetLastError());
    KT_CUDA(cudaDeviceSynchronize());
    std::vector<out_rec> h(nblk * ITERS * size);
    KT_CUDA(cudaMemcpy(h.data(), d, sizeof(out_rec) * h.size(), cudaMemcpyDeviceToHost));
    unsigned ex = 0;
    KT_CUDA(cudaMemcpy(&ex, exited, sizeof(unsigned), cudaMemcpyDeviceToHost));
    char what[64];
    std::snprintf(what, sizeof what, "virtual %ux%ux%u", vb.x, vb.y, vb.z);
    check_block(h, nblk, size, what);
    KT_EXPECT(ex == nblk * (128 - size), "%s: %u threads exited, want %u", what, ex, nblk * (128 - size));
    KT_CUDA(cudaFree(d));
    KT_CUDA(cudaFree(exited));
  }
  // 3. non-contiguous masks, blocks of 45 threads (partial second warp)
  {
    const unsigned nblk = 4, bs = 45, n = nblk * bs;
    lane_rec *fm, *ac;
    KT_CUDA(cudaMalloc(&fm, sizeof(lane_rec) * n));
    KT_CUDA(cudaMalloc(&ac, sizeof(lane_rec) * n));
    mask_kernel<<<nblk, bs>>>(fm, ac);
    KT_CUDA(cudaGetLastError());
    KT_CUDA(cudaDeviceSynchronize());
    std::vector<lane_rec> hf(n), ha(n);
    KT_CUDA(cudaMemcpy(hf.data(), fm, sizeof(lane_rec) * n, cudaMemcpyDeviceToHost));
    KT_CUDA(cudaMemcpy(ha.data(), ac, sizeof(lane_rec) * n, cudaMemcpyDeviceToHost));
    unsigned noncontig = 0;
    for (unsigned b = 0; b < nblk; ++b)
      for (unsigned t = 0; t < bs; ++t) {
        const unsigned g = b * bs + t;
        // hardware warps are per block: warp base = block start + (t & ~31)
        const unsigned lane = t % 32u, wbase_t = t - lane;
        if (pick(g)) {
          unsigned want = 0;
          for (unsigned l = 0; l < 32 && wbase_t + l < bs; ++l)
            if (pick(b * bs + wbase_t + l)) want |= 1u << l;
          KT_EXPECT(hf[g].mask == want, "from_mask gtid %u mask %x want %x", g, hf[g].mask, want);
          if ((want & (want + (want & -want))) != 0) ++noncontig;
        }
      }
    for (unsigned b = 0; b < nblk; ++b)
      for (unsigned t = 0; t < bs; ++t) {
        const unsigned g = b * bs + t;
        const unsigned lane = t % 32u, wbase = t - lane;
        auto verify = [&](const lane_rec& r, unsigned long long add, unsigned (*mxf)(unsigned), bool mid,
                          const char* what) {
          KT_EXPECT((r.mask >> lane) & 1u, "%s gtid %u: mask %x lacks own lane", what, g, r.mask);
          KT_EXPECT(wbase + 31u - __builtin_clz(r.mask | 1u) < bs, "%s gtid %u: mask %x has lanes past the block", what, g, r.mask);
          const unsigned rank = kt_popc(r.mask & ((1u << lane) - 1u));
          KT_EXPECT(r.rank == rank, "%s gtid %u rank %u want %u", what, g, r.rank, rank);
          unsigned long long scan = 0;
          unsigned mx = 0;
          std::vector<unsigned> ls;
          for (unsigned l = 0; l < 32; ++l)
            if ((r.mask >> l) & 1u) {
              const unsigned gl = b * bs + wbase + l;
              if (l <= lane) scan += lval(gl) + add;
              mx = std::max(mx, mxf(gl));
              ls.push_back(l);
            }
          const unsigned src = mid ? (unsigned(ls.size()) - 1u) / 2u : unsigned(ls.size()) - 1u;
          const unsigned long long bc = lval(b * bs + wbase + ls[src]) + add;
          KT_EXPECT(r.scan == scan, "%s gtid %u mask %x scan %llu want %llu", what, g, r.mask, r.scan, scan);
          KT_EXPECT(r.mx == mx, "%s gtid %u mask %x max %u want %u", what, g, r.mask, r.mx, mx);
          KT_EXPECT(r.bc == bc, "%s gtid %u mask %x bcast %llu want %llu", what, g, r.mask, r.bc, bc);
        };
        if (pick(g)) verify(hf[g], ITERS - 1, mx_last, true, "from_mask");
        if (g % 3u != 1u) verify(ha[g], 0, mx_zero, false, "active");
      }
    KT_EXPECT(noncontig > 0, "test setup: no non-contiguous mask was exercised");
    KT_CUDA(cudaFree(fm));
    KT_CUDA(cudaFree(ac));
  }
  return kt_finish("test_group");
}
