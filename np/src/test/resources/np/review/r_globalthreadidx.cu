// '::threadIdx' names the real builtin, not klap's shadowing local
__global__ void k(const float *a, float *out) {
  int t = blockIdx.x * ::blockDim.x + ::threadIdx.x;
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < 16; i++) s += a[t * 16 + i];
  out[t] = s;
}
int main() { float *a, *o; k<<<4, 128>>>(a, o); }
