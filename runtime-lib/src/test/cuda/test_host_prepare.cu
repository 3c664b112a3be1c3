// klap::host_prepare sizes cudaLimitDevRuntimePendingLaunchCount from the launch (issue 11: "size
// it from what it will launch", and the first-run cost: cudaDeviceSetLimit took milliseconds in the
// 2026-11-22 GPU run, so host_prepare must not call it when the program's own limit suffices).
//  1. host_wanted_limit and host_warps: pure arithmetic, checked on the host (static_assert where
//     the function is constexpr).
//  2. On the device, with the limit set by the program to 4096 first:
//     - host_prepare(0, 0) and host_prepare(0, 2000) leave it at 4096 (2000 launches fit in the 50 %
//       budget of 4096), and the device code reads its budget (2048) through a launch;
//     - the program raises the limit itself to 8192; host_prepare(0, 3000) wants more than this
//       file last saw, finds enough, and makes the device read its budget again (4096);
//     - host_prepare(0, 10000) raises it to 20000, and the device reads its budget again: 10000;
//     - host_prepare(s, host_launches_unknown) raises it to KLAP_PENDING_LAUNCH_LIMIT;
//     - host_prepare(0, 1) afterwards never lowers it.
//     - before those, under stream capture (global mode) host_prepare(s, 10000) leaves the limit
//       at 4096 and the capture valid: it ends, instantiates and runs without error (on the H200 a
//       cudaDeviceSetLimit there invalidated the capture: review reproducer B_g1_graph_capture);
//  3. host_prepare returns its stream unchanged (it is used as the launch's stream argument).
//  4. host_smem: a kernel with 4 KiB of static shared memory (as klap's scratch adds to a parent)
//     launches with the whole 48 KiB of dynamic shared memory once host_smem raised its limit (the
//     launch fails with cudaErrorInvalidValue without it); host_smem returns its size unchanged,
//     leaves sizes within the limit and 0 alone, and a size no device has is refused (a launch
//     error, no CUDA error left pending by host_smem itself).
#include "klap/klap.cuh"
#include "klap_test.cuh"

static_assert(klap::detail::host_wanted_limit(0ull) == 0, "no aggregated launch: nothing wanted");
static_assert(klap::detail::host_wanted_limit(1ull) == 100 / KLAP_PENDING_BUDGET_PERCENT, "one launch");
static_assert(klap::detail::host_wanted_limit(klap::host_launches_unknown) == KLAP_PENDING_LAUNCH_LIMIT,
              "unknown: the fixed size");
static_assert(klap::detail::host_wanted_limit(1ull << 40) == KLAP_PENDING_LAUNCH_LIMIT, "capped");

__global__ void read_budget(unsigned long long* out) { *out = klap::detail::pending_budget(); }

// 4 KiB static + `dyn` dynamic shared memory; writes the sum of both regions' first words.
__global__ void static_and_dynamic(int* out) {
  __shared__ int fixed[1024];
  extern __shared__ int dyn[];
  fixed[threadIdx.x] = 1;
  dyn[threadIdx.x] = 2;
  __syncthreads();
  if (threadIdx.x == 0) *out = fixed[0] + dyn[blockDim.x - 1];
}

static int max_dynamic(const void* fn) {
  cudaFuncAttributes a;
  KT_CUDA(cudaFuncGetAttributes(&a, fn));
  return a.maxDynamicSharedSizeBytes;
}

static size_t limit_now() {
  size_t v = 0;
  KT_CUDA(cudaDeviceGetLimit(&v, cudaLimitDevRuntimePendingLaunchCount));
  return v;
}

static unsigned long long device_budget(unsigned long long* d) {
  read_budget<<<1, 1>>>(d);
  KT_CUDA(cudaGetLastError());
  unsigned long long h = 0;
  KT_CUDA(cudaMemcpy(&h, d, sizeof(h), cudaMemcpyDeviceToHost));
  return h;
}

