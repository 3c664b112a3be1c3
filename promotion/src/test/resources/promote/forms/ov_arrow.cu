struct State { int total; };
__global__ void K(State* st, int* out, int n, int t, int acc)
{
    int seen = st->total;          // independent part reads st->total
    __syncthreads();
#pragma klap overlap
    if (threadIdx.x == 0) st->total = t;   // dependent prologue writes it
    __syncthreads();
    if (threadIdx.x == 0 && t + 1 < n)
        K<<<1, blockDim.x>>>(st, out, n, t + 1, acc + seen);
    out[t] = acc;
}
