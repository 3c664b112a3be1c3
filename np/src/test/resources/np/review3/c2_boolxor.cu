// bool b ^= e with an int operand: each step is b = (b ^ e) != 0, which is not associative when
// e can exceed 1; the transform XORs the members' bool partials
__global__ void k(const int *cnt, int *out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  bool odd = false;
#pragma np parallel for
  for (int i = 0; i < n; i++) odd ^= cnt[t * n + i];   // e.g. cnt = {2, 2}: original true, NP (S>=2) false
  out[t] = odd;
}
int main() { int *c, *o; k<<<4, 128>>>(c, o, 16); }
