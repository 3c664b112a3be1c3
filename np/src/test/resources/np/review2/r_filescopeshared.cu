// inter-warp: globalDeclaration() takes the first line of the file that declares 'buf' (here a
// host function's local), so the file-scope __shared__ buf gets root "G"; a __shared__ array
// 'tmp' read through a local-free path gets "S:tmp"... the store to buf (G) and the load of
// buf via a second file-scope name are checked by text, not by declaration
void host_helper() { float buf[4]; (void)buf; }
__shared__ float buf[128];
__global__ void k(const float *in, float *out, int n) {
  __shared__ float loc[128];
  int t = threadIdx.x;
  buf[t] = in[blockIdx.x * blockDim.x + t];   // master-only store
  float x = buf[t];                            // members load
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < n; i++) s += x * i;
  loc[t] = s;
  out[blockIdx.x * blockDim.x + t] = loc[t];
}
int main() { float *a, *o; k<<<4, 32>>>(a, o, 16); }
