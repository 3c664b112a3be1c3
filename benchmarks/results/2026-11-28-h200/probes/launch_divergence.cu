// GPU probe (written 2026-11-28, after the H200 session of that day; not yet run): a plain CDP2
// program, no klap code. On 2026-11-27/28 (H200, driver 580.159.04, CUDA 13.0) device launches
// into cudaStreamTailLaunch under a per-thread `if` over 6 rounds of a loop hung the grid
// (../../2026-11-27-h200/probes/tail_launch_loop_if.cu), and klap's aggregated launches, each
// made by ONE lane of a warp while other lanes of the same warp may be in another launch (a launch
// left as written, another group's launcher), hung in seed 1038 whatever the stream. This probe
// asks whether the device runtime's launch path stops when lanes of one warp are in DIFFERENT
// launch statements at once, and whether serializing the lanes' launches avoids the tail hang:
//   ./probe MODE [n=32] [rounds=6]
//   MODE 0  each round, lanes with the round's bit launch at statement A, the others at statement
//           B (if/else), both into cudaStreamFireAndForget
//   MODE 1  as 0, both into the NULL stream
//   MODE 2  as 0, A into cudaStreamTailLaunch and B into cudaStreamFireAndForget
//   MODE 3  one launcher lane per warp (the highest lane with the bit, as klap's flush picks)
//           launches for its lanes into cudaStreamFireAndForget, while the lanes without the bit
//           launch their own at statement B in the same round (klap's aggregated launch next to a
//           launch left as written)
//   MODE 4  the hanging shape (tail launch under the if), but the lanes take turns: a loop over
//           the 32 lanes with __syncwarp between turns, so one lane of a warp launches at a time
//   MODE 5  fire-and-forget under the if (passed with 6 rounds), 64 rounds
// Each child adds 32 * (its blocks) to its thread's accumulator; the host checks every sum.
// Prints "PASS mode=M ..." or "HANG mode=M after 5000 ms" (exit 3) or "FAIL ..." (exit 1).
// Build: nvcc -std=c++17 -rdc=true -arch=sm_90 -o probe launch_divergence.cu
// gpu-session: 0 | 1 | 2 | 3 | 4 | 5 32 64 | 0 256 6 | 3 256 6 | 4 256 6
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include <vector>

__global__ void child(unsigned long long* acc, int t, unsigned times) {
  atomicAdd(&acc[t], static_cast<unsigned long long>(times));
}

// A launch for thread t: 1 or 2 blocks of 32 threads; each thread of it adds `times` (1 for a
// thread's own launch; klap-like launchers launch one child per lane they launch for).
__device__ void launch(unsigned long long* acc, int t, int r, cudaStream_t s, int* errors) {
  child<<<1u + static_cast<unsigned>(r % 2), 32, 0, s>>>(acc, t, 1u);
  if (cudaGetLastError() != cudaSuccess) atomicAdd(errors, 1);
}

__global__ void parent(unsigned long long* acc, const unsigned* flags, int n, int rounds, int mode, int* errors) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  const unsigned f = flags[t];
  const unsigned lane = threadIdx.x % 32u;
  for (int r = 0; r < rounds; ++r) {
    const bool on = ((f >> (r % 32)) & 1u) != 0u;
    switch (mode) {
      case 0:
      case 1:
      case 2: {
        const cudaStream_t a = mode == 0 ? cudaStreamFireAndForget : mode == 1 ? cudaStream_t(0) : cudaStreamTailLaunch;
        const cudaStream_t b = mode == 1 ? cudaStream_t(0) : cudaStreamFireAndForget;
        if (on) launch(acc, t, r, a, errors);   // statement A
        else launch(acc, t, r, b, errors);      // statement B
        break;
      }
      case 3: {
        const unsigned all = __activemask();
        const unsigned with = __ballot_sync(all, on);
        if (on) {
          const unsigned launcher = 31u - static_cast<unsigned>(__clz(static_cast<int>(with)));
          if (lane == launcher) {
            // one launch per lane of `with`, made by the launcher alone (klap's aggregated launch
            // is one grid; here one child per lane keeps the host's check simple)
            for (unsigned l = 0; l < 32u; ++l)
              if ((with >> l) & 1u) launch(acc, t - static_cast<int>(lane) + static_cast<int>(l), r, cudaStreamFireAndForget, errors);
          }
        } else {
          launch(acc, t, r, cudaStreamFireAndForget, errors);  // statement B: a launch as written
        }
        break;
      }
      case 4: {
        const unsigned all = __activemask();
        for (unsigned l = 0; l < 32u; ++l) {
          if (lane == l && on) launch(acc, t, r, cudaStreamTailLaunch, errors);
          __syncwarp(all);
        }
        break;
      }
      default:
        if (on) launch(acc, t, r, cudaStreamFireAndForget, errors);
        break;
    }
  }
}

int main(int argc, char** argv) {
  const int mode = argc > 1 ? atoi(argv[1]) : 0;
  const int n = argc > 2 ? atoi(argv[2]) : 32;
  const int rounds = argc > 3 ? atoi(argv[3]) : 6;
  if (mode < 0 || mode > 5 || n < 1 || rounds < 1) {
    printf("FAIL usage: probe MODE(0-5) [n] [rounds]\n");
    return 1;
  }
  std::vector<unsigned> flags(n);
  unsigned x = 12345u;
  for (int t = 0; t < n; ++t) { x = x * 1664525u + 1013904223u; flags[t] = x ^ (x >> 7); }
  size_t pending = static_cast<size_t>(n) * rounds * 2 + 4096;
  cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, pending < 32768 ? 32768 : pending);
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
    for (int r = 0; r < rounds; ++r) {
      const bool on = ((flags[t] >> (r % 32)) & 1u) != 0u;
      // modes 0-3: every thread launches every round (at A or B, or through its launcher);
      // modes 4 and 5: only under the if
      if (mode <= 3 || on) want += 32ull * (1u + r % 2);
    }
    bad += got[t] != want;
  }
  printf("%s mode=%d n=%d rounds=%d: %d wrong sums, %d launch errors, %.1f ms\n", bad || err ? "FAIL" : "PASS", mode, n,
         rounds, bad, err, ms);
  return bad || err ? 1 : 0;
}
