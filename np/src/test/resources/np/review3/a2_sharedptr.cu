// inter-warp: a store through a pointer held in a __shared__ array (or struct) is classified as a
// store to that __shared__ variable, so it "cannot alias" the global load after it
__global__ void k(float *g, const float *a, float *out, int n) {
  __shared__ float *rows[1];
  if (threadIdx.x == 0) rows[0] = g + blockIdx.x * blockDim.x;
  __syncthreads();
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  rows[0][threadIdx.x] = 0.5f * t;          // master only: really a store to g[t]
  float x = g[t];                           // every member: may run before the master's store
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < n; i++) s += a[i] * x;
  out[t] = s;
}

// the same through a pointer member of a __shared__ struct
struct Buf { float *data; };
__global__ void k2(float *g, const float *a, float *out, int n) {
  __shared__ Buf b;
  if (threadIdx.x == 0) b.data = g + blockIdx.x * blockDim.x;
  __syncthreads();
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  b.data[threadIdx.x] = 0.5f * t;           // master only: really a store to g[t]
  float x = g[t];
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < n; i++) s += a[i] * x;
  out[t] = s;
}
// and through a file-scope __shared__ array of pointers
__shared__ float *grows[1];
__global__ void k3(float *g, const float *a, float *out, int n) {
  if (threadIdx.x == 0) grows[0] = g + blockIdx.x * blockDim.x;
  __syncthreads();
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  grows[0][threadIdx.x] = 0.5f * t;
  float x = g[t];
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < n; i++) s += a[i] * x;
  out[t] = s;
}
int main() { float *g, *a, *o; k<<<4, 128>>>(g, a, o, 16); k2<<<4, 128>>>(g, a, o, 16); k3<<<4, 128>>>(g, a, o, 16); }
