// the variant is launched with M*S = 1024 threads whenever M*S <= 1024; a variant that needs more than
// 64 registers per thread cannot launch with 1024 threads (cudaErrorLaunchOutOfResources): no fallback
#define R 48
__global__ void k(const float *a, float *out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float acc[R];
  for (int r = 0; r < R; r++) acc[r] = a[t * R + r];
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < n; i++) {
    float x = a[i];
#pragma unroll
    for (int r = 0; r < R; r++) { acc[r] = acc[r] * x + 1.0f; }
    float y = 0;
#pragma unroll
    for (int r = 0; r < R; r++) y += acc[r] * acc[(r * 7) % R];
    s += y;
  }
  out[t] = s;
}
int main() { float *a, *o; k<<<64, 128>>>(a, o, 1000); }
