// inter-warp: two extern __shared__ arrays are the same memory (both start at the dynamic shared
// memory), but memoryRoot gives them different roots S:a and S:b, which mayAlias says never alias
__global__ void k(const float *in, float *out, int n) {
  extern __shared__ float a[];
  extern __shared__ float b[];
  int t = threadIdx.x;
  a[t] = in[blockIdx.x * blockDim.x + t];   // master-only store
  float x = b[t];                           // every member loads: the same word as a[t]
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < n; i++) s += x * i;
  out[blockIdx.x * blockDim.x + t] = s;
}
int main() { float *a, *o; k<<<4, 32, 32 * sizeof(float)>>>(a, o, 16); }
