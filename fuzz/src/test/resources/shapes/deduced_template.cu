// Shape "deduced-template" (2026-11-29): launches of a template child that leave its template
// arguments to deduction (`scale<<<1, 8>>>(out, in, w, i)` in a template parent, as a public
// quicksort writes `bruteSort<<<...>>>(data, ...)`), which klap used to leave as written
// (klap-template-args). klap now writes the arguments C++ deduces where it can prove them
// (TemplateDeduction: plain parameter names of the parent): `<T>` in the template parent, `<float>`
// and `<const float*>` in the plain ones, and, where the argument's type is a name that could hide
// a qualifier (the parent's `T w`, a typedef), the type traits' spelling
// (`<cuda::std::decay_t<T>>`, `<cuda::std::decay_t<real_t>>`). A wrong deduction would either not build or change the
// children's arithmetic (an int weight would truncate the 0.5 steps), so the result is checked
// against the CPU's. Template parameters that no child parameter names take their defaults
// (2026-11-30: `ones<<<1, 4>>>(...)` of `template <int S = 4>`, and `stride`'s `S = 3`, which only
// its prototype gives): klap writes the deduced prefix (`<>`, `<float>`) and repeats the defaults;
// such launches used to be left as written.
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define N_OUT 512
#define BLOCK 64

template <typename T>
__global__ void scale(T* out, const T* in, T w, int i) {
  const int k = (i * 13 + (int)threadIdx.x) % N_OUT;
  atomicAdd(&out[k], in[i % 97] * w + (T)threadIdx.x * (T)0.5);
}

template <typename T>
__global__ void peek(T p, float* out, int i) {
  atomicAdd(&out[(i * 7 + (int)threadIdx.x) % N_OUT], (float)p[i % 97] + 0.25f);
}

typedef float real_t;

template <typename T>
__global__ void bump(float* out, T w, int i) {
  atomicAdd(&out[(i * 5 + (int)threadIdx.x) % N_OUT], (float)w * 2.0f + (float)threadIdx.x);
}

template <int S = 4>
__global__ void ones(float* out, int i) {
  atomicAdd(&out[(i * 3 + (int)threadIdx.x) % N_OUT], (float)S);
}

template <typename T, int S = 3>
__global__ void stride(float* out, const T* in, int i);

template <typename T>
__global__ void tparent(T* out, const T* in, T w, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  if (i % 3 != 0) scale<<<1, 8>>>(out, in, w, i);
  if (i % 5 == 1) bump<<<1, 3>>>((float*)out, w, i);
  if (i % 7 == 2) ones<<<1, 4>>>((float*)out, i);
}

__global__ void fparent(float* out, const float* __restrict__ in, real_t w, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  if (i % 2 == 0) peek<<<1, 4>>>(in, out, i);
  scale<<<1, 2>>>(out, in, 1.5f, i);
  if (i % 4 == 3) bump<<<1, 3>>>(out, w, i);
  if (i % 6 == 5) stride<<<1, 2>>>(out, in, i);
}

template <typename T, int S>
__global__ void stride(float* out, const T* in, int i) {
  atomicAdd(&out[(i * 11 + (int)threadIdx.x) % N_OUT], (float)in[i % 97] * (float)S + 0.5f);
}

int main() {
  const int n = 2 * BLOCK + 19;
  std::vector<float> in(97);
  for (int j = 0; j < 97; ++j) in[j] = (float)((j * 37) % 11) * 0.5f;
  std::vector<float> expected(N_OUT, 0.0f);
  for (int i = 0; i < n; ++i) {
    if (i % 3 != 0)
      for (int t = 0; t < 8; ++t) expected[(i * 13 + t) % N_OUT] += in[i % 97] * 2.5f + t * 0.5f;
    if (i % 5 == 1)
      for (int t = 0; t < 3; ++t) expected[(i * 5 + t) % N_OUT] += 2.5f * 2.0f + t;
    if (i % 7 == 2)
      for (int t = 0; t < 4; ++t) expected[(i * 3 + t) % N_OUT] += 4.0f;
  }
  for (int i = 0; i < n; ++i) {
    if (i % 2 == 0)
      for (int t = 0; t < 4; ++t) expected[(i * 7 + t) % N_OUT] += in[i % 97] + 0.25f;
    for (int t = 0; t < 2; ++t) expected[(i * 13 + t) % N_OUT] += in[i % 97] * 1.5f + t * 0.5f;
    if (i % 4 == 3)
      for (int t = 0; t < 3; ++t) expected[(i * 5 + t) % N_OUT] += 0.75f * 2.0f + t;
    if (i % 6 == 5)
      for (int t = 0; t < 2; ++t) expected[(i * 11 + t) % N_OUT] += in[i % 97] * 3.0f + 0.5f;
  }
  float *out, *d;
  cudaMalloc(&out, sizeof(float) * N_OUT);
  cudaMalloc(&d, sizeof(float) * 97);
  cudaMemset(out, 0, sizeof(float) * N_OUT);
  cudaMemcpy(d, in.data(), sizeof(float) * 97, cudaMemcpyHostToDevice);
  tparent<float><<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(out, d, 2.5f, n);
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err == cudaSuccess) fparent<<<(n + BLOCK - 1) / BLOCK, BLOCK>>>(out, d, 0.75f, n);
  if (err == cudaSuccess) err = cudaGetLastError();
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) { std::printf("FAIL cuda %s\n", cudaGetErrorString(err)); return 1; }
  std::vector<float> got(N_OUT);
  cudaMemcpy(got.data(), out, sizeof(float) * N_OUT, cudaMemcpyDeviceToHost);
  // every value is a multiple of 0.25 below 2^20: the sums are exact in float, in any order
  unsigned h = 2166136261u; int bad = -1;
  for (int i = 0; i < N_OUT; ++i) {
    h = (h ^ (unsigned)(got[i] * 4.0f)) * 16777619u;
    if (bad < 0 && got[i] != expected[i]) bad = i;
  }
  std::printf("RESULT %08x\n", h);
  if (bad >= 0) { std::printf("FAIL deduced_template: slot %d is %f, expected %f\n", bad, got[bad], expected[bad]); return 1; }
  std::printf("PASS deduced_template\n");
  return 0;
}
