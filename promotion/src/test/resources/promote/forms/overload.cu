__global__ void step(int* out, int n, int t) { if (threadIdx.x == 0) out[t] = -1; }
__global__ void step(int* out, int n, long long t)
{
    if (threadIdx.x == 0) out[t] = 1;
    if (threadIdx.x == 0 && t + 1 < n) step<<<1, blockDim.x>>>(out, n, (int)(t + 1));
}
