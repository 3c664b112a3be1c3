// A small helper type whose constructor computes the thread's tile coordinates.
struct Tile {
  int row, col;
  __device__ Tile(int width) : row((blockIdx.x * blockDim.x + threadIdx.x) / width),
                               col((blockIdx.x * blockDim.x + threadIdx.x) % width) {}
};
__global__ void child(int* out, int row, int col) {
  out[threadIdx.x] = row * 1000 + col;
}
__global__ void parent(int* out, const int* on, int width) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (on[i]) child<<<1, 32>>>(out + 32 * i, Tile(width).row, Tile(width).col);
}
int main() {
  const int T = 128;
  int *out, *on, h[T];
  for (int i = 0; i < T; i++) h[i] = 1;
  cudaMalloc(&out, 32 * T * sizeof(int)); cudaMalloc(&on, T * sizeof(int));
  cudaMemcpy(on, h, sizeof h, cudaMemcpyHostToDevice);
  parent<<<2, 64>>>(out, on, 16);
  cudaDeviceSynchronize();
  int r[32 * T];
  cudaMemcpy(r, out, sizeof r, cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int i = 0; i < T; i++) if (r[32 * i] != (i / 16) * 1000 + i % 16) bad++;
  return bad != 0;   // as written: 0
}
