// pr3: the overlap check (PO/PAO) misses writes of the dependent prologue made through the
//      reference output of a CUB block collective and through a constructor.
//
// klap command:  java -jar klap.jar --promote=PO pr3_overlap_missed_writes.cu -o out.cu   (PAO too)
// What klap does: promotes both kernels WITH overlap, without any warning (no klap-overlap, not even
//   klap-overlap-alias). Generated body of each: `await_exists` ... Pi ... then, at the pragma,
//   `if (!klap::promote::acquire(klap_pc)) return;`: the statements before the pragma run in a
//   descendant as soon as its predecessor has STARTED (announce at its start), i.e. concurrently
//   with the predecessor's dependent prologue.
//   Scan:  Pi reads out[t*B - 1]; the predecessor's Pd writes it with
//          Scan(temp).InclusiveSum(v + carry, out[t*B + threadIdx.x]);   (2nd argument is T&)
//   Store: Pi reads out[t - 1]; the predecessor's Pd writes it with Put(out + t, carry + v);
//          whose constructor does *p = v.
//   In the original the child starts after its parent's Pd (the write, a __syncthreads, then the
//   launch), so Pi reads the predecessor's result; promoted, it reads the value before it.
// Why it is missed (OverlapCheck.storedThrough, used for the Pd): a member call is ignored when
//   it is a BLOCK_COLLECTIVES method on a local temporary ("writes only its reference arguments
//   and the temp storage" -- but the reference argument here is global memory), and a call whose
//   callee is a TYPE (a constructor, `Put(...)` or `Put w(...)`) is ignored altogether. The same
//   two holes are in OverlapCheck.effect for the independent prologue (a Pi that writes global
//   memory through them is accepted).
// Result: out[k] should be k + 1 (prefix sums of ones); promoted, tiles/elements start from a stale
//   carry (0) -> FAIL. Silent wrong result.
// Correct behaviour: keep the kernel but drop the overlap with klap-overlap ("the prologue after the
//   pragma writes through 'out'"): count the root of every non-const-reference argument of a
//   collective (paramModes 'w') and every pointer/reference argument of a constructor as written
//   (or "" when unknown).
#include <cstdio>
#include <cub/cub.cuh>
constexpr int B = 32;
using Scan = cub::BlockScan<int, B>;
__global__ void ScanK(const int* in, int* out, int n, int t)
{
    __shared__ Scan::TempStorage temp;
    int carry = (t == 0) ? 0 : out[t * B - 1];       // Pi: last output of the previous tile
    int v = in[t * B + threadIdx.x];
#pragma klap overlap
    Scan(temp).InclusiveSum(v + carry, out[t * B + threadIdx.x]);   // Pd: writes out (T& output)
    __syncthreads();
    if (threadIdx.x == 0 && (t + 1) * B < n) ScanK<<<1, B>>>(in, out, n, t + 1);
}
struct Put { __device__ Put(int* p, int v) { *p = v; } };
__global__ void StoreK(const int* in, int* out, int n, int t)
{
    int carry = (t == 0) ? 0 : out[t - 1];           // Pi: the previous link's output
    int v = in[t];
#pragma klap overlap
    if (threadIdx.x == 0) Put(out + t, carry + v);   // Pd: writes out[t] in a constructor
    if (threadIdx.x == 0 && t + 1 < n) StoreK<<<1, 32>>>(in, out, n, t + 1);
}
int main() {
    const int n = 20 * B;
    int *in, *out; cudaMalloc(&in, n * sizeof(int)); cudaMalloc(&out, n * sizeof(int));
    static int h[n]; for (int i = 0; i < n; ++i) h[i] = 1;
    cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice);
    bool ok = true;
    cudaMemset(out, 0, sizeof h); ScanK<<<1, B>>>(in, out, n, 0); ok &= cudaDeviceSynchronize() == cudaSuccess;
    cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost); for (int i = 0; i < n; ++i) ok &= h[i] == i + 1;
    const int m = 20;
    cudaMemset(out, 0, sizeof h); StoreK<<<1, 32>>>(in, out, m, 0); ok &= cudaDeviceSynchronize() == cudaSuccess;
    cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost); for (int i = 0; i < m; ++i) ok &= h[i] == i + 1;
    printf("%s pr3_overlap_missed_writes\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
