#include <cuda/atomic>
__global__ void K(int* buf, int n, int t, int acc)
{
    int x = buf[t];
#pragma klap overlap
    if (threadIdx.x == 0) cuda::atomic_ref<int, cuda::thread_scope_device>(buf[t + 1]).store(x + acc);
    __syncthreads();
    if (threadIdx.x == 0 && t + 1 < n) K<<<1, 64>>>(buf, n, t + 1, acc + 1);
}
