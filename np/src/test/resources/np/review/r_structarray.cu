// a write to an array member of a local struct: privateRoot() gives up at 'acc.v' (not a Name) and
// calls it a memory store, so it runs on the master only; the slaves keep an uninitialized acc.v
struct Coef { float v[4]; };
__global__ void k(const float *w, const float *a, float *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  Coef c;
  for (int j = 0; j < 4; j++) c.v[j] = w[t * 4 + j];     // master only
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < 64; i++) s += c.v[i % 4] * a[t * 64 + i];
  out[t] = s;
}
int main() { float *w, *a, *o; k<<<4, 128>>>(w, a, o); }
// the same in a parallel loop: each member fills its own copy of h.bins for its iterations only,
// then every member (the master's store included) reads a copy that holds 1/S of the values
struct Hist { float bins[64]; };
__global__ void k2(const float *a, float *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  Hist h;
#pragma np parallel for
  for (int i = 0; i < 64; i++) h.bins[i] = a[t * 64 + i] * 2;
  float s = 0;
  for (int j = 0; j < 64; j++) s += h.bins[j] * j;
  out[t] = s;
}
void run2(const float *a, float *o) { k2<<<4, 128>>>(a, o); }
