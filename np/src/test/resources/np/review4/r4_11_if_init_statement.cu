// np11: the init-statement of a C++17 `if (init; cond)` / `switch (init; cond)` is missing from
// klap's model, so its side effects run in EVERY member of the group (and, for `if`, the members
// can then disagree on the condition around group barriers).
//
//   java -jar /tmp/klap-review.jar --np=intra-warp np11_if_init_statement.cu -o out.cu   (also inter-warp, all)
//
// Root cause: AstConverter.stmt() builds Stmt.If / Stmt.Switch from the condition only and drops
// ICPPASTIfStatement.getInitializerStatement() / ICPPASTSwitchStatement.getInitializerStatement().
// NpPlanner therefore never sees `slot = atomicAdd(counter, 1)`: no store, no private write, no
// broadcast. (With a DECLARATION as init, `if (int slot = ...; ...)`, the name is unresolved and
// the kernel is refused; an EXPRESSION init is silently kept.) Output of k1:
//       int slot;
//       if (slot = atomicAdd(counter, 1); slot < cap) {              // all 8 members: 8 atomics
//           { klap_np_g.sync(); if (klap_np_g.slave == 0) { out[slot] = s; } klap_np_g.sync(); }
//       }
// Original: each thread takes one slot, out[0..31] are all written (cap = 32, 32 threads).
// Variant: 256 slots are taken, each member gets a different one; the master writes out[its slot],
// so most of out[0..31] are never written. Worse, members whose slot >= cap skip the
// if-body while the others call __syncwarp(mask) with them in the mask: undefined behaviour / hang.
// k2: `switch (atomicAdd(counter, 1); mode)`: the counter grows by 8 per thread instead of 1.
//
// Correct behaviour: model the init-statement (as a statement before the if/switch in its own
// scope: broadcast / master-only / refuse), or refuse kernels that use one, with a [klap-np] warning.
// Severity: silent wrong result; hang/UB in k1. Confidence: high.
__global__ void k1(const float *a, float *out, int *counter, int cap, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
#pragma np parallel for reduction(+:s)
    for (int i = 0; i < n; i++) {
        s += a[t * n + i];
    }
    int slot;
    if (slot = atomicAdd(counter, 1); slot < cap) {
        out[slot] = s;
    }
}

__global__ void k2(const float *a, float *out, int *counter, int mode, int n)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float s = 0.0f;
#pragma np parallel for reduction(+:s)
    for (int i = 0; i < n; i++) {
        s += a[t * n + i];
    }
    switch (atomicAdd(counter, 1); mode) {
    case 0: out[t] = s; break;
    default: out[t] = -s; break;
    }
}

int main()
{
    float *a, *o;
    int *c;
    cudaMalloc(&a, 32 * 4 * sizeof(float));
    cudaMalloc(&o, 32 * sizeof(float));
    cudaMalloc(&c, sizeof(int));
    cudaMemset(c, 0, sizeof(int));
    k1<<<1, 32>>>(a, o, c, 32, 4);
    k2<<<1, 32>>>(a, o, c, 0, 4);
    cudaDeviceSynchronize();
    return 0;
}
