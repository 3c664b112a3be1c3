// reduction(&&:ok) on a non-bool variable: with zero iterations the original keeps ok == 2,
// the transform computes LogicalAnd(2, identity 1) == 1
__global__ void k(const int *a, int *out, const int *len) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int ok = 2;                      // 2 = "no data", 1 = all positive, 0 = some non-positive
#pragma np parallel for reduction(&&:ok)
  for (int i = 0; i < len[t]; i++) ok = ok && a[t * 64 + i] > 0;
  out[t] = ok;
}
int main() { int *a, *o, *l; k<<<4, 128>>>(a, o, l); }
