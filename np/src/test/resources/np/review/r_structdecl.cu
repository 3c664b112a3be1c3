// a local with a struct definition is unknown to NpPlanner.Scopes (writes to it would be taken for
// memory stores, master only); structured bindings are locals of the model since 2026-11-27, with an
// auto type klap cannot show: the loop bound they give is refused
struct P { int n; float w; };
__global__ void k(const int *cnt, const float *a, float *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  struct { int n; float w; } job;
  job.n = cnt[t];                          // master only: the slaves' job.n is uninitialized
  job.w = 2.0f;
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < job.n; i++) s += job.w * a[t * 64 + i];
  out[t] = s;
}
__global__ void k2(const P *jobs, const float *a, float *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  auto [n, w] = jobs[t];
  n = n > 64 ? 64 : n;                     // master only
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < n; i++) s += w * a[t * 64 + i];
  out[t] = s;
}
int main() { int *c; P *j; float *a, *o; k<<<4, 128>>>(c, a, o); k2<<<4, 128>>>(j, a, o); }
