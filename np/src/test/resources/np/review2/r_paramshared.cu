// inter-warp: a pointer parameter re-pointed at a __shared__ array keeps the root "G" (global),
// which mayAlias says never aliases S:sh
__global__ void k(float *p, float *out, int n) {
  __shared__ float sh[128];
  int t = threadIdx.x;
  p = sh;
  p[t] = out[blockIdx.x * blockDim.x + t];  // master-only store into sh[t], root "G"
  float x = sh[t];                          // every member loads sh[t], root "S:sh"
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < n; i++) s += x * i;
  out[blockIdx.x * blockDim.x + t] = s;
}
int main() { float *a, *o; k<<<4, 32>>>(a, o, 16); }
