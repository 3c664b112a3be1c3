__global__ void K(int* buf, int* out, int n, int t, int acc)
{
    int x = buf[t * 64 + threadIdx.x];
#pragma klap overlap
    __shared__ int* dst;
    if (threadIdx.x == 0) dst = buf + (t + 1) * 64;
    __syncthreads();
    dst[threadIdx.x] = x + acc;
    __syncthreads();
    if (threadIdx.x == 0 && t + 1 < n) K<<<1, 64>>>(buf, out, n, t + 1, acc + 1);
    out[t] = x;
}
