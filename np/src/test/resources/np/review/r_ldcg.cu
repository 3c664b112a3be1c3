// inter-warp: a load through a load intrinsic (__ldcg(p + t)) is not recorded as a load, so the
// master-only store before it is not required to be ordered by a barrier
__global__ void k(int *cnt, const float *a, float *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  cnt[t] = cnt[t] / 2;                 // master only, no barrier after it (inter-warp)
  int n = __ldcg(cnt + t);             // every member: may read the value before the master's store
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < n; i++) s += a[t * 64 + i];
  out[t] = s;
}
int main() { int *c; float *a, *o; k<<<4, 128>>>(c, a, o); }
