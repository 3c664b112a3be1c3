// Tests of klap/pool.cuh: host_prepare (allocation, pending-launch limit, recycling only after all
// earlier launches completed), pool_alloc (16-byte alignment, disjoint ranges, exact fill), and
// overflow detection: an allocation past the end must abort the kernel (klap::fail -> __trap)
// instead of returning memory past the end. The pool is made small (1 MiB) for this test.
#ifndef KLAP_POOL_SIZE_BYTES
#define KLAP_POOL_SIZE_BYTES (1ull << 20)
#endif
#include "klap/klap.cuh"
#include "klap_test.cuh"
#include <chrono>
#include <thread>
#include <vector>

constexpr unsigned long long CAP = KLAP_POOL_SIZE_BYTES;

__host__ __device__ inline unsigned req_size(unsigned gtid) { return (gtid * 37u) % 200u; }

// Every thread allocates req_size(gtid) bytes and fills them with its byte pattern.
__global__ void alloc_kernel(char** out) {
  const unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
  char* p = static_cast<char*>(klap::pool_alloc(req_size(g)));
  for (unsigned i = 0; i < req_size(g); ++i) p[i] = static_cast<char>(g * 7u + i);
  out[g] = p;
}

// Checks (after alloc_kernel completed) that every thread's bytes survived: ranges are disjoint.
__global__ void verify_kernel(char* const* ptrs, unsigned* bad) {
  const unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
  const char* p = ptrs[g];
  for (unsigned i = 0; i < req_size(g); ++i)
    if (p[i] != static_cast<char>(g * 7u + i)) atomicAdd(bad, 1u);
}

// Every thread allocates `bytes`.
__global__ void fixed_kernel(char** out, unsigned long long bytes) {
  const unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
  out[g] = static_cast<char*>(klap::pool_alloc(bytes));
}

// Takes 16 bytes from the pool into out[1], tells the host (mapped host flag), then sleeps about
// `ns` nanoseconds (%globaltimer): a launch that still uses its pool memory.
__global__ void spin_kernel(char** out, unsigned long long ns, volatile int* flag) {
  out[1] = static_cast<char*>(klap::pool_alloc(16));
  __threadfence_system();
  *flag = 1;
  __threadfence_system();
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    __nanosleep(1000);
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}

static klap::pool_state read_pool() {
  klap::pool_state st{};
  KT_CUDA(cudaMemcpyFromSymbol(&st, klap::pool_dev, sizeof(st)));
  return st;
}

