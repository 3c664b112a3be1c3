#include <cstdio>
// 16x16 tiles of a matrix, one tile row per link; a 2-D block, thread (0,0) launches
__global__ void K(float* m, int rows, int cols, int r)
{
    int x = threadIdx.x, y = threadIdx.y;
    for (int c = x; c < cols; c += blockDim.x)
        if (r * 16 + y < rows) m[(r * 16 + y) * cols + c] *= 2.0f;
    if (threadIdx.x == 0 && threadIdx.y == 0 && (r + 1) * 16 < rows)
        K<<<1, blockDim>>>(m, rows, cols, r + 1);
}
int main() {
    const int rows = 64, cols = 32; float h[rows * cols]; for (int i = 0; i < rows * cols; ++i) h[i] = i;
    float* d; cudaMalloc(&d, sizeof h); cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
    K<<<1, dim3(16, 16)>>>(d, rows, cols, 0);
    cudaError_t e = cudaDeviceSynchronize();
    float o[rows * cols]; cudaMemcpy(o, d, sizeof o, cudaMemcpyDeviceToHost);
    bool ok = e == cudaSuccess; for (int i = 0; i < rows * cols; ++i) ok &= o[i] == 2.0f * i;
    printf("%s (%s)\n", ok ? "PASS" : "FAIL", cudaGetErrorString(e));
}
