// lud: blocked LU decomposition without pivoting (after Rodinia's lud), baseline input of the
// CUDA-NP transform (issue 13). The perimeter kernel carries the np loops.
//
// The n x n row-major matrix is cut into BS x BS tiles. Step s (offset off = s * BS) runs
//   lud_diagonal   <<<1, BS>>>          factors the diagonal tile in place (L unit lower, U upper);
//   lud_perimeter  <<<nb, 2 * BS>>>     block b solves the row tile right of the diagonal
//                                        (U12 = L11^-1 A12, threads 0..BS-1, one column each) and
//                                        the column tile below it (L21 = A21 U11^-1, threads
//                                        BS..2BS-1, one row each), tiles in shared memory;
//   lud_internal   <<<(nb, nb), (BS, BS)>>>  A22 -= L21 U12 on the trailing tiles;
// with nb = (n - off) / BS - 1, then lud_diagonal factors the last tile.
// Only the perimeter kernels are timed (their event times are summed over the steps).
//
// Options: -n matrix size (2048, a multiple of BS, at least 2 BS)  -s seed (1)  -r repetitions (1)
// Output: PASS lud time_ms=.. first_ms=.. [warm_ms=..] reps=.. gbps=..  or  FAIL lud: <reason>

#include "common/bench_b.cuh"

#include <cmath>
#include <vector>

#ifndef BS
#define BS 16
#endif

__global__ void lud_diagonal(float *m, int n, int off) {
    __shared__ float a[BS][BS];
    const int t = threadIdx.x;  // row t of the tile after the load
    for (int r = 0; r < BS; r++) a[r][t] = m[(off + r) * n + off + t];
    __syncthreads();
    for (int k = 0; k < BS - 1; k++) {
        if (t > k) a[t][k] /= a[k][k];
        __syncthreads();
        if (t > k)
            for (int j = k + 1; j < BS; j++) a[t][j] -= a[t][k] * a[k][j];
        __syncthreads();
    }
    for (int r = 0; r < BS; r++) m[(off + r) * n + off + t] = a[r][t];
}

__global__ void lud_perimeter(float *m, int n, int off) {
    __shared__ float dia[BS][BS], prow[BS][BS], pcol[BS][BS];
    const int t = threadIdx.x, c = t - BS;  // c: column (load, store) or row (solve) for t >= BS
    const int base = off + (blockIdx.x + 1) * BS;  // first column of the row tile, first row of
                                                   // the column tile
    // The diagonal tile: thread t loads column t % BS of every other row.
    for (int r = t / BS; r < BS; r += 2) dia[r][t % BS] = m[(off + r) * n + off + t % BS];
    if (t < BS) {
        #pragma np parallel for copyin(base, t)
        for (int r = 0; r < BS; r++) prow[r][t] = m[(off + r) * n + base + t];
    } else {
        #pragma np parallel for copyin(base, c)
        for (int r = 0; r < BS; r++) pcol[r][c] = m[(base + r) * n + off + c];
    }
    __syncthreads();
    if (t < BS) {
        // Forward substitution with the unit lower triangle of dia, column t of the row tile.
        for (int i = 1; i < BS; i++) {
            float sum = 0.0f;
            #pragma np parallel for reduction(+:sum) copyin(i, t)
            for (int j = 0; j < i; j++) sum += dia[i][j] * prow[j][t];
            prow[i][t] -= sum;
        }
    } else {
        // Solve x U = a with the upper triangle of dia, row c of the column tile.
        for (int i = 0; i < BS; i++) {
            float sum = 0.0f;
            #pragma np parallel for reduction(+:sum) copyin(i, c)
            for (int j = 0; j < i; j++) sum += pcol[c][j] * dia[j][i];
            pcol[c][i] = (pcol[c][i] - sum) / dia[i][i];
        }
    }
    __syncthreads();  // the column tile was solved by rows and is stored by columns
    if (t < BS) {
        #pragma np parallel for copyin(base, t)
        for (int r = 0; r < BS; r++) m[(off + r) * n + base + t] = prow[r][t];
    } else {
        #pragma np parallel for copyin(base, c)
        for (int r = 0; r < BS; r++) m[(base + r) * n + off + c] = pcol[r][c];
    }
}

__global__ void lud_internal(float *m, int n, int off) {
    __shared__ float lt[BS][BS], ut[BS][BS];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = off + (blockIdx.y + 1) * BS + ty, col = off + (blockIdx.x + 1) * BS + tx;
    lt[ty][tx] = m[row * n + off + tx];
    ut[ty][tx] = m[(off + ty) * n + col];
    __syncthreads();
    float sum = 0.0f;
    for (int k = 0; k < BS; k++) sum += lt[ty][k] * ut[k][tx];
    m[row * n + col] -= sum;
}

