// Shape "stream-event" (found by review, 2026-11-27): each thread creates two streams on the
// device, launches a producer into the first, records an event into it, makes the second stream
// wait on the event and launches a consumer into the second. klap sent the producer's aggregated
// launch into the block's NULL stream (its stream differs between threads), so the event recorded
// nothing and the consumer could run before its producer. klap now leaves such a launch as written
// (warning stream-ordered-use). The second kernel launches both into one created stream, with no
// event: that launch pair is aggregated into the block's NULL stream, which keeps each thread's order.
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define BLOCK 64

__global__ void produce(int* buf, int base) {
  for (volatile int k = 0; k < 2000; k++) {
  }  // a slow producer: a consumer that overtakes it reads zeros
  buf[threadIdx.x] = base + threadIdx.x + 1;
}

__global__ void consume(const int* buf, int* out) { out[threadIdx.x] = buf[threadIdx.x] * 2; }

__global__ void viaEvent(int* buf, int* out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  cudaStream_t s1, s2;
  cudaEvent_t ev;
  cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);
  cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
  cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
  produce<<<1, 32, 0, s1>>>(buf + 32 * t, t);
  cudaEventRecord(ev, s1);
  cudaStreamWaitEvent(s2, ev, 0);
  consume<<<1, 32, 0, s2>>>(buf + 32 * t, out + 32 * t);
  cudaEventDestroy(ev);
  cudaStreamDestroy(s1);
  cudaStreamDestroy(s2);
}

__global__ void oneStream(int* buf, int* out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  produce<<<1, 32, 0, s>>>(buf + 32 * t, t);
  consume<<<1, 32, 0, s>>>(buf + 32 * t, out + 32 * t);
  cudaStreamDestroy(s);
}

int main() {
  const int blocks = 2, n = blocks * BLOCK * 32;
  std::vector<int> got(2 * n), expected(2 * n);
  for (int i = 0; i < n; ++i) expected[i] = expected[n + i] = 2 * (i / 32 + i % 32 + 1);
  int *buf, *out;
  cudaMalloc(&buf, sizeof(int) * 2 * n);
  cudaMalloc(&out, sizeof(int) * 2 * n);
  cudaMemset(buf, 0, sizeof(int) * 2 * n);
  cudaMemset(out, 0, sizeof(int) * 2 * n);
  viaEvent<<<blocks, BLOCK>>>(buf, out);
  oneStream<<<blocks, BLOCK>>>(buf + n, out + n);
  cudaError_t err = cudaGetLastError();
  if (err == cudaSuccess) err = cudaDeviceSynchronize();
  if (err != cudaSuccess) { std::printf("FAIL cuda %s\n", cudaGetErrorString(err)); return 1; }
  cudaMemcpy(got.data(), out, sizeof(int) * 2 * n, cudaMemcpyDeviceToHost);
  unsigned h = 2166136261u; int bad = -1;
  for (int i = 0; i < 2 * n; ++i) { h = (h ^ (unsigned)got[i]) * 16777619u; if (bad < 0 && got[i] != expected[i]) bad = i; }
  std::printf("RESULT %08x\n", h);
  if (bad >= 0) { std::printf("FAIL stream_event: slot %d has %d, expected %d\n", bad, got[bad], expected[bad]); return 1; }
  std::printf("PASS stream_event\n");
  return 0;
}
