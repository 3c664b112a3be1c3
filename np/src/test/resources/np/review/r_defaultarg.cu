// the default argument is on the prototype; only the definition's parameters are checked for '='
__global__ void k(const float *a, float *out, int n = 16);
int main() { float *a, *o; k<<<4, 128>>>(a, o); }
__global__ void k(const float *a, float *out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < n; i++) s += a[t * n + i];
  out[t] = s;
}
