// inferred max reduction: int v updated with CUDA's max(int, unsigned), an unsigned comparison;
// each member starts from Max::identity<int>() = INT_MIN, which max(int, unsigned) sees as 2^31
__global__ void k(const unsigned *cnt, int *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int best = 0;
#pragma np parallel for
  for (int i = 0; i < 64; i++) best = max(best, cnt[t * 64 + i]);
  out[t] = best;          // original: the largest count (e.g. 3); transformed: 0 (see the report)
}
int main() { unsigned *c; int *o; k<<<4, 128>>>(c, o); }
