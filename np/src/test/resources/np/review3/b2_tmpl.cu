__device__ float2 operator+(float2 a, float2 b) { return make_float2(a.x + b.x, a.y + b.y); }
__device__ float2 &operator+=(float2 &a, float2 b) { a.x += b.x; a.y += b.y; return a; }
template <typename T>
__global__ void k(const T *a, T *out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  T s = T();
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < n; i++) s += a[t * n + i];
  out[t] = s;
}
int main() { float2 *a, *o; k<float2><<<4, 128>>>(a, o, 16); }
