// GPU probe (2026-11-27, H200, driver 580.159.04, CUDA 13.0): a plain CDP2 program, no klap code,
// in which every thread of one warp makes up to `rounds` device launches in a uniform loop, each
// under a per-thread `if`. With the children in cudaStreamTailLaunch the host never saw the grid
// finish (testcases/src/loops.cu's loopUniform with only the stream changed: build/dbg2 orig_tail in
// the session's README); with cudaStreamFireAndForget it passed. This probe varies one thing at a
// time, so that the next GPU session learns which one matters:
//   ./probe MODE [n=32] [rounds=6]
//   MODE 0  tail launch under the if, cudaGetLastError after it   (the hanging shape)
//   MODE 1  tail launch, no if (every thread every round)
//   MODE 2  fire-and-forget launch under the if                    (passed on 2026-11-27)
//   MODE 3  tail launch under the if, no cudaGetLastError
//   MODE 4  tail launch under the if, children of 1 block only
//   MODE 5  launch into the NULL stream under the if (added 2026-11-28)
// Prints "PASS mode=M ..." or "HANG mode=M after 5000 ms" (exit 3) or "FAIL ..." (exit 1).
// Answer (H200, 2026-11-28, ../../2026-11-28-h200/probes.txt): modes 0, 3 and 4 HANG (also with 33
// and 256 threads), modes 1, 2 and 5 PASS; mode 0 passes with 1 or 2 rounds.
// Build: nvcc -std=c++17 -rdc=true -arch=sm_90 -o probe tail_launch_loop_if.cu
// Added 2026-11-30: `0 1 6` and `0 1 24`, one thread alone (no other lane of its warp, so no
// divergence inside the warp) making its tail launches under the if: if that passes while `0`
// hangs, what stops the device runtime is launches from some lanes of a warp while the others are
// elsewhere (klap's hangs of 2026-11-30 had launcher lanes stuck inside the launch; README there).
// gpu-session: 0 | 1 | 2 | 3 | 4 | 5 | 0 256 6 | 2 256 6 | 5 256 6 | 0 1 6 | 0 1 24
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <unistd.h>
#include <vector>

__global__ void child(unsigned long long* acc, int t, int r) {
  atomicAdd(&acc[t], 1ull + static_cast<unsigned long long>(r) * 0 + blockIdx.x * 0);
}

__global__ void parent(unsigned long long* acc, const unsigned* flags, int n, int rounds, int mode, int* errors) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  const unsigned f = flags[t];
  for (int r = 0; r < rounds; ++r) {
    const bool on = mode == 1 ? true : ((f >> r) & 1u) != 0u;
    if (on) {
      const cudaStream_t s = mode == 2 ? cudaStreamFireAndForget : mode == 5 ? cudaStream_t(0) : cudaStreamTailLaunch;
      const unsigned blocks = mode == 4 ? 1u : 1u + static_cast<unsigned>(r % 2);
      child<<<blocks, 32, 0, s>>>(acc, t, r);
      if (mode != 3 && cudaGetLastError() != cudaSuccess) atomicAdd(errors, 1);
    }
  }
}

int main(int argc, char** argv) {
  const int mode = argc > 1 ? atoi(argv[1]) : 0;
  const int n = argc > 2 ? atoi(argv[2]) : 32;
  const int rounds = argc > 3 ? atoi(argv[3]) : 6;
  std::vector<unsigned> flags(n);
  unsigned x = 12345u;
  for (int t = 0; t < n; ++t) { x = x * 1664525u + 1013904223u; flags[t] = (x >> 8) & ((1u << rounds) - 1u); }
  unsigned long long* acc; unsigned* dflags; int* errors;
  cudaMalloc(&acc, sizeof(unsigned long long) * n); cudaMemset(acc, 0, sizeof(unsigned long long) * n);
  cudaMalloc(&dflags, sizeof(unsigned) * n); cudaMemcpy(dflags, flags.data(), sizeof(unsigned) * n, cudaMemcpyHostToDevice);
  cudaMalloc(&errors, sizeof(int)); cudaMemset(errors, 0, sizeof(int));
  const auto t0 = std::chrono::steady_clock::now();
  parent<<<(n + 127) / 128, 128>>>(acc, dflags, n, rounds, mode, errors);
  cudaError_t q;
  double ms = 0;
  while ((q = cudaStreamQuery(0)) == cudaErrorNotReady && ms < 5000) {
    usleep(500);
    ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  if (q == cudaErrorNotReady) { printf("HANG mode=%d n=%d rounds=%d after %.0f ms\n", mode, n, rounds, ms); fflush(stdout); _exit(3); }
  if (q != cudaSuccess) { printf("FAIL mode=%d: %s\n", mode, cudaGetErrorString(q)); return 1; }
  std::vector<unsigned long long> got(n); int err = 0;
  cudaMemcpy(got.data(), acc, sizeof(unsigned long long) * n, cudaMemcpyDeviceToHost);
  cudaMemcpy(&err, errors, sizeof(int), cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int t = 0; t < n; ++t) {
    unsigned long long want = 0;
    for (int r = 0; r < rounds; ++r)
      if (mode == 1 || ((flags[t] >> r) & 1u)) want += 32ull * (mode == 4 ? 1u : 1u + r % 2);
    bad += got[t] != want;
  }
  printf("%s mode=%d n=%d rounds=%d: %d wrong sums, %d launch errors, %.1f ms\n", bad || err ? "FAIL" : "PASS", mode, n,
         rounds, bad, err, ms);
  return bad || err ? 1 : 0;
}
