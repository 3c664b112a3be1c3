// np1: an overloaded operator (free or member, also a conversion operator) with a side effect on
// memory runs in EVERY member of the group.
//
//   java -jar /tmp/klap-review.jar --np=intra-warp np1_operator_overload.cu -o out.cu
//   (same with --np=inter-warp / --np=all)
//
// What klap does: transforms k without a warning. The sequential statement `c += 1;` is a
// Binary "+=" whose target `c` is a private local, so NpPlanner.effects() records only a private
// write of `c`: no store, no call. Sequential.exprStmt() therefore neither makes it master-only
// nor refuses it, and in k_klap_npi it stays as written:
//       Counter c;
//       c.p = cnt;
//       c += 1;                 <- executed by all S = 8 members
// The operator is `operator+=(Counter, int)`, which does atomicAdd(c.p, v): the original adds 1
// to *cnt per thread, the variant adds S = 8. Same for `bool b = (g == 3);` with an operator==
// that stores, `int v = g;` through a conversion operator `operator int()` that does an atomic,
// or a member `operator=`: the AST model (AstConverter) turns overloaded operators into plain
// Expr.Binary / implicit conversions and the planner never looks up the operator function, and
// classProblem() only checks constructors and destructors of a class, not its other members.
//
// Correct behaviour: treat an expression whose operator resolves to a user function as a call of
// that function (CalleeFacts: stores -> master only / broadcast; unknown -> refuse), or refuse
// kernels that apply operators to class-type operands ("[klap-np] ... overloaded operator").
// Severity: silent wrong result (a counter grows S times too fast). Confidence: high.
struct Counter {
    int *p;
};
__device__ void operator+=(Counter c, int v) { atomicAdd(c.p, v); }

__global__ void k(const float *a, float *out, int *cnt, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    Counter c;
    c.p = cnt;
    c += 1;  // one atomicAdd per original thread
    float s = 0.0f;
#pragma np parallel for reduction(+:s)
    for (int i = 0; i < n; i++) {
        s += a[t * n + i];
    }
    out[t] = s;
}

// k2: the same through an implicit conversion operator (a member function klap never checks):
//       int slot = tk;    <- kept as is: every member takes its own ticket (8 per thread) and the
//                            master writes out[its slot]; should have been broadcast
//                            (int slot = first(slave == 0 ? (tk) : int{})) or refused.
struct Ticket {
    int *p;
    __device__ operator int() const { return atomicAdd(p, 1); }
};

__global__ void k2(const float *a, float *out, int *cnt, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    Ticket tk;
    tk.p = cnt;
    int slot = tk;
    float s = 0.0f;
#pragma np parallel for reduction(+:s)
    for (int i = 0; i < n; i++) {
        s += a[t * n + i];
    }
    out[slot] = s;
}

int main()
{
    float *a, *o;
    int *c;
    cudaMalloc(&a, 32 * 4 * sizeof(float));
    cudaMalloc(&o, 32 * sizeof(float));
    cudaMalloc(&c, sizeof(int));
    cudaMemset(a, 0, 32 * 4 * sizeof(float));
    cudaMemset(c, 0, sizeof(int));
    k<<<1, 32>>>(a, o, c, 4);
    k2<<<1, 32>>>(a, o, c, 4);
    int h = 0;
    cudaMemcpy(&h, c, sizeof(int), cudaMemcpyDeviceToHost);
    return h == 64 ? 0 : 1;  // original: 64; CUDA-NP variant: 512
}
