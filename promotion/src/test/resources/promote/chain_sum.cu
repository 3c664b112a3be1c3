// A chain of single-block kernels (KLAP Fig. 5a): each instance sums its tile, launches itself for
// the next tile with the running total (postponed), then writes its tile's inclusive prefix sums.
// Self-checking: prints PASS or FAIL. Options: -t tiles (default 25, the most CDP can nest).
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

#define TILE 256

__global__ void chainSum(const int* in, long long* out, int ntiles, int tile, long long before, int* err)
{
    __shared__ long long part[TILE];
    const int v = in[tile * TILE + threadIdx.x];
    part[threadIdx.x] = v;
    __syncthreads();
    for (int s = 1; s < TILE; s *= 2) {
        long long x = threadIdx.x >= s ? part[threadIdx.x - s] : 0;
        __syncthreads();
        part[threadIdx.x] += x;
        __syncthreads();
    }
#pragma klap overlap
    const long long total = before + part[TILE - 1];
    if (threadIdx.x == 0 && tile + 1 < ntiles) {
        chainSum<<<1, blockDim.x>>>(in, out, ntiles, tile + 1, total, err);
        if (cudaGetLastError() != cudaSuccess) atomicExch(err, 1);
    }
    out[tile * TILE + threadIdx.x] = before + part[threadIdx.x];
}

int main(int argc, char** argv)
{
    int ntiles = 25;
    for (int i = 1; i + 1 < argc; ++i)
        if (std::string_view(argv[i]) == "-t") ntiles = std::atoi(argv[i + 1]);
    const size_t n = static_cast<size_t>(ntiles) * TILE;
    std::vector<int> h(n);
    for (size_t i = 0; i < n; ++i) h[i] = static_cast<int>((i * 2654435761u) % 1000) - 500;
    int* in; long long* out; int* err;
    cudaMalloc(&in, n * sizeof(int));
    cudaMalloc(&out, n * sizeof(long long));
    cudaMalloc(&err, sizeof(int));
    cudaMemset(err, 0, sizeof(int));
    cudaMemcpy(in, h.data(), n * sizeof(int), cudaMemcpyHostToDevice);
    chainSum<<<1, TILE>>>(in, out, ntiles, 0, 0, err);
    cudaError_t e = cudaDeviceSynchronize();
    std::vector<long long> got(n);
    int herr = 0;
    cudaMemcpy(got.data(), out, n * sizeof(long long), cudaMemcpyDeviceToHost);
    cudaMemcpy(&herr, err, sizeof(int), cudaMemcpyDeviceToHost);
    if (e != cudaSuccess || herr) { std::printf("FAIL chain_sum: %s\n", e != cudaSuccess ? cudaGetErrorString(e) : "device launch failed"); return 1; }
    long long acc = 0;
    for (size_t i = 0; i < n; ++i) {
        acc += h[i];
        if (got[i] != acc) { std::printf("FAIL chain_sum: out[%zu] = %lld, expected %lld\n", i, got[i], acc); return 1; }
    }
    std::printf("PASS chain_sum tiles=%d\n", ntiles);
    return 0;
}
