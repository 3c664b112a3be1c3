// sp: survey propagation on a random k-SAT formula (KLAP Table I "sp", after LonestarGPU's
// sp), CDP2 version: one child grid per variable over the variable's occurrences.
//
// Every literal (edge) e of clause a carries a survey eta[e] = eta_{a->i} for its variable i.
// The host runs a fixed number of synchronous SP iterations (the kernels are launched in a
// host loop). An iteration:
//   spVar    (CDP, one parent thread per variable, block 384) returns early for a variable
//            without occurrences and otherwise launches spVarChild over the variable's
//            occurrences (one thread per occurrence, block 64) into cudaStreamFireAndForget.
//            The child thread of occurrence e (clause a) multiplies (1 - eta) over the other
//            occurrences of the variable with the same sign (pS) and with the opposite sign
//            (pO) and writes the variable-to-clause message
//              msg[e] = PiU / (PiU + PiS + Pi0),  PiU = (1 - pO) pS,  PiS = (1 - pS) pO,
//              Pi0 = pS pO   (0 if the denominator is 0);
//   spClause (plain kernel, one thread per clause) sets every survey of the clause to the
//            product of the messages of its other literals: eta_{a->i} = prod_{j != i} msg.
// Double precision; the surveys after the last iteration are compared with a CPU run of the
// same iterations (absolute tolerance 1e-6).
//
// Input: a random 3-SAT formula like random-42000-10000-3.cnf (10000 variables, 42000 clauses,
// distinct variables per clause, random signs); initial surveys uniform in [0, 1).
// Options: -v variables (10000)  -m clauses (42000)  -k literals per clause (3)  -t SP
//          iterations (50)  -s seed (1)  -b parent block size (384)  -c child block size (64)
//          -r repetitions of the timed part (1; the median is printed)
// Output: PASS sp time_ms=<median time of the iteration loop> or FAIL sp: <reason>.

#include "common/bench_b.cuh"
#include "common/satgen_b.cuh"

#include <climits>
#include <cmath>
#include <vector>

__global__ void spVarChild(const int *occV, int deg, const int *neg, const double *eta,
                           double *msg) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= deg) return;
    int e = occV[i];
    int sign = neg[e];
    double pS = 1.0, pO = 1.0;
    for (int q = 0; q < deg; ++q) {
        if (q == i) continue;
        int f = occV[q];
        double x = 1.0 - eta[f];
        if (neg[f] == sign)
            pS *= x;
        else
            pO *= x;
    }
    double piU = (1.0 - pO) * pS;
    double piS = (1.0 - pS) * pO;
    double pi0 = pS * pO;
    double den = piU + piS + pi0;
    msg[e] = den > 0.0 ? piU / den : 0.0;
}

// Variable side: the messages from every variable to the clauses it occurs in.
__global__ void spVar(const int *occStart, const int *occ, const int *neg, const double *eta,
                      double *msg, int nVars, int childBlock) {
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= nVars) return;
    int start = occStart[v];
    int deg = occStart[v + 1] - start;
    if (deg == 0) return;
    spVarChild<<<(deg + childBlock - 1) / childBlock, childBlock, 0, cudaStreamFireAndForget>>>(
        occ + start, deg, neg, eta, msg);
}

// Clause side: the new surveys of every clause.
__global__ void spClause(const double *msg, double *eta, int nClauses, int k) {
    int a = blockIdx.x * blockDim.x + threadIdx.x;
    if (a >= nClauses) return;
    const double *m = msg + (size_t)a * k;
    for (int i = 0; i < k; ++i) {
        double p = 1.0;
        for (int j = 0; j < k; ++j)
            if (j != i) p *= m[j];
        eta[(size_t)a * k + i] = p;
    }
}

