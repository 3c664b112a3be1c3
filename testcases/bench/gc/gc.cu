// gc: graph colouring (KLAP Table I "gc"), CDP2 version: Jones-Plassmann colouring with
// first-fit colours, one child grid per uncoloured vertex over its neighbours.
//
// Every vertex has a distinct random priority. The host iterates rounds until every vertex is
// coloured. In each round gcParent (one thread per vertex, block 256) skips coloured and
// isolated vertices and launches gcChild over the vertex's adjacency list (one thread per
// neighbour, block 256) into cudaStreamFireAndForget: a neighbour that is still uncoloured and
// has a higher priority marks the vertex "not a local maximum"; a coloured neighbour adds its
// colour to the vertex's forbidden-colour bitmap (atomicOr). Then gcAssign (plain kernel)
// gives every uncoloured local maximum the smallest colour not forbidden. Local maxima are
// never adjacent, so one round colours an independent set; the result equals the sequential
// greedy first-fit colouring in descending priority order, which the CPU computes.
//
// Input: the adjacency graph of a random sparse symmetric matrix shaped like bcsstk13.mtx
// (2003 rows, 42943 stored lower-triangle nonzeros including the diagonal).
// Options: -n rows (2003)  -z stored lower-triangle nonzeros incl. diagonal (42943)
//          -w band half-width of the off-diagonal entries, 0 = unbanded (0)  -s seed (1)
//          -b parent block size (256)  -c child block size (256)
//          -r repetitions of the timed part (1; the median is printed)
// Output: PASS gc time_ms=<median time of the round loop> or FAIL gc: <reason>.

#include "common/bench_b.cuh"
#include "common/graphgen_b.cuh"

#include <climits>
#include <vector>

static constexpr int UNCOLORED = -1;

__global__ void gcChild(const int *adj, int deg, int v, int pv, const int *prio,
                        const int *color, int *notMax, unsigned int *forbidV) {
    int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= deg) return;
    int u = adj[e];
    int cu = color[u];
    if (cu == UNCOLORED) {
        if (prio[u] > pv) notMax[v] = 1;
    } else {
        atomicOr(&forbidV[cu >> 5], 1u << (cu & 31));
    }
}

__global__ void gcParent(const int *rowPtr, const int *colIdx, const int *prio, const int *color,
                         int *notMax, unsigned int *forbid, int words, int n, int childBlock) {
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n) return;
    if (color[v] != UNCOLORED) return;
    int start = rowPtr[v];
    int deg = rowPtr[v + 1] - start;
    if (deg > 0) {
        gcChild<<<(deg + childBlock - 1) / childBlock, childBlock, 0, cudaStreamFireAndForget>>>(
            colIdx + start, deg, v, prio[v], prio, color, notMax, forbid + (size_t)v * words);
    }
}

// Colours the uncoloured local maxima; clears the marks of the others and reports them.
__global__ void gcAssign(int *color, int *notMax, const unsigned int *forbid, int words, int n,
                         int *remaining) {
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n) return;
    if (color[v] != UNCOLORED) return;
    if (notMax[v]) {
        notMax[v] = 0;
        *remaining = 1;
        return;
    }
    const unsigned int *f = forbid + (size_t)v * words;
    int c = 0;
    for (int w = 0; w < words; ++w) {
        unsigned int free = ~f[w];
        if (free != 0) {
            c = w * 32 + __ffs(free) - 1;
            break;
        }
    }
    color[v] = c;
}

