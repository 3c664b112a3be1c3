#include <cuda/std/utility>
#include <cuda/std/__algorithm/max.h>
// cuda::std::max(x, m) returns x when x is NaN (!(x < m)); fmaxf drops NaN. The sequential loop's
// result is NaN iff the last element is NaN; the NP result drops NaNs held by a member's partial
__global__ void k(const float *a, float *out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float m = -1.0f;
#pragma np parallel for
  for (int i = 0; i < n; i++) m = cuda::std::max(a[t * n + i], m);
  out[t] = m;
}
int main() { float *a, *o; k<<<4, 128>>>(a, o, 16); }
