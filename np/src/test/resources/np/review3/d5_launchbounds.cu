#define BS 512
template <int B>
__global__ void __launch_bounds__(B) kt(const float *a, float *out, int n) {
  int t = blockIdx.x * B + threadIdx.x;
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < n; i++) s += a[t * n + i];
  out[t] = s;
}
__global__ void __launch_bounds__(BS) km(const float *a, float *out, int n) {
  int t = blockIdx.x * BS + threadIdx.x;
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < n; i++) s += a[t * n + i];
  out[t] = s;
}
__global__ void __launch_bounds__((128), 4) kp(const float *a, float *out, int n) {
  int t = blockIdx.x * 128 + threadIdx.x;
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < n; i++) s += a[t * n + i];
  out[t] = s;
}
int main() { float *a, *o; kt<256><<<4, 256>>>(a, o, 16); km<<<4, BS>>>(a, o, 16); kp<<<4, 128>>>(a, o, 16); }
