// Tests of klap/pool.cuh with a small pool (1 MiB):
//  1. host_prepare: returns its stream, offers a region to the device (pool_dev.host_base), raises
//     the pending-launch limit; later calls are cheap (no CUDA call: 100000 calls well under 1 s);
//  2. size classes and splitting: a 512 KiB block is freed and handed out again (same address);
//     then 1024 threads take 1 KiB blocks = the whole pool, which needs the freed 512 KiB block
//     split into 1 KiB pieces: all succeed, aligned, inside the region, disjoint;
//  3. reuse: every block freed -> live count 0; allocating again carves nothing (top unchanged);
//  4. churn: 1024 threads x 300 rounds of alloc / write / verify / free with varying sizes, about
//     30 MB in total through the 1 MiB pool; a block shared by two threads shows up as a corrupted
//     pattern; live count 0 afterwards;
//  5. a second free of a block and a foreign pointer are detected -- not run (the trap would end the
//     context before step 6); see the overflow step instead;
//  6. overflow: a request larger than the pool must abort the kernel (klap::fail -> __trap) with
//     "memory pool exhausted while allocating ..." instead of returning memory past the end.
#ifndef KLAP_POOL_SIZE_BYTES
#define KLAP_POOL_SIZE_BYTES (1ull << 20)
#endif
#define KLAP_POOL_WAIT_MS 200
#include "klap/klap.cuh"
#include "klap_test.cuh"
#include <chrono>
#include <vector>

constexpr unsigned long long CAP = KLAP_POOL_SIZE_BYTES;

__host__ __device__ inline unsigned req_size(unsigned gtid, unsigned round) { return (gtid * 37u + round * 11u) % 200u; }

// Every thread allocates `bytes` and fills them with its pattern; out[g] = the pointer.
__global__ void fixed_kernel(char** out, unsigned long long bytes) {
  const unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
  char* p = static_cast<char*>(klap::pool_alloc(bytes, "test_pool fixed_kernel"));
  for (unsigned long long i = 0; i < bytes && i < 4096; ++i) p[i] = static_cast<char>(g * 7u + i);
  out[g] = p;
}

// Checks (after fixed_kernel completed) that every thread's bytes survived: ranges are disjoint.
__global__ void verify_kernel(char* const* ptrs, unsigned long long bytes, unsigned* bad) {
  const unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
  const char* p = ptrs[g];
  for (unsigned long long i = 0; i < bytes && i < 4096; ++i)
    if (p[i] != static_cast<char>(g * 7u + i)) atomicAdd(bad, 1u);
}

__global__ void free_kernel(char* const* ptrs) {
  const unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
  klap::pool_free(ptrs[g]);
}

// Rounds of alloc / fill / verify / free; counts corrupted bytes.
__global__ void churn_kernel(unsigned rounds, unsigned* bad) {
  const unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
  for (unsigned r = 0; r < rounds; ++r) {
    const unsigned n = req_size(g, r);
    unsigned char* p = static_cast<unsigned char*>(klap::pool_alloc(n, "test_pool churn"));
    if ((reinterpret_cast<unsigned long long>(p) & 15ull) != 0) atomicAdd(bad, 1000u);
    for (unsigned i = 0; i < n; ++i) p[i] = static_cast<unsigned char>(g + r + i);
    __nanosleep(100 * (g % 7u));  // let other threads run while the block is held
    unsigned wrong = 0;
    for (unsigned i = 0; i < n; ++i) wrong += p[i] != static_cast<unsigned char>(g + r + i);
    if (wrong) atomicAdd(bad, wrong);
    klap::pool_free(p);
  }
}

static klap::pool_state read_pool() {
  klap::pool_state st{};
  KT_CUDA(cudaMemcpyFromSymbol(&st, klap::pool_dev, sizeof(st)));
  return st;
}

static unsigned read_bad(unsigned* d_bad) {
  unsigned bad = 0;
  KT_CUDA(cudaMemcpy(&bad, d_bad, sizeof(unsigned), cudaMemcpyDeviceToHost));
  KT_CUDA(cudaMemset(d_bad, 0, sizeof(unsigned)));
  return bad;
}

