constexpr int STEP = 1;
__global__ void K(int* out, int n, int t, int acc)
{
    constexpr int STEP = 2;
    out[t] = acc;
    if (threadIdx.x == 0 && t + STEP < n) {
        K<<<1, blockDim.x>>>(out, n, t + STEP, acc + t);
    }
}
int main() { K<<<1, 128>>>(nullptr, 10, 0, 0); return 0; }
