// reduction(&&:ok) whose operand has a side effect: the original stops calling claim() once ok is
// false (short circuit); every member restarts from true, so claim() runs in more iterations
__device__ bool claim(int *slots, int i) { return atomicCAS(&slots[i], 0, 1) == 0; }
__global__ void k(int *slots, int *out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  bool ok = true;
#pragma np parallel for reduction(&&:ok)
  for (int i = 0; i < n; i++) ok = ok && claim(slots, t * n + i);
  out[t] = ok;
}
int main() { int *s, *o; k<<<4, 128>>>(s, o, 16); }
