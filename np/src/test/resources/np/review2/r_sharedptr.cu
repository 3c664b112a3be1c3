// inter-warp: memoryRoot() gives an access THROUGH a __shared__ pointer variable the root of
// the variable itself ("S:sp"), so the master-only store sp[t] (global memory: buf) and the
// members' load buf[...] are taken as disjoint and left unordered
__global__ void k(float *buf, const float *a, float *out, int n) {
  __shared__ float *sp;
  int t = threadIdx.x;
  int g = blockIdx.x * blockDim.x + t;
  if (t == 0) sp = buf + blockIdx.x * blockDim.x;
  __syncthreads();
  sp[t] = a[g];                 // master only: writes buf[g]
  float x = buf[g];             // every member reads buf[g]
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < n; i++) s += x * i;
  out[g] = s;
}
int main() { float *b, *a, *o; k<<<4, 32>>>(b, a, o, 16); }
