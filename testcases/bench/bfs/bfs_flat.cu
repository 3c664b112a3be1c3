// bfs_flat (no CDP): the same level-synchronous breadth-first search as bfs.cu, with the
// child loop inside the parent thread (the original intra-thread nested loop that the CDP
// version turns into a launch): a vertex on the current level loops over its adjacency list
// and labels unvisited neighbours with level + 1. One host launch per level; timed: the
// whole level loop, median of -r repetitions.
//
// Options: -n vertices (10000)  -d average out-degree (1000; degree uniform in [d/2, 3d/2])
//          -s seed (1)  -src source vertex (0)  -b block size (1024)  -r repetitions (1)
// Output:  PASS bfs_flat time_ms=<median>

#include "common/bench_a.cuh"

#include <climits>
#include <queue>
#include <vector>

static constexpr int UNVISITED = INT_MAX;  // level of a vertex not reached yet

__global__ void bfsFlat(const int *rowPtr, const int *colIdx, int *level, int n, int current,
                        int *changed) {
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n) return;
    if (level[v] == current) {
        int start = rowPtr[v];
        int end = rowPtr[v + 1];
        for (int e = start; e < end; ++e) {
            int u = colIdx[e];
            if (atomicCAS(&level[u], UNVISITED, current + 1) == UNVISITED) {
                *changed = 1;
            }
        }
    }
}

int main(int argc, char **argv) {
    ba::g_name = "bfs_flat";
    const int n = (int)ba::argInt(argc, argv, "-n", 10000);
    const int avgDeg = (int)ba::argInt(argc, argv, "-d", 1000);
    const uint64_t seed = (uint64_t)ba::argInt(argc, argv, "-s", 1);
    const int src = (int)ba::argInt(argc, argv, "-src", 0);
    const int block = (int)ba::argInt(argc, argv, "-b", 1024);
    const int reps = ba::argReps(argc, argv);
    if (n < 1 || avgDeg < 1 || avgDeg > (1 << 20) || src < 0 || src >= n || block < 1 || block > 1024)
        return ba::report(false, 0, "bad options (need n>=1, 1<=d<=2^20, 0<=src<n, 1<=b<=1024)");

    // Random directed graph in CSR form: out-degree uniform in [d/2, 3d/2] (at least 1),
    // targets uniform over all vertices (duplicates and self loops allowed).
    ba::Rng rng(seed);
    const int lo = avgDeg / 2 > 0 ? avgDeg / 2 : 1;
    const int hi = avgDeg + avgDeg / 2;
    std::vector<long long> rowPtrLL(n + 1, 0);
    for (int v = 0; v < n; ++v) rowPtrLL[v + 1] = rowPtrLL[v] + lo + (int)rng.below((uint32_t)(hi - lo + 1));
    const long long m = rowPtrLL[n];
    if (m > INT_MAX / 2) return ba::report(false, 0, "graph too large");
    std::vector<int> rowPtr(rowPtrLL.begin(), rowPtrLL.end());
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

    int *dRow = nullptr, *dCol = nullptr, *dLevel = nullptr, *dChanged = nullptr;
    CUDA_CHECK(cudaMalloc(&dRow, sizeof(int) * (n + 1)));
    CUDA_CHECK(cudaMalloc(&dCol, sizeof(int) * m));
    CUDA_CHECK(cudaMalloc(&dLevel, sizeof(int) * n));
    CUDA_CHECK(cudaMalloc(&dChanged, sizeof(int)));
    CUDA_CHECK(cudaMemcpy(dRow, rowPtr.data(), sizeof(int) * (n + 1), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dCol, colIdx.data(), sizeof(int) * m, cudaMemcpyHostToDevice));

    std::vector<int> level(n);
    std::vector<float> times;
    ba::GpuTimer timer;
    for (int r = 0; r < reps; ++r) {
        std::fill(level.begin(), level.end(), UNVISITED);
        level[src] = 0;
        CUDA_CHECK(cudaMemcpy(dLevel, level.data(), sizeof(int) * n, cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaDeviceSynchronize());

        timer.start();
        int current = 0;
        int changed = 0;
        do {
            if (current > n) return ba::report(false, 0, "BFS did not terminate");
            CUDA_CHECK(cudaMemsetAsync(dChanged, 0, sizeof(int)));
            bfsFlat<<<(n + block - 1) / block, block>>>(dRow, dCol, dLevel, n, current, dChanged);
            CUDA_CHECK_LAUNCH();
            CUDA_CHECK(cudaMemcpy(&changed, dChanged, sizeof(int), cudaMemcpyDeviceToHost));
            ++current;
        } while (changed);
        timer.stop();
        times.push_back(timer.ms());
        CUDA_CHECK(cudaDeviceSynchronize());

        CUDA_CHECK(cudaMemcpy(level.data(), dLevel, sizeof(int) * n, cudaMemcpyDeviceToHost));
        for (int v = 0; v < n; ++v) {
            if (level[v] != ref[v]) {
                char msg[160];
                std::snprintf(msg, sizeof msg, "rep %d: level[%d] = %d, expected %d", r, v, level[v], ref[v]);
                return ba::report(false, 0, msg);
            }
        }
    }
    CUDA_CHECK(cudaFree(dRow));
    CUDA_CHECK(cudaFree(dCol));
    CUDA_CHECK(cudaFree(dLevel));
    CUDA_CHECK(cudaFree(dChanged));
    return ba::report(true, times, nullptr);
}
