// Deterministic input generators for the graph benchmarks gc, mstf, mstv and sssp
// (testcases/bench): an R-MAT graph (like LonestarGPU's rmat12.sym.gr) and a random sparse
// symmetric matrix (like bcsstk13.mtx), both returned as a symmetric CSR graph without self
// loops or duplicate edges, neighbours sorted by index. Host code only; nothing is downloaded.
#pragma once

#include "bench_b.cuh"

#include <unordered_set>
#include <utility>
#include <vector>

namespace bb {

// Symmetric graph in CSR form: the neighbours of v are colIdx[rowPtr[v] .. rowPtr[v+1]),
// sorted ascending; weight[e] is the weight of arc e (both arcs of an undirected edge carry
// the same weight; empty for unweighted graphs).
struct CsrGraph {
    int n = 0;
    std::vector<int> rowPtr, colIdx, weight;
    long long arcs() const { return (long long)colIdx.size(); }
    int degree(int v) const { return rowPtr[v + 1] - rowPtr[v]; }
    int maxDegree() const {
        int d = 0;
        for (int v = 0; v < n; ++v) d = std::max(d, degree(v));
        return d;
    }
};

// Builds the CSR graph from undirected edges (lo < hi, no duplicates), each stored in both
// directions. w may be empty (unweighted) or hold one weight per edge.
inline CsrGraph buildSymmetricCsr(int n, const std::vector<std::pair<int, int>> &edges,
                                  const std::vector<int> &w) {
    CsrGraph g;
    g.n = n;
    g.rowPtr.assign(n + 1, 0);
    for (const auto &e : edges) {
        ++g.rowPtr[e.first + 1];
        ++g.rowPtr[e.second + 1];
    }
    for (int v = 0; v < n; ++v) g.rowPtr[v + 1] += g.rowPtr[v];
    g.colIdx.assign(g.rowPtr[n], 0);
    if (!w.empty()) g.weight.assign(g.rowPtr[n], 0);
    std::vector<int> fill(g.rowPtr.begin(), g.rowPtr.end() - 1);
    for (size_t i = 0; i < edges.size(); ++i) {
        int a = edges[i].first, b = edges[i].second;
        int pa = fill[a]++, pb = fill[b]++;
        g.colIdx[pa] = b;
        g.colIdx[pb] = a;
        if (!w.empty()) g.weight[pa] = g.weight[pb] = w[i];
    }
    // Sort each row by neighbour (keeping weights attached).
    for (int v = 0; v < n; ++v) {
        int s = g.rowPtr[v], t = g.rowPtr[v + 1];
        std::vector<std::pair<int, int>> row;
        row.reserve(t - s);
        for (int e = s; e < t; ++e) row.emplace_back(g.colIdx[e], w.empty() ? 0 : g.weight[e]);
        std::sort(row.begin(), row.end());
        for (int e = s; e < t; ++e) {
            g.colIdx[e] = row[e - s].first;
            if (!w.empty()) g.weight[e] = row[e - s].second;
        }
    }
    return g;
}

// R-MAT graph (Chakrabarti et al.; GTgraph's defaults a=0.45, b=0.15, c=0.15, d=0.25) on
// n = 2^k vertices: `samples` edge samples, self loops and duplicates dropped, symmetrized.
// Weights are uniform in [1, maxW] per undirected edge (maxW >= 1). Deterministic in `seed`.
inline CsrGraph rmatSymmetric(int n, long long samples, int maxW, uint64_t seed) {
    if (n < 2 || (n & (n - 1)) != 0) fail("R-MAT needs a power-of-two vertex count >= 2");
    int levels = 0;
    while ((1 << levels) < n) ++levels;
    const double a = 0.45, b = 0.15, c = 0.15;
    Rng rng(seed);
    std::vector<uint64_t> keys;
    keys.reserve((size_t)samples);
    for (long long s = 0; s < samples; ++s) {
        int u = 0, v = 0;
        for (int l = levels - 1; l >= 0; --l) {
            double r = rng.uniform();
            if (r < a) {
            } else if (r < a + b) {
                v |= 1 << l;
            } else if (r < a + b + c) {
                u |= 1 << l;
            } else {
                u |= 1 << l;
                v |= 1 << l;
            }
        }
        if (u == v) continue;
        int lo = std::min(u, v), hi = std::max(u, v);
        keys.push_back(((uint64_t)lo << 32) | (uint64_t)hi);
    }
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    std::vector<std::pair<int, int>> edges;
    std::vector<int> w;
    edges.reserve(keys.size());
    w.reserve(keys.size());
    for (uint64_t k : keys) {
        edges.emplace_back((int)(k >> 32), (int)(k & 0xffffffffu));
        w.push_back(1 + (int)rng.below((uint32_t)maxW));
    }
    return buildSymmetricCsr(n, edges, w);
}

// Sparsity pattern of a random sparse symmetric n x n matrix with `nnzLower` stored entries
// in its lower triangle, the n diagonal entries included (Matrix Market "symmetric" counting,
// bcsstk13: n = 2003, 42943). The nnzLower - n off-diagonal entries (i, j), j < i, are
// distinct and uniform; with band > 0 they lie within i - band <= j < i. Returned as the
// unweighted adjacency graph (diagonal dropped). Deterministic in `seed`.
inline CsrGraph randomSymmetricMatrix(int n, long long nnzLower, int band, uint64_t seed) {
    if (n < 2) fail("matrix needs at least 2 rows");
    long long off = nnzLower - n;
    long long capacity = 0;
    for (int i = 1; i < n; ++i) capacity += (band > 0) ? std::min(band, i) : i;
    if (off < 0 || off > capacity / 2)
        fail("nonzero count out of range (need n <= nnz and at most half of the possible "
             "off-diagonal entries)");
    Rng rng(seed);
    std::unordered_set<uint64_t> seen;
    seen.reserve((size_t)off * 2);
    std::vector<uint64_t> keys;
    keys.reserve((size_t)off);
    while ((long long)keys.size() < off) {
        // Uniform over the allowed pairs: two distinct rows, or a row and a band offset.
        int j = (int)rng.below((uint32_t)n);
        int i = (band > 0) ? j + 1 + (int)rng.below((uint32_t)band) : (int)rng.below((uint32_t)n);
        if (i >= n || i == j) continue;
        if (i < j) std::swap(i, j);
        uint64_t k = ((uint64_t)j << 32) | (uint64_t)i;
        if (seen.insert(k).second) keys.push_back(k);
    }
    std::sort(keys.begin(), keys.end());
    std::vector<std::pair<int, int>> edges;
    edges.reserve(keys.size());
    for (uint64_t k : keys) edges.emplace_back((int)(k >> 32), (int)(k & 0xffffffffu));
    return buildSymmetricCsr(n, edges, std::vector<int>());
}

}  // namespace bb
