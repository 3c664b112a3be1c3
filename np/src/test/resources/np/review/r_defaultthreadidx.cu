// a device function whose default argument reads threadIdx: the default is looked up at the function's
// declaration (the real builtin), not klap's shadowing local, and NpPlanner scans only the callee's body
__device__ int row(int base, int tid = threadIdx.x) { return base + tid; }
__global__ void k(const float *a, float *out) {
  int t = row(blockIdx.x * 128);
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < 16; i++) s += a[t * 16 + i];
  out[t] = s;
}
int main() { float *a, *o; k<<<4, 128>>>(a, o); }
