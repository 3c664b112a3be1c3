// libor: LIBOR market model Monte Carlo (GPGPU-Sim's LIB, after Giles' LIBOR code), baseline
// input of the CUDA-NP transform (issue 13). One thread per path; the np loops run over the
// forward rates (scan), the swap tenors (scans) and the options / time steps (reductions).
//
// NN = 80 forward rates L[i] for the periods [i d, (i + 1) d], d = 0.25 years. A path takes
// NMAT = 40 time steps of d (Euler step of log L under the spot measure, one Gaussian z per
// step): at step n the rates i > n move, driven by v_i = sum over n < j <= i of
// d lam_{j-n-1} L_j / (1 + d L_j), a running sum over i. Then, at T = NMAT d (10 years), a
// portfolio of NOPT = 15 payer swaptions (notional 100, strike K_m, swap over the next mat_m
// periods) is valued with the bond prices B[k] = prod_{j <= k} 1 / (1 + d L[NMAT + j]) (a running
// product) and the annuities S[k] = sum_{j <= k} d B[j] (a running sum), and discounted to time
// 0 with prod_{n < NMAT} 1 / (1 + d L[n]). Output: the discounted portfolio value of each path.
//
// Options: -n paths (4096)  -s seed (1)  -r repetitions (1)
// Output: PASS libor time_ms=.. first_ms=.. [warm_ms=..] reps=.. gbps=..  or  FAIL libor: <reason>

#include "common/bench_b.cuh"

#include <cmath>
#include <vector>

#define NN 80
#define NMAT 40
#define NOPT 15
#define BLOCK 64
#define DELTA 0.25f

__constant__ float c_L0[NN];      // initial forward curve
__constant__ float c_lambda[NN];  // volatility of a rate, by the number of periods to its reset
__constant__ int c_mat[NOPT];     // swap length of option m, in periods (1..NN - NMAT)
__constant__ float c_strike[NOPT];

__global__ void libor_path(const float *__restrict__ z, int npath, float *value) {
    const int p = blockIdx.x * blockDim.x + threadIdx.x;
    const int q = min(p, npath - 1);  // a thread past the end redoes the last path, stores nothing
    float L[NN], B[NN - NMAT], S[NN - NMAT];  // local arrays (640 bytes)
    #pragma np parallel for
    for (int i = 0; i < NN; i++) L[i] = c_L0[i];
    for (int n = 0; n < NMAT; n++) {
        const float sqez = sqrtf(DELTA) * z[n * npath + q];
        float v = 0.0f;
        #pragma np parallel for scan(+:v) copyin(n, sqez)
        for (int i = n + 1; i < NN; i++) {
            const float lam = c_lambda[i - n - 1];
            const float con1 = DELTA * lam;
            v += con1 * L[i] / (1.0f + DELTA * L[i]);
            L[i] = L[i] * expf(con1 * v + lam * (sqez - 0.5f * con1));
        }
    }
    float b = 1.0f;
    #pragma np parallel for scan(*:b)
    for (int k = NMAT; k < NN; k++) {
        b *= 1.0f / (1.0f + DELTA * L[k]);
        B[k - NMAT] = b;
    }
    float s = 0.0f;
    #pragma np parallel for scan(+:s)
    for (int k = 0; k < NN - NMAT; k++) {
        s += DELTA * B[k];
        S[k] = s;
    }
    float pay = 0.0f;
    #pragma np parallel for reduction(+:pay)
    for (int m = 0; m < NOPT; m++) {
        const int k = c_mat[m] - 1;
        const float swapval = B[k] + c_strike[m] * S[k] - 1.0f;
        if (swapval < 0.0f) pay += -100.0f * swapval;
    }
    float disc = 1.0f;
    #pragma np parallel for reduction(*:disc)
    for (int n = 0; n < NMAT; n++) disc *= 1.0f / (1.0f + DELTA * L[n]);
    if (p < npath) value[p] = disc * pay;
}

