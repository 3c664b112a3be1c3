// inter-warp: a __shared__ scalar read by name is not recorded as a load, so the master-only
// store 'base = in[blockIdx.x]' and the members' read 'int b = base' are not ordered
__global__ void k(const int *in, int *out, int n) {
  __shared__ int base;
  int t = threadIdx.x;
  if (t == 0) base = in[blockIdx.x];
  int b = 0;
  if (t == 0) b = base;
#pragma np parallel for
  for (int i = 0; i < n; i++) out[(blockIdx.x * blockDim.x + t) * n + i] = b + i;
}
int main() { int *a, *o; k<<<4, 32>>>(a, o, 16); }
