// the kernel is declared before the array's size constant and element type: the
// k_klap_npi_arrays helper goes after the prototype, where neither is declared yet
__global__ void k(const float *a, float *out, int n);
constexpr int NB = 16;
struct P { float x, y; };
__global__ void k(const float *a, float *out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  P buf[NB];
#pragma np parallel for
  for (int i = 0; i < NB; i++) buf[i].x = a[t * NB + i];
  float s = 0;
  for (int i = 0; i < NB; i++) s += buf[NB - 1 - i].x;
  out[t] = s;
}
int main() { float *a, *o; k<<<1, 32>>>(a, o, 16); }
