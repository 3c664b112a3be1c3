__global__ void K(int* out, int n, int t, int acc)
{
    int tid = threadIdx.x;
    out[t * blockDim.x + tid] = acc;
    {
        int tid = threadIdx.x % 32;          // lane id, shadows the outer tid
        if (tid == 0 && t + 1 < n)           // one launch per WARP in the original
            K<<<1, blockDim.x>>>(out, n, t + 1, acc + 1);
    }
}