int main(int argc, char **argv) {
    bb::g_name = "gc";
    const int n = (int)bb::argInt(argc, argv, "-n", 2003);
    const long long nnz = bb::argInt(argc, argv, "-z", 42943);
    const int band = (int)bb::argInt(argc, argv, "-w", 0);
    const uint64_t seed = (uint64_t)bb::argInt(argc, argv, "-s", 1);
    const int block = (int)bb::argInt(argc, argv, "-b", 256);
    const int childBlock = (int)bb::argInt(argc, argv, "-c", 256);
    const int reps = (int)bb::argInt(argc, argv, "-r", 1);
    if (n < 2 || n > (1 << 24) || band < 0 || block < 1 || block > 1024 || childBlock < 1 ||
        childBlock > 1024 || reps < 1)
        return bb::report(false, 0, "bad options");

    const bb::CsrGraph g = bb::randomSymmetricMatrix(n, nnz, band, seed);
    const long long m = g.arcs();
    if (m > INT_MAX / 2) return bb::report(false, 0, "graph too large");
    // First-fit gives a colour <= degree: words * 32 > max degree bits suffice.
    const int words = g.maxDegree() / 32 + 1;

    // Distinct random priorities: a random permutation of 0..n-1.
    std::vector<int> prio(n);
    {
        bb::Rng rng(seed ^ 0x5eedc0105ull);
        for (int v = 0; v < n; ++v) prio[v] = v;
        for (int v = n - 1; v > 0; --v) std::swap(prio[v], prio[rng.below((uint32_t)v + 1)]);
    }

    // CPU reference: greedy first-fit in descending priority order (= Jones-Plassmann).
    std::vector<int> ref(n, UNCOLORED);
    int refColors = 0;
    {
        std::vector<int> order(n);
        for (int v = 0; v < n; ++v) order[n - 1 - prio[v]] = v;
        std::vector<int> mark(g.maxDegree() + 2, -1);
        for (int v : order) {
            for (int e = g.rowPtr[v]; e < g.rowPtr[v + 1]; ++e) {
                int cu = ref[g.colIdx[e]];
                if (cu != UNCOLORED) mark[cu] = v;
            }
            int c = 0;
            while (mark[c] == v) ++c;
            ref[v] = c;
            refColors = std::max(refColors, c + 1);
        }
    }

    // One round launches at most one child per vertex.
    bb::ensurePendingLaunches((long long)n + 2048);

    int *dRow = nullptr, *dCol = nullptr, *dPrio = nullptr, *dColor = nullptr, *dNotMax = nullptr,
        *dRemaining = nullptr;
    unsigned int *dForbid = nullptr;
    BB_CHECK(cudaMalloc(&dRow, sizeof(int) * (n + 1)));
    BB_CHECK(cudaMalloc(&dCol, sizeof(int) * (m > 0 ? m : 1)));
    BB_CHECK(cudaMalloc(&dPrio, sizeof(int) * n));
    BB_CHECK(cudaMalloc(&dColor, sizeof(int) * n));
    BB_CHECK(cudaMalloc(&dNotMax, sizeof(int) * n));
    BB_CHECK(cudaMalloc(&dForbid, sizeof(unsigned int) * (size_t)n * words));
    BB_CHECK(cudaMalloc(&dRemaining, sizeof(int)));
    BB_CHECK(cudaMemcpy(dRow, g.rowPtr.data(), sizeof(int) * (n + 1), cudaMemcpyHostToDevice));
    BB_CHECK(cudaMemcpy(dCol, g.colIdx.data(), sizeof(int) * m, cudaMemcpyHostToDevice));
    BB_CHECK(cudaMemcpy(dPrio, prio.data(), sizeof(int) * n, cudaMemcpyHostToDevice));

    std::vector<int> color(n);
    std::vector<float> times;
    bb::GpuTimer timer;
    for (int r = 0; r < reps; ++r) {
        BB_CHECK(cudaMemset(dColor, 0xff, sizeof(int) * n));  // UNCOLORED == -1
        BB_CHECK(cudaMemset(dNotMax, 0, sizeof(int) * n));
        BB_CHECK(cudaMemset(dForbid, 0, sizeof(unsigned int) * (size_t)n * words));
        BB_CHECK(cudaDeviceSynchronize());
        const int grid = (n + block - 1) / block;
        timer.start();
        int remaining = 0, rounds = 0;
        do {
            if (++rounds > n + 1) return bb::report(false, 0, "colouring did not terminate");
            BB_CHECK(cudaMemsetAsync(dRemaining, 0, sizeof(int)));
            gcParent<<<grid, block>>>(dRow, dCol, dPrio, dColor, dNotMax, dForbid, words, n,
                                      childBlock);
            BB_CHECK_LAUNCH();
            // gcAssign starts after gcParent and all its children completed.
            gcAssign<<<grid, block>>>(dColor, dNotMax, dForbid, words, n, dRemaining);
            BB_CHECK_LAUNCH();
            BB_CHECK(cudaMemcpy(&remaining, dRemaining, sizeof(int), cudaMemcpyDeviceToHost));
        } while (remaining);
        timer.stop();
        times.push_back(timer.ms());
        BB_CHECK(cudaDeviceSynchronize());

        BB_CHECK(cudaMemcpy(color.data(), dColor, sizeof(int) * n, cudaMemcpyDeviceToHost));
        char msg[192];
        int colors = 0;
        for (int v = 0; v < n; ++v) {
            if (color[v] < 0 || color[v] > g.degree(v)) {
                std::snprintf(msg, sizeof msg, "vertex %d has colour %d (repetition %d)", v,
                              color[v], r);
                return bb::report(false, 0, msg);
            }
            colors = std::max(colors, color[v] + 1);
            for (int e = g.rowPtr[v]; e < g.rowPtr[v + 1]; ++e) {
                if (color[g.colIdx[e]] == color[v]) {
                    std::snprintf(msg, sizeof msg, "adjacent vertices %d and %d share colour %d",
                                  v, g.colIdx[e], color[v]);
                    return bb::report(false, 0, msg);
                }
            }
        }
        for (int v = 0; v < n; ++v) {
            if (color[v] != ref[v]) {
                std::snprintf(msg, sizeof msg,
                              "colour[%d] = %d, expected %d (%d colours, expected %d)", v,
                              color[v], ref[v], colors, refColors);
                return bb::report(false, 0, msg);
            }
        }
    }
    BB_CHECK(cudaFree(dRow));
    BB_CHECK(cudaFree(dCol));
    BB_CHECK(cudaFree(dPrio));
    BB_CHECK(cudaFree(dColor));
    BB_CHECK(cudaFree(dNotMax));
    BB_CHECK(cudaFree(dForbid));
    BB_CHECK(cudaFree(dRemaining));
    return bb::report(true, times, nullptr);
}