int main(int argc, char **argv) {
    bb::g_name = "sp";
    const int nVars = (int)bb::argInt(argc, argv, "-v", 10000);
    const int nClauses = (int)bb::argInt(argc, argv, "-m", 42000);
    const int k = (int)bb::argInt(argc, argv, "-k", 3);
    const int iters = (int)bb::argInt(argc, argv, "-t", 50);
    const uint64_t seed = (uint64_t)bb::argInt(argc, argv, "-s", 1);
    const int block = (int)bb::argInt(argc, argv, "-b", 384);
    const int childBlock = (int)bb::argInt(argc, argv, "-c", 64);
    const int reps = (int)bb::argInt(argc, argv, "-r", 1);
    if (nVars < 1 || nClauses < 1 || k < 1 || k > nVars || k > 64 ||
        (long long)nClauses * k > INT_MAX / 2 || iters < 1 || block < 1 || block > 1024 ||
        childBlock < 1 || childBlock > 1024 || reps < 1)
        return bb::report(false, 0, "bad options");

    const bb::SatFormula f = bb::randomKSat(nVars, nClauses, k, seed);
    const size_t E = f.var.size();
    std::vector<double> eta0(E);
    {
        bb::Rng rng(seed ^ 0x5075e1ull);
        for (size_t e = 0; e < E; ++e) eta0[e] = rng.uniform();
    }

    // CPU reference: the same iterations.
    std::vector<double> ref(eta0), refMsg(E);
    for (int t = 0; t < iters; ++t) {
        for (int v = 0; v < nVars; ++v) {
            int start = f.occStart[v], deg = f.occStart[v + 1] - start;
            for (int i = 0; i < deg; ++i) {
                int e = f.occ[start + i];
                double pS = 1.0, pO = 1.0;
                for (int q = 0; q < deg; ++q) {
                    if (q == i) continue;
                    int g = f.occ[start + q];
                    double x = 1.0 - ref[g];
                    if (f.neg[g] == f.neg[e])
                        pS *= x;
                    else
                        pO *= x;
                }
                double piU = (1.0 - pO) * pS, piS = (1.0 - pS) * pO, pi0 = pS * pO;
                double den = piU + piS + pi0;
                refMsg[e] = den > 0.0 ? piU / den : 0.0;
            }
        }
        for (int a = 0; a < nClauses; ++a)
            for (int i = 0; i < k; ++i) {
                double p = 1.0;
                for (int j = 0; j < k; ++j)
                    if (j != i) p *= refMsg[(size_t)a * k + j];
                ref[(size_t)a * k + i] = p;
            }
    }

    // One spVar grid launches at most one child per variable.
    bb::ensurePendingLaunches((long long)nVars + 2048);

    int *dOccStart = nullptr, *dOcc = nullptr, *dNeg = nullptr;
    double *dEta = nullptr, *dMsg = nullptr;
    BB_CHECK(cudaMalloc(&dOccStart, sizeof(int) * (nVars + 1)));
    BB_CHECK(cudaMalloc(&dOcc, sizeof(int) * E));
    BB_CHECK(cudaMalloc(&dNeg, sizeof(int) * E));
    BB_CHECK(cudaMalloc(&dEta, sizeof(double) * E));
    BB_CHECK(cudaMalloc(&dMsg, sizeof(double) * E));
    BB_CHECK(cudaMemcpy(dOccStart, f.occStart.data(), sizeof(int) * (nVars + 1),
                        cudaMemcpyHostToDevice));
    BB_CHECK(cudaMemcpy(dOcc, f.occ.data(), sizeof(int) * E, cudaMemcpyHostToDevice));
    BB_CHECK(cudaMemcpy(dNeg, f.neg.data(), sizeof(int) * E, cudaMemcpyHostToDevice));

    std::vector<double> eta(E);
    std::vector<float> times;
    bb::GpuTimer timer;
    const int varGrid = (nVars + block - 1) / block, clauseGrid = (nClauses + block - 1) / block;
    for (int r = 0; r < reps; ++r) {
        BB_CHECK(cudaMemcpy(dEta, eta0.data(), sizeof(double) * E, cudaMemcpyHostToDevice));
        BB_CHECK(cudaMemset(dMsg, 0, sizeof(double) * E));
        BB_CHECK(cudaDeviceSynchronize());
        timer.start();
        for (int t = 0; t < iters; ++t) {
            spVar<<<varGrid, block>>>(dOccStart, dOcc, dNeg, dEta, dMsg, nVars, childBlock);
            BB_CHECK_LAUNCH();
            // spClause starts after spVar and all its children completed.
            spClause<<<clauseGrid, block>>>(dMsg, dEta, nClauses, k);
            BB_CHECK_LAUNCH();
        }
        timer.stop();
        times.push_back(timer.ms());
        BB_CHECK(cudaDeviceSynchronize());

        BB_CHECK(cudaMemcpy(eta.data(), dEta, sizeof(double) * E, cudaMemcpyDeviceToHost));
        for (size_t e = 0; e < E; ++e) {
            if (!(std::fabs(eta[e] - ref[e]) <= 1e-6)) {
                char msg[192];
                std::snprintf(msg, sizeof msg,
                              "survey of literal %zu (clause %zu) = %.9f, expected %.9f "
                              "(repetition %d)",
                              e, e / k, eta[e], ref[e], r);
                return bb::report(false, 0, msg);
            }
        }
    }
    BB_CHECK(cudaFree(dOccStart));
    BB_CHECK(cudaFree(dOcc));
    BB_CHECK(cudaFree(dNeg));
    BB_CHECK(cudaFree(dEta));
    BB_CHECK(cudaFree(dMsg));
    return bb::report(true, times, nullptr);
}
