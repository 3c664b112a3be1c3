// decltype(i) of the loop variable: 'int' in the original, 'const int' in the variant
__global__ void k(const float *a, float *out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
#pragma np parallel for
  for (int i = 0; i < n; i++) {
    decltype(i) j = i;
    j += n;
    out[t * 2 * n + j] = a[t * n + i];
  }
}
int main() { float *a, *o; k<<<4, 128>>>(a, o, 16); }
