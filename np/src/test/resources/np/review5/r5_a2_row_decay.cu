// rows of a 2-D local array decay to pointers: written through a device function (k) or a
// local pointer (k2) in sequential code, the write is taken for a store to memory and runs on
// the master only; the slaves' copies of c stay uninitialized and their iterations read them
__device__ void fill(float *dst, const float *src) { for (int j = 0; j < 4; j++) dst[j] = src[j]; }
__global__ void k(const float *w, const float *a, float *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float c[2][4];
  fill(c[0], w + t * 8);
  fill(c[1], w + t * 8 + 4);
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < 64; i++) s += c[i % 2][i % 4] * a[t * 64 + i];
  out[t] = s;
}
__global__ void k2(const float *w, const float *a, float *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float c[2][4];
  for (int r = 0; r < 2; r++) {
    float *row = c[r];
    for (int j = 0; j < 4; j++) row[j] = w[t * 8 + r * 4 + j];
  }
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < 64; i++) s += c[i % 2][i % 4] * a[t * 64 + i];
  out[t] = s;
}
int main() { float *w, *a, *o; k<<<4, 128>>>(w, a, o); k2<<<4, 128>>>(w, a, o); }
