// GPU probe (written 2026-11-28, after the H200 session of that day; not yet run): where the first
// repetition's extra milliseconds go (issue 11, "First run": a transformed program's first
// repetition may cost at most 1 ms more than the original's). On 2026-11-27 (H200) the first
// repetition of every benchmark took 9-29 ms at warp and block granularity and 18-26 ms at kernel
// granularity, 4-14 ms more than at block granularity for 9 of the 10 benchmarks (qt: less), while
// the warm times were within a few ms of each other (../../2026-11-27-nvidia-h200.md).
// Candidates, each timed here on its first and on its second use in one process, after the
// context exists (cudaFree(0), not timed):
//   ./probe MODE [eager]      (eager: CUDA_MODULE_LOADING=EAGER, set before the first CUDA call)
//   MODE 0  the stream-ordered allocator: cudaMallocAsync + cudaMemsetAsync + cudaFreeAsync of
//           4 KiB on the NULL stream, then a synchronize (what klap::host_kstate does for every host
//           launch of a kernel-granularity parent: the only host call warp and block do not make)
//   MODE 1  cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount) above the current limit
//           (klap::host_prepare, where a launch wants more than the device has)
//   MODE 2  a parent kernel that launches one child (the first device-side launch of the
//           process: CDP's device-runtime start), then the same again
//   MODE 3  after mode 2's parent ran once: a second parent that launches a child kernel no one
//           launched before (lazy loading of a kernel that only device code launches, as klap's
//           variants are), then the same again
//   MODE 4  klap's kernel-granularity host path around an empty kernel:
//           k<<<1, 32, 0, klap::host_prepare(0, 1)>>>(klap::host_kstate(4)), klap::host_kstate_done()
//   MODE 5  an empty kernel's first launch in a program that links klap's runtime (its static
//           pool, KLAP_POOL_SIZE_BYTES = 128 MiB by default, is part of the module lazy loading
//           loads then); compare with the flat programs' first repetitions
// Prints "PASS mode=M first=F ms second=S ms" (F and S: host wall time of the step, synchronize
// included), or "FAIL mode=M: <CUDA error>" (exit 1).
// Build: nvcc -std=c++17 -rdc=true -arch=sm_90 -I runtime-lib/src/main/resources -o probe first_use.cu
// gpu-session: 0 | 1 | 2 | 3 | 4 | 5 | 0 eager | 2 eager | 3 eager | 4 eager | 5 eager
#include "klap/klap.cuh"
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

__global__ void fu_child(int* out) { atomicAdd(out, 1); }
__global__ void fu_other_child(int* out) { atomicAdd(out, 2); }
__global__ void fu_parent(int* out) {
  if (threadIdx.x == 0) fu_child<<<1, 1>>>(out);
}
__global__ void fu_other_parent(int* out) {
  if (threadIdx.x == 0) fu_other_child<<<1, 1>>>(out);
}
__global__ void fu_empty(klap::kstate* ks) { (void)ks; }

static int mode = 0;

#define FU_CHECK(x)                                                                         \
  do {                                                                                      \
    cudaError_t fu_e = (x);                                                                 \
    if (fu_e != cudaSuccess) {                                                              \
      std::printf("FAIL mode=%d: %s: %s\n", mode, #x, cudaGetErrorString(fu_e));            \
      std::exit(1);                                                                         \
    }                                                                                       \
  } while (0)

static double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// One use of the step of `mode`; returns its host wall time in ms (synchronize included).
static double step(int* d_out, size_t& limit) {
  const double t0 = now_ms();
  switch (mode) {
    case 0: {
      void* p = nullptr;
      FU_CHECK(cudaMallocAsync(&p, 4096, 0));
      FU_CHECK(cudaMemsetAsync(p, 0, 4096, 0));
      FU_CHECK(cudaFreeAsync(p, 0));
      break;
    }
    case 1:
      limit *= 2;
      FU_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, limit));
      break;
    case 2:
      fu_parent<<<1, 32>>>(d_out);
      break;
    case 3:
      fu_other_parent<<<1, 32>>>(d_out);
      break;
    case 4:
      fu_empty<<<1, 32, 0, klap::host_prepare(0, 1)>>>(klap::host_kstate(4)), klap::host_kstate_done();
      break;
    default:
      fu_empty<<<1, 32>>>(nullptr);
      break;
  }
  FU_CHECK(cudaGetLastError());
  FU_CHECK(cudaDeviceSynchronize());
  return now_ms() - t0;
}

int main(int argc, char** argv) {
  mode = argc > 1 ? std::atoi(argv[1]) : 0;
  const bool eager = argc > 2 && std::strcmp(argv[2], "eager") == 0;
  if (eager) setenv("CUDA_MODULE_LOADING", "EAGER", 1);  // read by the CUDA runtime at its start
  FU_CHECK(cudaFree(0));                                 // the context, not timed
  int* d_out = nullptr;
  FU_CHECK(cudaMalloc(&d_out, sizeof(int)));
  FU_CHECK(cudaMemset(d_out, 0, sizeof(int)));
  FU_CHECK(cudaDeviceSynchronize());
  size_t limit = 0;
  FU_CHECK(cudaDeviceGetLimit(&limit, cudaLimitDevRuntimePendingLaunchCount));
  if (mode == 3) {  // the device runtime has started; only fu_other_child is new
    fu_parent<<<1, 32>>>(d_out);
    FU_CHECK(cudaDeviceSynchronize());
  }
  const double first = step(d_out, limit);
  const double second = step(d_out, limit);
  int got = 0;
  FU_CHECK(cudaMemcpy(&got, d_out, sizeof(int), cudaMemcpyDeviceToHost));
  const int want = mode == 2 ? 2 : mode == 3 ? 1 + 2 * 2 : 0;
  if (got != want) {
    std::printf("FAIL mode=%d: the children added %d, expected %d\n", mode, got, want);
    return 1;
  }
  std::printf("PASS mode=%d%s first=%.3f ms second=%.3f ms\n", mode, eager ? " eager" : "", first, second);
  return 0;
}
