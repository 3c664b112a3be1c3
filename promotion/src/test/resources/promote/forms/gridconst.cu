struct Params { int* out; int n; };
__global__ void K(const __grid_constant__ Params p, int t, int acc)
{
    if (threadIdx.x == 0) p.out[t] = acc;
    if (threadIdx.x == 0 && t + 1 < p.n) K<<<1, blockDim.x>>>(p, t + 1, acc + 1);
}
