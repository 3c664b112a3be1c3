struct Range { int lo = 0; int hi = 0; };
__global__ void R(Range r, int* out, int n, int t)
{
    out[t] = r.lo;
    if (threadIdx.x == 0 && t + 1 < n) { Range q; q.lo = r.hi; q.hi = r.hi + 5; R<<<1, 64>>>(q, out, n, t + 1); }
}
__global__ void D(dim3 shape, int* out, int n, int t)
{
    out[t] = shape.x;
    if (threadIdx.x == 0 && t + 1 < n) D<<<1, 64>>>(dim3(shape.x + 1), out, n, t + 1);
}
