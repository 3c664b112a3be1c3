// np9: a local array placed in SHARED memory that is read in the BOUND of a later (non-scan)
// parallel loop makes klap crash.
//
//   java -jar /tmp/klap-review.jar --np=intra-warp np9_array_in_bound_crash.cu -o out.cu   (also inter-warp, all)
//   -> klap: internal error: java.lang.IllegalStateException: klap internal error: overlapping
//      edits at ... ('for (unsigned long long klap_n' and '(')       exit code 1, no output
//
// Cause: NpKernel.loop() replaces the whole loop header (init, condition, step) with the
// distributed for, and pastes the ORIGINAL bound text into `trips(klap_np_lo, (hi), ...)`;
// NpKernel.arrays() then inserts `(`...`) * klap_np_m` around the subscript inside the replaced
// header -> EditSet overlap. (Even without the crash the pasted text `cnt[1]` would miss the
// rewrite: cnt is now `int *const cnt = ... + master`, so cnt[1] would read master+1's element 0.)
// Scan loops have a dedicated refusal ("the bounds of a scan loop must not read local array");
// plain loops do not.
//
// Correct behaviour: rewrite the array accesses inside the pasted lo/hi texts (or refuse, with a
// [klap-np] warning, as for scans). Severity: klap crash (no output; the user gets no variant at
// all, but nothing silent). Confidence: high.
#define K 4
__global__ void k(const int *len, const float *x, float *out)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int cnt[K];
#pragma np parallel for
    for (int i = 0; i < K; i++) {
        cnt[i] = len[t * K + i];
    }
    float s = 0.0f;
#pragma np parallel for reduction(+:s)
    for (int j = 0; j < cnt[1]; j++) {
        s += x[j];
    }
    out[t] = s;
}

int main()
{
    int *l;
    float *x, *o;
    cudaMalloc(&l, 32 * K * sizeof(int));
    cudaMalloc(&x, 1024 * sizeof(float));
    cudaMalloc(&o, 32 * sizeof(float));
    k<<<1, 32>>>(l, x, o);
    cudaDeviceSynchronize();
    return 0;
}
