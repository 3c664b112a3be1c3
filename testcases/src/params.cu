// params: a child kernel whose parameters take every declarator form C++ allows a kernel.
//
// Each thread t of paramsParent launches one child grid of 4 threads that sums what it reads
// through its parameters into out[t]. The child's parameters are declared as an array
// (`const int row[4]`, adjusted to a pointer, C++ [dcl.fct]/5), an array of arrays
// (`int m[][4]`), a function (`int g(int)`, adjusted to a function pointer), a function
// pointer, a pointer to an array, unnamed ones (`int`, `const float[2]`), a macro type, a
// `__restrict__` pointer, `[[maybe_unused]]`, a `__grid_constant__` struct and a default
// argument. klap copies each parameter into a per-parent-thread record (or passes it as one
// scalar), which must declare the adjusted type: `int row[4];` as a record member would be an
// array that cannot be initialized from the argument. Per-thread and uniform arguments are mixed
// so that both the record and the scalar path carry each form.
//
// Options: -n parent threads (4096)  -b parent block (128)

#include "common/check.cuh"

#include <vector>

#define REAL float

struct Coeffs {
    int c[4];
};

__device__ int twice(int x) { return 2 * x; }
__device__ int thrice(int x) { return 3 * x; }

__global__ void paramsChild(int *out, const int row[4], int m[][4], int g(int), int (*h)(int),
                            int (*pa)[3], int, const REAL *__restrict__ w, const float[2],
                            [[maybe_unused]] int unused, const __grid_constant__ Coeffs k, int t, int d = 7) {
    int i = threadIdx.x;
    int v = row[i] + m[t % 2][i] + g(i) + h(t) + (*pa)[i % 3] + (int)w[i] + k.c[i] + d;
    atomicAdd(out + t, v);
}

__global__ void paramsParent(int *out, const int *rows, int (*m)[4], int (*pa)[3], const REAL *w, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;
    Coeffs k;
    for (int i = 0; i < 4; ++i) k.c[i] = t + i;
    if (t % 3 == 0) {
        paramsChild<<<1, 4>>>(out, rows + 4 * (t % 8), m, twice, thrice, pa, t, w, nullptr, 0, k, t);
    } else {
        paramsChild<<<1, 4>>>(out, rows + 4 * (t % 8), m, thrice, twice, pa, -t, w, nullptr, 1, k, t, t % 5);
    }
}

int main(int argc, char **argv) {
    tc::g_name = "params";
    const int n = (int)tc::argInt(argc, argv, "-n", 4096);
    const int block = (int)tc::argInt(argc, argv, "-b", 128);
    if (n < 1 || n > (1 << 22) || block < 1 || block > 1024)
        return tc::report(false, 0, "bad options (need 1<=n<=2^22, 1<=b<=1024)");
    tc::ensurePendingLaunches(n + 1024);
    std::vector<int> rows(32), m(8), pa(3);
    std::vector<float> w(4);
    for (int i = 0; i < 32; ++i) rows[i] = 5 * i - 40;
    for (int i = 0; i < 8; ++i) m[i] = 100 + i * i;
    for (int i = 0; i < 3; ++i) pa[i] = 1000 * (i + 1);
    for (int i = 0; i < 4; ++i) w[i] = 0.25f + 10 * i;
    int *dOut = nullptr, *dRows = nullptr, *dM = nullptr, *dPa = nullptr;
    float *dW = nullptr;
    CUDA_CHECK(cudaMalloc(&dOut, sizeof(int) * n));
    CUDA_CHECK(cudaMalloc(&dRows, sizeof(int) * 32));
    CUDA_CHECK(cudaMalloc(&dM, sizeof(int) * 8));
    CUDA_CHECK(cudaMalloc(&dPa, sizeof(int) * 3));
    CUDA_CHECK(cudaMalloc(&dW, sizeof(float) * 4));
    CUDA_CHECK(cudaMemset(dOut, 0, sizeof(int) * n));
    CUDA_CHECK(cudaMemcpy(dRows, rows.data(), sizeof(int) * 32, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dM, m.data(), sizeof(int) * 8, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dPa, pa.data(), sizeof(int) * 3, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dW, w.data(), sizeof(float) * 4, cudaMemcpyHostToDevice));
    tc::GpuTimer timer;
    timer.start();
    paramsParent<<<(n + block - 1) / block, block>>>(dOut, dRows, (int (*)[4])dM, (int (*)[3])dPa, dW, n);
    CUDA_CHECK_LAUNCH();
    timer.stop();
    float ms = timer.ms();
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<int> out(n);
    CUDA_CHECK(cudaMemcpy(out.data(), dOut, sizeof(int) * n, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(dOut));
    CUDA_CHECK(cudaFree(dRows));
    CUDA_CHECK(cudaFree(dM));
    CUDA_CHECK(cudaFree(dPa));
    CUDA_CHECK(cudaFree(dW));
    for (int t = 0; t < n; ++t) {
        bool first = t % 3 == 0;
        int d = first ? 7 : t % 5;
        int want = 0;
        for (int i = 0; i < 4; ++i) {
            int gi = first ? 2 * i : 3 * i;
            int ht = first ? 3 * t : 2 * t;
            want += rows[4 * (t % 8) + i] + m[4 * (t % 2) + i] + gi + ht + pa[i % 3] + (int)w[i] + (t + i) + d;
        }
        if (out[t] != want) {
            char msg[160];
            std::snprintf(msg, sizeof msg, "out[%d] = %d, want %d", t, out[t], want);
            return tc::report(false, ms, msg);
        }
    }
    return tc::report(true, ms, "");
}
