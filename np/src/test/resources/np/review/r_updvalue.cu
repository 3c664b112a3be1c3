// an inferred "+ reduction" whose update's value is used (stream compaction / running prefix)
__global__ void compact(const float *a, float *out, int *count, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int cnt = 0;
#pragma np parallel for
  for (int i = 0; i < n; i++)
    if (a[t * n + i] > 0) out[t * n + cnt++] = a[t * n + i];
  count[t] = cnt;
}
__global__ void prefix(const float *a, float *out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float run = 0;
#pragma np parallel for
  for (int i = 0; i < n; i++) out[t * n + i] = (run += a[t * n + i]);
}
int main() { float *a, *o; int *c; compact<<<4, 128>>>(a, o, c, 64); prefix<<<4,128>>>(a, o, 64); }
