// pr5b: as pr5, with a global named like the postponed parameter: the output compiles and the
//      lambda in Pi now writes out[::offset + i] (::offset == 0) instead of out[offset + i].
//      Silent wrong result (FAIL): every link writes at position 0. Same cause as pr5.
//
// klap command:  java -jar klap.jar --promote=PO pr5b_overlap_lambda_postponed_global.cu -o out.cu   (PAO too)
// What klap does: promotes K with overlap, no warning. `offset` is postponed (offset + cnt), so in
//   the generated K_klap_body it becomes a local declared at the pragma:
//       auto put = [&](int x) { out[offset + threadIdx.x] = x; };      <- Pi, refers to `offset`
//       if (!klap::promote::acquire(klap_pc)) return; int offset = klap_pc.in.offset.get();
//   The lambda now names `offset` before its declaration: nvcc reports
//       error: identifier "offset" is undefined
// Why it is missed (OverlapCheck.independent/effect): condition 1 ("Pi uses no postponed
//   parameter") is checked with Trees.walk over the statement's own expressions, which does not
//   descend into lambda bodies, so the use of `offset` inside the lambda is not seen. (Calling the
//   lambda in Pi would be refused, but defining it there and calling it after the pragma is not.)
// Correct behaviour: drop the overlap with klap-overlap ("the part before the pragma uses
//   'offset', whose value comes from the parent (postponed)"), i.e. walk lambda bodies too.
// Severity: compile error (nvcc) on a program klap accepted without a warning.
#include <cstdio>
__device__ int offset;   // an unrelated global (e.g. from a header) with the name of the parameter
__global__ void K(const int* in, int* out, int n, int t, int offset)
{
    int v = in[t];
    auto put = [&](int x) { out[offset + threadIdx.x] = x; };   // Pi: defines the writer
#pragma klap overlap
    int cnt = 1 + (v & 1);                                        // Pd: how many this link adds
    if (threadIdx.x == 0 && t + 1 < n) K<<<1, 32>>>(in, out, n, t + 1, offset + cnt);
    if (threadIdx.x < cnt) put(v);                                // epilogue
}
int main() {
    const int n = 10; int h[64];
    int *in, *out; cudaMalloc(&in, n * sizeof(int)); cudaMalloc(&out, 64 * sizeof(int));
    for (int i = 0; i < n; ++i) h[i] = i; cudaMemcpy(in, h, n * sizeof(int), cudaMemcpyHostToDevice);
    cudaMemset(out, 0xff, 64 * sizeof(int));
    K<<<1, 32>>>(in, out, n, 0, 0);
    bool ok = cudaDeviceSynchronize() == cudaSuccess;
    cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
    int pos = 0; for (int i = 0; i < n; ++i) for (int c = 0; c < 1 + (i & 1); ++c) ok &= h[pos++] == i;
    printf("%s pr5b_overlap_lambda_postponed_global\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
