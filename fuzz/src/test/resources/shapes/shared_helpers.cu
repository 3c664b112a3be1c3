// Shape "shared-helpers" (2026-11-30): `__device__` helpers with `__shared__` arrays. The child
// calls `stage` (a 40 KiB array) and `rot` (a 64-word array); the parent calls `rot` with every
// thread, then launches the child. nvlink gives a helper's `__shared__` variable one offset in
// every kernel that reaches it. klap's variant of the child called the same two helpers, so the
// large array became common to two kernels, and nvlink laid the small one after it: the parent,
// which never touches the large array, then reserved 40 KiB more per block (at block granularity,
// with klap's scan scratch on top, it no longer linked; random program 76000027), and so did
// `other`, a kernel klap does not transform. klap's variants now call clones of such helpers.
// Besides the sums, the program checks at run time that neither kernel reserves the large array.
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define N_OUT 1024
#define BLOCK 64
#define BIG 10240

__device__ __noinline__ unsigned stage(unsigned v, int t, int nt) {
  __shared__ unsigned big[BIG];
  big[t] = v;
  __syncthreads();
  unsigned w = big[(t + 1) % nt];
  __syncthreads();
  return w;
}

__device__ __noinline__ unsigned rot(unsigned v, int t, int nt) {
  __shared__ unsigned small[64];
  small[t % 64] = v;
  __syncthreads();
  unsigned w = small[(t + 1) % nt];
  __syncthreads();
  return w;
}

__host__ __device__ unsigned value(int i, int t) { return (unsigned)i * 2654435761u + (unsigned)t * 40503u + 7u; }

__global__ void child(unsigned* out, int i) {
  int t = (int)threadIdx.x;
  unsigned v = value(i, t);
  unsigned a = stage(v, t, 32);
  unsigned b = rot(v ^ a, t, 32);
  atomicAdd(&out[(i * 131 + t) % N_OUT], a + b * 3u);
}

__global__ void parent(unsigned* out, int n) {
  int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);
  unsigned r = rot((unsigned)i * 977u, (int)threadIdx.x, (int)blockDim.x);  // every thread: a barrier inside
  if (i >= n) return;
  if (r % 3u != 0u) child<<<1, 32>>>(out, (int)(r % 500u));
}

// launches nothing: klap leaves it as written, and its shared memory must stay its own
__global__ void other(unsigned* out) {
  unsigned r = rot(threadIdx.x * 5u, (int)threadIdx.x, (int)blockDim.x);
  atomicAdd(&out[(threadIdx.x * 7u) % N_OUT], r);
}

int main() {
  const int n = 2 * BLOCK + 27;  // the third block has 27 live threads
  const int blocks = (n + BLOCK - 1) / BLOCK;
  std::vector<unsigned> expected(N_OUT, 0u);
  for (int i = 0; i < n; ++i) {
    int b0 = i / BLOCK * BLOCK;
    unsigned r = (unsigned)(b0 + (i - b0 + 1) % BLOCK) * 977u;
    if (r % 3u == 0u) continue;
    int c = (int)(r % 500u);
    unsigned v[32];
    for (int t = 0; t < 32; ++t) v[t] = value(c, t);
    for (int t = 0; t < 32; ++t) {
      int u = (t + 1) % 32;
      unsigned a = v[u], au = v[(u + 1) % 32];
      expected[(c * 131 + t) % N_OUT] += a + (v[u] ^ au) * 3u;
    }
  }
  for (unsigned t = 0; t < 32; ++t) expected[(t * 7u) % N_OUT] += ((t + 1) % 32) * 5u;
  unsigned* out;
  cudaMalloc(&out, sizeof(unsigned) * N_OUT);
  cudaMemset(out, 0, sizeof(unsigned) * N_OUT);
  parent<<<blocks, BLOCK>>>(out, n);
  other<<<1, 32>>>(out);
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) { std::printf("FAIL cuda %s\n", cudaGetErrorString(err)); return 1; }
  std::vector<unsigned> got(N_OUT);
  cudaMemcpy(got.data(), out, sizeof(unsigned) * N_OUT, cudaMemcpyDeviceToHost);
  unsigned h = 2166136261u; int bad = -1;
  for (int i = 0; i < N_OUT; ++i) { h = (h ^ got[i]) * 16777619u; if (bad < 0 && got[i] != expected[i]) bad = i; }
  std::printf("RESULT %08x\n", h);
  if (bad >= 0) { std::printf("FAIL shared_helpers: slot %d is %u, expected %u\n", bad, got[bad], expected[bad]); return 1; }
  // neither kernel reaches `big`: its static shared memory is far below the array's 40 KiB
  // (klap's block-granularity parent adds about 2 KiB of scratch)
  cudaFuncAttributes pa, oa;
  cudaFuncGetAttributes(&pa, parent);
  cudaFuncGetAttributes(&oa, other);
  if (pa.sharedSizeBytes >= 16384 || oa.sharedSizeBytes >= 16384) {
    std::printf("FAIL shared_helpers: parent reserves %zu, other %zu bytes of static shared memory (the child's array laid out "
                "in them)\n", pa.sharedSizeBytes, oa.sharedSizeBytes);
    return 1;
  }
  std::printf("PASS shared_helpers\n");
  return 0;
}
