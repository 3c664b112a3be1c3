// np2: C++ `new` / `delete` expressions in sequential code run in EVERY member of the group.
//
//   java -jar /tmp/klap-review.jar --np=intra-warp np2_new_delete.cu -o out.cu   (also inter-warp, all)
//
// What klap does: transforms k without a warning. `new float[4]` and `delete[] buf` are CDT
// ICPPASTNewExpression / ICPPASTDeleteExpression, which AstConverter turns into Expr.Other; the
// planner's effects() sees neither a store nor a call, so
//       float *buf = new float[4];     <- every member allocates ITS OWN buffer (not broadcast,
//                                         unlike malloc, which is IMPURE and broadcast)
//       { sync; if (slave == 0) { buf[0] = 1.0f; } sync; }   <- only the master's buffer is set
//       ... s += a[..] * buf[0];       <- slaves (iterations 1..7 mod 8) read their own,
//                                         uninitialized buf[0]
//       delete[] buf;                  <- every member frees (here its own; for a pointer that
//                                         all members share, e.g. `delete p;` of a pointer read from
//                                         memory, the same block is freed S times: heap corruption)
// Also: S times the heap usage, so `new` may return nullptr in a slave where the original succeeded.
//
// Correct behaviour: model new/delete as impure calls (malloc/free): broadcast `T *p = new ...`
// (or refuse), run `delete` on the master only; or refuse the kernel with a [klap-np] warning.
// The same applies to a __device__ helper whose body uses new/delete (CalleeFacts.stores stays false).
// Severity: silent wrong result (and double free for the delete-only variant). Confidence: high.
__global__ void k(const float *a, float *out, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float *buf = new float[4];
    buf[0] = 2.0f;
    float s = 0.0f;
#pragma np parallel for reduction(+:s)
    for (int i = 0; i < n; i++) {
        s += a[t * n + i] * buf[0];
    }
    delete[] buf;
    out[t] = s;
}

int main()
{
    float *a, *o;
    cudaMalloc(&a, 32 * 16 * sizeof(float));
    cudaMalloc(&o, 32 * sizeof(float));
    k<<<1, 32>>>(a, o, 16);
    cudaDeviceSynchronize();
    return 0;
}
