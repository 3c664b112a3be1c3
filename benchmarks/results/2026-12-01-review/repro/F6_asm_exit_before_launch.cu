// Threads with nothing to do end at once with PTX exit; the others launch a child.
__global__ void child(int* out, int k) { out[threadIdx.x] = k; }
__global__ void parent(int* out, const int* cnt) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (cnt[i] == 0) asm volatile("exit;");
  child<<<1, 32>>>(out + 32 * i, i);
}
int main() {
  const int T = 128;
  int h[T];
  for (int i = 0; i < T; i++) h[i] = i % 3;          // threads with i % 3 == 0 exit (thread 0 of block 0 among them)
  int *out, *cnt;
  cudaMalloc(&out, 32 * T * sizeof(int)); cudaMalloc(&cnt, T * sizeof(int));
  cudaMemset(out, 0xff, 32 * T * sizeof(int));
  cudaMemcpy(cnt, h, sizeof h, cudaMemcpyHostToDevice);
  parent<<<2, 64>>>(out, cnt);
  cudaError_t e = cudaDeviceSynchronize();
  int r[32 * T];
  cudaMemcpy(r, out, sizeof r, cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int i = 0; i < T; i++) if (i % 3 != 0 && r[32 * i] != i) bad++;
  return e != cudaSuccess || bad != 0;                // as written: 0
}
