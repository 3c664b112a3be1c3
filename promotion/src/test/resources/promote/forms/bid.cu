#define BID (blockIdx.x)
struct Tile { int* base; __device__ int* row() const { return base + blockIdx.x * 64; } };
struct Op { __device__ void operator()(int* o, int v) const { o[blockIdx.x] = v; } };
__device__ int bid_macro() { return BID; }
__device__ unsigned ctaid() { unsigned r; asm("mov.u32 %0, %%ctaid.x;" : "=r"(r)); return r; }
template <class T> __device__ T tbid() { return (T)blockIdx.x; }
__global__ void K1(Tile s, int n, int t) {
    s.row()[threadIdx.x] = t;
    if (threadIdx.x == 0 && t + 1 < n) K1<<<1, 64>>>(s, n, t + 1);
}
__global__ void K2(int* o, int n, int t) {
    Op{}(o, t);
    if (threadIdx.x == 0 && t + 1 < n) K2<<<1, 64>>>(o, n, t + 1);
}
__global__ void K3(int* o, int n, int t) {
    o[bid_macro()] = t;
    if (threadIdx.x == 0 && t + 1 < n) K3<<<1, 64>>>(o, n, t + 1);
}
__global__ void K4(int* o, int n, int t) {
    o[ctaid()] = t;
    if (threadIdx.x == 0 && t + 1 < n) K4<<<1, 64>>>(o, n, t + 1);
}
__global__ void K5(int* o, int n, int t) {
    o[tbid<int>()] = t;
    if (threadIdx.x == 0 && t + 1 < n) K5<<<1, 64>>>(o, n, t + 1);
}
__global__ void K6(int* o, int n, int t) {
    unsigned r; asm("mov.u32 %0, %%ctaid.x;" : "=r"(r));
    o[r] = t;
    if (threadIdx.x == 0 && t + 1 < n) K6<<<1, 64>>>(o, n, t + 1);
}
