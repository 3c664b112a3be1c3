// the stream expression is copied 3 times into the rewritten launch (launch_memory, <<<>>>, release)
__global__ void k(const float *a, float *out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < n; i++) s += a[t * n + i];
  out[t] = s;
}
int main() {
  cudaStream_t st[4]; for (int j = 0; j < 4; j++) cudaStreamCreate(&st[j]);
  float *a, *o; int next = 0;
  for (int j = 0; j < 4; j++) k<<<4, 128, 0, st[next++ % 4]>>>(a + j * 8192, o + j * 512, 16);
  cudaDeviceSynchronize();
}
