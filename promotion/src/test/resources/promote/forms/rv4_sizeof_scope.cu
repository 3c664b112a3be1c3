// klap --promote=P: the induction step `sizeof(Rec)` names the kernel's own local struct (16 bytes).
// klap evaluates the successor's argument at the start of the body (the early launch), where `Rec`
// still names the file-scope struct (4 bytes): the chain walks 4-byte steps instead of 16-byte ones.
#include <cstdio>
struct Rec { int a; };                       // file scope: 4 bytes
__global__ void K(const char* rec, int* out, int i, int n) {
  struct Rec { int key, x, y, z; };          // this kernel's record: 16 bytes
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
