// klap --promote=P|PA: the chain reads its input through a cub::TexObjInputIterator<int> parameter
// (operator[] is tex1Dfetch, in a CUB header). klap refuses tex1Dfetch called in the file, not a
// texture read hidden behind an operator of a header class. Same staleness argument as ldg_iterator.cu.
#include <cub/cub.cuh>
__global__ void K(cub::TexObjInputIterator<int> in, int* out, int t, int n) {
  int prev = t > 0 ? in[t - 1] : 0;        // tex1Dfetch of link t-1's result
  if (threadIdx.x == 0) out[t] = prev + t;
  if (threadIdx.x == 0 && t + 1 < n) K<<<1, 32>>>(in, out, t + 1, n);
}
