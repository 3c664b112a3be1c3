// Review of 2026-11-29: children that read the built-in indices through calls they do not write as
// calls: a functor's operator(), an operator+, a constructor's member initializer, a destructor and
// a conversion function. klap (before 2026-11-29) aggregated them, and they read the aggregated
// grid's indices. Each child writes, from its own (original) block and thread index, one slot per
// thread of its own 2 x 32 grid; the host checks every slot.
#include <cstdio>
#define PARENTS 64
#define PER (2 * 32)
struct Idx { __device__ unsigned operator()() const { return blockIdx.x * blockDim.x + threadIdx.x; } };
struct V { unsigned a; __device__ operator unsigned() const { return a + blockIdx.x * blockDim.x + threadIdx.x; } };
struct P { unsigned a; };
__device__ unsigned operator+(P p, unsigned b) { return p.a + b + blockIdx.x * blockDim.x + threadIdx.x; }
struct W { unsigned v; __device__ W() : v(blockIdx.x * blockDim.x + threadIdx.x) {} };
struct D { unsigned* o; unsigned k; __device__ ~D() { o[blockIdx.x * blockDim.x + threadIdx.x] += k; } };
__global__ void c_functor(unsigned* o) { Idx x; o[x()] += 1u; }
__global__ void c_conv(unsigned* o) { V v{0}; unsigned u = v; o[u] += 2u; }
__global__ void c_op(unsigned* o) { P p{0}; o[p + 0u] += 4u; }
__global__ void c_ctor(unsigned* o) { W w; o[w.v] += 8u; }
__global__ void c_dtor(unsigned* o) { D d{o, 16u}; }
__global__ void parent(unsigned* out) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= PARENTS) return;
  unsigned* o = out + PER * i;
  c_functor<<<2, 32>>>(o);
  c_conv<<<2, 32>>>(o);
  c_op<<<2, 32>>>(o);
  c_ctor<<<2, 32>>>(o);
  c_dtor<<<2, 32>>>(o);
}
int main() {
  unsigned* out; cudaMalloc(&out, PARENTS * PER * sizeof(unsigned));
  cudaMemset(out, 0, PARENTS * PER * sizeof(unsigned));
  parent<<<2, 40>>>(out);
  cudaError_t e = cudaDeviceSynchronize();
  static unsigned h[PARENTS * PER];
  cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
  int bad = 0; for (int i = 0; i < PARENTS * PER; ++i) bad += h[i] != 31u;
  printf("%s (%s, %d wrong of %d)\n", bad || e ? "FAIL" : "PASS", cudaGetErrorString(e), bad, PARENTS * PER);
  return bad != 0 || e != cudaSuccess;
}
