__device__ int g_buf[1024];
__device__ void put(int i, int v) { g_buf[i] = v; }
__global__ void K(int* out, int n, int t, int acc)
{
    int x = g_buf[threadIdx.x];
#pragma klap overlap
    put(threadIdx.x, x + acc);
    __syncthreads();
    if (threadIdx.x == 0 && t + 1 < n) K<<<1, 64>>>(out, n, t + 1, acc + 1);
    out[t] = x;
}
