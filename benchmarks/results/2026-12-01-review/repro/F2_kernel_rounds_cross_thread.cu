// step r adds r+1 to each element; consume reads the sum of all steps
__global__ void step(int* buf, int r) { buf[threadIdx.x] += r + 1; }
__global__ void consume(const int* buf, int* out) { out[threadIdx.x] = buf[threadIdx.x]; }
__global__ void parent(int* buf, int* out, int n) {
  int* b = buf + 32 * blockIdx.x;
  if (threadIdx.x == 0) {
    for (int r = 0; r < n; r++) step<<<1, 32>>>(b, r);
  }
  __syncthreads();
  if (threadIdx.x == 1) consume<<<1, 32>>>(b, out + 32 * blockIdx.x);
}
int main() {
  int *buf, *out;
  cudaMalloc(&buf, 4096 * sizeof(int)); cudaMalloc(&out, 4096 * sizeof(int));
  cudaMemset(buf, 0, 4096 * sizeof(int));
  parent<<<4, 64>>>(buf, out, 4);
  cudaDeviceSynchronize();
  int h[32]; cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
  return h[0] == 10 ? 0 : 1;   // 1 + 2 + 3 + 4
}
