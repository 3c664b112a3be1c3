__global__ void K(int* out, int n, int t, int acc)
{
    if (threadIdx.x == 0) const_cast<int&>(t) += 1;   // skip one tile (e.g. a flag says so)
    __syncthreads();
    out[t] = acc;
    if (threadIdx.x == 0 && t + 1 < n) K<<<1, blockDim.x>>>(out, n, t + 1, acc + 1);
}
