// bfs: level-synchronous breadth-first search with one child grid per frontier vertex.
//
// The host iterates over BFS levels. For each level it launches bfsParent with one
// thread per vertex; a vertex on the current level launches bfsChild over its edge
// list (one thread per edge), which labels unvisited neighbours with level+1 and
// raises the "changed" flag. The search stops when a level changes nothing.
//
// Options: -n vertices (10000)  -d average out-degree (100)  -s seed (1)  -src source (0)
//          -b parent block size (256)

#include "common/check.cuh"

#include <climits>
#include <queue>
#include <vector>

static constexpr int UNVISITED = INT_MAX;  // level of a vertex not reached yet

__global__ void bfsChild(const int *adj, int deg, int *level, int nextLevel, int *changed) {
    int e = blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= deg) return;
    int u = adj[e];
    if (atomicCAS(&level[u], UNVISITED, nextLevel) == UNVISITED) {
        *changed = 1;
    }
}

__global__ void bfsParent(const int *rowPtr, const int *colIdx, int *level, int n, int current,
                          int *changed) {
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n) return;
    if (level[v] == current) {
        int start = rowPtr[v];
        int deg = rowPtr[v + 1] - start;
        if (deg > 0) {
            bfsChild<<<(deg + 31) / 32, 32>>>(colIdx + start, deg, level, current + 1, changed);
        }
    }
}

int main(int argc, char **argv) {
    tc::g_name = "bfs";
    const int n = (int)tc::argInt(argc, argv, "-n", 10000);
    const int avgDeg = (int)tc::argInt(argc, argv, "-d", 100);
    const uint64_t seed = (uint64_t)tc::argInt(argc, argv, "-s", 1);
    const int src = (int)tc::argInt(argc, argv, "-src", 0);
    const int block = (int)tc::argInt(argc, argv, "-b", 256);
    if (n < 1 || avgDeg < 1 || src < 0 || src >= n || block < 1 || block > 1024)
        return tc::report(false, 0, "bad options (need n>=1, d>=1, 0<=src<n, 1<=b<=1024)");

    // Random directed graph in CSR form: out-degree uniform in [1, 2d-1] (mean d),
    // targets uniform over all vertices (duplicates and self loops allowed).
    tc::Rng rng(seed);
    std::vector<int> rowPtr(n + 1, 0);
    for (int v = 0; v < n; ++v) rowPtr[v + 1] = rowPtr[v] + 1 + (int)rng.below(2u * avgDeg - 1);
    const long long m = rowPtr[n];
    if (m > INT_MAX / 2) return tc::report(false, 0, "graph too large");
    std::vector<int> colIdx(m);
    for (long long e = 0; e < m; ++e) colIdx[e] = (int)rng.below((uint32_t)n);

    // CPU reference BFS.
    std::vector<int> ref(n, UNVISITED);
    {
        std::queue<int> q;
        ref[src] = 0;
        q.push(src);
        while (!q.empty()) {
            int v = q.front();
            q.pop();
            for (int e = rowPtr[v]; e < rowPtr[v + 1]; ++e) {
                int u = colIdx[e];
                if (ref[u] == UNVISITED) {
                    ref[u] = ref[v] + 1;
                    q.push(u);
                }
            }
        }
    }

    // Every vertex of one level may launch a child: size the pending launch pool.
    tc::ensurePendingLaunches((long long)n + 1024);

    int *dRow = nullptr, *dCol = nullptr, *dLevel = nullptr, *dChanged = nullptr;
    CUDA_CHECK(cudaMalloc(&dRow, sizeof(int) * (n + 1)));
    CUDA_CHECK(cudaMalloc(&dCol, sizeof(int) * m));
    CUDA_CHECK(cudaMalloc(&dLevel, sizeof(int) * n));
    CUDA_CHECK(cudaMalloc(&dChanged, sizeof(int)));
    CUDA_CHECK(cudaMemcpy(dRow, rowPtr.data(), sizeof(int) * (n + 1), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dCol, colIdx.data(), sizeof(int) * m, cudaMemcpyHostToDevice));
    std::vector<int> level(n, UNVISITED);
    level[src] = 0;
    CUDA_CHECK(cudaMemcpy(dLevel, level.data(), sizeof(int) * n, cudaMemcpyHostToDevice));

    tc::GpuTimer timer;
    timer.start();
    int current = 0;
    int changed = 0;
    do {
        if (current > n) return tc::report(false, 0, "BFS did not terminate");
        CUDA_CHECK(cudaMemset(dChanged, 0, sizeof(int)));
        bfsParent<<<(n + block - 1) / block, block>>>(dRow, dCol, dLevel, n, current, dChanged);
        CUDA_CHECK_LAUNCH();
        // The parent grid completes only after all its children: the flag is final here.
        CUDA_CHECK(cudaMemcpy(&changed, dChanged, sizeof(int), cudaMemcpyDeviceToHost));
        ++current;
    } while (changed);
    timer.stop();
    float ms = timer.ms();
    CUDA_CHECK(cudaDeviceSynchronize());

    CUDA_CHECK(cudaMemcpy(level.data(), dLevel, sizeof(int) * n, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(dRow));
    CUDA_CHECK(cudaFree(dCol));
    CUDA_CHECK(cudaFree(dLevel));
    CUDA_CHECK(cudaFree(dChanged));

    for (int v = 0; v < n; ++v) {
        if (level[v] != ref[v]) {
            char msg[160];
            std::snprintf(msg, sizeof msg, "level[%d] = %d, expected %d", v, level[v], ref[v]);
            return tc::report(false, 0, msg);
        }
    }
    return tc::report(true, ms, nullptr);
}
