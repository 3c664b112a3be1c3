// A kernel parameter whose name happens to start with klap_.
__global__ void child(int* a, int r, int tag) { a[r * 4 + threadIdx.x] = tag; }
__global__ void parent(int* a, const unsigned* fl, const int* lim, int klap_x0) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int r = 0; r < lim[i]; r++) {
    if ((fl[i] >> r) & 1u) continue;
    child<<<1, 4>>>(a + 64 * i, r, klap_x0);
  }
}
int main() {
  const int T = 64;
  unsigned hf[T]; int hl[T];
  for (int i = 0; i < T; i++) { hf[i] = 0u; hl[i] = 1 + i % 3; }
  int *a, *lim; unsigned* fl;
  cudaMalloc(&a, 64 * T * sizeof(int)); cudaMalloc(&lim, sizeof hl); cudaMalloc(&fl, sizeof hf);
  cudaMemcpy(lim, hl, sizeof hl, cudaMemcpyHostToDevice); cudaMemcpy(fl, hf, sizeof hf, cudaMemcpyHostToDevice);
  parent<<<1, T>>>(a, fl, lim, 42);
  cudaDeviceSynchronize();
  int r[64 * T];
  cudaMemcpy(r, a, sizeof r, cudaMemcpyDeviceToHost);
  return r[0] != 42;   // as written: every child writes 42
}
