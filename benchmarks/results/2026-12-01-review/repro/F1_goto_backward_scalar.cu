// A per-thread retry loop written with a backward goto; x is passed to the child after it.
__global__ void child(int* out, int x) {
  out[threadIdx.x] = x;
}
__global__ void parent(int* out) {
  int x = 0;
again:
  x = x + 1;
  if (threadIdx.x < 3 && x < 5) goto again;      // threads 0..2 of each block retry: x == 5, others x == 1
  child<<<1, 32>>>(out + 32 * (blockIdx.x * blockDim.x + threadIdx.x), x);
}
int main() {
  const int T = 128;
  int* out;
  cudaMalloc(&out, 32 * T * sizeof(int));
  parent<<<2, 64>>>(out);
  cudaDeviceSynchronize();
  int r[32 * T];
  cudaMemcpy(r, out, sizeof r, cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int i = 0; i < T; i++) if (r[32 * i] != ((i % 64) < 3 ? 5 : 1)) bad++;
  return bad != 0;   // as written: 0
}
