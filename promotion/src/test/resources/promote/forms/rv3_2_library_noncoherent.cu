// pr2: non-coherent loads through trusted library names are not seen: cuda::ptx::ld_nc, and
//      cub::ThreadLoad<M> where M == cub::LOAD_LDG is named outside the kernel.
//
// klap command:  java -jar klap.jar --promote=P pr2_library_noncoherent.cu -o out.cu   (every mode)
// What klap does: promotes K1 and K2 silently ("2 kernels promoted (P): K1, K2"). docs/promotion.md
//   rule 1 says a kernel is NOT promoted when it, or a function it calls, reads through the
//   non-coherent cache (__ldg, ld.global.nc, cub::LOAD_LDG), because a promoted descendant already
//   runs while its predecessor writes. Here thread 0 of link t reads carry[t], which link t-1 wrote
//   just before its launch/release; the generated body reads it with ld.global.nc after the acquire:
//     K1: c = ... cuda::ptx::ld_nc(cuda::ptx::space_global, carry + t)   (asm "ld.global.nc.b32")
//     K2: c = ... cub::ThreadLoad<MOD>(carry + t)                         (MOD == cub::LOAD_LDG)
//   The non-coherent path is only guaranteed for data read-only during the reading grid's lifetime;
//   in the original the reading grid was launched after the write (coherent "at the invocation of
//   a child grid"); promoted, the descendant grid was launched before the write.
// Why it is missed (PromotionPlanner.nonCoherentRead): calls qualified by cuda:: / cub:: match
//   LIBRARY and are trusted ("loads through the coherent cache unless told otherwise"); the only
//   "told otherwise" checks are NON_COHERENT_CALL on the simple name (ld_nc does not match
//   __ldg\w*|tex...|surf\w*) and NON_COHERENT_TEXT on the text of the kernel/callee (LOAD_LDG
//   appears only in the file-scope constant MOD, not in K2's text).
// Result: stale carry (per the CUDA memory model, undefined); expected data[i] == 1 + i/32.
//   Severity: silent wrong result (depends on the cache state; not guaranteed to show on every run).
// Correct behaviour: refuse ("reads through the non-coherent cache"): add ld_nc (cuda::ptx) to the
//   non-coherent names, and resolve cub::ThreadLoad / CacheModifiedInputIterator modifiers through
//   constants and aliases (or refuse any ThreadLoad whose modifier is not a literal coherent one).
#include <cstdio>
#include <cuda/ptx>
#include <cub/cub.cuh>
constexpr cub::CacheLoadModifier MOD = cub::LOAD_LDG;
__global__ void K1(int* data, int* carry, int n, int t)
{
    __shared__ int c;
    if (threadIdx.x == 0) c = (t == 0) ? 0 : cuda::ptx::ld_nc(cuda::ptx::space_global, carry + t);
    __syncthreads();
    int i = t * 32 + threadIdx.x;
    if (i < n) data[i] = c + 1;
    if (threadIdx.x == 0) carry[t + 1] = c + 1;              // read by link t+1
    if (threadIdx.x == 0 && (t + 1) * 32 < n) K1<<<1, 32>>>(data, carry, n, t + 1);
}
__global__ void K2(int* data, int* carry, int n, int t)
{
    __shared__ int c;
    if (threadIdx.x == 0) c = (t == 0) ? 0 : cub::ThreadLoad<MOD>(carry + t);
    __syncthreads();
    int i = t * 32 + threadIdx.x;
    if (i < n) data[i] = c + 1;
    if (threadIdx.x == 0) carry[t + 1] = c + 1;
    if (threadIdx.x == 0 && (t + 1) * 32 < n) K2<<<1, 32>>>(data, carry, n, t + 1);
}
int main() {
    const int n = 20 * 32;
    int *d, *carry; cudaMalloc(&d, n * sizeof(int)); cudaMalloc(&carry, 64 * sizeof(int));
    bool ok = true;
    for (int k = 0; k < 2; ++k) {
        cudaMemset(carry, 0, 64 * sizeof(int)); cudaMemset(d, 0, n * sizeof(int));
        if (k == 0) K1<<<1, 32>>>(d, carry, n, 0); else K2<<<1, 32>>>(d, carry, n, 0);
        ok &= cudaDeviceSynchronize() == cudaSuccess;
        static int h[n]; cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
        for (int i = 0; i < n; ++i) ok &= h[i] == 1 + i / 32;
    }
    printf("%s pr2_library_noncoherent\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
