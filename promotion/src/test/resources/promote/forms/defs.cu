__global__ void K(int* out, int n, int t);
__global__ void K(int* out, int n, int t = 0)
{
    out[t] = t;
    if (threadIdx.x == 0 && t + 1 < n) K<<<1, 64>>>(out, n, t + 1);
}
void host(int* d) { K<<<1, 64>>>(d, 10); }
