// Deterministic random k-SAT generator for the survey-propagation benchmark sp
// (testcases/bench), like LonestarGPU's random-42000-10000-3.cnf: every clause has k distinct
// variables chosen uniformly and independent random signs. Also builds the variable-to-
// occurrence index (CSR) that the benchmark iterates over. Host code only.
#pragma once

#include "bench_b.cuh"

#include <vector>

namespace bb {

// Clause c has the k literals (edges) e = k*c .. k*c + k - 1: variable var[e], negated if
// neg[e] != 0. The occurrences of variable v are the edges occ[occStart[v] .. occStart[v+1]),
// ascending.
struct SatFormula {
    int nVars = 0, nClauses = 0, k = 0;
    std::vector<int> var, neg;
    std::vector<int> occStart, occ;
};

inline SatFormula randomKSat(int nVars, int nClauses, int k, uint64_t seed) {
    if (k < 1 || nVars < k || nClauses < 1) fail("bad SAT sizes (need 1 <= k <= vars, clauses >= 1)");
    SatFormula f;
    f.nVars = nVars;
    f.nClauses = nClauses;
    f.k = k;
    f.var.resize((size_t)nClauses * k);
    f.neg.resize((size_t)nClauses * k);
    Rng rng(seed);
    for (int c = 0; c < nClauses; ++c) {
        for (int i = 0; i < k; ++i) {
            int v;
            bool fresh;
            do {  // distinct variables within a clause
                v = (int)rng.below((uint32_t)nVars);
                fresh = true;
                for (int j = 0; j < i; ++j) fresh = fresh && f.var[(size_t)c * k + j] != v;
            } while (!fresh);
            f.var[(size_t)c * k + i] = v;
            f.neg[(size_t)c * k + i] = (int)(rng.next() & 1);
        }
    }
    f.occStart.assign(nVars + 1, 0);
    for (int v : f.var) ++f.occStart[v + 1];
    for (int v = 0; v < nVars; ++v) f.occStart[v + 1] += f.occStart[v];
    f.occ.resize(f.var.size());
    std::vector<int> fill(f.occStart.begin(), f.occStart.end() - 1);
    for (size_t e = 0; e < f.var.size(); ++e) f.occ[fill[f.var[e]]++] = (int)e;
    return f;
}

}  // namespace bb
