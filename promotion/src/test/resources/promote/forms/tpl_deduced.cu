// A template kernel that launches its own instantiation without template arguments: T* a and
// U* const out are passed the kernel's own T* and U* (plus an offset), so C++ deduces <T, U>
// exactly, for every T and U (review 2026-11-29). Explicitly instantiated with const T.
template <typename T, typename U>
__global__ void scan(T* a, U* const out, int n, int t, U acc)
{
    U x = (U)a[threadIdx.x];
#pragma klap overlap
    out[t * 32 + threadIdx.x] = x + acc;
    __syncthreads();
    if (threadIdx.x == 0 && t + 1 < n) scan<<<1, 32>>>(a + 32, out, n, t + 1, acc + x);
}
template __global__ void scan<const float, double>(const float*, double* const, int, int, double);
template __global__ void scan<int, long long>(int*, long long* const, int, int, long long);
