__global__ void K(int* buf, int* cnt, int n, int t, int acc)
{
    int x = buf[t];
#pragma klap overlap
    __syncthreads();
    if (threadIdx.x == 0 && t + 1 < n) K<<<1, 64>>>(buf, cnt, n, t + 1, atomicExch(&buf[t + 1], x + acc));
}
