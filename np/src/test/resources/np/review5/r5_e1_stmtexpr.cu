// GNU statement expressions: klap's model does not look inside them
//  k:  an atomicAdd inside one runs in every member of the group (*cnt grows by S per thread)
//  k2: a device function whose statement expression reads the real threadIdx is taken as pure
__device__ int row_of(int w) { return ({ int r = threadIdx.x / w; r; }); }
__global__ void k(const float *a, float *out, int *cnt) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int base = ({ atomicAdd(cnt, 1); t * 16; });   // a ticket count: +1 per thread
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < 16; i++) s += a[base + i];
  out[t] = s;
}
__global__ void k2(const float *a, float *out) {
  int t = blockIdx.x * 4 + row_of(32);
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < 16; i++) s += a[t * 16 + i];
  out[t] = s;
}
int main() { float *a, *o; int *c; k<<<4, 128>>>(a, o, c); k2<<<4, 128>>>(a, o); }
