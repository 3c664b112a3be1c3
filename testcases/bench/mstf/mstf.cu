// mstf: minimum spanning tree, Boruvka (KLAP Table I "mstf", after LonestarGPU's mst), CDP2
// version of the "find" phase: one child grid per vertex over its edges.
//
// The host iterates Boruvka rounds until no component has an edge leaving it. A round:
//   mstReset   clears the per-vertex and per-component minima;
//   mstFind    (CDP, one parent thread per vertex, block 1024) launches mstFindChild over the
//              vertex's edges (one thread per edge, block 1024) into cudaStreamFireAndForget;
//              a child thread whose edge leaves the component lowers the vertex's minimum
//              weight and the component's minimum weight with atomicMin;
//   mstVerify  (plain kernel) every vertex whose minimum equals its component's minimum scans
//              its edges again for the edges of that weight leaving the component and lowers
//              the component's minimum edge key (weight, lower end, higher end) with a 64-bit
//              atomicMin: a total order on the edges, so the MST is unique;
//   mstHook, mstTies, mstJump  every component points to the component across its minimum
//              edge; of a mutual pair the lower id becomes the root; every other component
//              adds its edge to the tree; every vertex follows the pointers to its new root.
// The total weight and the edge count of the spanning forest are compared with Kruskal's.
// mstv.cu is the same program with the "verify" phase as the CDP kernel instead.
//
// Input: a symmetric R-MAT graph (like rmat12.sym.gr), random integer weights.
// Options: -n vertices, a power of two, at most 2^22 (4096)  -m R-MAT edge samples (8 n)
//          -w maximum edge weight, < 2^20 (1000)  -s seed (1)  -b parent block size (1024)
//          -c child block size (1024)  -r repetitions of the timed part (1; the median is printed)
// Output: PASS mstf time_ms=<median time of the Boruvka loop> or FAIL mstf: <reason>.

#include "common/bench_b.cuh"
#include "common/graphgen_b.cuh"

#include <climits>
#include <numeric>
#include <tuple>
#include <vector>

typedef unsigned long long u64;
static constexpr unsigned int WINF = 0xffffffffu;  // no edge leaves the vertex/component
static constexpr u64 KINF = ~0ull;                 // no minimum edge key

// The key of the undirected edge {a, b} of weight w: weight first, then the lower and the
// higher end point (n <= 2^22, w < 2^20), identical for both arcs of the edge.
__host__ __device__ inline u64 edgeKey(int a, int b, unsigned int w) {
    int lo = a < b ? a : b, hi = a < b ? b : a;
    return ((u64)w << 44) | ((u64)lo << 22) | (u64)hi;
}

__global__ void mstReset(unsigned int *nodeMinW, unsigned int *compMinW, u64 *compMinKey, int n) {
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n) return;
    nodeMinW[v] = WINF;
    compMinW[v] = WINF;
    compMinKey[v] = KINF;
}

__global__ void mstFindChild(const int *adj, const int *wt, int deg, int c, const int *comp,
                             unsigned int *nodeMinV, unsigned int *compMinC) {
    int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= deg) return;
    int u = adj[e];
    if (comp[u] != c) {
        unsigned int w = (unsigned int)wt[e];
        atomicMin(nodeMinV, w);
        atomicMin(compMinC, w);
    }
}

// Find: the minimum weight of the edges leaving each vertex's component, per vertex and
// per component.
__global__ void mstFind(const int *rowPtr, const int *colIdx, const int *wt, const int *comp,
                        unsigned int *nodeMinW, unsigned int *compMinW, int n, int childBlock) {
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n) return;
    int start = rowPtr[v];
    int deg = rowPtr[v + 1] - start;
    if (deg == 0) return;
    int c = comp[v];
    mstFindChild<<<(deg + childBlock - 1) / childBlock, childBlock, 0, cudaStreamFireAndForget>>>(
        colIdx + start, wt + start, deg, c, comp, &nodeMinW[v], &compMinW[c]);
}

// Verify: the vertices holding their component's minimum weight pick the smallest key among
// their edges of that weight leaving the component.
__global__ void mstVerify(const int *rowPtr, const int *colIdx, const int *wt, const int *comp,
                          const unsigned int *nodeMinW, const unsigned int *compMinW,
                          u64 *compMinKey, int n) {
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n) return;
    int c = comp[v];
    unsigned int cw = compMinW[c];
    if (cw == WINF || nodeMinW[v] != cw) return;
    int start = rowPtr[v];
    int deg = rowPtr[v + 1] - start;
    u64 best = KINF;
    for (int e = start; e < start + deg; ++e) {
        int u = colIdx[e];
        if ((unsigned int)wt[e] == cw && comp[u] != c) {
            u64 k = edgeKey(v, u, cw);
            if (k < best) best = k;
        }
    }
    if (best != KINF) atomicMin(&compMinKey[c], best);
}

