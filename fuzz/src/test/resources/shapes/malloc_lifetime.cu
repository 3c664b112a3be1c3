// Shape "malloc-lifetime" (the GPU review reproducer C_malloc_pin, H200 2026-11-28): klap aggregates
// the device cudaMalloc calls of a warp or block into one klap::group_malloc allocation split into
// shares, and klap::group_free returns it to the heap only when its last share is freed. In
// C_malloc_pin thread 0 of each block kept its buffer of every round and the others freed theirs at
// once: aggregated, each round's whole group allocation stayed in the 8 MiB device heap and later
// cudaMalloc calls failed where the program as written had no failure. klap now leaves as written
// (warning malloc-lifetime) a cudaMalloc whose shares the threads of a group may free at different
// times: kept by one thread (pin), a free some threads skip (skip), a return of some threads between
// the allocation and the free (early), a free through a copy under divergent control (copied). It
// still aggregates those freed together: in the same block after a test of the failure and a launch
// (rounds), under a uniform condition, through a lambda every thread calls, straight after in a
// divergent branch (together). Each thread writes its tag into its buffer, reads it back and adds it
// into out; a failed cudaMalloc is counted, and the program fails if any failed.
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define N_OUT 4093
// 2 KiB a thread and round: pin's and rounds' 256 threads hold 512 KiB at a time as written; pin
// aggregated would keep 512 KiB for each of its 24 rounds (more than the heap)
#define WORDS 512
#define ROUNDS 24

__host__ __device__ inline unsigned mix(unsigned a, unsigned b) {
  unsigned h = a * 0x9e3779b1u ^ (b + 0x7f4a7c15u);
  h ^= h >> 16; h *= 0x85ebca6bu; h ^= h >> 13;
  return h;
}

__global__ void fill(unsigned* out, unsigned tag) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  atomicAdd(&out[(tag * 31u + i) % N_OUT], tag + i * 7u);
}

__device__ void write(unsigned* p, int words, unsigned tag) {
  for (int w = 0; w < words; ++w) p[w] = mix(tag, (unsigned)w);
}

__device__ unsigned sum(const unsigned* p, int words) {
  unsigned s = 0u;
  for (int w = 0; w < words; ++w) s += p[w] * (unsigned)(w + 1);
  return s;
}

// left as written: thread 0 of each block keeps its buffer of every round, the others free theirs
// at once (C_malloc_pin); it reads and frees the kept ones at the end
__global__ void pin(unsigned* out, unsigned* failures, int rounds) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned* kept[ROUNDS] = {};
  for (int r = 0; r < rounds; ++r) {
    unsigned* p;
    if (cudaMalloc(&p, WORDS * sizeof(unsigned)) != cudaSuccess) { atomicAdd(failures, 1u); continue; }
    write(p, WORDS, i * 64u + r);
    atomicAdd(&out[(i * 64u + r) % N_OUT], sum(p, WORDS));
    if (threadIdx.x == 0) kept[r] = p; else cudaFree(p);
  }
  fill<<<1, 32>>>(out, 70000u + i);
  if (threadIdx.x == 0)
    for (int r = 0; r < rounds; ++r)
      if (kept[r] != nullptr) { atomicAdd(&out[((i * 64u + r) * 3u) % N_OUT], kept[r][WORDS - 1]); cudaFree(kept[r]); }
}

// left as written: a third of the threads skip the first free and free after the launch
__global__ void skip(unsigned* out, unsigned* failures) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned* p;
  if (cudaMalloc(&p, 64 * sizeof(unsigned)) != cudaSuccess) { atomicAdd(failures, 1u); return; }
  write(p, 64, 1000u + i);
  atomicAdd(&out[(1000u + i) % N_OUT], sum(p, 64));
  if (i % 3 != 0) cudaFree(p);
  fill<<<1, 32>>>(out, 1000u + i);
  if (i % 3 == 0) { atomicAdd(&out[(3000u + i) % N_OUT], p[63]); cudaFree(p); }
}