int main() {
  kt_watchdog("test_pool", 50);
  const unsigned nblk = 8, bs = 128, n = nblk * bs;
  char** d_ptrs;
  unsigned* d_bad;
  KT_CUDA(cudaMalloc(&d_ptrs, sizeof(char*) * n));
  KT_CUDA(cudaMalloc(&d_bad, sizeof(unsigned)));
  KT_CUDA(cudaMemset(d_bad, 0, sizeof(unsigned)));
  std::vector<char*> h(n);

  // 1. host_prepare
  KT_EXPECT(klap::host_prepare(0) == cudaStream_t(0), "host_prepare must return its stream");
  klap::pool_state st = read_pool();
  KT_EXPECT(st.host_base != nullptr && st.setup == klap::pool_unset && st.error == 0,
            "pool after first prepare: host_base %p setup %u error %u", (void*)st.host_base, st.setup, st.error);
  size_t pending = 0;
  KT_CUDA(cudaDeviceGetLimit(&pending, cudaLimitDevRuntimePendingLaunchCount));
  KT_EXPECT(pending >= KLAP_PENDING_LAUNCH_LIMIT, "pending launch limit %zu", pending);
  cudaStream_t s1;
  KT_CUDA(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 100000; ++i) KT_EXPECT(klap::host_prepare(s1) == s1, "host_prepare(s1) != s1");
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("test_pool: 100000 later host_prepare calls took %.3f ms\n", ms);
  KT_EXPECT(ms < 1000.0, "later host_prepare calls are not cheap: %.3f ms for 100000", ms);

  // 2. size classes and splitting
  const unsigned long long half = CAP / 2 - 16;  // + 16-byte header = exactly the 512 KiB class
  fixed_kernel<<<1, 1>>>(d_ptrs, half);
  KT_CUDA(cudaDeviceSynchronize());
  KT_CUDA(cudaMemcpy(h.data(), d_ptrs, sizeof(char*), cudaMemcpyDeviceToHost));
  char* big = h[0];
  st = read_pool();
  const char* base = st.base;
  KT_EXPECT(st.setup == klap::pool_region && st.region == klap::pool_region_host && base == st.host_base &&
                st.capacity == CAP && st.top == CAP / 2,
            "after the first allocation: setup %u region %u base %p host_base %p capacity %llu top %llu", st.setup,
            st.region, (void*)st.base, (void*)st.host_base, st.capacity, st.top);
  KT_EXPECT(big == base + 16, "first block %p, want base + 16 = %p", (void*)big, (void*)(base + 16));
  KT_EXPECT(klap::host_pool_live() == 1, "live %llu, want 1", klap::host_pool_live());
  free_kernel<<<1, 1>>>(d_ptrs);
  fixed_kernel<<<1, 1>>>(d_ptrs, half);  // must pop the block just freed
  KT_CUDA(cudaDeviceSynchronize());
  KT_CUDA(cudaMemcpy(h.data(), d_ptrs, sizeof(char*), cudaMemcpyDeviceToHost));
  KT_EXPECT(h[0] == big, "freed 512 KiB block not reused: got %p, want %p", (void*)h[0], (void*)big);
  free_kernel<<<1, 1>>>(d_ptrs);
  fixed_kernel<<<nblk, bs>>>(d_ptrs, 1024 - 16);  // 1024 x 1 KiB = the whole pool
  KT_CUDA(cudaGetLastError());
  verify_kernel<<<nblk, bs>>>(d_ptrs, 1024 - 16, d_bad);
  KT_CUDA(cudaDeviceSynchronize());
  KT_CUDA(cudaMemcpy(h.data(), d_ptrs, sizeof(char*) * n, cudaMemcpyDeviceToHost));
  KT_EXPECT(read_bad(d_bad) == 0, "1 KiB blocks overlap");
  for (unsigned g = 0; g < n; ++g) {
    KT_EXPECT((reinterpret_cast<unsigned long long>(h[g]) & 15ull) == 0, "thread %u: %p not aligned", g, (void*)h[g]);
    KT_EXPECT(h[g] >= base + 16 && h[g] + 1008 <= base + CAP, "thread %u: %p outside the pool", g, (void*)h[g]);
  }
  st = read_pool();
  KT_EXPECT(st.top == CAP && st.error == 0, "after filling the pool: top %llu error %u", st.top, st.error);
  KT_EXPECT(klap::host_pool_live() == n, "live %llu, want %u", klap::host_pool_live(), n);

  // 3. reuse
  free_kernel<<<nblk, bs>>>(d_ptrs);
  KT_CUDA(cudaDeviceSynchronize());
  KT_EXPECT(klap::host_pool_live() == 0, "live %llu after freeing everything, want 0", klap::host_pool_live());
  fixed_kernel<<<nblk, bs>>>(d_ptrs, 100);
  verify_kernel<<<nblk, bs>>>(d_ptrs, 100, d_bad);
  free_kernel<<<nblk, bs>>>(d_ptrs);
  KT_CUDA(cudaDeviceSynchronize());
  KT_EXPECT(read_bad(d_bad) == 0, "128-byte blocks (split from 1 KiB ones) overlap");
  st = read_pool();
  KT_EXPECT(st.top == CAP && st.error == 0 && klap::host_pool_live() == 0, "reuse: top %llu error %u live %llu",
            st.top, st.error, klap::host_pool_live());

  // 4. churn: ~30 MB through the 1 MiB pool
  churn_kernel<<<nblk, bs, 0, klap::host_prepare(s1)>>>(300, d_bad);
  KT_CUDA(cudaGetLastError());
  KT_CUDA(cudaDeviceSynchronize());
  KT_EXPECT(read_bad(d_bad) == 0, "churn: blocks shared or misaligned");
  KT_EXPECT(klap::host_pool_live() == 0, "churn: live %llu, want 0", klap::host_pool_live());
  KT_EXPECT(klap::host_pool_error() == 0, "host_pool_error() != 0 before the overflow test");

  // 6. overflow: a request of the whole pool (+ its header) must trap, never hand out memory past the end
  std::printf("test_pool: the next kernel must fail with \"klap: error: memory pool exhausted while allocating "
              "test_pool fixed_kernel\"\n");
  std::fflush(stdout);
  fixed_kernel<<<1, 1, 0, klap::host_prepare(s1)>>>(d_ptrs, CAP);
  const cudaError_t e = cudaDeviceSynchronize();
  KT_EXPECT(e != cudaSuccess, "pool overflow was not detected (kernel succeeded)");
  std::printf("test_pool: overflow kernel ended with %s\n", cudaGetErrorString(e));
  KT_EXPECT(klap::host_pool_error() != 0, "host_pool_error() == 0 after the overflow");
  return kt_finish("test_pool");
}
