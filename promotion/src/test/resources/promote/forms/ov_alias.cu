__global__ void K(int* buf, int n, int t, int acc)
{
    const int* prev = buf;          // a local alias of a parameter
    int x = prev[t];                // independent part reads buf[t] through it
    __syncthreads();
#pragma klap overlap
    if (threadIdx.x == 0) buf[t + 1] = acc + x;    // dependent prologue writes buf[t+1]
    __syncthreads();
    if (threadIdx.x == 0 && t + 1 < n)
        K<<<1, blockDim.x>>>(buf, n, t + 1, acc + x);
}
