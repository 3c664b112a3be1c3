// a device function with a non-const reference parameter, called as a statement: master-only
__device__ void load_count(int &n, const int *cnt, int t) { n = cnt[t]; }
__global__ void k(const int *cnt, const float *a, float *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int n = 0;
  load_count(n, cnt, t);
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < n; i++) s += a[t * 64 + i];
  out[t] = s;
}
int main() { int *c; float *a, *o; k<<<4, 128>>>(c, a, o); }
// the same hole inside a parallel loop: the write to s through a reference is not seen, so s is
// neither inferred as a reduction nor refused; each member keeps its own partial sum
__device__ void accum(float &acc, float x) { acc += x; }
__global__ void k2(const float *a, float *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0;
#pragma np parallel for
  for (int i = 0; i < 64; i++) accum(s, a[t * 64 + i]);
  out[t] = s;                    // the master's partial sum only (iterations 0, 8, 16, ...)
}
void run2(const float *a, float *o) { k2<<<4, 128>>>(a, o); }
