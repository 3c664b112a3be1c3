// the array size text is evaluated again in the host function's scope, where 'N' is a different variable
const int N = 64;
__global__ void k(const float *a, float *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float tmp[N];
#pragma np parallel for
  for (int i = 0; i < N; i++) tmp[(i * 5) % N] = a[t * N + i];
  float s = 0;
  for (int j = 0; j < N; j++) s += tmp[j] * j;
  out[t] = s;
}
int main() {
  int N = 4;                    // e.g. a problem size read from the command line
  float *a, *o;
  k<<<N, 128>>>(a, o);
}
