// np4: a local array kept in REGISTERS is indexed ((i) - (lo)) / S with lo compared only as TEXT:
// two parallel loops whose lower bounds are the same name but different constants (constexpr
// locals of different scopes, or a macro #undef'd and redefined between them) share one layout.
//
//   java -jar /tmp/klap-review.jar --np=intra-warp np4_registers_lo_text.cu -o out.cu   (also inter-warp)
//
// What klap does: NpPlanner.placeArrays() accepts REGISTERS when every access is a[i] in a
// parallel loop and constantText(l.lo()) holds (names of kind CONSTANT) and the whitespace-
// stripped lo TEXTS are equal ("LO" == "LO"). NpKernel.arrays() then pastes that text into every
// access, where it resolves to a different declaration:
//       float a[((N) + 7) / 8];
//       { constexpr int LO = 0;  ... a[((i) - (LO)) / 8] = x[..];      // element i in member i % 8
//       { constexpr int LO = 2;  ... s += a[((i) - (LO)) / 8];         // element i read in member
//                                                                       // (i - 2) % 8, slot (i-2)/8
// Iteration i = 2 of the second loop runs in member 0 and reads member 0's a[0], which holds
// element 0, not element 2; every element is shifted by 2 (and the last two come from slots
// that no one wrote). out[t] = sum of x[2..15] originally; the variant sums a different set.
//
// Correct behaviour: require the lower bounds to be the same declaration/value (resolve the
// names, or compare evaluated constants), else place the array in shared memory.
// Severity: silent wrong result. Confidence: high.
#define N 16
__global__ void k(const float *x, float *out)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float a[N];
    {
        constexpr int LO = 0;
#pragma np parallel for
        for (int i = LO; i < N; i++) {
            a[i] = x[t * N + i];
        }
    }
    float s = 0.0f;
    {
        constexpr int LO = 2;
#pragma np parallel for reduction(+:s)
        for (int i = LO; i < N; i++) {
            s += a[i];
        }
    }
    out[t] = s;
}

int main()
{
    float *x, *o;
    cudaMalloc(&x, 32 * N * sizeof(float));
    cudaMalloc(&o, 32 * sizeof(float));
    k<<<1, 32>>>(x, o);
    cudaDeviceSynchronize();
    return 0;
}
