// np3: a callee parameter that is a forwarding reference (`T &&x` bound to an lvalue) or a
// reference hidden behind a typedef/alias (`typedef int &IntRef;`) is not seen as writable.
//
//   java -jar /tmp/klap-review.jar --np=intra-warp np3_forwarding_ref.cu -o out.cu   (also inter-warp, all)
//
// Root cause: NpPlanner.callee() computes CalleeFacts.refParams with the text regex
// NpPlanner.writableReference(param), which (by design, see its javadoc) rejects `T &&x` and
// finds no '&' in `IntRef x`. But `bump(cnt, 1)` deduces T = int& and writes the caller's cnt,
// and `IntRef x` is an int&. (The model already has Expr.Call.paramModes from CDT, 'w' for
// both cases, typedefs resolved; the planner does not use it.)
//
// k1 (parallel loop): loop() collects write targets from refParams only, so `cnt` is not in
//   writtenOutside; the loop is transformed as if it wrote nothing outside:
//       for (k = slave; k < n; k += 8) { const int i = nth(lo, k); { if (a[..] > 0) bump(cnt, 1); } }
//       { sync; if (slave == 0) { out[t] = cnt; } sync; }
//   Each member counts only its own iterations; out[t] gets the MASTER's partial count (about
//   1/8 of the original count). Should be an inferred + reduction or a refusal.
// k2 (sequential): effects() does not see `bump(out[t], 1)` write out[t] (the argument is memory,
//   so through a writable reference this is a store); the call has no other store, so the
//   statement is neither master-only nor refused: all 8 members run `out[t] += 1` (racy
//   read-modify-writes of the same word: out[t] grows by 1..8 instead of 1).
// k3: the same as k1 with `typedef int &IntRef; void bump2(IntRef x, int by)`.
//
// Correct behaviour: take a parameter as writable when CDT says so (paramModes 'w'), or when its
// declared type (after typedefs) is a non-const lvalue reference or a forwarding reference.
// Severity: silent wrong result. Confidence: high.
template <class T>
__device__ void bump(T &&x, int by) { x += by; }

typedef int &IntRef;
__device__ void bump2(IntRef x, int by) { x += by; }

__global__ void k1(const int *a, int *out, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int cnt = 0;
#pragma np parallel for
    for (int i = 0; i < n; i++) {
        if (a[t * n + i] > 0) bump(cnt, 1);
    }
    out[t] = cnt;
}

__global__ void k2(const float *a, float *s, int *out, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    bump(out[t], 1);  // out[t] += 1, once per original thread
    float acc = 0.0f;
#pragma np parallel for reduction(+:acc)
    for (int i = 0; i < n; i++) {
        acc += a[t * n + i];
    }
    s[t] = acc;
}

__global__ void k3(const int *a, int *out, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    int cnt = 0;
#pragma np parallel for
    for (int i = 0; i < n; i++) {
        if (a[t * n + i] > 0) bump2(cnt, 1);
    }
    out[t] = cnt;
}

int main()
{
    int *a, *o;
    float *f, *s;
    cudaMalloc(&a, 32 * 64 * sizeof(int));
    cudaMalloc(&o, 32 * sizeof(int));
    cudaMalloc(&f, 32 * 64 * sizeof(float));
    cudaMalloc(&s, 32 * sizeof(float));
    k1<<<1, 32>>>(a, o, 64);
    k2<<<1, 32>>>(f, s, o, 64);
    k3<<<1, 32>>>(a, o, 64);
    cudaDeviceSynchronize();
    return 0;
}
