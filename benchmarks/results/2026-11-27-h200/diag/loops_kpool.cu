#define KLAP_POOL_SIZE_BYTES 65536ull
#include "klap/klap.cuh" /* added by klap --granularity=kernel */
#line 1 "/work/main/testcases/src/loops.cu"
// loops: device-side launches inside loops of a parent kernel.
//
// Three host-launched parent grids (one thread per parent index t, early return for t >= n):
//  (a) loopDivergent: thread t runs rounds[t] rounds (a per-thread, divergent trip count, 0..r)
//      and launches workA<<<1 + (t + r) % 3, 64, 0, cudaStreamFireAndForget>>> every round;
//      each child thread atomically adds a hash into its own slot (t, r, child thread), so the
//      children of different rounds are independent.
//  (b) loopUniform: thread t runs a uniform number of rounds (a kernel parameter) and, under a
//      divergent `if` on a per-thread bit mask, launches workB<<<1 + r % 2, 32, 0,
//      cudaStreamFireAndForget>>> with a per-round argument; the children atomically add an
//      order-independent hash sum and a thread count into the parent's accumulators.
//  (c) loopOrdered: thread t first writes its segment of buffer 0, then runs a uniform number
//      of rounds launching stepC<<<2, 32>>> into the NULL stream. Round r reads buffer r % 2
//      (at permuted positions, i.e. values written by other threads of round r-1's child) and
//      writes buffer (r + 1) % 2: round r+1 must see everything round r wrote, and must not
//      overwrite what round r still reads. Launches of one block into the NULL stream run in
//      order, so the result is deterministic; a transformation that reorders or merges one
//      thread's launches of different rounds fails here.
// The host recomputes every slot, accumulator and both buffers.
//
// Options: -n parent threads (2048)  -r max rounds (6, at most 30)  -s salt (7)
//          -b parent block size (128)

#include "common/check.cuh"

#include <vector>

constexpr int BLOCK_A = 64;
constexpr int SLOTS_A = 3 * BLOCK_A;  // largest workA grid is 3 blocks of BLOCK_A threads
constexpr int BLOCK_B = 32;
constexpr int SEG_C = 64;             // elements per parent thread in (c)
constexpr int BLOCK_C = 32;

__host__ __device__ inline unsigned int mix32(unsigned int x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

__host__ __device__ inline unsigned int hashA(int t, int r, int idx, int grid, unsigned int salt) {
    unsigned int h = mix32((unsigned int)t * 0x9e3779b1u ^ salt);
    h = mix32(h ^ ((unsigned int)r * 0x85ebca77u + (unsigned int)grid));
    h = mix32(h + (unsigned int)idx * 0xc2b2ae3du);
    return h | 1u;
}

__host__ __device__ inline unsigned int roundValueB(unsigned int base, int r) {
    return base * (unsigned int)(r + 1) + (unsigned int)r;
}

__host__ __device__ inline unsigned int hashB(unsigned int v, int r, int j) {
    return mix32(v ^ mix32((unsigned int)r * 0x27d4eb2fu + (unsigned int)j * 0x165667b1u));
}

__host__ __device__ inline unsigned int initC(int t, int i, unsigned int salt) {
    return mix32((unsigned int)t * 0x632be5abu + (unsigned int)i * 0x1b873593u + salt);
}

__host__ __device__ inline int sourceC(int i, int r) { return (i * 5 + r + 1) % SEG_C; }

__host__ __device__ inline unsigned int stepValueC(unsigned int x, int t, int r, int i, unsigned int salt) {
    return mix32(x ^ mix32((unsigned int)t * 0xcc9e2d51u + (unsigned int)r * 0x38b34ae5u +
                           (unsigned int)i * 0xe6546b64u + salt));
}

// ---- (a) divergent trip count, fire-and-forget children writing disjoint slots ----

/* klap: per-parent-thread arguments of 'workA' */
struct klap_args_workA { unsigned int *outA; int t; int r; int maxRounds; unsigned int salt; __device__ klap_args_workA(unsigned int *klap_p0, int klap_p1, int klap_p2, int klap_p3, unsigned int klap_p4) : outA(klap_p0), t(klap_p1), r(klap_p2), maxRounds(klap_p3), salt(klap_p4) {} };
__global__ __launch_bounds__(1024) void workA_klap_kagg_vvvvv(const klap::ksite* klap_site);
#line 71 "/work/main/testcases/src/loops.cu"
__global__ void workA(unsigned int *outA, int t, int r, int maxRounds, unsigned int salt) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    size_t slot = ((size_t)t * maxRounds + r) * SLOTS_A + idx;
    atomicAdd(&outA[slot], hashA(t, r, idx, (int)gridDim.x, salt));
}
/* klap: aggregated variant of 'workA' (KLAP II-B): one grid for the children of a whole parent grid; parameters vvvvv (u = scalar, v = per-parent record) */
__global__ __launch_bounds__(1024) void workA_klap_kagg_vvvvv(const klap::ksite* klap_site) {
  klap::vctx klap_v; const klap_args_workA* klap_a;
  if (!klap::kchild_enter(klap_site, klap_v, klap_a)) return;
  unsigned int *outA = klap_a->outA;
  int t = klap_a->t;
  int r = klap_a->r;
  int maxRounds = klap_a->maxRounds;
  unsigned int salt = klap_a->salt;
  klap::kchild_release(klap_site);
  klap::block_group klap_blk = klap::block_group::virtual_block(klap_v); (void)klap_blk;
  [[maybe_unused]] const uint3 threadIdx = klap_v.threadIdx; [[maybe_unused]] const uint3 blockIdx = klap_v.blockIdx; [[maybe_unused]] const dim3 blockDim = klap_v.blockDim; [[maybe_unused]] const dim3 gridDim = klap_v.gridDim;
#line 71 "/work/main/testcases/src/loops.cu"
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    size_t slot = ((size_t)t * maxRounds + r) * SLOTS_A + idx;
    atomicAdd(&outA[slot], hashA(t, r, idx, (int)gridDim.x, salt));
}
}
#line 75 "/work/main/testcases/src/loops.cu"


