// np10: the REGISTERS index pastes the lower bound's text with ALL whitespace removed
// (NpPlanner.placeArrays: src.slice(l.lo().range()).replaceAll("\\s+", "")), which changes the
// meaning of literals that contain spaces: ' ' becomes '' (an empty character constant).
//
//   java -jar /tmp/klap-review.jar --np=intra-warp np10_charlit_lo.cu -o out.cu   (also inter-warp, all)
//   nvcc -std=c++17 -arch=sm_90 -I . out.cu       -> error: quoted string should contain at least one character
//
// Output: int w[((N) + 7) / 8];  ...  w[((c) - ('')) / 8] = ...;  s += w[((c) - ('')) / 8];
// (constantText accepts the character literal as the common lower bound of both loops.)
//
// Correct behaviour: compare the normalized texts, but paste the original text of lo (or the
// already computed klap_np_lo of the enclosing loop). Severity: compile error (nvcc rejects the
// output; the input compiles). Confidence: high (checked with nvcc 13).
#define N 128
__global__ void k(const int *x, int *out)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int w[N];
#pragma np parallel for
    for (int c = ' '; c < N; c++) {
        w[c] = x[t * N + c] * c;
    }
    int s = 0;
#pragma np parallel for reduction(+:s)
    for (int c = ' '; c < N; c++) {
        s += w[c];
    }
    out[t] = s;
}

int main()
{
    int *x, *o;
    cudaMalloc(&x, 32 * N * sizeof(int));
    cudaMalloc(&o, 32 * sizeof(int));
    k<<<1, 32>>>(x, o);
    cudaDeviceSynchronize();
    return 0;
}
