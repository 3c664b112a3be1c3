// for (int i{0}; ...): lo text '{0}' is pasted as 'const int klap_np_lo = ({0})'
__global__ void k(const float *a, float *out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i{0}; i < n; i++) s += a[t * n + i];
  out[t] = s;
}
int main() { float *a, *o; k<<<1, 32>>>(a, o, 16); }
