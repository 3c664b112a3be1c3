// a local array filled through array-to-pointer decay (device function / memcpy): master-only
__device__ void fill(float *dst, const float *src) { for (int j = 0; j < 8; j++) dst[j] = src[j]; }
__global__ void k(const float *w, const float *a, float *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float coef[8];
  fill(coef, w + t * 8);
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < 64; i++) s += coef[i % 8] * a[t * 64 + i];
  out[t] = s;
}
__global__ void k2(const float *w, const float *a, float *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float coef[8];
  memcpy(coef, w + t * 8, sizeof coef);
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < 64; i++) s += coef[i % 8] * a[t * 64 + i];
  out[t] = s;
}
__global__ void k3(const float *a, float *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float tmp[64];
  float *q = tmp;
#pragma np parallel for
  for (int i = 0; i < 64; i++) q[i] = a[t * 64 + i] * 2;
  float s = 0;
  for (int j = 0; j < 64; j++) s += tmp[j];
  out[t] = s;
}
int main() { float *w, *a, *o; k<<<4, 128>>>(w, a, o); k2<<<4, 128>>>(w, a, o); k3<<<4,128>>>(a, o); }
