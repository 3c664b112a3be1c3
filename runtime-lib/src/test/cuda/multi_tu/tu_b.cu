// Second translation unit of the multi-TU test (see tu_a.cu).
#include "tu_common.cuh"

int run_b(char** base, bool prepare) { return tu_run(base, prepare); }

// Launched (aggregated) from tu_a.cu's xparent: releases slot arrays of tu_a's pool.
__global__ void xchild(const klap::launch_cfg* cfg, unsigned n, const xargs* args) {
  klap::vctx v;
  unsigned p;
  if (!klap::child_enter(cfg, n, v, p)) return;
  unsigned* const hits = args[p].hits;
  const unsigned id = args[p].id;
  klap::child_release(cfg, n);
  atomicAdd(&hits[id * 4u + v.threadIdx.x], 1u);
}

unsigned long long live_b() { return klap::host_pool_live(); }
