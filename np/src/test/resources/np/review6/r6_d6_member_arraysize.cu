// r5_d2 with the constant a static member of a class, chosen by #if __CUDA_ARCH__ inside the class
struct Cfg {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  static constexpr int TILE = 64;
#else
  static constexpr int TILE = 32;
#endif
};
__global__ void k(const float *a, float *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float buf[Cfg::TILE];
#pragma np parallel for
  for (int i = 0; i < 32; i++) buf[(i * 5) % Cfg::TILE] = a[t * 32 + i];
  float s = 0;
  for (int j = 0; j < Cfg::TILE; j++) s += buf[j] * j;
  out[t] = s;
}
int main() { float *a, *o; k<<<4, 128>>>(a, o); }
