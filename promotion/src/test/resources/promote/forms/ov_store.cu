#include <cub/cub.cuh>
using Store = cub::BlockStore<int, 128, 1>;
__global__ void K(int* buf, int n, int t, int acc)
{
    __shared__ Store::TempStorage ts;
    int x = buf[t * 128 + threadIdx.x];     // independent part reads tile t
    __syncthreads();
#pragma klap overlap
    int item[1] = {acc + x};
    Store(ts).Store(buf + (t + 1) * 128, item);   // dependent prologue writes tile t+1
    __syncthreads();
    if (threadIdx.x == 0 && t + 1 < n)
        K<<<1, blockDim.x>>>(buf, n, t + 1, acc + x);
}
