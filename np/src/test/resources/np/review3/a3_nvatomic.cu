// CUDA 12.8+ built-in atomics (__nv_atomic_*) start with "__": klap takes them for pure built-ins,
// so every member of the group runs them
__global__ void k(const float *a, float *out, int *count, int *slots, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int slot = __nv_atomic_fetch_add(count, 1, __NV_ATOMIC_RELAXED, __NV_THREAD_SCOPE_DEVICE);
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < n; i++) s += a[t * n + i];
  out[slot] = s;
  __nv_atomic_fetch_add(count + 1, 1, __NV_ATOMIC_RELAXED, __NV_THREAD_SCOPE_DEVICE);
}
int main() { float *a, *o; int *c, *sl; k<<<4, 128>>>(a, o, c, sl, 16); }
