// Shape "loop-jumps" (issue 10): launches in loops whose bodies hold thread-dependent `continue` and
// `break` statements of that loop, reached by the lanes of a warp together or apart: a `for` at the
// top of the kernel (continue before the launch, break after it), a `do`/`while` after a divergent
// early return (break before the launch, continue from inside a `switch`, whose other case breaks
// out of the switch only), a `while` of uniform trip count inside a divergent branch (continue before
// the launch), and a `for` of constant trip count nested in one of per-thread trip count (continue
// of the inner loop, break of the outer one after it, the launch passing the outer counter). Each
// thread's condition, body and step run only while its own loop goes on; the per-thread step
// counters show a condition or body evaluated once too often or too rarely, and the children's
// slots a launch lost, doubled or given another thread's round. Three more kernels leave their
// loops by a thread-dependent `return` (seventh session of 2026-11-27: the return is taken after the
// convergent loop): a `for` of per-thread trip count at the top with launches before and after the
// return; a uniform loop after the divergent early return followed by a second loop whose branch
// launches (the lanes that returned in the first must have left the survivors' mask); and a return
// in an inner loop that leaves the outer convergent loop and the kernel body's guard region too,
// with launches in both loops and after them.
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define N_OUT 4096
#define BLOCK 64

__host__ __device__ inline unsigned trips(int i) { return 1u + ((unsigned)i * 7u + 3u) % 5u; }

__global__ void child(unsigned* out, int slot, int r) {
  atomicAdd(&out[(slot * 37 + r * 11 + (int)(blockIdx.x * blockDim.x + threadIdx.x)) % N_OUT], 1u + (unsigned)r * 1000u);
}

__global__ void top(unsigned* out, unsigned* steps) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned s = 0u, w = 0u;
  for (int r = 0; ++s <= trips(i); ++r) {
    if ((i + r) % 3 == 1) continue;
    w += 10u;
    if ((i * 5 + r) % 4 != 0) child<<<1 + r % 2, 8>>>(out, i, r);
    if ((i + 2 * r) % 7 == 3) break;
    w += 1000u;
  }
  steps[i] = w + s;
}

__global__ void guarded(unsigned* out, unsigned* steps, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned s = 0u, w = 0u;
  int r = -1;
  do {
    r += 1 + (i & 1);
    if ((i * 3 + r) % 11 == 5) break;
    switch ((i + r) % 4) {
      case 1: w += 100u; continue;
      case 2: w += 10000u; break;
      default: break;
    }
    child<<<1, 4 + r % 3>>>(out, i + 1000, r);
    w += 1000000u;
  } while (++s < trips(i + 5));
  steps[i] = w + s;
}

__global__ void branch(unsigned* out, unsigned* steps) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned s = 0u, w = 0u;
  if (i % 3 != 1) {
    int r = 0;
    while (++s != 0u && r < 4) {
      r += 1;
      if ((i + r) % 4 == 2) continue;
      if ((i ^ r) % 3 != 0) child<<<1 + r % 2, 4>>>(out, i + 2000, r);
      w += 100u;
    }
  }
  steps[i] = w + s;
}

__global__ void nested(unsigned* out, unsigned* steps) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned s = 0u, w = 0u;
  for (int o = 0; ++s <= trips(i + 2); ++o) {
    for (int k = 0; k < 2; ++k) {
      w += 10u;
      if ((i + o + k) % 3 == 0) continue;
      child<<<1, 2 + 3 * k>>>(out, i + 3000 + 500 * k, o);
      w += 1000u;
    }
    if ((i * 7 + o) % 5 == 2) break;
    w += 100000u;
  }
  steps[i] = w + s;
}

__global__ void ret_top(unsigned* out, unsigned* steps) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned s = 0u, w = 0u;
  for (int r = 0; ++s <= trips(i + 1); ++r) {
    child<<<1, 4>>>(out, i + 4000, r);
    if ((i * 3 + r) % 7 == 4) { steps[i] = w + s + 5u; return; }
    w += 10u;
    if ((i + r) % 2 == 0) child<<<1 + r % 2, 2>>>(out, i + 4500, r);
  }
  steps[i] = w + s;
}

