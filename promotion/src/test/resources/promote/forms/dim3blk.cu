__global__ void K(int* out, int n, int t, dim3 bs, int acc)
{
    if (threadIdx.x == 0) atomicAdd(&out[t], acc);
    if (threadIdx.x == 0 && t + 1 < n) K<<<1, bs>>>(out, n, t + 1, bs, acc + 1);
}
int main() { K<<<1, 32>>>(nullptr, 4, 0, dim3(32, 4), 0); }
