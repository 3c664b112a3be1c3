// Review 2026-11-27 (D F1): a worker launched from a lambda before the self-launch; the successor waits for it in CDP.
__global__ void work(int* slot, int v) { if (threadIdx.x == 0) *slot = v; }
__global__ void K(int* slot, int* out, int t, int n) {
    if (threadIdx.x == 0) {
        out[t] = *slot;
        if (t + 1 < n) {
            auto prep = [&](int v) { work<<<1, 32>>>(slot, v); };
            prep(100 + t);
            K<<<1, 32>>>(slot, out, t + 1, n);
        }
    }
}
int main() { return 0; }
