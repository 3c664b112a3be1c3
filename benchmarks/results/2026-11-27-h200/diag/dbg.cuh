// Diagnostic watchdog for a hanging klap output (GPU session 2026-11-27): waits for the legacy
// stream with a time limit; on timeout prints the program's pool state read through a
// non-blocking stream (and, with ../../2026-11-28-h200/diag/trace.cuh pre-included, where every
// thread is), then exits 3.
#pragma once
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include <vector>
static void klapdbg_wait(const char* label) {
  const char* e = getenv("KLAPDBG_MS");
  const long limit = e ? atol(e) : 4000;
  auto t0 = std::chrono::steady_clock::now();
  auto ms = [&] { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(); };
  cudaError_t q;
  while ((q = cudaStreamQuery(0)) == cudaErrorNotReady && ms() < limit) usleep(500);
  if (q != cudaErrorNotReady) {
    fprintf(stderr, "klapdbg: %s: %s after %.1f ms\n", label, cudaGetErrorString(q), ms());
#ifdef KLAPTRACE_ON  // ../../2026-11-28-h200/diag/trace.cuh, pre-included: the counts so far
    if (q == cudaSuccess) klaptrace_dump(label, 0, false);
#endif
    return;
  }
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  for (int snap = 0; snap < 3; ++snap) {
    std::vector<unsigned char> raw(sizeof(klap::pool_state));
    cudaError_t c = cudaMemcpyFromSymbolAsync(raw.data(), klap::pool_dev_symbol(), raw.size(), 0, cudaMemcpyDeviceToHost, s);
    auto t1 = std::chrono::steady_clock::now();
    while (cudaStreamQuery(s) == cudaErrorNotReady &&
           std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count() < 2000) usleep(500);
    if (c != cudaSuccess || cudaStreamQuery(s) != cudaSuccess) { fprintf(stderr, "klapdbg: %s: HANG, state unreadable (%s)\n", label, cudaGetErrorString(c)); break; }
    const klap::pool_state* st = reinterpret_cast<const klap::pool_state*>(raw.data());
    unsigned long long live = 0; unsigned busy = 0;
    for (unsigned long long i = 0; i < klap::pool_segments; ++i) { live += st->seg[i] >> klap::pool_live_shift; busy += (st->seg[i] >> klap::pool_live_shift) != 0; }
    fprintf(stderr, "klapdbg: %s: HANG at %.0f ms: pending=%llu budget=%llu fallbacks=%llu error=%u warned=%u cur=%u live=%llu in %u of %llu segments\n",
            label, ms(), st->pending, st->budget, st->fallbacks, st->error, st->warned, st->cur, live, busy, (unsigned long long)klap::pool_segments);
#ifdef KLAPTRACE_ON  // where the threads are (the per-thread table on the last snapshot)
    klaptrace_dump(label, s, snap == 2);
#endif
    usleep(300000);
  }
  fflush(stderr);
  _exit(3);
}
