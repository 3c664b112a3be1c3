// Shape "launch-error" (found on the H200 on 2026-11-28 by the review reproducer C_launch_err): a
// thread whose child launch is refused (a block of 1280 threads, or of depth 65: no device accepts
// either) sees the error in its own cudaGetLastError() check and falls back to blocks of 256
// threads. klap left the refused launch out of the aggregated grid but cleared its error, so the
// check saw cudaSuccess and the fallback never ran: 1280 slots were never written. Here: the check
// right after the launch, after cudaPeekAtLastError(), in a loop after a thread-dependent return,
// and with fire-and-forget children.
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define N_OUT 4093

__global__ void fill(unsigned* out, unsigned tag) {
  unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  unsigned i = blockIdx.x * (blockDim.x * blockDim.y * blockDim.z) + t;
  atomicAdd(&out[(tag * 31u + i) % N_OUT], tag + i * 7u);
}

__device__ __host__ inline dim3 wanted(int i, int form) {
  if (i % 9 != 4) return dim3(8 + i % 8);
  return form == 0 ? dim3(1280) : dim3(2, 2, 65);
}

// the check right after the launch (form 0) or after cudaPeekAtLastError() (form 1)
__global__ void direct(unsigned* out, int n, int form) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  dim3 b = wanted(i, form);
  fill<<<1, b>>>(out, 100u + i);
  if (form == 1) (void)cudaPeekAtLastError();
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) fill<<<(b.x * b.y * b.z + 255u) / 256u, 256>>>(out, 5000u + i);
}

// in a loop of uniform trip count after a thread-dependent return, fire-and-forget children
__global__ void looped(unsigned* out, int n, int rounds) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i % 5 == 2) return;
  if (i >= n) return;
  for (int r = 0; r < rounds; ++r) {
    dim3 b = wanted(i + r, r % 2);
    fill<<<1, b, 0, cudaStreamFireAndForget>>>(out, 9000u + i * 8u + r);
    if (cudaGetLastError() != cudaSuccess)
      fill<<<(b.x * b.y * b.z + 255u) / 256u, 256, 0, cudaStreamFireAndForget>>>(out, 20000u + i * 8u + r);
  }
}

static void fill_cpu(std::vector<unsigned>& out, unsigned blocks, unsigned threads, unsigned tag) {
  for (unsigned b = 0; b < blocks; ++b)
    for (unsigned t = 0; t < threads; ++t) {
      unsigned i = b * threads + t;
      out[(tag * 31u + i) % N_OUT] += tag + i * 7u;
    }
}

static void launch_cpu(std::vector<unsigned>& out, dim3 b, unsigned tag, unsigned fallback_tag) {
  unsigned v = b.x * b.y * b.z;
  if (v <= 1024u && b.z <= 64u) fill_cpu(out, 1, v, tag);
  else fill_cpu(out, (v + 255u) / 256u, 256, fallback_tag);
}

int main() {
  const int n = 100, rounds = 3;
  std::vector<unsigned> expected(N_OUT, 0u), got(N_OUT, 0u);
  for (int form = 0; form < 2; ++form)
    for (int i = 0; i < n; ++i) launch_cpu(expected, wanted(i, form), 100u + i, 5000u + i);
  for (int i = 0; i < 128; ++i) {
    if (i % 5 == 2 || i >= n) continue;
    for (int r = 0; r < rounds; ++r) launch_cpu(expected, wanted(i + r, r % 2), 9000u + i * 8u + r, 20000u + i * 8u + r);
  }
  cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 8192);
  unsigned* out;
  cudaMalloc(&out, sizeof(unsigned) * N_OUT);
  cudaMemset(out, 0, sizeof(unsigned) * N_OUT);
  direct<<<2, 64>>>(out, n, 0);
  direct<<<4, 32>>>(out, n, 1);
  looped<<<1, 128>>>(out, n, rounds);
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) { std::printf("FAIL cuda %s\n", cudaGetErrorString(err)); return 1; }
  cudaMemcpy(got.data(), out, sizeof(unsigned) * N_OUT, cudaMemcpyDeviceToHost);
  unsigned h = 2166136261u; int bad = -1;
  for (int s = 0; s < N_OUT; ++s) { h = (h ^ got[s]) * 16777619u; if (bad < 0 && got[s] != expected[s]) bad = s; }
  std::printf("RESULT %08x\n", h);
  if (bad >= 0) { std::printf("FAIL launch_error: slot %d has %u, expected %u\n", bad, got[bad], expected[bad]); return 1; }
  std::printf("PASS launch_error\n");
  return 0;
}