// CPU reference: unblocked right-looking LU in double. ref gets L\U packed like the GPU result;
// bound gets, per element, the scale of its rounding error: |a_ij| + sum_k |l_ik| |u_kj| for U
// (i <= j), and that divided by |u_jj| for L (i > j). O(n^3): compiled with -O3 (~4 s for
// n = 2048; ~15 s with nvcc's default host optimization).
__attribute__((optimize("O3"))) static void reference(const std::vector<float> &a, int n,
                                                      std::vector<double> &ref,
                                                      std::vector<double> &bound) {
    ref.assign(a.begin(), a.end());
    bound.resize(a.size());
    for (size_t e = 0; e < a.size(); e++) bound[e] = std::fabs(ref[e]);
    for (int k = 0; k < n; k++) {
        const double *rk = &ref[(size_t)k * n];
        for (int i = k + 1; i < n; i++) {
            double *ri = &ref[(size_t)i * n], *bi = &bound[(size_t)i * n];
            const double l = ri[k] / rk[k];
            ri[k] = l;
            bi[k] /= std::fabs(rk[k]);
            const double al = std::fabs(l);
            for (int j = k + 1; j < n; j++) {
                ri[j] -= l * rk[j];
                bi[j] += al * std::fabs(rk[j]);
            }
        }
    }
}

int main(int argc, char **argv) {
    bb::g_name = "lud";
    const long long nl = bb::argInt(argc, argv, "-n", 2048);
    const uint64_t seed = (uint64_t)bb::argInt(argc, argv, "-s", 1);
    const int reps = (int)bb::argInt(argc, argv, "-r", 1);
    if (nl < 2 * BS || nl % BS != 0 || nl > 16384 || reps < 1)
        return bb::report(false, 0, "bad options (-n: a multiple of BS in [2 BS, 16384])");
    const int n = (int)nl, tiles = n / BS;
    const size_t elems = (size_t)n * n;

    // Strictly row diagonally dominant input: off-diagonal uniform in [-1, 1), diagonal
    // 1 + sum of the row's |off-diagonal|, so LU without pivoting exists and is stable.
    std::vector<float> a(elems);
    bb::Rng rng(seed);
    for (int i = 0; i < n; i++) {
        double rowSum = 0.0;
        for (int j = 0; j < n; j++) {
            if (i == j) continue;
            a[(size_t)i * n + j] = (float)(2.0 * rng.uniform() - 1.0);
            rowSum += std::fabs(a[(size_t)i * n + j]);
        }
        a[(size_t)i * n + i] = (float)(1.0 + rowSum);
    }
    std::vector<double> ref, bound;
    reference(a, n, ref, bound);

    float *d = nullptr;
    BB_CHECK(cudaMalloc(&d, elems * sizeof(float)));
    std::vector<float> out(elems);
    std::vector<float> times;
    bb::GpuTimer timer;
    // Tolerance relative to the error scale `bound`: 8 sqrt(n) u (u = 2^-24), the probabilistic
    // rounding-error growth of a length-n dot product with a 10x margin (see README).
    const double tol = 8.0 * std::sqrt((double)n) * std::ldexp(1.0, -24);
    for (int rep = 0; rep < reps; rep++) {
        BB_CHECK(cudaMemcpy(d, a.data(), elems * sizeof(float), cudaMemcpyHostToDevice));
        float ms = 0.0f;
        for (int off = 0; off < n - BS; off += BS) {
            const int nb = (n - off) / BS - 1;
            lud_diagonal<<<1, BS>>>(d, n, off);
            BB_CHECK_LAUNCH();
            timer.start();
            lud_perimeter<<<nb, 2 * BS>>>(d, n, off);
            timer.stop();
            BB_CHECK_LAUNCH();
            ms += timer.ms();
            lud_internal<<<dim3(nb, nb), dim3(BS, BS)>>>(d, n, off);
            BB_CHECK_LAUNCH();
        }
        lud_diagonal<<<1, BS>>>(d, n, n - BS);
        BB_CHECK_LAUNCH();
        BB_CHECK(cudaDeviceSynchronize());
        times.push_back(ms);
        BB_CHECK(cudaMemcpy(out.data(), d, elems * sizeof(float), cudaMemcpyDeviceToHost));
        for (size_t e = 0; e < elems; e++) {
            const double err = std::fabs((double)out[e] - ref[e]);
            if (!(err <= tol * bound[e])) {
                char msg[160];
                std::snprintf(msg, sizeof msg, "rep %d: element (%zu, %zu) is %.9g, expected %.9g",
                              rep, e / n, e % n, (double)out[e], ref[e]);
                BB_CHECK(cudaFree(d));
                return bb::report(false, 0, msg);
            }
        }
    }
    BB_CHECK(cudaFree(d));
    // Per perimeter block: the diagonal tile, the row tile and the column tile read, the two
    // solved tiles written (5 BS^2 floats); sum_{s} nb(s) = tiles (tiles - 1) / 2 blocks.
    const double blocks = (double)tiles * (tiles - 1) / 2.0;
    const double work = blocks * 5.0 * BS * BS * sizeof(float) / 1e9;
    return bb::report(true, times, nullptr, "gbps", work);
}
