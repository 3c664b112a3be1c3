// pr8: PA/PAO: blockIdx read where klap does not look -- in an overloaded operator of a parameter's
//      class (K), or in a function called through a local function pointer (K2); in a pool of
//      descendants it reads the hardware block index of the pool.
//
// klap command:  java -jar klap.jar --promote=PA --promote-depth=4 pr8_operator_blockidx_pool.cu -o out.cu
//                (PAO too; P/PO are correct)
// What klap does: promotes K and K2 silently ("note: 2 kernels promoted (PA-4): K, K2"). The body's own
//   blockIdx is shadowed by K_klap_body's parameter, but `out[t]` calls Rows::operator[], a
//   __device__ member defined in this file that reads the builtin blockIdx.x; in a descendant
//   (K_klap_pro<<<4u, ...>>>) that is the pool's hardware block index 0..3, not 0 as in the
//   original's one-block child grids.
// Why it is missed (PromotionPlanner.indexUse): it refuses member calls (`out.at(t)` would be
//   refused), calls it cannot name, and local objects whose class reads the indices
//   (declaredClass -> classReadsIndices), but an operator applied to a PARAMETER (or any operand)
//   is no Expr.Call, and the class of a parameter is never checked. A member call `out.at(t)` on
//   the same object is refused ("calls the member function 'at'").
// K2: `unsigned (*rowf)() = chain_row; rowf()` (also `auto rowf = chain_row;`): indexUse looks
//   only at calls (calleeReadsIndices by callee name); the call through the local `rowf` names no
//   function and the reference to chain_row is no call, so chain_row's blockIdx read is not seen.
// Result: the original writes row 0 (out.base[0..n-1] = 0..n-1) and leaves rows 1..3 at -1;
//   promoted, descendants write into rows 1..3 -> FAIL. Silent wrong result.
// Correct behaviour: refuse for PA/PAO when a class of a parameter (or of any operand whose
//   operators are overloaded) reads blockIdx/gridDim (classReadsIndices on parameter types), as
//   for locals.
#include <cstdio>
struct Rows {
    int* base; int n;
    __device__ int& operator[](int t) const { return base[blockIdx.x * n + t]; }   // this chain's row
};
__global__ void K(Rows out, int n, int t)
{
    if (threadIdx.x == 0) out[t] = t;
    if (threadIdx.x == 0 && t + 1 < n) K<<<1, blockDim.x>>>(out, n, t + 1);
}
__device__ unsigned chain_row() { return blockIdx.x; }
__global__ void K2(int* out, int n, int t)
{
    unsigned (*rowf)() = chain_row;
    unsigned r = rowf();
    if (threadIdx.x == 0) out[r * n + t] = t;
    if (threadIdx.x == 0 && t + 1 < n) K2<<<1, blockDim.x>>>(out, n, t + 1);
}
int main() {
    const int n = 12, rows = 4;
    Rows r; r.n = n; cudaMalloc(&r.base, rows * n * sizeof(int)); cudaMemset(r.base, 0xff, rows * n * sizeof(int));
    K<<<1, 32>>>(r, n, 0);
    bool ok = cudaDeviceSynchronize() == cudaSuccess;
    int h[rows * n]; cudaMemcpy(h, r.base, sizeof h, cudaMemcpyDeviceToHost);
    for (int i = 0; i < rows * n; ++i) ok &= h[i] == (i < n ? i : -1);
    cudaMemset(r.base, 0xff, rows * n * sizeof(int));
    K2<<<1, 32>>>(r.base, n, 0); ok &= cudaDeviceSynchronize() == cudaSuccess;
    cudaMemcpy(h, r.base, sizeof h, cudaMemcpyDeviceToHost);
    for (int i = 0; i < rows * n; ++i) ok &= h[i] == (i < n ? i : -1);
    printf("%s pr8_operator_blockidx_pool\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
