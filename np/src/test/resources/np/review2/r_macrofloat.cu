// floatingOperand: a macro constant is taken for an enumerator (int)
#define HALF 0.5f
__global__ void k(const int *x, int *out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int s = 1;
#pragma np parallel for
  for (int i = 0; i < n; i++) s += HALF * x[t * n + i];
  out[t] = s;
}
int main() { int *a; int *o; k<<<1, 32>>>(a, o, 2); }