__global__ __launch_bounds__(1024) void loopDivergent_klap_grid(unsigned int *outA, const int *rounds, int n, int maxRounds, unsigned int salt, int *errors, klap::kstate* klap_ks);
#line 77 "/work/main/testcases/src/loops.cu"
__global__ void loopDivergent(unsigned int *outA, const int *rounds, int n, int maxRounds,
                              unsigned int salt, int *errors) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    int myRounds = rounds[t];
    for (int r = 0; r < myRounds; ++r) {
        workA<<<1 + (t + r) % 3, BLOCK_A, 0, cudaStreamFireAndForget>>>(outA, t, r, maxRounds, salt);
        if (cudaGetLastError() != cudaSuccess) atomicAdd(errors, 1);
    }
}
/* klap: 'loopDivergent' at kernel granularity (KLAP II-B); 'loopDivergent' itself stays as written for code klap does not see */
__global__ __launch_bounds__(1024) void loopDivergent_klap_grid(unsigned int *outA, const int *rounds, int n, int maxRounds, unsigned int salt, int *errors, klap::kstate* klap_ks)
#line 78 "/work/main/testcases/src/loops.cu"
{ [&]() {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    int myRounds = rounds[t];
    for (int r = 0; r < myRounds; ++r) {
        klap::krecord<klap_args_workA>(klap_ks, 0u, dim3(1 + (t + r) % 3), dim3(BLOCK_A), (unsigned)(0), (cudaStream_t)(cudaStreamFireAndForget), klap_args_workA(outA, t, r, maxRounds, salt), [&](dim3 klap_grid, dim3 klap_block, unsigned klap_smem, cudaStream_t klap_stream, const klap_args_workA& klap_a) -> cudaError_t { cudaError_t klap_pre = cudaPeekAtLastError(); workA<<<klap_grid, klap_block, klap_smem, klap_stream>>>(klap_a.outA, klap_a.t, klap_a.r, klap_a.maxRounds, klap_a.salt); return klap::launch_result(klap_pre); });
        if (cudaGetLastError() != cudaSuccess) atomicAdd(errors, 1);
    }
}(); klap::kfinish(klap_ks, 0u, [&](const klap::ksite* klap_ksite, dim3 klap_grid, dim3 klap_block, unsigned klap_smem, cudaStream_t klap_stream) -> cudaError_t { cudaError_t klap_pre = cudaPeekAtLastError(); workA_klap_kagg_vvvvv<<<klap_grid, klap_block, klap_smem, klap_stream>>>(klap_ksite); cudaError_t klap_e = klap::launch_result(klap_pre); return klap_e; }); }
#line 86 "/work/main/testcases/src/loops.cu"


