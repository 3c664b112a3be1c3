struct Rec { int v; int w; };
__global__ void K(Rec* recs, int n, int t, int acc)
{
    int x = recs->v;
#pragma klap overlap
    if (threadIdx.x == 0) (*recs).v = x + acc;
    __syncthreads();
    if (threadIdx.x == 0 && t + 1 < n) K<<<1, 64>>>(recs, n, t + 1, acc + 1);
}
