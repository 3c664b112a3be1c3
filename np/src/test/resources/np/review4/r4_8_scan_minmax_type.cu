// np8: the min/max checks that keep a REDUCTION sequential are not applied to SCANS:
// `double m; m = fminf(m, e)` (a float function on a double variable) and
// `m = std::max(m, e)` / `cuda::std::max` on floating point (NaN and signed-zero semantics) are
// transformed as klap::np::Min/Max (fmin/fmax) scans.
//
//   java -jar /tmp/klap-review.jar --np=intra-warp np8_scan_minmax_type.cu -o out.cu   (also inter-warp, all)
//
// Root cause: NpPlanner.loop() calls minMaxFunctions() only in the reductions loop; the scans loop
// runs boolUpdates/integerUpdates only. k1 is inferred as scan(min:m) and becomes
//       decltype(m) klap_np_carry_m = m;   // 0.1 (double), never rounded to float
//       const decltype(m) klap_np_c = act ? static_cast<decltype(m)>((x[..])) : Min::identity<double>();
//       m = Min{}(klap_np_carry_m, scan<Min>(klap_np_c, klap_np_t));   // fmin on doubles
//       if (act) { out[t * n + i] = m; }
// Original, x[0] = 1.0f: m = fminf((float)0.1, 1.0f) = 0.1f -> out[0] = 0.100000001490116...
// Variant: fmin(0.1, 1.0) = 0.1 -> out[0] = 0.1000000000000000055...  (different bits; every
// prefix keeps the unrounded 0.1 while the original rounds it at the first update).
// k2: m starts as NaN: cuda::std::max(NaN, x) is NaN (!(NaN < x) keeps the left operand), so the
// original writes NaN everywhere; the variant's carry is combined with fmaxf, which drops the NaN.
//
// Correct behaviour: call minMaxFunctions() for scans too (leave them sequential with the
// same [klap-np] warning as reductions). Severity: silent wrong result. Confidence: high.
#include <cuda/std/algorithm>

__global__ void k1(const float *x, double *out, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    double m = 0.1;
#pragma np parallel for
    for (int i = 0; i < n; i++) {
        m = fminf(m, x[t * n + i]);
        out[t * n + i] = m;
    }
}

__global__ void k2(const float *x, float *out, float m0, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float m = m0;  // the host passes NaN
#pragma np parallel for
    for (int i = 0; i < n; i++) {
        m = cuda::std::max(m, x[t * n + i]);
        out[t * n + i] = m;
    }
}

int main()
{
    float *x, *f;
    double *o;
    cudaMalloc(&x, 32 * 4 * sizeof(float));
    cudaMalloc(&o, 32 * 4 * sizeof(double));
    cudaMalloc(&f, 32 * 4 * sizeof(float));
    k1<<<1, 32>>>(x, o, 4);
    k2<<<1, 32>>>(x, f, __builtin_nanf(""), 4);
    cudaDeviceSynchronize();
    return 0;
}
