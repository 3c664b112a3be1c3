__global__ void k(const float *a, float *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0;
#pragma np parallel for reduction(+:s)
#pragma unroll 4
  for (int i = 0; i < 64; i++) s += a[t * 64 + i];
  out[t] = s;
}
int main() { float *a, *o; k<<<4, 128>>>(a, o); }
