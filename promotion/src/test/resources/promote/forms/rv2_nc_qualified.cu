// Review 2026-11-27 (D F4): ld.global.cs.nc and ld.global.nc.L1::evict_last are non-coherent loads too.
__global__ void K3(const int* c, int* o, int t, int n) {
    if (threadIdx.x == 0) {
        int v; asm volatile("ld.global.cs.nc.s32 %0, [%1];" : "=r"(v) : "l"(c + t));
        o[t] = v;
        if (t + 1 < n) K3<<<1, 32>>>(c, o, t + 1, n);
    }
}
__global__ void K5(const int* c, int* o, int t, int n) {
    if (threadIdx.x == 0) {
        int v; asm volatile("ld.global.nc.L1::evict_last.s32 %0, [%1];" : "=r"(v) : "l"(c + t));
        o[t] = v;
        if (t + 1 < n) K5<<<1, 32>>>(c, o, t + 1, n);
    }
}
int main() { return 0; }
