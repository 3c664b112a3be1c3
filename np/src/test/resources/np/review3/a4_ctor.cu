// review 3 A4 (p14_ctor.cu): constructors, destructors and default member initializers run in every member of a group,
// outside the kernel text where klap shadows threadIdx; k6 (pure, index-free classes) is transformed
struct Tid {
  unsigned x;
  __device__ Tid() : x(blockIdx.x * blockDim.x + threadIdx.x) {}
};
struct Dflt { unsigned x = threadIdx.x; };
struct Cnt { int v; __device__ Cnt(int *c) : v(0) { atomicAdd(c, 1); } };
struct Dtor { int v; __device__ ~Dtor() { printf("bye\n"); } };
struct Ok { float s; int n; __device__ Ok() : s(0.0f), n(fminf(1.0f, 2.0f)) {} };
struct Ok2 { float s = 0.0f; Ok inner; };
typedef struct { float a, b; } Pair;
__global__ void k1(const float *a, float *out, int n) {
  Tid me;
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < n; i++) s += a[me.x * n + i];
  out[me.x] = s;
}
__global__ void k2(const float *a, float *out, int n) {
  Dflt me;
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < n; i++) s += a[me.x * n + i];
  out[me.x] = s;
}
__global__ void k3(const float *a, float *out, int n, int *c) {
  Cnt me(c);
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < n; i++) s += a[i];
  out[threadIdx.x] = s + me.v;
}
__global__ void k4(const float *a, float *out, int n) {
  Dtor me;
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < n; i++) s += a[i];
  out[threadIdx.x] = s;
}
__global__ void k5(const float *a, float *out, int n) {
  float s = Tid().x;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < n; i++) s += a[i];
  out[threadIdx.x] = s;
}
__global__ void k6(const float *a, float *out, int n) {
  Ok2 o; Pair p; float4 f;
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < n; i++) s += a[i];
  out[threadIdx.x] = s + o.s + p.a + f.x;
}
__device__ unsigned helper() { Tid t; return t.x; }
__global__ void k7(const float *a, float *out, int n) {
  float s = 0;
  unsigned h = helper();
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < n; i++) s += a[i];
  out[h] = s;
}
int main() { float *a, *o; int *c; k1<<<4, 128>>>(a, o, 16); k2<<<4, 128>>>(a, o, 16); k3<<<4, 128>>>(a, o, 16, c); k4<<<4, 128>>>(a, o, 16); k5<<<4, 128>>>(a, o, 16); k6<<<4, 128>>>(a, o, 16); k7<<<4, 128>>>(a, o, 16); }
