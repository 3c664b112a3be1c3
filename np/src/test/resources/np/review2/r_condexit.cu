// inter-warp: the while condition's load of flag[t] is taken as ordered before the master-only
// store after the loop by the __syncthreads() in the body, but the last evaluation of the
// condition (the one that exits) is followed by no barrier: a slave still to evaluate it can
// read the master's flag[t] = 0, re-enter the loop and wait at a __syncthreads() the rest of
// the block never reaches again
__global__ void k(int *flag, const float *a, float *out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int r = 0;
  while (flag[t] == 0) {       // every member loads flag[t]
    __syncthreads();
    if (r == 3) flag[t] = 1;   // master only
    r++;
    __syncthreads();
  }
  flag[t] = 0;                 // master only
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < n; i++) s += a[t * n + i] * r;
  out[t] = s;
}
int main() { int *f; float *a, *o; k<<<4, 32>>>(f, a, o, 16); }
