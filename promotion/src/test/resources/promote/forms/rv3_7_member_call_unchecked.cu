// pr7: calls of member functions (and overloaded operators) are not examined by the check for
//      launches, stream operations and non-coherent reads in P and PO mode.
//
// klap command:  java -jar klap.jar --promote=P pr7_member_call_unchecked.cu -o out.cu   (PO too;
//                PA/PAO refuse member calls for another reason, "cannot check for blockIdx", but
//                not operators: see pr8)
// What klap does: promotes Launch and Ldg silently ("2 kernels promoted (P): Launch, Ldg").
//   Launch: thread 0 calls tile.refill(t + 1), a member function that launches fill<<<1,32>>>(buf, ..)
//     into the block's NULL stream, then launches Launch<<<1,32>>>(...) into the same stream: in the
//     original the child starts only after fill has finished and reads the new buf. The same with a
//     free function is refused since review 2026-11-27 (rv2_helper_launch: "it launches 'fill' (in a
//     function it calls ...)"). Promoted, the generated site is
//        tile.refill(t + 1);
//        { Launch_klap_post klap_a; ... if (!klap::promote::release(klap_pc, klap_a)) ... }
//     and the successor (launched at the start of this link, already waiting) is released at once,
//     so it reads buf while fill is pending or running.
//   Ldg: RO::operator[] reads with __ldg; thread 0 reads carry[t] (written by the predecessor just
//     before its release) through it -> non-coherent read that docs/promotion.md rule 1 forbids.
//     A member function `ro.get(t)` with the same body is missed the same way, and so is a call
//     through a local function pointer (`int (*ld)(const int*) = ro_load; ld(carry + t);`).
// Why it is missed (PromotionPlanner.nonCoherentRead): the walk returns early for every call whose
//   calleeName() is null, which is every member call (Expr.Call's contract: null "for calls through
//   expressions (function pointers, lambdas, members)"); calls through a local (Expr.NameKind.LOCAL)
//   are skipped as "a local lambda", which also covers a local functor object; operators
//   (operator[], operator(), operator+ ...) are no calls in the model at all. The member's
//   definition is in the file, so klap could walk it (as calleeReadsIndices does for free functions).
// Result: Launch: out[t*32+i] must be t; promoted, links read an older buf -> FAIL. Ldg: stale carry.
// Correct behaviour: walk member functions, operators and functors defined in the file like free
//   functions; refuse ("it calls '...', whose body klap does not see") when the callee's definition
//   cannot be found.
// Severity: silent wrong result.
#include <cstdio>
__global__ void fill(int* p, int v) { p[threadIdx.x] = v; }
struct Tile {
    int* buf;
    __device__ void refill(int v) const { fill<<<1, 32>>>(buf, v); }   // a launch in a member function
};
__global__ void Launch(int* buf, int* out, int n, int t)
{
    Tile tile{buf};
    out[t * 32 + threadIdx.x] = buf[threadIdx.x];     // what the previous link's fill wrote
    __syncthreads();
    if (threadIdx.x == 0 && t + 1 < n) {
        tile.refill(t + 1);                            // ordered before the child in the NULL stream
        Launch<<<1, 32>>>(buf, out, n, t + 1);
    }
}
struct RO {
    const int* p;
    __device__ int operator[](int i) const { return __ldg(p + i); }
};
__global__ void Ldg(int* data, int* carry, int n, int t)
{
    __shared__ int c;
    RO ro{carry};
    if (threadIdx.x == 0) c = (t == 0) ? 0 : ro[t];   // carry[t]: written by link t-1 before its launch
    __syncthreads();
    int i = t * 32 + threadIdx.x;
    if (i < n) data[i] = c + 1;
    if (threadIdx.x == 0) carry[t + 1] = c + 1;
    if (threadIdx.x == 0 && (t + 1) * 32 < n) Ldg<<<1, 32>>>(data, carry, n, t + 1);
}
int main() {
    const int n = 20, m = 20 * 32;
    int *buf, *out, *data, *carry;
    cudaMalloc(&buf, 32 * sizeof(int)); cudaMalloc(&out, n * 32 * sizeof(int));
    cudaMalloc(&data, m * sizeof(int)); cudaMalloc(&carry, 64 * sizeof(int));
    cudaMemset(buf, 0, 32 * sizeof(int)); cudaMemset(carry, 0, 64 * sizeof(int));
    Launch<<<1, 32>>>(buf, out, n, 0);
    Ldg<<<1, 32>>>(data, carry, m, 0);
    bool ok = cudaDeviceSynchronize() == cudaSuccess;
    static int h[n * 32]; cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
    for (int i = 0; i < n * 32; ++i) ok &= h[i] == i / 32;
    static int g[m]; cudaMemcpy(g, data, sizeof g, cudaMemcpyDeviceToHost);
    for (int i = 0; i < m; ++i) ok &= g[i] == 1 + i / 32;
    printf("%s pr7_member_call_unchecked\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