// Hook: every component (comp[c] == c) points to the component across its minimum edge.
__global__ void mstHook(const int *comp, const u64 *compMinKey, int *next, int n) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= n) return;
    if (comp[c] != c) return;
    u64 k = compMinKey[c];
    if (k == KINF) {
        next[c] = c;
        return;
    }
    int lo = (int)((k >> 22) & 0x3fffff), hi = (int)(k & 0x3fffff);
    int other = (comp[lo] == c) ? hi : lo;
    next[c] = comp[other];
}

// Ties: keys are distinct, so the only cycles are mutual pairs c <-> d sharing one edge; the
// lower id becomes a root and the other one adds the edge. Only c writes next[c], and no other
// thread's decision depends on whether it reads next[c] before or after that write.
__global__ void mstTies(const int *comp, const u64 *compMinKey, int *next, int n,
                        u64 *totalWeight, int *edgeCount, int *changed) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= n) return;
    if (comp[c] != c) return;
    u64 k = compMinKey[c];
    if (k == KINF) return;
    *changed = 1;
    int d = next[c];
    if (c < d && next[d] == c) {
        next[c] = c;
    } else {
        atomicAdd(totalWeight, k >> 44);
        atomicAdd(edgeCount, 1);
    }
}

// Jump: every vertex follows the component pointers to the root of its new component.
__global__ void mstJump(int *comp, const int *next, int n) {
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n) return;
    int r = comp[v];
    while (next[r] != r) r = next[r];
    comp[v] = r;
}