int main() {
  const unsigned nblk = 8, bs = 128, n = nblk * bs;
  char** d_ptrs;
  unsigned* d_bad;
  KT_CUDA(cudaMalloc(&d_ptrs, sizeof(char*) * n));
  KT_CUDA(cudaMalloc(&d_bad, sizeof(unsigned)));
  KT_CUDA(cudaMemset(d_bad, 0, sizeof(unsigned)));
  std::vector<char*> h(n);

  // 1. first prepare: pool allocated and published, pending-launch limit raised
  KT_EXPECT(klap::host_prepare(0) == cudaStream_t(0), "host_prepare must return its stream");
  klap::pool_state st = read_pool();
  const char* base = st.base;
  KT_EXPECT(st.base != nullptr && st.capacity == CAP && st.offset == 0 && st.error == 0,
            "pool after first prepare: base %p capacity %llu offset %llu error %u", (void*)st.base,
            st.capacity, st.offset, st.error);
  KT_EXPECT((reinterpret_cast<unsigned long long>(base) & 15ull) == 0, "pool base not 16-byte aligned");
  size_t pending = 0;
  KT_CUDA(cudaDeviceGetLimit(&pending, cudaLimitDevRuntimePendingLaunchCount));
  KT_EXPECT(pending >= KLAP_PENDING_LAUNCH_LIMIT, "pending launch limit %zu", pending);

  // 2. concurrent allocations: aligned, inside the pool, disjoint, offset = sum of rounded sizes
  alloc_kernel<<<nblk, bs>>>(d_ptrs);  // uses the pool prepared above
  KT_CUDA(cudaGetLastError());
  verify_kernel<<<nblk, bs>>>(d_ptrs, d_bad);
  KT_CUDA(cudaDeviceSynchronize());
  KT_CUDA(cudaMemcpy(h.data(), d_ptrs, sizeof(char*) * n, cudaMemcpyDeviceToHost));
  unsigned bad = 0;
  KT_CUDA(cudaMemcpy(&bad, d_bad, sizeof(unsigned), cudaMemcpyDeviceToHost));
  KT_EXPECT(bad == 0, "%u bytes overwritten: pool ranges overlap", bad);
  unsigned long long sum = 0;
  for (unsigned g = 0; g < n; ++g) {
    const unsigned long long r = (req_size(g) + 15ull) & ~15ull;
    sum += r;
    KT_EXPECT((reinterpret_cast<unsigned long long>(h[g]) & 15ull) == 0, "thread %u: %p not aligned", g, (void*)h[g]);
    KT_EXPECT(h[g] >= base && h[g] + r <= base + CAP, "thread %u: %p outside the pool", g, (void*)h[g]);
  }
  st = read_pool();
  KT_EXPECT(st.offset == sum, "offset %llu want %llu", st.offset, sum);

  // 3. recycle: everything completed, so the next prepare resets the offset before its launch
  fixed_kernel<<<1, 1, 0, klap::host_prepare(0)>>>(d_ptrs, 16);
  KT_CUDA(cudaDeviceSynchronize());
  KT_CUDA(cudaMemcpy(h.data(), d_ptrs, sizeof(char*), cudaMemcpyDeviceToHost));
  KT_EXPECT(h[0] == base, "after recycle got %p, want the pool base %p", (void*)h[0], (void*)base);

  // 4. no recycle while an earlier prepared launch is still running (in another stream): the spin
  //    kernel (recycled pool) takes the first 16 bytes and keeps running; the next prepare must not
  //    reset the offset, so the kernel after it gets the next 16 bytes.
  cudaStream_t s1, s2;
  KT_CUDA(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  KT_CUDA(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  int* flag;
  KT_CUDA(cudaHostAlloc(&flag, sizeof(int), cudaHostAllocMapped));
  *flag = 0;
  int* d_flag;
  KT_CUDA(cudaHostGetDevicePointer(&d_flag, flag, 0));
  spin_kernel<<<1, 1, 0, klap::host_prepare(s1)>>>(d_ptrs, 300ull * 1000ull * 1000ull, d_flag);
  KT_CUDA(cudaGetLastError());
  for (int i = 0; i < 5000 && *static_cast<volatile int*>(flag) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  KT_EXPECT(*static_cast<volatile int*>(flag) == 1, "spin kernel did not start within 5 s");
  fixed_kernel<<<1, 1, 0, klap::host_prepare(s2)>>>(d_ptrs, 16);  // s1 busy: must NOT recycle
  KT_CUDA(cudaDeviceSynchronize());
  KT_CUDA(cudaMemcpy(h.data(), d_ptrs, 2 * sizeof(char*), cudaMemcpyDeviceToHost));
  KT_EXPECT(h[1] == base && h[0] == base + 16,
            "recycled while a launch was in flight: spin got %p (want %p), next got %p (want %p)",
            (void*)h[1], (void*)base, (void*)h[0], (void*)(base + 16));
  KT_CUDA(cudaFreeHost(flag));

  // 5. exact fill: 256 threads x CAP/256 bytes after a recycle succeed and end at the capacity
  fixed_kernel<<<2, 128, 0, klap::host_prepare(s2)>>>(d_ptrs, CAP / 256);
  KT_CUDA(cudaGetLastError());
  KT_CUDA(cudaDeviceSynchronize());
  st = read_pool();
  KT_EXPECT(st.offset == CAP && st.error == 0, "exact fill: offset %llu error %u", st.offset, st.error);
  KT_EXPECT(klap::host_pool_error() == 0, "host_pool_error() != 0 before the overflow test");

  // 5b. every other device gets a pool of its own (pool_dev exists once per device)
  int ndev = 1;
  KT_CUDA(cudaGetDeviceCount(&ndev));
  for (int d = 1; d < ndev; ++d) {
    KT_CUDA(cudaSetDevice(d));
    char** d_ptrs_d;
    KT_CUDA(cudaMalloc(&d_ptrs_d, sizeof(char*)));
    fixed_kernel<<<1, 1, 0, klap::host_prepare(0)>>>(d_ptrs_d, 16);
    KT_CUDA(cudaDeviceSynchronize());
    const klap::pool_state st = read_pool();
    KT_EXPECT(st.base != nullptr && st.capacity == CAP, "device %d: no pool of its own (base %p)\n", d, (void*)st.base);
    KT_CUDA(cudaFree(d_ptrs_d));
  }
  KT_CUDA(cudaSetDevice(0));
  std::printf("test_pool: %d device(s) checked for a pool of their own\n", ndev);

  // 6. overflow: 2 x (CAP/2 + 16) bytes must trap (sticky error) and never hand out memory past the end
  std::printf("test_pool: the next kernel must fail with \"klap: error: memory pool exhausted\"\n");
  std::fflush(stdout);
  fixed_kernel<<<1, 2, 0, klap::host_prepare(s2)>>>(d_ptrs, CAP / 2 + 16);
  const cudaError_t e = cudaDeviceSynchronize();
  KT_EXPECT(e != cudaSuccess, "pool overflow was not detected (kernel succeeded)");
  std::printf("test_pool: overflow kernel ended with %s\n", cudaGetErrorString(e));
  KT_EXPECT(klap::host_pool_error() != 0, "host_pool_error() == 0 after the overflow");
  return kt_finish("test_pool");
}
