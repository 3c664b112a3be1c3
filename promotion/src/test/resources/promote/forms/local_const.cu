__global__ void K(int* out, int n, int t, int acc)
{
    const int step = 2;
    const int nb = 128;
    out[t] = acc;
    if (threadIdx.x == 0 && t + step < n) {
        K<<<1, nb>>>(out, n, t + step, acc + t);
    }
}
int main() { K<<<1, 128>>>(nullptr, 10, 0, 0); return 0; }
