// the array size an enumerator whose value a conditional inside the enum chooses
enum Sizes {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  TILE = 64
#else
  TILE = 32
#endif
};
__global__ void k(const float *a, float *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float buf[TILE];
#pragma np parallel for
  for (int i = 0; i < 32; i++) buf[(i * 5) % TILE] = a[t * 32 + i];
  float s = 0;
  for (int j = 0; j < TILE; j++) s += buf[j] * j;
  out[t] = s;
}
int main() { float *a, *o; k<<<4, 128>>>(a, o); }
