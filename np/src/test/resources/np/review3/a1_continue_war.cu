// inter-warp, the other direction (WAR): a slave's load at the end of iteration j can run after
// the master's store of iteration j+1, because the barrier after the load is skipped by continue
__global__ void k(const float *b, float *out, int n, int m) {
  __shared__ float v[128];
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0, x = 1.0f;
  for (int j = 0; j < m; j++) {
    v[threadIdx.x] = 2.0f * j + 1.0f;   // master only
    __syncthreads();
#pragma np parallel for reduction(+:s)
    for (int i = 0; i < n; i++) s += b[i] * x;
    x = v[threadIdx.x];                 // every member
    if (j % 2 == 0) continue;           // block-uniform: skips the barrier below
    __syncthreads();
  }
  out[t] = s;
}
int main() { float *b, *o; k<<<4, 128>>>(b, o, 16, 4); }
