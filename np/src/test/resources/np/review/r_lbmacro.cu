// __launch_bounds__ with a macro: the 1024 check reads only a literal, so the variant gets (256) * 8 = 2048
#define BLOCK 256
__global__ void __launch_bounds__(BLOCK) k(const float *a, float *out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < n; i++) s += a[t * n + i];
  out[t] = s;
}
int main() { float *a, *o; k<<<4, BLOCK>>>(a, o, 16); }
