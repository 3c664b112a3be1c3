#pragma once
// sum of v over threads 0..n-1 of the block; every live thread of the block must call it
__device__ inline int block_sum(int v, int n) {
  __shared__ int s[1024];
  s[threadIdx.x] = v;
  __syncthreads();
  int t = 0;
  for (int k = 0; k < n; ++k) t += s[k];
  __syncthreads();
  return t;
}
