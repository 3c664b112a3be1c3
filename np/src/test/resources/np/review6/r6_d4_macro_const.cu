// r5_d2 with the constant named through a macro defined outside the conditional
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
constexpr int TILE_ = 64;
#else
constexpr int TILE_ = 32;
#endif
#define TILE TILE_
__global__ void k(const float *a, float *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float buf[TILE];
#pragma np parallel for
  for (int i = 0; i < TILE; i++) buf[(i * 5) % TILE] = a[t * TILE + i];
  float s = 0;
  for (int j = 0; j < TILE; j++) s += buf[j] * j;
  out[t] = s;
}
int main() { float *a, *o; k<<<4, 128>>>(a, o); }
