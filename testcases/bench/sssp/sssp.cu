// sssp: single-source shortest paths (KLAP Table I "sssp", after LonestarGPU's data-driven
// Bellman-Ford), CDP2 version: one child grid per active vertex over its edges.
//
// The host iterates rounds until nothing changes. In each round ssspParent (one thread per
// vertex, block 128) skips inactive vertices, clears its active flag, reads its distance and
// launches ssspChild over its edge list (one thread per edge, block 128) into
// cudaStreamFireAndForget; a child thread relaxes its edge with atomicMin and marks the
// neighbour active for the next round when the distance dropped. The final distances are
// unique (the shortest-path distances), whatever the order of the relaxations.
//
// Input: a symmetric R-MAT graph (like rmat12.sym.gr), random integer weights.
// Options: -n vertices, a power of two (4096)  -m R-MAT edge samples (8 n)  -w maximum edge
//          weight (1000)  -s seed (1)  -src source vertex (0)  -b parent block size (128)
//          -c child block size (128)  -r repetitions of the timed part (1; the median is printed)
// Output: PASS sssp time_ms=<median time of the round loop> or FAIL sssp: <reason>.

#include "common/bench_b.cuh"
#include "common/graphgen_b.cuh"

#include <climits>
#include <functional>
#include <queue>
#include <vector>

static constexpr int INF = INT_MAX;  // distance of a vertex not reached yet

__global__ void ssspChild(const int *adj, const int *wt, int deg, int d, int *dist,
                          int *nextActive, int *changed) {
    int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= deg) return;
    int u = adj[e];
    int nd = d + wt[e];
    if (nd < atomicMin(&dist[u], nd)) {
        nextActive[u] = 1;
        *changed = 1;
    }
}

__global__ void ssspParent(const int *rowPtr, const int *colIdx, const int *wt, int *dist,
                           int *active, int *nextActive, int n, int childBlock, int *changed) {
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n) return;
    if (!active[v]) return;
    active[v] = 0;
    // dist[v] may be lowered concurrently by another parent's child: any value read is an upper
    // bound reached by a real path, and a later decrease re-activates v for the next round.
    int d = dist[v];
    int start = rowPtr[v];
    int deg = rowPtr[v + 1] - start;
    if (deg > 0) {
        ssspChild<<<(deg + childBlock - 1) / childBlock, childBlock, 0, cudaStreamFireAndForget>>>(
            colIdx + start, wt + start, deg, d, dist, nextActive, changed);
    }
}

