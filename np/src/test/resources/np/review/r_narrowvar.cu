// a loop variable of a narrow type: 'i += S' wraps around below hi (the original i++ never passes hi)
__global__ void k(const float *a, float *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (unsigned char i = 0; i < 250; i++) s += a[t * 256 + i];
  out[t] = s;
}
int main() { float *a, *o; k<<<4, 128>>>(a, o); }
