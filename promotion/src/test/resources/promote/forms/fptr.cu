typedef int (*op_t)(int);
__device__ int inc(int x) { return x + 1; }
__global__ void K(int* out, int n, int t, int (*f)(int))
{
    out[t] = f(t);
    if (threadIdx.x == 0 && t + 1 < n) K<<<1, 64>>>(out, n, t + 1, f);
}
