__device__ void put(int* p, int v) { *p = v; }
__global__ void K(int* buf, int n, int t, int acc)
{
    int x = buf[t];                 // independent part reads buf[t]
    __syncthreads();
#pragma klap overlap
    if (threadIdx.x == 0) put(buf + t + 1, acc + x);   // dependent prologue writes buf[t+1] via a call
    __syncthreads();
    if (threadIdx.x == 0 && t + 1 < n)
        K<<<1, blockDim.x>>>(buf, n, t + 1, acc + x);
}
