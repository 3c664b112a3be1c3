__device__ int g_val;
__device__ int get() { return g_val; }
__global__ void K(int* out, int n, int t, int acc)
{
    int x = get();
#pragma klap overlap
    if (threadIdx.x == 0) g_val = x + acc;
    __syncthreads();
    if (threadIdx.x == 0 && t + 1 < n) K<<<1, 64>>>(out, n, t + 1, acc + 1);
    out[t] = x;
}
