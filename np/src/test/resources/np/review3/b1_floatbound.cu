__constant__ float scale;
struct Cfg { float frac; int n; };
__device__ float lim(int t) { return t * 0.5f; }
__global__ void k(const float *a, float *out, int n, Cfg c) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < n * scale; i++) s += a[i];
  out[t] = s;
}
__global__ void k2(const float *a, float *out, int n, Cfg c) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < c.frac * n; i++) s += a[i];
  out[t] = s;
}
__global__ void k3(const float *a, float *out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < lim(n); i++) s += a[i];
  out[t] = s;
}
int main() { float *a, *o; Cfg c; k<<<4, 128>>>(a, o, 16, c); k2<<<4, 128>>>(a, o, 16, c); k3<<<4, 128>>>(a, o, 16);}
