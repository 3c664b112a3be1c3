// a broadcast declaration that is the whole body of an if: klap inserts 'klap_np_g.sync();'
// before it without braces, so the if now guards only the sync and the atomicAdd runs always
__global__ void k(int *cnt, const float *a, float *out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (a[t] > 0.0f)
    int slot = atomicAdd(cnt, 1);
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < n; i++) s += a[t * n + i];
  out[t] = s;
}
int main() { int *c; float *a, *o; k<<<1, 32>>>(c, a, o, 16); }
