// inter-warp: a __syncthreads() that lies textually between a master-only store and a later load is taken
// as ordering them even when it does not run (uniform condition false / zero-trip loop)
__global__ void k(int *cnt, const float *a, float *out, int phase) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  cnt[t] = cnt[t] / 2;                 // master-only store, no barrier after it (inter-warp)
  if (phase) __syncthreads();          // block-uniform, not taken when phase == 0
  int n = cnt[t];                      // every member loads the master's own store
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < n; i++) s += a[t * 64 + i];
  out[t] = s;
}
int main() { int *c; float *a, *o; k<<<4, 128>>>(c, a, o, 0); }
