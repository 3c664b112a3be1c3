// a local struct's array member decays to a pointer passed to a device function that fills it
struct Coef { float v[4]; };
__device__ void fill(float *dst, const float *src) { for (int j = 0; j < 4; j++) dst[j] = src[j]; }
__global__ void k(const float *w, const float *a, float *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  Coef c;
  fill(c.v, w + t * 4);                         // stores through a pointer: master only?
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < 64; i++) s += c.v[i % 4] * a[t * 64 + i];
  out[t] = s;
}
int main() { float *w, *a, *o; k<<<4, 128>>>(w, a, o); }
