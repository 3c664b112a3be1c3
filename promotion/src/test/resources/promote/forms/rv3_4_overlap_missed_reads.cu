// pr4: the overlap check (PO/PAO) drops a read of the independent prologue when the pointer passed
//      to a call (a CUB BlockLoad) is not a plain parameter: a struct member (b.out + k), an element
//      of a pointer array, ...
//
// klap command:  java -jar klap.jar --promote=PO pr4_overlap_missed_reads.cu -o out.cu   (PAO too)
// What klap does: promotes K WITH overlap and no warning. In the generated K_klap_body the line
//       if (t > 0) Load(temp).Load(b.out + (t - 1) * B, prev);
//   stays before `if (!klap::promote::acquire(klap_pc)) return;`, so a descendant runs it as soon as
//   its predecessor has started, while the predecessor's dependent prologue
//       b.out[t * B + threadIdx.x] = ...;
//   is still writing that very tile. In the original the child starts after that write (and the
//   __syncthreads before the launch), so it reads the predecessor's output.
// Why it is missed (OverlapCheck.effect, call arguments): the argument's root is computed with
//   pointerRoot, which returns null for `b.out + k` (a member) and for `ptrs[0] + k`, and the read is
//   then silently not recorded (only `root != null && pointerLike(root)` is added). Written as a
//   subscript (`b.out[k]`) the same read IS recorded (memoryRoot -> "b") and the overlap is refused,
//   since the Pd's store has root "b" too. An untraceable argument should add "" (refuse), or use
//   memoryRoot as the other read paths do.
// Result: out[t*B+i] must be t+1 for in == 1 (column sums tile by tile); promoted, tiles read a
//   stale previous tile (0) -> FAIL. Silent wrong result.
// Second form (K2): Pi passes a local struct holding `out` to a "harmless" helper (value
//   parameters only) that reads v.p[t - 1]: the argument `prev` is a local, so its read is dropped
//   too; klap only prints klap-overlap-alias "assumes that 't' and 'out' do not point into the same
//   memory" -- it took the int `t` for a pointer -- and keeps the overlap; the real conflict (out
//   read in Pi, out written in Pd) is not named.
// Correct behaviour: drop the overlap with klap-overlap ("... writes through 'b', which the part
//   before it reads"), promote as P.
#include <cstdio>
#include <cub/cub.cuh>
constexpr int B = 32;
using Load = cub::BlockLoad<int, B, 1>;
struct Bufs { const int* in; int* out; };
__global__ void K(Bufs b, int n, int t)
{
    __shared__ Load::TempStorage temp;
    int prev[1] = {0};
    if (t > 0) Load(temp).Load(b.out + (t - 1) * B, prev);              // Pi: previous tile's output
#pragma klap overlap
    b.out[t * B + threadIdx.x] = b.in[t * B + threadIdx.x] + prev[0];   // Pd: this tile's output
    __syncthreads();
    if (threadIdx.x == 0 && (t + 1) * B < n) K<<<1, B>>>(b, n, t + 1);
}
struct View { const int* p; };
__device__ int last_of(View v, int t) { return t == 0 ? 0 : v.p[t - 1]; }
__global__ void K2(const int* in, int* out, int n, int t)
{
    View prev; prev.p = out;
    int carry = last_of(prev, t);                    // Pi: reads out[t-1]
#pragma klap overlap
    if (threadIdx.x == 0) out[t] = carry + in[t];    // Pd: writes out[t]
    if (threadIdx.x == 0 && t + 1 < n) K2<<<1, 32>>>(in, out, n, t + 1);
}
int main() {
    const int n = 20 * B;
    Bufs b; cudaMalloc((void**)&b.in, n * sizeof(int)); cudaMalloc(&b.out, n * sizeof(int));
    static int h[n]; for (int i = 0; i < n; ++i) h[i] = 1;
    cudaMemcpy((void*)b.in, h, sizeof h, cudaMemcpyHostToDevice); cudaMemset(b.out, 0, sizeof h);
    K<<<1, B>>>(b, n, 0);
    bool ok = cudaDeviceSynchronize() == cudaSuccess;
    cudaMemcpy(h, b.out, sizeof h, cudaMemcpyDeviceToHost);
    for (int i = 0; i < n; ++i) ok &= h[i] == i / B + 1;
    cudaMemset(b.out, 0, sizeof h); K2<<<1, 32>>>(b.in, b.out, 20, 0); ok &= cudaDeviceSynchronize() == cudaSuccess;
    cudaMemcpy(h, b.out, sizeof h, cudaMemcpyDeviceToHost);
    for (int i = 0; i < 20; ++i) ok &= h[i] == i + 1;
    printf("%s pr4_overlap_missed_reads\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
