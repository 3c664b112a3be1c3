#include <cstdio>
// running carry through a buffer read via a texture object: link t reads carry[t], which link t-1 wrote before launching it
__global__ void K(cudaTextureObject_t carryTex, int* carry, int* data, int n, int t)
{
    __shared__ int c;
    if (threadIdx.x == 0) c = (t == 0) ? 0 : tex1Dfetch<int>(carryTex, t);
    __syncthreads();
    int i = t * 32 + threadIdx.x;
    __shared__ int s[32]; s[threadIdx.x] = i < n ? data[i] : 0; __syncthreads();
    if (threadIdx.x == 0) { for (int k = 1; k < 32; ++k) s[k] += s[k - 1]; carry[t + 1] = c + s[31]; }
    __syncthreads();
    if (i < n) data[i] = c + s[threadIdx.x];
    if (threadIdx.x == 0 && (t + 1) * 32 < n) K<<<1, 32>>>(carryTex, carry, data, n, t + 1);
}
int main() {
    const int n = 320; int h[n]; for (int i = 0; i < n; ++i) h[i] = 1;
    int *d, *carry; cudaMalloc(&d, sizeof h); cudaMalloc(&carry, 64 * sizeof(int)); cudaMemset(carry, 0, 64 * sizeof(int));
    cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
    cudaResourceDesc rd = {}; rd.resType = cudaResourceTypeLinear; rd.res.linear.devPtr = carry;
    rd.res.linear.desc = cudaCreateChannelDesc<int>(); rd.res.linear.sizeInBytes = 64 * sizeof(int);
    cudaTextureDesc td = {}; td.readMode = cudaReadModeElementType; cudaTextureObject_t tex; cudaCreateTextureObject(&tex, &rd, &td, nullptr);
    K<<<1, 32>>>(tex, carry, d, n, 0); cudaDeviceSynchronize();
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    bool ok = true; for (int i = 0; i < n; ++i) ok &= h[i] == i + 1;
    printf("%s\n", ok ? "PASS" : "FAIL");
}
