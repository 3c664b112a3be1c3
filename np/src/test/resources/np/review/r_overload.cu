// overloaded kernels: the launch of the untransformed overload is rewritten by name to the other's variant
__global__ void scale(float *out, const float *a, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < n; i++) s += a[t * n + i];
  out[t] = s;
}
__global__ void scale(float *out, const float *a, float f) {   // no pragma
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  out[t] = a[t] * f;
}
int main() { float *o, *a; scale<<<4, 128>>>(o, a, 0.5f); }
