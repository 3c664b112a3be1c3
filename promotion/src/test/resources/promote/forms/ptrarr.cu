__global__ void K(int* a, int* b, int n, int t, int acc)
{
    int x = a[t];
#pragma klap overlap
    int* bufs[2] = {a, b};
    if (threadIdx.x == 0) bufs[0][t + 1] = x + acc;
    __syncthreads();
    if (threadIdx.x == 0 && t + 1 < n) K<<<1, 64>>>(a, b, n, t + 1, acc + 1);
}
