// np6: a reduction (or scan) variable of a TEMPLATE type skips the integer and bool checks,
// whatever type the file instantiates it with.
//
//   java -jar /tmp/klap-review.jar --np=intra-warp np6_template_int_reduction.cu -o out.cu   (also inter-warp, all)
//
// Root cause: NpPlanner.checkScalarOutside() returns "" for a template type parameter (after
// checking that every instantiation in the file gives an arithmetic type); loop() then runs
// integerUpdates() only if INTEGER_TYPE matches that text, and boolUpdates() only if it is "bool":
// neither matches "", so with T = int the int reduction with a float operand (the case docs/np.md
// says stays sequential: "s += 0.5f * x rounds at every step") is transformed:
//       T s = 0;     // T = int
//       { ...; s = Plus::identity; for (k = slave; ...) { const int i = ..; { s += a[t * n + i]; } }
//         s = Plus{}(klap_np_r_s, reduce<Plus>(s)); ... }
// Original with a = {2.0f, -1.5f}: s = (int)(0 + 2.0f) = 2, then s = (int)(2 - 1.5f) = (int)0.5f = 0.
// Variant: member 0: (int)(0 + 2.0f) = 2; member 1: (int)(0 - 1.5f) = -1; s = 0 + (2 + -1) = 1.
// The same root cause lets through, for T = bool, `b ^= e` with an int operand (review3 c2) and,
// for T = int, an integer min/max that is only inferred (review r_maxmixed).
//
// Correct behaviour: run integerUpdates/boolUpdates with each instantiating type of T (as
// checkScalarOutside already iterates templateArguments), or refuse unless every instantiation is
// floating point. Severity: silent wrong result. Confidence: high.
template <typename T>
__global__ void k(const float *a, T *out, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    T s = 0;
#pragma np parallel for
    for (int i = 0; i < n; i++) {
        s += a[t * n + i];
    }
    out[t] = s;
}

int main()
{
    float h[2] = {2.0f, -1.5f};
    float *a;
    int *o;
    cudaMalloc(&a, 2 * sizeof(float));
    cudaMalloc(&o, sizeof(int));
    cudaMemcpy(a, h, sizeof h, cudaMemcpyHostToDevice);
    k<int><<<1, 1>>>(a, o, 2);
    int r = -7;
    cudaMemcpy(&r, o, sizeof r, cudaMemcpyDeviceToHost);
    return r == 0 ? 0 : 1;  // original 0, CUDA-NP variant 1
}