// left as written: the threads at or above n free and return before the others reach the free
__global__ void early(unsigned* out, unsigned* failures, int n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned* p;
  if (cudaMalloc(&p, 256 * sizeof(unsigned)) != cudaSuccess) { atomicAdd(failures, 1u); return; }
  write(p, 256, 5000u + i);
  if (i >= (unsigned)n) { cudaFree(p); return; }
  fill<<<1, 32>>>(out, 5000u + i);
  atomicAdd(&out[(5000u + i) % N_OUT], sum(p, 256));
  cudaFree(p);
}

// left as written: freed through a copy, by the even threads before the launch and the odd ones after
__global__ void copied(unsigned* out, unsigned* failures) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned* p;
  if (cudaMalloc(&p, 32 * sizeof(unsigned)) != cudaSuccess) { atomicAdd(failures, 1u); return; }
  write(p, 32, 9000u + i);
  unsigned* q = p;
  if (i % 2 == 0) { atomicAdd(&out[(9000u + i) % N_OUT], sum(q, 32)); cudaFree(q); }
  fill<<<1, 32>>>(out, 9000u + i);
  if (i % 2 != 0) { atomicAdd(&out[(9000u + i) % N_OUT], sum(q, 32)); cudaFree(q); }
}

// aggregated: each round's buffer freed in the same block, after a test of its failure and a launch
__global__ void rounds(unsigned* out, unsigned* failures, int count) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int r = 0; r < count; ++r) {
    unsigned* p;
    if (cudaMalloc(&p, WORDS * sizeof(unsigned)) != cudaSuccess) { atomicAdd(failures, 1u); continue; }
    write(p, WORDS, 20000u + i * 64u + r);
    fill<<<1, 32>>>(out, 20000u + i * 64u + r);
    atomicAdd(&out[(20000u + i * 64u + r) % N_OUT], sum(p, WORDS));
    cudaFree(p);
  }
}

// aggregated: an allocation the block reaches together freed under a uniform condition, one freed
// through a lambda every thread calls, one in a thread-dependent branch freed straight after
__global__ void together(unsigned* out, unsigned* failures, int n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned* a = nullptr;
  cudaMalloc(&a, 128 * sizeof(unsigned));
  if (a != nullptr) { write(a, 128, 40000u + i); atomicAdd(&out[(40000u + i) % N_OUT], sum(a, 128)); }
  else atomicAdd(failures, 1u);
  fill<<<1, 32>>>(out, 40000u + i);
  if (n > 0) cudaFree(a);
  unsigned* b;
  if (cudaMalloc(&b, 64 * sizeof(unsigned)) != cudaSuccess) { atomicAdd(failures, 1u); return; }
  auto done = [&] { cudaFree(b); };
  write(b, 64, 45000u + i);
  fill<<<1, 32>>>(out, 45000u + i);
  atomicAdd(&out[(45000u + i) % N_OUT], sum(b, 64));
  done();
  if (i % 3 != 1) {
    unsigned* c = nullptr;
    cudaMalloc(&c, 32 * sizeof(unsigned));
    if (c != nullptr) { write(c, 32, 50000u + i); atomicAdd(&out[(50000u + i) % N_OUT], sum(c, 32)); }
    else atomicAdd(failures, 1u);
    cudaFree(c);
  }
}

static unsigned sum_cpu(int words, unsigned tag) {
  unsigned s = 0u;
  for (int w = 0; w < words; ++w) s += mix(tag, (unsigned)w) * (unsigned)(w + 1);
  return s;
}

static void fill_cpu(std::vector<unsigned>& out, unsigned tag) {
  for (unsigned i = 0; i < 32u; ++i) out[(tag * 31u + i) % N_OUT] += tag + i * 7u;
}

