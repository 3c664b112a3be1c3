__global__ void K(int* out, int n, int t, float f, int acc)
{
    if (threadIdx.x == 0) out[t] = acc;
    if (threadIdx.x == 0 && t < n) K<<<1, blockDim.x>>>(out, n, t + f, f, acc + 1);
}
