// the volatile refusal looks only at the kernel's own text: a device function that reads a
// volatile location is called by every member, which may read different values (the original
// thread read one); the members then disagree on the trip count
__device__ int peek(const volatile int *p) { return *p; }
__global__ void consume(const int *tail, const float *a, float *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int n = peek(tail);           // tail is advanced concurrently by a producer kernel
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < n; i++) s += a[i];
  out[t] = s;
}
int main() { int *p; float *a, *o; consume<<<4, 128>>>(p, a, o); }
