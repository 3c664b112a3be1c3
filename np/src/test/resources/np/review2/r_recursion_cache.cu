// callee facts of a mutually recursive pair are cached from the provisional entry: analysing
// 'walk' (it reads threadIdx) first caches 'step' as clean, so kernel k2, which calls only
// 'step', is transformed although step -> walk reads the real (unshadowed) threadIdx
__device__ int step(int d);
__device__ int walk(int d) { return d <= 0 ? (int)threadIdx.x : step(d - 1); }
__device__ int step(int d) { return d <= 0 ? 0 : walk(d - 1) + 1; }
__global__ void k1(const float *a, float *out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int w = walk(2);
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < n; i++) s += a[i] * w;
  out[t] = s;
}
__global__ void k2(const float *a, float *out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int w = step(1);              // = walk(0) + 1 = threadIdx.x + 1 (the real one in the variant)
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < n; i++) s += a[i] * w;
  out[t] = s;
}
int main() { float *a, *o; k1<<<1, 32>>>(a, o, 16); k2<<<1, 32>>>(a, o, 16); }
