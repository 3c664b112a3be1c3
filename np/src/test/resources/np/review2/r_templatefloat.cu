// floatingOperand: a template parameter type is taken for an integer (T = float here)
template <class T>
__global__ void k(const T *a, int *out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int s = 0;
#pragma np parallel for
  for (int i = 0; i < n; i++) s += a[t * n + i];
  out[t] = s;
}
int main() { float *a; int *o; k<float><<<1, 32>>>(a, o, 2); }