int main(int argc, char **argv) {
    bb::g_name = "sssp";
    const int n = (int)bb::argInt(argc, argv, "-n", 4096);
    const long long samples = bb::argInt(argc, argv, "-m", 8LL * n);
    const int maxW = (int)bb::argInt(argc, argv, "-w", 1000);
    const uint64_t seed = (uint64_t)bb::argInt(argc, argv, "-s", 1);
    const int src = (int)bb::argInt(argc, argv, "-src", 0);
    const int block = (int)bb::argInt(argc, argv, "-b", 128);
    const int childBlock = (int)bb::argInt(argc, argv, "-c", 128);
    const int reps = (int)bb::argInt(argc, argv, "-r", 1);
    if (n < 2 || n > (1 << 24) || samples < 1 || maxW < 1 || src < 0 || src >= n || block < 1 ||
        block > 1024 || childBlock < 1 || childBlock > 1024 || reps < 1)
        return bb::report(false, 0, "bad options");
    if ((long long)maxW * (n - 1) >= INF) return bb::report(false, 0, "weights too large for int distances");

    const bb::CsrGraph g = bb::rmatSymmetric(n, samples, maxW, seed);
    const long long m = g.arcs();
    if (m > INT_MAX / 2) return bb::report(false, 0, "graph too large");

    // CPU reference: Dijkstra.
    std::vector<int> ref(n, INF);
    {
        using Item = std::pair<int, int>;  // (distance, vertex)
        std::priority_queue<Item, std::vector<Item>, std::greater<Item>> pq;
        ref[src] = 0;
        pq.emplace(0, src);
        while (!pq.empty()) {
            auto [d, v] = pq.top();
            pq.pop();
            if (d != ref[v]) continue;
            for (int e = g.rowPtr[v]; e < g.rowPtr[v + 1]; ++e) {
                int u = g.colIdx[e], nd = d + g.weight[e];
                if (nd < ref[u]) {
                    ref[u] = nd;
                    pq.emplace(nd, u);
                }
            }
        }
    }

    // One round launches at most one child per vertex.
    bb::ensurePendingLaunches((long long)n + 2048);

    int *dRow = nullptr, *dCol = nullptr, *dW = nullptr, *dDist = nullptr, *dActA = nullptr,
        *dActB = nullptr, *dChanged = nullptr;
    BB_CHECK(cudaMalloc(&dRow, sizeof(int) * (n + 1)));
    BB_CHECK(cudaMalloc(&dCol, sizeof(int) * (m > 0 ? m : 1)));
    BB_CHECK(cudaMalloc(&dW, sizeof(int) * (m > 0 ? m : 1)));
    BB_CHECK(cudaMalloc(&dDist, sizeof(int) * n));
    BB_CHECK(cudaMalloc(&dActA, sizeof(int) * n));
    BB_CHECK(cudaMalloc(&dActB, sizeof(int) * n));
    BB_CHECK(cudaMalloc(&dChanged, sizeof(int)));
    BB_CHECK(cudaMemcpy(dRow, g.rowPtr.data(), sizeof(int) * (n + 1), cudaMemcpyHostToDevice));
    BB_CHECK(cudaMemcpy(dCol, g.colIdx.data(), sizeof(int) * m, cudaMemcpyHostToDevice));
    BB_CHECK(cudaMemcpy(dW, g.weight.data(), sizeof(int) * m, cudaMemcpyHostToDevice));

    std::vector<int> dist0(n, INF), act0(n, 0), dist(n);
    dist0[src] = 0;
    act0[src] = 1;
    std::vector<float> times;
    bb::GpuTimer timer;
    for (int r = 0; r < reps; ++r) {
        BB_CHECK(cudaMemcpy(dDist, dist0.data(), sizeof(int) * n, cudaMemcpyHostToDevice));
        BB_CHECK(cudaMemcpy(dActA, act0.data(), sizeof(int) * n, cudaMemcpyHostToDevice));
        BB_CHECK(cudaMemset(dActB, 0, sizeof(int) * n));
        BB_CHECK(cudaDeviceSynchronize());
        int *active = dActA, *nextActive = dActB;
        timer.start();
        int changed = 0, rounds = 0;
        do {
            if (++rounds > n + 1) return bb::report(false, 0, "SSSP did not terminate");
            BB_CHECK(cudaMemsetAsync(dChanged, 0, sizeof(int)));
            ssspParent<<<(n + block - 1) / block, block>>>(dRow, dCol, dW, dDist, active,
                                                             nextActive, n, childBlock, dChanged);
            BB_CHECK_LAUNCH();
            // The parent grid completes only after all its children: the flag is final here.
            BB_CHECK(cudaMemcpy(&changed, dChanged, sizeof(int), cudaMemcpyDeviceToHost));
            std::swap(active, nextActive);  // every active flag was cleared by its parent thread
        } while (changed);
        timer.stop();
        times.push_back(timer.ms());
        BB_CHECK(cudaDeviceSynchronize());

        BB_CHECK(cudaMemcpy(dist.data(), dDist, sizeof(int) * n, cudaMemcpyDeviceToHost));
        for (int v = 0; v < n; ++v) {
            if (dist[v] != ref[v]) {
                char msg[160];
                std::snprintf(msg, sizeof msg, "dist[%d] = %d, expected %d (repetition %d)", v,
                              dist[v], ref[v], r);
                return bb::report(false, 0, msg);
            }
        }
    }
    BB_CHECK(cudaFree(dRow));
    BB_CHECK(cudaFree(dCol));
    BB_CHECK(cudaFree(dW));
    BB_CHECK(cudaFree(dDist));
    BB_CHECK(cudaFree(dActA));
    BB_CHECK(cudaFree(dActB));
    BB_CHECK(cudaFree(dChanged));
    return bb::report(true, times, nullptr);
}