int main(int argc, char **argv) {
    bb::g_name = "libor";
    const long long nl = bb::argInt(argc, argv, "-n", 4096);
    const uint64_t seed = (uint64_t)bb::argInt(argc, argv, "-s", 1);
    const int reps = (int)bb::argInt(argc, argv, "-r", 1);
    if (nl < 1 || nl > (1LL << 24) || reps < 1) return bb::report(false, 0, "bad options");
    const int npath = (int)nl;

    // Model: forward curve rising from 4% to 6%, volatility 0.15 + 0.1 exp(-j / 20) for a rate
    // j + 1 periods from its reset; swaps of 4..40 periods, strikes 4.5%..5.5%.
    std::vector<float> L0(NN), lambda(NN), strike(NOPT);
    std::vector<int> mat(NOPT);
    for (int i = 0; i < NN; i++) {
        L0[i] = 0.04f + 0.02f * i / (NN - 1);
        lambda[i] = (float)(0.15 + 0.1 * std::exp(-i / 20.0));
    }
    for (int m = 0; m < NOPT; m++) {
        mat[m] = 4 + (m * (NN - NMAT - 4)) / (NOPT - 1);
        strike[m] = 0.045f + 0.005f * (m % 3);
    }
    // Gaussian increments (Box-Muller), step-major: z[n * npath + p].
    std::vector<float> z((size_t)NMAT * npath);
    bb::Rng rng(seed);
    for (size_t e = 0; e < z.size(); e++) {
        const double u1 = 1.0 - rng.uniform(), u2 = rng.uniform();
        z[e] = (float)(std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2));
    }

    // CPU reference in double; scale[p] bounds the magnitude of what the value sums and
    // subtracts: disc * 100 * sum_m (1 + B + K S) (the payoff cancels 1 against B + K S).
    std::vector<double> ref(npath), scale(npath);
    for (int p = 0; p < npath; p++) {
        double L[NN], B[NN - NMAT], S[NN - NMAT];
        for (int i = 0; i < NN; i++) L[i] = L0[i];
        for (int n = 0; n < NMAT; n++) {
            const double sqez = std::sqrt((double)DELTA) * z[(size_t)n * npath + p];
            double v = 0.0;
            for (int i = n + 1; i < NN; i++) {
                const double lam = lambda[i - n - 1], con1 = DELTA * lam;
                v += con1 * L[i] / (1.0 + DELTA * L[i]);
                L[i] *= std::exp(con1 * v + lam * (sqez - 0.5 * con1));
            }
        }
        double b = 1.0, s = 0.0, pay = 0.0, mag = 0.0, disc = 1.0;
        for (int k = 0; k < NN - NMAT; k++) {
            b /= 1.0 + DELTA * L[NMAT + k];
            s += DELTA * b;
            B[k] = b;
            S[k] = s;
        }
        for (int m = 0; m < NOPT; m++) {
            const double sv = B[mat[m] - 1] + strike[m] * S[mat[m] - 1] - 1.0;
            if (sv < 0.0) pay -= 100.0 * sv;
            mag += 100.0 * (1.0 + B[mat[m] - 1] + strike[m] * S[mat[m] - 1]);
        }
        for (int n = 0; n < NMAT; n++) disc /= 1.0 + DELTA * L[n];
        ref[p] = disc * pay;
        scale[p] = disc * mag;
    }

    BB_CHECK(cudaMemcpyToSymbol(c_L0, L0.data(), NN * sizeof(float)));
    BB_CHECK(cudaMemcpyToSymbol(c_lambda, lambda.data(), NN * sizeof(float)));
    BB_CHECK(cudaMemcpyToSymbol(c_mat, mat.data(), NOPT * sizeof(int)));
    BB_CHECK(cudaMemcpyToSymbol(c_strike, strike.data(), NOPT * sizeof(float)));
    float *dz = nullptr, *dv = nullptr;
    BB_CHECK(cudaMalloc(&dz, z.size() * sizeof(float)));
    BB_CHECK(cudaMalloc(&dv, npath * sizeof(float)));
    BB_CHECK(cudaMemcpy(dz, z.data(), z.size() * sizeof(float), cudaMemcpyHostToDevice));

    // |error| <= tol * scale: 40 compounded steps, a few ulps each; 12x the largest error of a
    // float simulation (any scan order, expf off by 2 ulps) over 100000 paths (README).
    const double tol = 2e-5;
    std::vector<float> out(npath), times;
    bb::GpuTimer timer;
    for (int rep = 0; rep < reps; rep++) {
        BB_CHECK(cudaMemset(dv, 0xff, npath * sizeof(float)));  // NaN: unwritten outputs fail
        timer.start();
        libor_path<<<(npath + BLOCK - 1) / BLOCK, BLOCK>>>(dz, npath, dv);
        timer.stop();
        BB_CHECK_LAUNCH();
        times.push_back(timer.ms());
        BB_CHECK(cudaMemcpy(out.data(), dv, npath * sizeof(float), cudaMemcpyDeviceToHost));
        for (int p = 0; p < npath; p++) {
            if (!(std::fabs(out[p] - ref[p]) <= tol * scale[p])) {
                char msg[128];
                std::snprintf(msg, sizeof msg, "rep %d: path %d has value %.9g, expected %.9g",
                              rep, p, (double)out[p], ref[p]);
                return bb::report(false, 0, msg);
            }
        }
    }
    BB_CHECK(cudaFree(dz));
    BB_CHECK(cudaFree(dv));
    // Per path: NMAT Gaussian increments read, one value written.
    const double work = (double)npath * (NMAT + 1) * sizeof(float) / 1e9;
    return bb::report(true, times, nullptr, "gbps", work);
}
