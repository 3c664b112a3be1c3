// klap --promote=P|PA: an induction step `sizeof(r)` of a local variable r: klap accepts any sizeof
// as invariant, evaluates the step at the start of the body (before r is declared) and in
// K_klap_pro (where r does not exist): nvcc rejects the output ("identifier r is undefined").
struct Rec { int a, b, c; };
__global__ void K(const char* base, int* out, int n) {
  Rec r = *reinterpret_cast<const Rec*>(base);
  if (threadIdx.x == 0) out[n] = r.a;
  if (threadIdx.x == 0 && n > 0) K<<<1, 32>>>(base + sizeof(r), out, n - 1);
}