// ---- (b) uniform trip count, launch under a divergent if, order-independent accumulation ----

/* klap: per-parent-thread arguments of 'workB' */
struct klap_args_workB { unsigned long long *accB; int *cntB; int t; int r; unsigned int v; __device__ klap_args_workB(unsigned long long *klap_p0, int *klap_p1, int klap_p2, int klap_p3, unsigned int klap_p4) : accB(klap_p0), cntB(klap_p1), t(klap_p2), r(klap_p3), v(klap_p4) {} };
__global__ __launch_bounds__(1024) void workB_klap_kagg_vvvvv(const klap::ksite* klap_site);
#line 90 "/work/main/testcases/src/loops.cu"
__global__ void workB(unsigned long long *accB, int *cntB, int t, int r, unsigned int v) {
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    atomicAdd(&accB[t], (unsigned long long)hashB(v, r, j));
    atomicAdd(&cntB[t], 1);
}
/* klap: aggregated variant of 'workB' (KLAP II-B): one grid for the children of a whole parent grid; parameters vvvvv (u = scalar, v = per-parent record) */
__global__ __launch_bounds__(1024) void workB_klap_kagg_vvvvv(const klap::ksite* klap_site) {
  klap::vctx klap_v; const klap_args_workB* klap_a;
  if (!klap::kchild_enter(klap_site, klap_v, klap_a)) return;
  unsigned long long *accB = klap_a->accB;
  int *cntB = klap_a->cntB;
  int t = klap_a->t;
  int r = klap_a->r;
  unsigned int v = klap_a->v;
  klap::kchild_release(klap_site);
  klap::block_group klap_blk = klap::block_group::virtual_block(klap_v); (void)klap_blk;
  [[maybe_unused]] const uint3 threadIdx = klap_v.threadIdx; [[maybe_unused]] const uint3 blockIdx = klap_v.blockIdx; [[maybe_unused]] const dim3 blockDim = klap_v.blockDim; [[maybe_unused]] const dim3 gridDim = klap_v.gridDim;
#line 90 "/work/main/testcases/src/loops.cu"
{
    int j = blockIdx.x * blockDim.x + threadIdx.x;
    atomicAdd(&accB[t], (unsigned long long)hashB(v, r, j));
    atomicAdd(&cntB[t], 1);
}
}
#line 94 "/work/main/testcases/src/loops.cu"


__global__ __launch_bounds__(1024) void loopUniform_klap_grid(unsigned long long *accB, int *cntB, const unsigned int *flags, const unsigned int *inB, int n, int rounds, int *errors, klap::kstate* klap_ks);
#line 96 "/work/main/testcases/src/loops.cu"
__global__ void loopUniform(unsigned long long *accB, int *cntB, const unsigned int *flags,
                            const unsigned int *inB, int n, int rounds, int *errors) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    unsigned int f = flags[t];
    unsigned int base = inB[t];
    for (int r = 0; r < rounds; ++r) {
        unsigned int v = roundValueB(base, r);
        if ((f >> r) & 1u) {
            workB<<<1 + r % 2, BLOCK_B, 0, cudaStreamFireAndForget>>>(accB, cntB, t, r, v);
            if (cudaGetLastError() != cudaSuccess) atomicAdd(errors, 1);
        }
    }
}
/* klap: 'loopUniform' at kernel granularity (KLAP II-B); 'loopUniform' itself stays as written for code klap does not see */
__global__ __launch_bounds__(1024) void loopUniform_klap_grid(unsigned long long *accB, int *cntB, const unsigned int *flags, const unsigned int *inB, int n, int rounds, int *errors, klap::kstate* klap_ks)
#line 97 "/work/main/testcases/src/loops.cu"
{ [&]() {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    unsigned int f = flags[t];
    unsigned int base = inB[t];
    for (int r = 0; r < rounds; ++r) {
        unsigned int v = roundValueB(base, r);
        if ((f >> r) & 1u) {
            klap::krecord<klap_args_workB>(klap_ks, 0u, dim3(1 + r % 2), dim3(BLOCK_B), (unsigned)(0), (cudaStream_t)(cudaStreamFireAndForget), klap_args_workB(accB, cntB, t, r, v), [&](dim3 klap_grid, dim3 klap_block, unsigned klap_smem, cudaStream_t klap_stream, const klap_args_workB& klap_a) -> cudaError_t { cudaError_t klap_pre = cudaPeekAtLastError(); workB<<<klap_grid, klap_block, klap_smem, klap_stream>>>(klap_a.accB, klap_a.cntB, klap_a.t, klap_a.r, klap_a.v); return klap::launch_result(klap_pre); });
            if (cudaGetLastError() != cudaSuccess) atomicAdd(errors, 1);
        }
    }
}(); klap::kfinish(klap_ks, 0u, [&](const klap::ksite* klap_ksite, dim3 klap_grid, dim3 klap_block, unsigned klap_smem, cudaStream_t klap_stream) -> cudaError_t { cudaError_t klap_pre = cudaPeekAtLastError(); workB_klap_kagg_vvvvv<<<klap_grid, klap_block, klap_smem, klap_stream>>>(klap_ksite); cudaError_t klap_e = klap::launch_result(klap_pre); return klap_e; }); }
#line 109 "/work/main/testcases/src/loops.cu"


