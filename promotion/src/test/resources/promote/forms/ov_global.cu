__device__ int g_last;               // scalar device global
__global__ void K(int* out, int n, int t, int acc)
{
    int seen = g_last;               // independent part reads g_last
    __syncthreads();
#pragma klap overlap
    if (threadIdx.x == 0) g_last = t;    // dependent prologue writes it before the launch
    __syncthreads();
    if (threadIdx.x == 0 && t + 1 < n)
        K<<<1, blockDim.x>>>(out, n, t + 1, acc + seen);
    out[t] = acc;
}
