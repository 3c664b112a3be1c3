// np7: a local array of a class type with a default member initializer (or a user default
// constructor) that klap moves to shared (or global) memory is never constructed.
//
//   java -jar /tmp/klap-review.jar --np=intra-warp np7_shared_array_ctor.cu -o out.cu   (also inter-warp, all)
//
// What klap does: NpPlanner.placeArrays() places `P a[N]` in SHARED memory (it is written in a
// parallel loop and read in sequential code). declarationProblem()/classProblem() accept P (its
// initializer `= 1.0f` is pure, which only matters for running it in every member), and the
// "initializes an array" test looks only at an initializer on the declarator. NpKernel.arrays()
// replaces the declaration by a cast of raw dynamic shared memory (or of the cudaMallocAsync
// buffer of the global fallback), so no element is ever initialized:
//       P *const a = reinterpret_cast<P *>(klap_np_a0) + klap_np_g.master;
//       ... if (m[..]) a[(i) * klap_np_m].v = x[..];
//       for (int j = 0; j < N; j++) { s += a[(j) * klap_np_m].v; }
// In the original every a[j].v starts at 1.0f; elements with m[..] == 0 keep it. In the variant
// they hold whatever the shared memory (or a previous block / kernel) left there.
// (REGISTERS placement keeps `P a[(N + 7) / 8]`, which constructs, so it is only SHARED/global.)
//
// Correct behaviour: refuse SHARED/global placement for element types that are not trivially
// default-constructible (or construct the elements: each group's master, then a group barrier).
// Severity: silent wrong result. Confidence: high.
#define N 16
struct P {
    float v = 1.0f;
};

__global__ void k(const float *x, const int *m, float *out)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    P a[N];
#pragma np parallel for
    for (int i = 0; i < N; i++) {
        if (m[t * N + i]) a[i].v = x[t * N + i];
    }
    float s = 0.0f;
    for (int j = 0; j < N; j++) {
        s += a[j].v;
    }
    out[t] = s;
}

int main()
{
    float *x, *o;
    int *m;
    cudaMalloc(&x, 32 * N * sizeof(float));
    cudaMalloc(&m, 32 * N * sizeof(int));
    cudaMalloc(&o, 32 * sizeof(float));
    cudaMemset(m, 0, 32 * N * sizeof(int));  // nothing written: original out[t] = 16.0f
    k<<<1, 32>>>(x, m, o);
    cudaDeviceSynchronize();
    return 0;
}