int main() {
  const int n = 100;
  std::vector<unsigned> expected(N_OUT, 0u), got(N_OUT, 0u);
  for (unsigned i = 0; i < 256u; ++i) {  // pin<<<4, 64>>>
    for (unsigned r = 0; r < ROUNDS; ++r) expected[(i * 64u + r) % N_OUT] += sum_cpu(WORDS, i * 64u + r);
    fill_cpu(expected, 70000u + i);
    if (i % 64u == 0)
      for (unsigned r = 0; r < ROUNDS; ++r) expected[((i * 64u + r) * 3u) % N_OUT] += mix(i * 64u + r, WORDS - 1);
  }
  for (unsigned i = 0; i < 128u; ++i) {  // skip<<<2, 64>>>
    expected[(1000u + i) % N_OUT] += sum_cpu(64, 1000u + i);
    fill_cpu(expected, 1000u + i);
    if (i % 3 == 0) expected[(3000u + i) % N_OUT] += mix(1000u + i, 63u);
  }
  for (unsigned i = 0; i < 128u; ++i) {  // early<<<2, 64>>>
    if (i >= (unsigned)n) continue;
    fill_cpu(expected, 5000u + i);
    expected[(5000u + i) % N_OUT] += sum_cpu(256, 5000u + i);
  }
  for (unsigned i = 0; i < 96u; ++i) {  // copied<<<2, 48>>>
    expected[(9000u + i) % N_OUT] += sum_cpu(32, 9000u + i);
    fill_cpu(expected, 9000u + i);
  }
  for (unsigned i = 0; i < 256u; ++i)  // rounds<<<4, 64>>>
    for (unsigned r = 0; r < ROUNDS; ++r) {
      fill_cpu(expected, 20000u + i * 64u + r);
      expected[(20000u + i * 64u + r) % N_OUT] += sum_cpu(WORDS, 20000u + i * 64u + r);
    }
  for (unsigned i = 0; i < 192u; ++i) {  // together<<<3, 64>>>
    expected[(40000u + i) % N_OUT] += sum_cpu(128, 40000u + i);
    fill_cpu(expected, 40000u + i);
    fill_cpu(expected, 45000u + i);
    expected[(45000u + i) % N_OUT] += sum_cpu(64, 45000u + i);
    if (i % 3 != 1) expected[(50000u + i) % N_OUT] += sum_cpu(32, 50000u + i);
  }
  cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 16384);
  unsigned* out;
  unsigned* failures;
  cudaMalloc(&out, sizeof(unsigned) * N_OUT);
  cudaMalloc(&failures, sizeof(unsigned));
  cudaMemset(out, 0, sizeof(unsigned) * N_OUT);
  cudaMemset(failures, 0, sizeof(unsigned));
  pin<<<4, 64>>>(out, failures, ROUNDS);
  skip<<<2, 64>>>(out, failures);
  early<<<2, 64>>>(out, failures, n);
  copied<<<2, 48>>>(out, failures);
  rounds<<<4, 64>>>(out, failures, ROUNDS);
  together<<<3, 64>>>(out, failures, n);
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) { std::printf("FAIL cuda %s\n", cudaGetErrorString(err)); return 1; }
  unsigned failed = 0u;
  cudaMemcpy(got.data(), out, sizeof(unsigned) * N_OUT, cudaMemcpyDeviceToHost);
  cudaMemcpy(&failed, failures, sizeof(unsigned), cudaMemcpyDeviceToHost);
  unsigned h = 2166136261u; int bad = -1;
  for (int s = 0; s < N_OUT; ++s) { h = (h ^ got[s]) * 16777619u; if (bad < 0 && got[s] != expected[s]) bad = s; }
  std::printf("RESULT %08x\n", h);
  if (failed != 0u) { std::printf("FAIL malloc_lifetime: %u device cudaMalloc calls failed\n", failed); return 1; }
  if (bad >= 0) { std::printf("FAIL malloc_lifetime: slot %d has %u, expected %u\n", bad, got[bad], expected[bad]); return 1; }
  std::printf("PASS malloc_lifetime\n");
  return 0;
}