// ---- (c) uniform trip count, NULL-stream children where round r+1 reads round r ----

/* klap: per-parent-thread arguments of 'stepC' */
struct klap_args_stepC { const unsigned int *src; unsigned int *dst; int t; int r; unsigned int salt; __device__ klap_args_stepC(const unsigned int *klap_p0, unsigned int *klap_p1, int klap_p2, int klap_p3, unsigned int klap_p4) : src(klap_p0), dst(klap_p1), t(klap_p2), r(klap_p3), salt(klap_p4) {} };
__global__ __launch_bounds__(1024) void stepC_klap_kagg_vvvvv(const klap::ksite* klap_site);
#line 113 "/work/main/testcases/src/loops.cu"
__global__ void stepC(const unsigned int *src, unsigned int *dst, int t, int r, unsigned int salt) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= SEG_C) return;
    size_t base = (size_t)t * SEG_C;
    unsigned int x = src[base + sourceC(i, r)];
    dst[base + i] = stepValueC(x, t, r, i, salt);
}
/* klap: aggregated variant of 'stepC' (KLAP II-B): one grid for the children of a whole parent grid; parameters vvvvv (u = scalar, v = per-parent record) */
__global__ __launch_bounds__(1024) void stepC_klap_kagg_vvvvv(const klap::ksite* klap_site) {
  klap::vctx klap_v; const klap_args_stepC* klap_a;
  if (!klap::kchild_enter(klap_site, klap_v, klap_a)) return;
  const unsigned int *src = klap_a->src;
  unsigned int *dst = klap_a->dst;
  int t = klap_a->t;
  int r = klap_a->r;
  unsigned int salt = klap_a->salt;
  klap::kchild_release(klap_site);
  klap::block_group klap_blk = klap::block_group::virtual_block(klap_v); (void)klap_blk;
  [[maybe_unused]] const uint3 threadIdx = klap_v.threadIdx; [[maybe_unused]] const uint3 blockIdx = klap_v.blockIdx; [[maybe_unused]] const dim3 blockDim = klap_v.blockDim; [[maybe_unused]] const dim3 gridDim = klap_v.gridDim;
#line 113 "/work/main/testcases/src/loops.cu"
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= SEG_C) return;
    size_t base = (size_t)t * SEG_C;
    unsigned int x = src[base + sourceC(i, r)];
    dst[base + i] = stepValueC(x, t, r, i, salt);
}
}
#line 119 "/work/main/testcases/src/loops.cu"


