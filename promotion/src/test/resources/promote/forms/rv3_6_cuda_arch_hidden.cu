// pr6: code under `#if __CUDA_ARCH__` / `#ifdef __CUDA_ARCH__` is invisible to the promotion
//      analysis: klap parses the host compilation view (CudaPrelude leaves __CUDA_ARCH__ undefined),
//      but nvcc compiles the kernel body in the device pass, where that code exists.
//
// klap command:  java -jar klap.jar --promote=PA --promote-depth=4 pr6_cuda_arch_hidden.cu -o out.cu
//                (Stride: every mode; Ldg: every mode)
// What klap does: promotes both kernels silently ("2 kernels promoted (PA-4): Stride, Ldg").
//   Stride: the device pass writes the parameter `stride` (`stride = max(stride, 1)`), which klap
//     does not see, so it classifies `stride` as pass-through and `t` as induction (t + stride).
//     The generated K_klap_body launches the next pool at its very start,
//       Stride_klap_pro<<<4u, ...>>>(klap_np, out, n, (t + stride), stride);
//     i.e. BEFORE the device-only line clamps stride, and the pool computes t + j * stride from the
//     unclamped value. With the host launch Stride<<<1,32>>>(out, n, 0, 0): original links visit
//     t = 0, 1, 2, ... (each passes its clamped stride 1); promoted, every descendant gets t = 0
//     (0 + j * 0): the chain does not advance, pools keep launching pools until the nesting limit,
//     then the fallback launch (which passes the clamped t + stride) restarts from t = 1, and so on;
//     out[0] is incremented about 100 times, and launches fail at depth 25.
//   Ldg: the classic idiom `#if __CUDA_ARCH__ >= 350 return __ldg(p); #else return *p; #endif` in a
//     helper: klap sees `*p`; the device code reads carry[t] (written by the predecessor just
//     before its release) through the non-coherent cache, which docs/promotion.md rule 1 forbids.
//   The same hole hides from klap, in device-only code: other launches, stream operations,
//   blockIdx reads (PA), asm, writes in the overlap prologue.
// Correct behaviour: analyse the device view (parse with __CUDA_ARCH__ defined, e.g. to the lowest
//   -arch, or both views), or refuse a kernel whose body or callees contain a preprocessor
//   conditional on __CUDA_ARCH__ ("klap cannot see the device-side code").
// Severity: silent wrong result (Stride: definite; Ldg: per the memory model).
#include <cstdio>
__global__ void Stride(int* out, int n, int t, int stride)
{
#ifdef __CUDA_ARCH__
    stride = max(stride, 1);          // device-side guard against a zero stride
#endif
    if (threadIdx.x == 0) atomicAdd(out + t, 1);
    if (threadIdx.x == 0 && t + stride < n) Stride<<<1, 32>>>(out, n, t + stride, stride);
}
__device__ __forceinline__ int load(const int* p) {
#if __CUDA_ARCH__ >= 350
    return __ldg(p);                  // read-only data cache on sm_35+
#else
    return *p;
#endif
}
__global__ void Ldg(int* data, int* carry, int n, int t)
{
    __shared__ int c;
    if (threadIdx.x == 0) c = (t == 0) ? 0 : load(carry + t);   // carry[t]: written by link t-1
    __syncthreads();
    int i = t * 32 + threadIdx.x;
    if (i < n) data[i] = c + 1;
    if (threadIdx.x == 0) carry[t + 1] = c + 1;
    if (threadIdx.x == 0 && (t + 1) * 32 < n) Ldg<<<1, 32>>>(data, carry, n, t + 1);
}
int main() {
    const int n = 20, m = 20 * 32;
    int *out, *data, *carry; cudaMalloc(&out, n * sizeof(int)); cudaMalloc(&data, m * sizeof(int)); cudaMalloc(&carry, 64 * sizeof(int));
    cudaMemset(out, 0, n * sizeof(int)); cudaMemset(carry, 0, 64 * sizeof(int));
    Stride<<<1, 32>>>(out, n, 0, 0);
    Ldg<<<1, 32>>>(data, carry, m, 0);
    bool ok = cudaDeviceSynchronize() == cudaSuccess;
    int h[n]; cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost); for (int i = 0; i < n; ++i) ok &= h[i] == 1;
    static int g[m]; cudaMemcpy(g, data, sizeof g, cudaMemcpyDeviceToHost); for (int i = 0; i < m; ++i) ok &= g[i] == 1 + i / 32;
    printf("%s pr6_cuda_arch_hidden\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
