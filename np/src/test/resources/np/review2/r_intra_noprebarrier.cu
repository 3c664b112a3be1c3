// intra-warp: no group barrier before a parallel loop. Every member loads row[0] in sequential
// code; iteration 0 (the master) overwrites row[0]. Nothing orders a slave's load before the
// master's store (the fix made for master-only statements: sync before and after)
__global__ void k(float *data, float *out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float *row = data + (size_t)t * n;
  float first = row[0];                     // every member
#pragma np parallel for
  for (int i = 0; i < n; i++) row[i] = row[i] * 2.0f;  // iteration 0 in the master
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < n; i++) s += row[i] - first;
  out[t] = s;
}
int main() { float *d, *o; k<<<4, 32>>>(d, o, 16); }
