// kernel granularity: the CDP2 idiom that replaces cudaDeviceSynchronize -- the next step of an
// iteration is tail-launched, so it starts after every child of the current step (also the
// fire-and-forget ones). klap turns the tail launch of the recursive kernel into a launch into the
// last block's NULL stream ("klap-stream-serialized" note), which is not ordered after the
// fire-and-forget children: the next step reads their results too early.
#include <cstdio>
#define N 64
#define LEVELS 4
__global__ void produce(int* data, int level, int i) {
  long long t0 = clock64(); while (clock64() - t0 < 20000000) { }   // some work (~10 ms)
  data[level * N + i] = level + 1;
}
__global__ void step(int* data, int* bad, int level) {
  int i = threadIdx.x;
  if (level > 0 && data[(level - 1) * N + i] != level) atomicAdd(bad, 1);   // previous step's result
  produce<<<1, 1, 0, cudaStreamFireAndForget>>>(data, level, i);
  if (i == 0 && level + 1 < LEVELS) step<<<1, N, 0, cudaStreamTailLaunch>>>(data, bad, level + 1);
}
int main() {
  int *data, *bad; cudaMalloc(&data, LEVELS * N * sizeof(int)); cudaMalloc(&bad, sizeof(int));
  cudaMemset(data, 0, LEVELS * N * sizeof(int)); cudaMemset(bad, 0, sizeof(int));
  step<<<1, N>>>(data, bad, 0);
  cudaError_t e = cudaDeviceSynchronize();
  int b = -1; cudaMemcpy(&b, bad, sizeof b, cudaMemcpyDeviceToHost);
  printf("%s (%s; %d reads of an unfinished previous step, expected 0)\n", e == cudaSuccess && b == 0 ? "PASS" : "FAIL",
         cudaGetErrorString(e), b);
  return !(e == cudaSuccess && b == 0);
}
