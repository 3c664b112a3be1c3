struct Args { int* data; };
__global__ void K(Args a, int n, int t, int acc)
{
    int x = a.data[t];              // independent part reads a.data[t]
    __syncthreads();
#pragma klap overlap
    if (threadIdx.x == 0) a.data[t + 1] += x;   // dependent prologue writes a.data[t+1]
    __syncthreads();
    if (threadIdx.x == 0 && t + 1 < n)
        K<<<1, blockDim.x>>>(a, n, t + 1, acc + x);
}
