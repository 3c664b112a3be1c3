// segments: random segment lengths, filled on the device, checked on the device.
// Prints "PASS segments" or "FAIL segments: ..." and exits 0 or 1.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "segments.h"

int main(int argc, char **argv) {
    int n = argc > 1 ? std::atoi(argv[1]) : 10000;
    std::vector<int> offsets(n + 1, 0);
    unsigned x = 12345;
    for (int s = 0; s < n; ++s) {
        x = x * 1664525u + 1013904223u;
        offsets[s + 1] = offsets[s] + (int)((x >> 8) % 200);  // 0 .. 199 elements
    }
    int *d_offsets = nullptr, *d_out = nullptr;
    if (cudaMalloc(&d_offsets, (n + 1) * sizeof(int)) != cudaSuccess ||
        cudaMalloc(&d_out, (offsets[n] + 1) * sizeof(int)) != cudaSuccess) {
        std::printf("FAIL segments: cudaMalloc\n");
        return 1;
    }
    cudaMemcpy(d_offsets, offsets.data(), (n + 1) * sizeof(int), cudaMemcpyHostToDevice);
    cudaError_t e = fill_segments(d_offsets, n, d_out);
    if (e != cudaSuccess) {
        std::printf("FAIL segments: %s\n", cudaGetErrorString(e));
        return 1;
    }
    long long wrong = count_wrong(d_offsets, n, d_out);
    if (wrong != 0) {
        std::printf("FAIL segments: %lld wrong elements\n", wrong);
        return 1;
    }
    std::printf("PASS segments (%d segments, %d elements)\n", n, offsets[n]);
    return 0;
}
