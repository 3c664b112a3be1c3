struct P { int t; int n; int* o; };
__global__ void K(const __grid_constant__ P p) {
    p.o[p.t] = p.t;
    P q = p; q.t += 1;
    if (threadIdx.x == 0 && q.t < p.n) K<<<1, 64>>>(q);
}
