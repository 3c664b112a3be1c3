// kernel granularity (confirmed): a launch, then a raw device-runtime launch (cudaGetParameterBuffer +
// cudaLaunchDevice, the API <<<>>> compiles to) of a consumer by the same thread into the NULL
// stream. Expected: PASS.
#include <cstdio>
__global__ void first(int* out, int i) { if (threadIdx.x == 0) out[i] = 1; }
__global__ void second(int* out, int i) { if (threadIdx.x == 0) out[i] *= 10; }
struct SecondArgs { int* out; int i; };
__global__ void parent(int* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  first<<<1, 32>>>(out, i);
  SecondArgs* p = (SecondArgs*)cudaGetParameterBuffer(alignof(SecondArgs), sizeof(SecondArgs));
  if (p) { p->out = out; p->i = i; cudaLaunchDevice((void*)second, p, dim3(1), dim3(32), 0, 0); }
}
int main() {
  const int N = 64;
  int h[N], *out; cudaMalloc(&out, sizeof h); cudaMemset(out, 0, sizeof h);
  parent<<<1, N>>>(out);
  cudaError_t e = cudaDeviceSynchronize();
  cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
  int bad = 0; for (int i = 0; i < N; i++) bad += h[i] != 10;
  printf("%s (%s, %d wrong, out[0]=%d expected 10)\n", bad || e ? "FAIL" : "PASS", cudaGetErrorString(e), bad, h[0]);
  return bad || e;
}
