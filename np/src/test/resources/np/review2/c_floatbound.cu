// the loop bound has a floating type: trips() static_asserts (the original compiles and runs)
__global__ void k(const float *a, float *out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < sqrtf((float)n); i++) s += a[t * n + i];
  out[t] = s;
}
int main() { float *a, *o; k<<<1, 32>>>(a, o, 16); }
