// a local array of a type declared in the kernel, placed in shared memory: the file-scope
// helper k_klap_npi_arrays names the type outside its scope
__global__ void k(const float *a, float *out, int n) {
  struct P { float x, y; };
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  P buf[16];
#pragma np parallel for
  for (int i = 0; i < 16; i++) buf[i].x = a[t * 16 + i];
  float s = 0;
  for (int i = 0; i < 16; i++) s += buf[15 - i].x;
  out[t] = s;
}
int main() { float *a, *o; k<<<1, 32>>>(a, o, 16); }
