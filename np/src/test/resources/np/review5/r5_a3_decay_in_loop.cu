// in a parallel loop: rows of a 2-D local array / an array member of a local struct are filled
// through array-to-pointer decay; each member fills only its own private copy
struct Buf { float v[64]; };
__device__ void put(float *dst, float x) { dst[0] = x; dst[1] = 2 * x; }
__global__ void k(const float *a, float *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float c[16][2];
#pragma np parallel for
  for (int i = 0; i < 16; i++) put(c[i], a[t * 16 + i]);
  float s = 0;
  for (int j = 0; j < 16; j++) s += c[j][0] + c[j][1];
  out[t] = s;
}
__global__ void k2(const float *a, float *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  Buf b;
#pragma np parallel for
  for (int i = 0; i < 32; i++) put(b.v + 2 * i, a[t * 32 + i]);
  float s = 0;
  for (int j = 0; j < 64; j++) s += b.v[j];
  out[t] = s;
}
__global__ void k3(const float *w, const float *a, float *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  Buf b;
  memcpy(b.v, w + t * 64, sizeof b.v);
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < 64; i++) s += b.v[i] * a[t * 64 + i];
  out[t] = s;
}
int main() { float *w, *a, *o; k<<<4, 128>>>(a, o); k2<<<4, 128>>>(a, o); k3<<<4, 128>>>(w, a, o); }
