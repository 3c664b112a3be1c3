__device__ int gtid() { return blockIdx.x * blockDim.x + threadIdx.x; }
__global__ void K(int* out, int n, int t, int acc)
{
    out[t * blockDim.x + gtid()] = acc;       // single-block kernel: gtid() == threadIdx.x
    if (threadIdx.x == 0 && t + 1 < n)
        K<<<1, blockDim.x>>>(out, n, t + 1, acc + 1);
}
