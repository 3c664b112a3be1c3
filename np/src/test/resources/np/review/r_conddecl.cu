// a variable declared in an if condition is unknown to NpPlanner.Scopes: a write to it is taken for a store
__global__ void k(const int *cnt, const float *a, float *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0;
  if (int n = cnt[t]) {
    n = n < 64 ? n : 64;             // clamp: "store" -> master only
#pragma np parallel for reduction(+:s)
    for (int i = 0; i < n; i++) s += a[t * 64 + i];
  }
  out[t] = s;
}
int main() { int *c; float *a, *o; k<<<4, 128>>>(c, a, o); }