__global__ void ret_guarded(unsigned* out, unsigned* steps, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned s = 0u, w = 0u;
  for (int r = 0; r < 4; ++r) {
    ++s;
    child<<<1 + (i + r) % 2, 4>>>(out, i + 5000, r);
    if ((i * 7 + r) % 5 == 2) { steps[i] = w + s + 3u; return; }
    w += 100u;
    child<<<1, 2>>>(out, i + 5500, r);
  }
  for (int r = 0; r < 3; ++r) {
    if ((i >> r) & 1) child<<<1, 3>>>(out, i + 6000, r);
    w += 1000u;
  }
  steps[i] = w + s;
}

__global__ void ret_nested(unsigned* out, unsigned* steps, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned s = 0u, w = 0u;
  for (int o = 0; ++s <= trips(i + 3); ++o) {
    for (int k = 0; k < o; ++k) {
      w += 10u;
      if ((i + o * 3 + k) % 9 == 4) { steps[i] = w + s + 1u; return; }
      child<<<1, 2 + k % 2>>>(out, i + 7000, o * 4 + k);
    }
    child<<<1, 3>>>(out, i + 7500, o);
    w += 1000u;
  }
  child<<<1, 2>>>(out, i + 8000, 0);
  steps[i] = w + s;
}

int main() {
  const int n = 3 * BLOCK + 17, blocks = 4, total = blocks * BLOCK;
  std::vector<unsigned> expected(N_OUT, 0u), got(N_OUT, 0u), stepsWant(7 * total, 0u), stepsGot(7 * total, 0u);
  auto launched = [&](int slot, int r, int threads) {  // what child<<<...>>>(out, slot, r) adds
    for (int t = 0; t < threads; ++t) expected[(slot * 37 + r * 11 + t) % N_OUT] += 1u + (unsigned)r * 1000u;
  };
  for (int i = 0; i < total; ++i) {
    unsigned s = 0u, w = 0u;
    for (int r = 0; ++s <= trips(i); ++r) {
      if ((i + r) % 3 == 1) continue;
      w += 10u;
      if ((i * 5 + r) % 4 != 0)
        for (int t = 0; t < 8 * (1 + r % 2); ++t) expected[(i * 37 + r * 11 + t) % N_OUT] += 1u + (unsigned)r * 1000u;
      if ((i + 2 * r) % 7 == 3) break;
      w += 1000u;
    }
    stepsWant[i] = w + s;
  }
  for (int i = 0; i < n; ++i) {
    unsigned s = 0u, w = 0u;
    int r = -1;
    do {
      r += 1 + (i & 1);
      if ((i * 3 + r) % 11 == 5) break;
      if ((i + r) % 4 == 1) { w += 100u; continue; }
      if ((i + r) % 4 == 2) w += 10000u;
      for (int t = 0; t < 4 + r % 3; ++t) expected[((i + 1000) * 37 + r * 11 + t) % N_OUT] += 1u + (unsigned)r * 1000u;
      w += 1000000u;
    } while (++s < trips(i + 5));
    stepsWant[total + i] = w + s;
  }
  for (int i = 0; i < total; ++i) {
    unsigned s = 0u, w = 0u;
    if (i % 3 != 1) {
      int r = 0;
      while (++s != 0u && r < 4) {
        r += 1;
        if ((i + r) % 4 == 2) continue;
        if ((i ^ r) % 3 != 0)
          for (int t = 0; t < 4 * (1 + r % 2); ++t) expected[((i + 2000) * 37 + r * 11 + t) % N_OUT] += 1u + (unsigned)r * 1000u;
        w += 100u;
      }
    }
    stepsWant[2 * total + i] = w + s;
  }
  for (int i = 0; i < total; ++i) {
    unsigned s = 0u, w = 0u;
    for (int o = 0; ++s <= trips(i + 2); ++o) {
      for (int k = 0; k < 2; ++k) {
        w += 10u;
        if ((i + o + k) % 3 == 0) continue;
        for (int t = 0; t < 2 + 3 * k; ++t) expected[((i + 3000 + 500 * k) * 37 + o * 11 + t) % N_OUT] += 1u + (unsigned)o * 1000u;
        w += 1000u;
      }
      if ((i * 7 + o) % 5 == 2) break;
      w += 100000u;
    }
    stepsWant[3 * total + i] = w + s;
  }
  for (int i = 0; i < total; ++i) {
    unsigned s = 0u, w = 0u;
    bool left = false;
    for (int r = 0; ++s <= trips(i + 1); ++r) {
      launched(i + 4000, r, 4);
      if ((i * 3 + r) % 7 == 4) { stepsWant[4 * total + i] = w + s + 5u; left = true; break; }
      w += 10u;
      if ((i + r) % 2 == 0) launched(i + 4500, r, 2 * (1 + r % 2));
    }
    if (!left) stepsWant[4 * total + i] = w + s;
  }
  for (int i = 0; i < n; ++i) {
    unsigned s = 0u, w = 0u;
    bool left = false;
    for (int r = 0; r < 4; ++r) {
      ++s;
      launched(i + 5000, r, 4 * (1 + (i + r) % 2));
      if ((i * 7 + r) % 5 == 2) { stepsWant[5 * total + i] = w + s + 3u; left = true; break; }
      w += 100u;
      launched(i + 5500, r, 2);
    }
    if (left) continue;
    for (int r = 0; r < 3; ++r) {
      if ((i >> r) & 1) launched(i + 6000, r, 3);
      w += 1000u;
    }
    stepsWant[5 * total + i] = w + s;
  }
  for (int i = 0; i < n; ++i) {
    unsigned s = 0u, w = 0u;
    bool left = false;
    for (int o = 0; !left && ++s <= trips(i + 3); ++o) {
      for (int k = 0; k < o; ++k) {
        w += 10u;
        if ((i + o * 3 + k) % 9 == 4) { stepsWant[6 * total + i] = w + s + 1u; left = true; break; }
        launched(i + 7000, o * 4 + k, 2 + k % 2);
      }
      if (left) break;
      launched(i + 7500, o, 3);
      w += 1000u;
    }
    if (left) continue;
    launched(i + 8000, 0, 2);
    stepsWant[6 * total + i] = w + s;
  }
  unsigned *out, *steps;
  cudaMalloc(&out, sizeof(unsigned) * N_OUT);
  cudaMalloc(&steps, sizeof(unsigned) * 7 * total);
  cudaMemset(out, 0, sizeof(unsigned) * N_OUT);
  cudaMemset(steps, 0, sizeof(unsigned) * 7 * total);
  top<<<blocks, BLOCK>>>(out, steps);
  guarded<<<blocks, BLOCK>>>(out, steps + total, n);
  branch<<<blocks, BLOCK>>>(out, steps + 2 * total);
  nested<<<blocks, BLOCK>>>(out, steps + 3 * total);
  ret_top<<<blocks, BLOCK>>>(out, steps + 4 * total);
  ret_guarded<<<blocks, BLOCK>>>(out, steps + 5 * total, n);
  ret_nested<<<blocks, BLOCK>>>(out, steps + 6 * total, n);
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) { std::printf("FAIL cuda %s\n", cudaGetErrorString(err)); return 1; }
  cudaMemcpy(got.data(), out, sizeof(unsigned) * N_OUT, cudaMemcpyDeviceToHost);
  cudaMemcpy(stepsGot.data(), steps, sizeof(unsigned) * 7 * total, cudaMemcpyDeviceToHost);
  unsigned h = 2166136261u; int bad = -1, badSteps = -1;
  for (int i = 0; i < N_OUT; ++i) { h = (h ^ got[i]) * 16777619u; if (bad < 0 && got[i] != expected[i]) bad = i; }
  for (int i = 0; i < 7 * total; ++i) { h = (h ^ stepsGot[i]) * 16777619u; if (badSteps < 0 && stepsGot[i] != stepsWant[i]) badSteps = i; }
  std::printf("RESULT %08x\n", h);
  if (bad >= 0) { std::printf("FAIL loop_jumps: slot %d is %u, expected %u\n", bad, got[bad], expected[bad]); return 1; }
  if (badSteps >= 0) { std::printf("FAIL loop_jumps: steps %d is %u, expected %u\n", badSteps, stepsGot[badSteps], stepsWant[badSteps]); return 1; }
  std::printf("PASS loop_jumps\n");
  return 0;
}
