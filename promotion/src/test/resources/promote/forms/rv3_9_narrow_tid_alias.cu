// pr9: a "local copy of threadIdx.x" of a narrower type is accepted as the thread-0 guard, although
//      it is 0 in several threads.
//
// klap command:  java -jar klap.jar --promote=P pr9_narrow_tid_alias.cu -o out.cu   (every mode)
// What klap does: promotes K ("note: 1 kernel promoted (P): K"), taking `lane == 0` for
//   `threadIdx.x == 0`. With unsigned char lane = threadIdx.x and 512 threads per block, threads 0
//   and 256 both pass `lane == 0` and both launch: the original makes 2 children per link (each
//   link's count out[t] = 2^(t+1) for the 2^t blocks at depth t, times 2 threads). Promoted, the
//   second thread reaches the generated
//      { K_klap_post klap_a; if (!klap::promote::release(klap_pc, klap_a)) K<<<...>>>(...); }
//   and release() calls klap::promote::fail("a promoted launch site ran twice in one block") ->
//   __trap(): the program dies where the original ran. (The blockDim.y/z check in the host instance
//   does not help: the block is one-dimensional.)
// Why it is missed (PromotionPlanner.threadIdxAliases): a declaration counts as an alias when its
//   initializer's text is exactly `threadIdx.x`; the declared type is not looked at (char, unsigned
//   char, int8_t, uint8_t wrap at 128/256; short and wider are fine for blockDim.x <= 1024).
// Correct behaviour: accept only aliases whose type holds every threadIdx.x value (int, unsigned,
//   long, auto, short and wider); otherwise refuse ("cannot prove that only one thread runs the
//   launch").
// Severity: loud run-time failure (trap with a klap error) instead of the original's result; low
//   (unusual code), but it breaks the "only what is proved equivalent" rule.
#include <cstdio>
__global__ void K(int* out, int n, int t)
{
    unsigned char lane = threadIdx.x;            // byte-sized lane id (wraps at 256)
    if (lane == 0) atomicAdd(out + t, 1);
    if (lane == 0 && t + 1 < n) K<<<1, blockDim.x>>>(out, n, t + 1);
}
int main() {
    const int n = 4;
    int* d; cudaMalloc(&d, n * sizeof(int)); cudaMemset(d, 0, n * sizeof(int));
    K<<<1, 512>>>(d, n, 0);
    bool ok = cudaDeviceSynchronize() == cudaSuccess;
    int h[n]; cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    for (int t = 0; t < n; ++t) ok &= h[t] == (2 << t);   // 2^t blocks at depth t, 2 launching threads each
    printf("%s pr9_narrow_tid_alias\n", ok ? "PASS" : "FAIL");
    return ok ? 0 : 1;
}
