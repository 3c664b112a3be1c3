// klap --promote=P: rv4_sizeof_scope with 'struct [[maybe_unused]] Rec' (also 'struct alignas(16) Rec'):
// the struct regex wants the name right after 'struct'.
#include <cstdio>
struct Rec { int key; };                       // file scope: 4 bytes
__global__ void K(const char* rec, int* out, int i, int n) {
  struct [[maybe_unused]] Rec { int key, x, y, z; };
  const Rec* r = reinterpret_cast<const Rec*>(rec);
  if (threadIdx.x == 0) out[i] = r->key;
  if (threadIdx.x == 0 && i + 1 < n) K<<<1, 32>>>(rec + sizeof(Rec), out, i + 1, n);
}
int main() {
  const int n = 8; int h[4 * n]; for (int i = 0; i < 4 * n; ++i) h[i] = i;
  int *rec, *out; cudaMalloc(&rec, sizeof h); cudaMalloc(&out, n * sizeof(int));
  cudaMemcpy(rec, h, sizeof h, cudaMemcpyHostToDevice);
  K<<<1, 32>>>((const char*)rec, out, 0, n); cudaDeviceSynchronize();
  int o[n]; cudaMemcpy(o, out, sizeof o, cudaMemcpyDeviceToHost);
  bool ok = true; for (int i = 0; i < n; ++i) ok &= o[i] == 4 * i;   // key of record i
  printf("%s\n", ok ? "PASS" : "FAIL");
}
