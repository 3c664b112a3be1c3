// inter-warp: the barrier that orders the master's store (iteration j) before the members'
// load (iteration j+1) is skipped by a uniform continue
__global__ void k(float *a, const float *b, float *out, int n, int m) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0;
  for (int j = 0; j < m; j++) {
    float x = a[t];                 // every member loads a[t]
    __syncthreads();
#pragma np parallel for reduction(+:s)
    for (int i = 0; i < n; i++) s += b[i] * x;
    a[t] = x + 1.0f;                // master only
    if (j % 2 == 1) continue;       // block-uniform: skips the barrier below
    __syncthreads();
  }
  out[t] = s;
}
int main() { float *a, *b, *o; k<<<4, 128>>>(a, b, o, 16, 4); }
