// a pragma with no statement after it in its block is matched with the next loop of the kernel,
// here a loop whose iterations depend on each other through memory (klap trusts the pragma for memory)
__global__ void k(float *x, int n, int mode) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (mode) {
    x[t * n] = 0;
#pragma np parallel for
  }
  for (int i = 1; i < n; i++) x[t * n + i] += x[t * n + i - 1];   // sequential prefix sum in memory
}
int main() { float *x; k<<<4, 128>>>(x, 16, 0); }
