const long double STEP = 1.5;
__global__ void K(int* out, int n, int t)
{
    out[t] = t;
    if (threadIdx.x == 0 && t + 1 < n) K<<<1, 64>>>(out, n, t + STEP);
}
