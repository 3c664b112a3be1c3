#include <cstdio>
struct Pair { int a; float b; };
struct Range { int lo = 0; int hi = 0; };   // default member initializers: not trivially default-constructible
namespace ns {
__global__ void fwd(int* out, int n, int t, float acc);
static __global__ void __launch_bounds__(256) A(const int* __restrict__ in, int* __restrict__ out, const int n, int t, const float acc)
{
    extern __shared__ int dyn[];
    dyn[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    if (threadIdx.x == 0 && t + 1 < n) A<<<1, blockDim.x, 256 * sizeof(int)>>>(in, out, n, t + 1, acc * 0.5f + dyn[0]);
    out[t] = (int)acc;
}
__global__ void B(Pair p, int* out, int n, int t)
{
    out[t] = p.a;
    if (threadIdx.x == 0 && t + 1 < n) { Pair q = p; q.a += 1; B<<<dim3(1), 256>>>(q, out, n, t + 1); }
}
__global__ void fwd(int* out, int n, int t, float acc)
{
    out[t] = (int)acc;
    if (threadIdx.x == 0 && t < n) fwd<<<1, 64>>>(out, n, t + 1, acc + 1.0f);
}
}
int main() {
  ns::fwd<<<1, 64>>>(nullptr, 3, 0, 0.f);
  return 0;
}
