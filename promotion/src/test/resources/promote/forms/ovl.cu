__global__ void K(int* o, int n, long t);   // other overload, defined elsewhere
__global__ void K(int* o, int n, int t) {
    o[t] = t;
    if (threadIdx.x == 0 && t + 1 < n) K<<<1, 64>>>(o, n, t + 1);
}