int main() {
  kt_watchdog("test_host_prepare", 60);
  // 1. arithmetic
  KT_EXPECT(klap::host_warps(dim3(1), dim3(1)) == 1ull, "one thread is one warp");
  KT_EXPECT(klap::host_warps(dim3(2, 3), dim3(33)) == 12ull, "6 blocks of 2 warps: %llu",
            klap::host_warps(dim3(2, 3), dim3(33)));
  KT_EXPECT(klap::host_warps(dim3(65535, 65535, 2), dim3(1024)) == 65535ull * 65535ull * 2ull * 32ull,
            "no overflow: %llu", klap::host_warps(dim3(65535, 65535, 2), dim3(1024)));
  KT_EXPECT(klap::detail::host_wanted_limit(2000ull) == 2000ull * 100ull / KLAP_PENDING_BUDGET_PERCENT, "2000");

  // 2. on the device
  unsigned long long* d = nullptr;
  KT_CUDA(cudaMalloc(&d, sizeof(*d)));
  KT_CUDA(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 4096));
  {
    // under stream capture, global mode: a launch that wants a raise leaves the limit alone and the
    // capture valid (cudaDeviceSetLimit there invalidated it: review B_g1_graph_capture, H200)
    cudaStream_t cs;
    KT_CUDA(cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking));
    cudaGraph_t g = nullptr;
    cudaGraphExec_t ge = nullptr;
    KT_CUDA(cudaStreamBeginCapture(cs, cudaStreamCaptureModeGlobal));
    KT_EXPECT(klap::host_prepare(cs, 10000ull) == cs, "returns its stream under capture");
    read_budget<<<1, 1, 0, cs>>>(d);
    KT_CUDA(cudaStreamEndCapture(cs, &g));
    KT_CUDA(cudaGraphInstantiate(&ge, g, 0));
    KT_CUDA(cudaGraphLaunch(ge, cs));
    KT_CUDA(cudaStreamSynchronize(cs));
    KT_EXPECT(limit_now() == 4096, "raised under capture: limit %zu", limit_now());
    KT_EXPECT(cudaGetLastError() == cudaSuccess, "an error left pending by the capture");
    KT_CUDA(cudaGraphExecDestroy(ge));
    KT_CUDA(cudaGraphDestroy(g));
    KT_CUDA(cudaStreamDestroy(cs));
  }
  KT_EXPECT(klap::host_prepare(0, 0ull) == cudaStream_t(0), "returns its stream");
  KT_EXPECT(limit_now() == 4096, "no launches: limit %zu", limit_now());
  klap::host_prepare(0, 2000ull);
  KT_EXPECT(limit_now() == 4096, "2000 launches fit: limit %zu", limit_now());
  KT_EXPECT(device_budget(d) == 4096ull * KLAP_PENDING_BUDGET_PERCENT / 100ull, "budget %llu", device_budget(d));

  KT_CUDA(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 8192));  // the program's own raise
  klap::host_prepare(0, 3000ull);
  KT_EXPECT(limit_now() == 8192, "3000 launches fit in the program's limit: %zu", limit_now());
  KT_EXPECT(device_budget(d) == 8192ull * KLAP_PENDING_BUDGET_PERCENT / 100ull, "budget after growth: %llu",
            device_budget(d));

  klap::host_prepare(0, 10000ull);
  KT_EXPECT(limit_now() == 20000, "raised for 10000 launches: limit %zu", limit_now());
  KT_EXPECT(device_budget(d) == 20000ull * KLAP_PENDING_BUDGET_PERCENT / 100ull, "budget read again: %llu",
            device_budget(d));

  cudaStream_t s;
  KT_CUDA(cudaStreamCreate(&s));
  KT_EXPECT(klap::host_prepare(s, klap::host_launches_unknown) == s, "returns its stream");
  KT_CUDA(cudaStreamSynchronize(s));
  KT_EXPECT(limit_now() == KLAP_PENDING_LAUNCH_LIMIT, "unknown: limit %zu", limit_now());
  KT_EXPECT(device_budget(d) == static_cast<unsigned long long>(KLAP_PENDING_LAUNCH_LIMIT) *
                                    KLAP_PENDING_BUDGET_PERCENT / 100ull,
            "budget: %llu", device_budget(d));
  klap::host_prepare(0, 1ull);
  KT_EXPECT(limit_now() == KLAP_PENDING_LAUNCH_LIMIT, "never lowered: limit %zu", limit_now());

  // 4. host_smem
  int* o = nullptr;
  KT_CUDA(cudaMalloc(&o, sizeof(int)));
  const void* fn = reinterpret_cast<const void*>(static_and_dynamic);
  KT_EXPECT(max_dynamic(fn) == 48 * 1024 - 4096, "default limit 48 KiB minus static: %d", max_dynamic(fn));
  KT_EXPECT(klap::host_smem(static_and_dynamic, 0) == 0, "0 unchanged");
  KT_EXPECT(klap::host_smem(static_and_dynamic, 1024) == 1024, "1 KiB unchanged");
  KT_EXPECT(max_dynamic(fn) == 48 * 1024 - 4096, "within the limit: not raised (%d)", max_dynamic(fn));
  static_and_dynamic<<<1, 32, klap::host_smem(static_and_dynamic, 48 * 1024), klap::host_prepare(s)>>>(o);
  KT_CUDA(cudaGetLastError());
  KT_EXPECT(max_dynamic(fn) == 48 * 1024, "raised to 48 KiB: %d", max_dynamic(fn));
  int h = 0;
  KT_CUDA(cudaMemcpy(&h, o, sizeof(h), cudaMemcpyDeviceToHost));
  KT_EXPECT(h == 3, "the 48 KiB launch ran: %d", h);
  KT_EXPECT(klap::host_smem(static_and_dynamic, 40 * 1024) == 40 * 1024, "smaller after the raise");
  KT_EXPECT(max_dynamic(fn) == 48 * 1024, "never lowered: %d", max_dynamic(fn));
  KT_EXPECT(klap::host_smem(static_and_dynamic, 1024u * 1024u) == 1024u * 1024u, "1 MiB: returned unchanged");
  KT_EXPECT(cudaGetLastError() == cudaSuccess, "a refused raise leaves no error pending");
  KT_CUDA(cudaFree(o));

  KT_CUDA(cudaStreamDestroy(s));
  KT_CUDA(cudaFree(d));
  KT_CUDA(cudaDeviceSynchronize());
  return kt_finish("test_host_prepare");
}
