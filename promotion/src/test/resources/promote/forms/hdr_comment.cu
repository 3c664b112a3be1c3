__global__ void K(int* out, int n, int t, int acc)  // one tile per grid
{
    if (threadIdx.x == 0) out[t] = acc;
    if (threadIdx.x == 0 && t + 1 < n) K<<<1, blockDim.x>>>(out, n, t + 1, acc + out[t]);
}