__global__ __launch_bounds__(1024) void loopOrdered_klap_grid(unsigned int *buf0, unsigned int *buf1, int n, int rounds, unsigned int salt, int *errors, klap::kstate* klap_ks);
#line 121 "/work/main/testcases/src/loops.cu"
__global__ void loopOrdered(unsigned int *buf0, unsigned int *buf1, int n, int rounds,
                            unsigned int salt, int *errors) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    // Written by the launching thread before its first launch: visible to its children.
    unsigned int *seg0 = buf0 + (size_t)t * SEG_C;
    for (int i = 0; i < SEG_C; ++i) seg0[i] = initC(t, i, salt);
    for (int r = 0; r < rounds; ++r) {
        const unsigned int *src = (r % 2 == 0) ? buf0 : buf1;
        unsigned int *dst = (r % 2 == 0) ? buf1 : buf0;
        stepC<<<(SEG_C + BLOCK_C - 1) / BLOCK_C, BLOCK_C>>>(src, dst, t, r, salt);
        if (cudaGetLastError() != cudaSuccess) atomicAdd(errors, 1);
    }
}
/* klap: 'loopOrdered' at kernel granularity (KLAP II-B); 'loopOrdered' itself stays as written for code klap does not see */
__global__ __launch_bounds__(1024) void loopOrdered_klap_grid(unsigned int *buf0, unsigned int *buf1, int n, int rounds, unsigned int salt, int *errors, klap::kstate* klap_ks)
#line 122 "/work/main/testcases/src/loops.cu"
{ [&]() { unsigned klap_seq = 0;
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    // Written by the launching thread before its first launch: visible to its children.
    unsigned int *seg0 = buf0 + (size_t)t * SEG_C;
    for (int i = 0; i < SEG_C; ++i) seg0[i] = initC(t, i, salt);
    for (int r = 0; r < rounds; ++r) {
        const unsigned int *src = (r % 2 == 0) ? buf0 : buf1;
        unsigned int *dst = (r % 2 == 0) ? buf1 : buf0;
        klap::krecord_seq<klap_args_stepC>(klap_ks, 0u, 1u, 0u, klap_seq, dim3((SEG_C + BLOCK_C - 1) / BLOCK_C), dim3(BLOCK_C), 0u, (cudaStream_t)0, klap_args_stepC(src, dst, t, r, salt), [&](dim3 klap_grid, dim3 klap_block, unsigned klap_smem, cudaStream_t klap_stream, const klap_args_stepC& klap_a) -> cudaError_t { cudaError_t klap_pre = cudaPeekAtLastError(); stepC<<<klap_grid, klap_block, klap_smem, klap_stream>>>(klap_a.src, klap_a.dst, klap_a.t, klap_a.r, klap_a.salt); return klap::launch_result(klap_pre); });
        if (cudaGetLastError() != cudaSuccess) atomicAdd(errors, 1);
    }
}(); klap::kfinish(klap_ks, 1u, [&](const klap::ksite* klap_ksite, dim3 klap_grid, dim3 klap_block, unsigned klap_smem, cudaStream_t klap_stream) -> cudaError_t { cudaError_t klap_pre = cudaPeekAtLastError(); stepC_klap_kagg_vvvvv<<<klap_grid, klap_block, klap_smem, klap_stream>>>(klap_ksite); cudaError_t klap_e = klap::launch_result(klap_pre); return klap_e; }); }
#line 134 "/work/main/testcases/src/loops.cu"


