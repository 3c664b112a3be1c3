struct S { int x; };
__global__ void K(int* out, int n, int t, int acc)
{
    if (threadIdx.x == 0) { struct W { int& r; }; W w{t}; w.r = 1; }
    __syncthreads();
    out[t] = acc;
    if (threadIdx.x == 0 && t + 1 < n) K<<<1, blockDim.x>>>(out, n, t + 1, acc + 1);
}
