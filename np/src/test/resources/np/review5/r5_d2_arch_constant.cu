// an array size chosen by #if __CUDA_ARCH__ (a constexpr, not a macro): the host-side helper
// k_klap_npi_arrays sizes klap's shared/global copy with the host value (32), the kernel indexes
// it with the device value (64)
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
constexpr int TILE = 64;
#else
constexpr int TILE = 32;
#endif
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
