// np5: a local array whose only write in a parallel loop goes through a reference parameter
// (`put(a[i], v)` with `void put(float &dst, float v)`) is taken as read-only in the loop and
// stays a private copy per member.
//
//   java -jar /tmp/klap-review.jar --np=intra-warp np5_array_refwrite.cu -o out.cu   (also inter-warp, all)
//
// What klap does: loop() sees the reference-parameter write (CalleeFacts.refParams) but skips it
// because `a` is an array (arrays are placed later, not reductions). NpPlanner.placeArrays() looks
// for a writer with isWritten(), which only knows assignments and ++/-- (writeTarget), not calls:
// writer == null -> "read-only in parallel loops: every member keeps its own full copy". Output:
//       float a[N];                                   // unchanged: one private copy per member
//       for (k = slave; k < 16; k += 8) { const int i = nth(0, k); { put(a[i], 2.0f * x[..]); } }
//       for (int j = 0; j < N; j++) { s += a[j]; }   // every member sums its own copy
//       { sync; if (slave == 0) { out[t] = s; } sync; }
// The master's copy holds only elements 0 and 8; the 14 others are uninitialized.
//
// Correct behaviour: count array elements passed to writable reference parameters as writes in
// placeArrays (shared placement here, since a[j] is read in sequential code), or refuse the loop.
// Severity: silent wrong result. Confidence: high.
#define N 16
__device__ void put(float &dst, float v) { dst = v; }

__global__ void k(const float *x, float *out)
{
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    float a[N];
#pragma np parallel for
    for (int i = 0; i < N; i++) {
        put(a[i], 2.0f * x[t * N + i]);
    }
    float s = 0.0f;
    for (int j = 0; j < N; j++) {
        s += a[j];
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
