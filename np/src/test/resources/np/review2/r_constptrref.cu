// a callee parameter 'const int *&p' is a non-const reference (to a pointer to const), but the
// refParams regex skips every parameter text that starts with 'const': the call's write of the
// caller's local q is not seen, so 'take(q, ...)' (it stores) runs on the master only and the
// slaves keep the old q
__device__ void take(const int *&p, int *o) { *o = *p; p++; }
__global__ void k(const int *in, int *first, float *out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  const int *q = in + t * (n + 1);
  take(q, first + t);            // master only: q advances in the master only
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < n; i++) s += q[i];   // slaves read from the old q
  out[t] = s;
}
int main() { int *a, *f; float *o; k<<<4, 32>>>(a, f, o, 16); }
