// a device function that reads %laneid through inline asm: not detected (asm is checked only in the kernel body)
__device__ __forceinline__ unsigned lane_id() { unsigned r; asm volatile("mov.u32 %0, %%laneid;" : "=r"(r)); return r; }
__global__ void k(const float *a, float *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned lane = lane_id();          // original: t % 32 (1-D block of 128)
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < 16; i++) s += a[lane * 16 + i];
  out[t] = s;
}
// a user function whose name starts with "__" is taken for a pure builtin (threadIdx and atomics unseen)
__device__ int __my_tid() { return threadIdx.x; }
__device__ void __bump(int *c) { atomicAdd(c, 1); }
__global__ void k2(const float *a, float *out, int *calls) {
  int t = blockIdx.x * 128 + __my_tid();
  __bump(calls);
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < 16; i++) s += a[t * 16 + i];
  out[t] = s;
}
int main() { float *a, *o; int *c; k<<<4, 128>>>(a, o); k2<<<4,128>>>(a, o, c); }
