namespace a { __device__ int step(int x) { return x; } }
struct Cfg { __host__ __device__ int step() const { return 1; } };
__global__ void step(int* o, int n, int t) {
    o[t] = t;
    if (threadIdx.x == 0 && t + 1 < n) step<<<1, 64>>>(o, n, t + 1);
}
