// floatingOperand: the operand's type text 'const real *a' has no floating word, so an int
// accumulated with a float operand is taken as an exact integer reduction (s += a[i] truncates
// toward zero at every step in the original)
typedef float real;
__global__ void k(const real *a, int *out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int s = 0;
#pragma np parallel for
  for (int i = 0; i < n; i++) s += a[t * n + i];
  out[t] = s;
}
int main() { float *a; int *o; k<<<1, 32>>>(a, o, 2); }