#include "dbg.cuh"
int main(int argc, char **argv) {
    tc::g_name = "loops";
    const int n = (int)tc::argInt(argc, argv, "-n", 2048);
    const int maxRounds = (int)tc::argInt(argc, argv, "-r", 6);
    const unsigned int salt = (unsigned int)tc::argInt(argc, argv, "-s", 7);
    const int block = (int)tc::argInt(argc, argv, "-b", 128);
    if (n < 1 || maxRounds < 1 || maxRounds > 30 || (long long)n * maxRounds > (1LL << 19) ||
        block < 1 || block > 1024)
        return tc::report(false, 0, "bad options (need n>=1, 1<=r<=30, n*r <= 2^19, 1<=b<=1024)");

    // Deterministic per-thread inputs: trip counts for (a), launch masks and values for (b).
    tc::Rng rng(salt * 0x9e3779b97f4a7c15ull + 1);
    std::vector<int> rounds(n);
    std::vector<unsigned int> flags(n), inB(n);
    const unsigned int roundMask = (maxRounds >= 32) ? 0xffffffffu : ((1u << maxRounds) - 1u);
    for (int t = 0; t < n; ++t) {
        rounds[t] = (int)rng.below((uint32_t)maxRounds + 1);  // 0..maxRounds
        unsigned int f = (unsigned int)rng.next();
        if (t % 7 == 0) f = 0;             // some threads never launch
        if (t % 11 == 0) f = 0xffffffffu;  // some launch every round
        flags[t] = f & roundMask;
        inB[t] = (unsigned int)rng.next();
    }

    // Each grid runs alone (host stream order); at most n * maxRounds children are pending.
    tc::ensurePendingLaunches((long long)n * maxRounds + 1024);

    const size_t elemsA = (size_t)n * maxRounds * SLOTS_A;
    const size_t elemsC = (size_t)n * SEG_C;
    unsigned int *dOutA = nullptr, *dFlags = nullptr, *dInB = nullptr, *dBuf0 = nullptr,
                 *dBuf1 = nullptr;
    int *dRounds = nullptr, *dCntB = nullptr, *dErrors = nullptr;
    unsigned long long *dAccB = nullptr;
    CUDA_CHECK(cudaMalloc(&dOutA, sizeof(unsigned int) * elemsA));
    CUDA_CHECK(cudaMalloc(&dRounds, sizeof(int) * n));
    CUDA_CHECK(cudaMalloc(&dFlags, sizeof(unsigned int) * n));
    CUDA_CHECK(cudaMalloc(&dInB, sizeof(unsigned int) * n));
    CUDA_CHECK(cudaMalloc(&dAccB, sizeof(unsigned long long) * n));
    CUDA_CHECK(cudaMalloc(&dCntB, sizeof(int) * n));
    CUDA_CHECK(cudaMalloc(&dBuf0, sizeof(unsigned int) * elemsC));
    CUDA_CHECK(cudaMalloc(&dBuf1, sizeof(unsigned int) * elemsC));
    CUDA_CHECK(cudaMalloc(&dErrors, sizeof(int)));
    CUDA_CHECK(cudaMemset(dOutA, 0, sizeof(unsigned int) * elemsA));
    CUDA_CHECK(cudaMemcpy(dRounds, rounds.data(), sizeof(int) * n, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dFlags, flags.data(), sizeof(unsigned int) * n, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dInB, inB.data(), sizeof(unsigned int) * n, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dAccB, 0, sizeof(unsigned long long) * n));
    CUDA_CHECK(cudaMemset(dCntB, 0, sizeof(int) * n));
    CUDA_CHECK(cudaMemset(dBuf0, 0, sizeof(unsigned int) * elemsC));
    CUDA_CHECK(cudaMemset(dBuf1, 0, sizeof(unsigned int) * elemsC));
    CUDA_CHECK(cudaMemset(dErrors, 0, sizeof(int)));

    const int grid = (n + block - 1) / block;
    tc::GpuTimer timer;
    timer.start();
    (loopDivergent_klap_grid<<<grid, block, 0, klap::host_prepare(0, klap::host_warps(grid, block))>>>(dOutA, dRounds, n, maxRounds, salt, dErrors, klap::host_kstate(1)), klap::host_kstate_done());
    klapdbg_wait("loopDivergent");
    CUDA_CHECK_LAUNCH();
    (loopUniform_klap_grid<<<grid, block, 0, klap::host_prepare(0, klap::host_warps(grid, block))>>>(dAccB, dCntB, dFlags, dInB, n, maxRounds, dErrors, klap::host_kstate(1)), klap::host_kstate_done());
    klapdbg_wait("loopUniform");
    CUDA_CHECK_LAUNCH();
    (loopOrdered_klap_grid<<<grid, block, 0, klap::host_prepare(0, klap::host_warps(grid, block))>>>(dBuf0, dBuf1, n, maxRounds, salt, dErrors, klap::host_kstate(0 + KLAP_KERNEL_MAX_ORDERED * 1)), klap::host_kstate_done());
    klapdbg_wait("loopOrdered");
    CUDA_CHECK_LAUNCH();
    timer.stop();
    float ms = timer.ms();
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<unsigned int> outA(elemsA), buf[2] = {std::vector<unsigned int>(elemsC),
                                                      std::vector<unsigned int>(elemsC)};
    std::vector<unsigned long long> accB(n);
    std::vector<int> cntB(n);
    int errors = 0;
    CUDA_CHECK(cudaMemcpy(outA.data(), dOutA, sizeof(unsigned int) * elemsA, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(accB.data(), dAccB, sizeof(unsigned long long) * n, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(cntB.data(), dCntB, sizeof(int) * n, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(buf[0].data(), dBuf0, sizeof(unsigned int) * elemsC, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(buf[1].data(), dBuf1, sizeof(unsigned int) * elemsC, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&errors, dErrors, sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(dOutA));
    CUDA_CHECK(cudaFree(dRounds));
    CUDA_CHECK(cudaFree(dFlags));
    CUDA_CHECK(cudaFree(dInB));
    CUDA_CHECK(cudaFree(dAccB));
    CUDA_CHECK(cudaFree(dCntB));
    CUDA_CHECK(cudaFree(dBuf0));
    CUDA_CHECK(cudaFree(dBuf1));
    CUDA_CHECK(cudaFree(dErrors));

    char msg[200];
    if (errors != 0) {
        std::snprintf(msg, sizeof msg, "%d device-side launch errors", errors);
        return tc::report(false, 0, msg);
    }

    // (a): every slot of an executed round holds its hash exactly once, everything else is 0.
    for (int t = 0; t < n; ++t) {
        for (int r = 0; r < maxRounds; ++r) {
            const int g = 1 + (t + r) % 3;
            const size_t base = ((size_t)t * maxRounds + r) * SLOTS_A;
            for (int idx = 0; idx < SLOTS_A; ++idx) {
                unsigned int want = (r < rounds[t] && idx < g * BLOCK_A) ? hashA(t, r, idx, g, salt) : 0u;
                if (outA[base + idx] != want) {
                    std::snprintf(msg, sizeof msg,
                                  "(a) thread %d round %d slot %d = %08x, expected %08x (rounds %d)", t,
                                  r, idx, outA[base + idx], want, rounds[t]);
                    return tc::report(false, 0, msg);
                }
            }
        }
    }

    // (b): order-independent sums and thread counts per parent thread.
    for (int t = 0; t < n; ++t) {
        unsigned long long sum = 0;
        int cnt = 0;
        for (int r = 0; r < maxRounds; ++r) {
            if (!((flags[t] >> r) & 1u)) continue;
            unsigned int v = roundValueB(inB[t], r);
            for (int j = 0; j < (1 + r % 2) * BLOCK_B; ++j) sum += hashB(v, r, j);
            cnt += (1 + r % 2) * BLOCK_B;
        }
        if (accB[t] != sum || cntB[t] != cnt) {
            std::snprintf(msg, sizeof msg, "(b) thread %d: %d child threads sum %llx, expected %d sum %llx",
                          t, cntB[t], accB[t], cnt, sum);
            return tc::report(false, 0, msg);
        }
    }

    // (c): simulate the rounds in order; buffer maxRounds % 2 holds the last state, the other
    // buffer the state before it (the initial segment when maxRounds == 1).
    std::vector<unsigned int> cur(SEG_C), prev(SEG_C), next(SEG_C);
    for (int t = 0; t < n; ++t) {
        for (int i = 0; i < SEG_C; ++i) cur[i] = initC(t, i, salt);
        prev = cur;
        for (int r = 0; r < maxRounds; ++r) {
            for (int i = 0; i < SEG_C; ++i) next[i] = stepValueC(cur[sourceC(i, r)], t, r, i, salt);
            prev.swap(cur);
            cur.swap(next);
        }
        const std::vector<unsigned int> &last = buf[maxRounds % 2], &before = buf[(maxRounds + 1) % 2];
        for (int i = 0; i < SEG_C; ++i) {
            size_t k = (size_t)t * SEG_C + i;
            if (last[k] != cur[i] || before[k] != prev[i]) {
                std::snprintf(msg, sizeof msg,
                              "(c) thread %d element %d: final %08x / previous %08x, expected %08x / %08x",
                              t, i, last[k], before[k], cur[i], prev[i]);
                return tc::report(false, 0, msg);
            }
        }
    }
    return tc::report(true, ms, nullptr);
}
