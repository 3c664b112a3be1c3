// dst[0][t] goes through a pointer stored in a local array, but privateRoot() walks nested
// subscripts down to the local array 'dst' and takes the store for a private write: the
// read-modify-write runs in every member of the group (x[t] grows by S instead of 1)
__global__ void k(float *x, float *y, const float *a, float *out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float *dst[2];
  dst[0] = x;
  dst[1] = y;
  dst[0][t] += 1.0f;
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < n; i++) s += a[t * n + i];
  out[t] = s;
}
int main() { float *x, *y, *a, *o; k<<<1, 32>>>(x, y, a, o, 16); }
