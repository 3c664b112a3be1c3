// pr1: blockIdx read through cuda::ptx::get_sreg_ctaid_x() is not shadowed in a PA/PAO pool.
//
// klap command:  java -jar klap.jar --promote=PA --promote-depth=4 pr1_ptx_ctaid_pool.cu -o out.cu
//                (same with --promote=PAO; P and PO are correct: a pool of 1 has ctaid 0)
// What klap does: promotes K silently ("note: 1 kernel promoted (PA-4): K"). The body is copied into
//   K_klap_body(klap_pc, const uint3 blockIdx, const dim3 gridDim, ...), whose parameters shadow the
//   builtins, and the descendants run as K_klap_pro<<<4u, ...>>>, each block calling
//   K_klap_body(klap_pc, make_uint3(0u,0u,0u), dim3(1u,1u,1u), ...). But the line
//       unsigned row = cuda::ptx::get_sreg_ctaid_x();
//   is copied unchanged: it is `asm("mov.u32 %0, %%ctaid.x;")` inside a CCCL header, and reads the
//   hardware index of the block inside the pool (0..3, in whatever order the blocks were scheduled,
//   not even the ticket j). In the original every child is a grid of one block, so row == 0.
// Why it is missed: PromotionPlanner.indexUse only follows callees that have a definition in the
//   unit (calleeReadsIndices -> deviceDefinitions); nonCoherentRead trusts every call qualified by
//   cuda:: / std:: / cub:: (LIBRARY) as "reads no built-in index", and the text checks for %ctaid
//   look at the kernel's own body only. cuda::ptx::get_sreg_ctaid_x/_y/_z and get_sreg_nctaid_*
//   (<cuda/ptx>, CCCL 2.x/3.x, shipped with nvcc 13) are exactly %ctaid / %nctaid.
// Result: the original writes out[0..n-1] = 0..n-1 (row 0) and leaves rows 1..3 at -1; promoted,
//   descendants write into rows 1..3 and leave holes in row 0 -> FAIL. Silent wrong result.
// Correct behaviour: refuse for PA/PAO ("it calls 'cuda::ptx::get_sreg_ctaid_x', which reads
//   blockIdx"): treat cuda::ptx::get_sreg_*ctaid*, *nctaid*, *clusterid*, *ctarank* as index reads
//   (or do not trust cuda::ptx:: at all).
#include <cstdio>
#include <cuda/ptx>
__global__ void K(int* out, int n, int t)
{
    unsigned row = cuda::ptx::get_sreg_ctaid_x();   // which chain: the host block; 0 in every child
    if (threadIdx.x == 0) out[row * n + t] = t;
    if (threadIdx.x == 0 && t + 1 < n) K<<<1, blockDim.x>>>(out, n, t + 1);
}
int main() {
    const int n = 12, rows = 4;
    int* d; cudaMalloc(&d, rows * n * sizeof(int)); cudaMemset(d, 0xff, rows * n * sizeof(int));
    K<<<1, 32>>>(d, n, 0);
    cudaError_t e = cudaDeviceSynchronize();
    int h[rows * n]; cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    bool ok = e == cudaSuccess;
    for (int i = 0; i < rows * n; ++i) ok &= h[i] == (i < n ? i : -1);
    printf("%s pr1_ptx_ctaid_pool\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