int main(int argc, char **argv) {
    bb::g_name = "mstf";
    const int n = (int)bb::argInt(argc, argv, "-n", 4096);
    const long long samples = bb::argInt(argc, argv, "-m", 8LL * n);
    const int maxW = (int)bb::argInt(argc, argv, "-w", 1000);
    const uint64_t seed = (uint64_t)bb::argInt(argc, argv, "-s", 1);
    const int block = (int)bb::argInt(argc, argv, "-b", 1024);
    const int childBlock = (int)bb::argInt(argc, argv, "-c", 1024);
    const int reps = (int)bb::argInt(argc, argv, "-r", 1);
    if (n < 2 || n > (1 << 22) || samples < 1 || maxW < 1 || maxW >= (1 << 20) || block < 1 ||
        block > 1024 || childBlock < 1 || childBlock > 1024 || reps < 1)
        return bb::report(false, 0, "bad options");

    const bb::CsrGraph g = bb::rmatSymmetric(n, samples, maxW, seed);
    const long long m = g.arcs();
    if (m > INT_MAX / 2) return bb::report(false, 0, "graph too large");

    // CPU reference: Kruskal's minimum spanning forest.
    u64 refWeight = 0;
    int refEdges = 0;
    {
        std::vector<std::tuple<int, int, int>> edges;
        for (int v = 0; v < n; ++v)
            for (int e = g.rowPtr[v]; e < g.rowPtr[v + 1]; ++e)
                if (v < g.colIdx[e]) edges.emplace_back(g.weight[e], v, g.colIdx[e]);
        std::sort(edges.begin(), edges.end());
        std::vector<int> parent(n);
        std::iota(parent.begin(), parent.end(), 0);
        auto find = [&](int x) {
            while (parent[x] != x) x = parent[x] = parent[parent[x]];
            return x;
        };
        for (const auto &[w, a, b] : edges) {
            int ra = find(a), rb = find(b);
            if (ra != rb) {
                parent[ra] = rb;
                refWeight += (u64)w;
                ++refEdges;
            }
        }
    }

    // One mstFind grid launches at most one child per vertex.
    bb::ensurePendingLaunches((long long)n + 2048);

    int *dRow = nullptr, *dCol = nullptr, *dW = nullptr, *dComp = nullptr, *dNext = nullptr,
        *dEdgeCount = nullptr, *dChanged = nullptr;
    unsigned int *dNodeMinW = nullptr, *dCompMinW = nullptr;
    u64 *dCompMinKey = nullptr, *dTotal = nullptr;
    BB_CHECK(cudaMalloc(&dRow, sizeof(int) * (n + 1)));
    BB_CHECK(cudaMalloc(&dCol, sizeof(int) * (m > 0 ? m : 1)));
    BB_CHECK(cudaMalloc(&dW, sizeof(int) * (m > 0 ? m : 1)));
    BB_CHECK(cudaMalloc(&dComp, sizeof(int) * n));
    BB_CHECK(cudaMalloc(&dNext, sizeof(int) * n));
    BB_CHECK(cudaMalloc(&dNodeMinW, sizeof(unsigned int) * n));
    BB_CHECK(cudaMalloc(&dCompMinW, sizeof(unsigned int) * n));
    BB_CHECK(cudaMalloc(&dCompMinKey, sizeof(u64) * n));
    BB_CHECK(cudaMalloc(&dTotal, sizeof(u64)));
    BB_CHECK(cudaMalloc(&dEdgeCount, sizeof(int)));
    BB_CHECK(cudaMalloc(&dChanged, sizeof(int)));
    BB_CHECK(cudaMemcpy(dRow, g.rowPtr.data(), sizeof(int) * (n + 1), cudaMemcpyHostToDevice));
    BB_CHECK(cudaMemcpy(dCol, g.colIdx.data(), sizeof(int) * m, cudaMemcpyHostToDevice));
    BB_CHECK(cudaMemcpy(dW, g.weight.data(), sizeof(int) * m, cudaMemcpyHostToDevice));

    std::vector<int> comp0(n);
    std::iota(comp0.begin(), comp0.end(), 0);
    const int grid = (n + block - 1) / block;
    std::vector<float> times;
    bb::GpuTimer timer;
    for (int r = 0; r < reps; ++r) {
        BB_CHECK(cudaMemcpy(dComp, comp0.data(), sizeof(int) * n, cudaMemcpyHostToDevice));
        BB_CHECK(cudaMemset(dTotal, 0, sizeof(u64)));
        BB_CHECK(cudaMemset(dEdgeCount, 0, sizeof(int)));
        BB_CHECK(cudaDeviceSynchronize());
        timer.start();
        int changed = 0, rounds = 0;
        do {
            if (++rounds > 64) return bb::report(false, 0, "Boruvka did not terminate");
            BB_CHECK(cudaMemsetAsync(dChanged, 0, sizeof(int)));
            mstReset<<<grid, block>>>(dNodeMinW, dCompMinW, dCompMinKey, n);
            BB_CHECK_LAUNCH();
            mstFind<<<grid, block>>>(dRow, dCol, dW, dComp, dNodeMinW, dCompMinW, n, childBlock);
            BB_CHECK_LAUNCH();
            // Kernels on the host stream start after the previous grid and all its children.
            mstVerify<<<grid, block>>>(dRow, dCol, dW, dComp, dNodeMinW, dCompMinW, dCompMinKey, n);
            BB_CHECK_LAUNCH();
            mstHook<<<grid, block>>>(dComp, dCompMinKey, dNext, n);
            BB_CHECK_LAUNCH();
            mstTies<<<grid, block>>>(dComp, dCompMinKey, dNext, n, dTotal, dEdgeCount, dChanged);
            BB_CHECK_LAUNCH();
            mstJump<<<grid, block>>>(dComp, dNext, n);
            BB_CHECK_LAUNCH();
            BB_CHECK(cudaMemcpy(&changed, dChanged, sizeof(int), cudaMemcpyDeviceToHost));
        } while (changed);
        timer.stop();
        times.push_back(timer.ms());
        BB_CHECK(cudaDeviceSynchronize());

        u64 total = 0;
        int edges = 0;
        BB_CHECK(cudaMemcpy(&total, dTotal, sizeof(u64), cudaMemcpyDeviceToHost));
        BB_CHECK(cudaMemcpy(&edges, dEdgeCount, sizeof(int), cudaMemcpyDeviceToHost));
        if (total != refWeight || edges != refEdges) {
            char msg[192];
            std::snprintf(msg, sizeof msg,
                          "spanning forest weight %llu with %d edges, expected %llu with %d "
                          "(repetition %d)",
                          total, edges, refWeight, refEdges, r);
            return bb::report(false, 0, msg);
        }
    }
    BB_CHECK(cudaFree(dRow));
    BB_CHECK(cudaFree(dCol));
    BB_CHECK(cudaFree(dW));
    BB_CHECK(cudaFree(dComp));
    BB_CHECK(cudaFree(dNext));
    BB_CHECK(cudaFree(dNodeMinW));
    BB_CHECK(cudaFree(dCompMinW));
    BB_CHECK(cudaFree(dCompMinKey));
    BB_CHECK(cudaFree(dTotal));
    BB_CHECK(cudaFree(dEdgeCount));
    BB_CHECK(cudaFree(dChanged));
    return bb::report(true, times, nullptr);
}
