// a helper defined twice at file scope, chosen by #ifdef __CUDA_ARCH__: klap reads the host
// definition (pure), nvcc compiles the device one (it reads the real threadIdx)
#ifdef __CUDA_ARCH__
__host__ __device__ inline int lane_base() { return threadIdx.x; }
#else
__host__ __device__ inline int lane_base() { return 0; }
#endif
__global__ void k(const float *a, float *out) {
  int t = blockIdx.x * blockDim.x + lane_base();
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < 16; i++) s += a[t * 16 + i];
  out[t] = s;
}
int main() { float *a, *o; k<<<4, 128>>>(a, o); }
