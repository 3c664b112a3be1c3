// recursion: recursive tree sums over an array, two device-launched recursive patterns.
//
// The array of n ints is cut into nLeaves = ceil(n / l) leaves of l values (the last may be
// shorter); leaf k holds values [k l, min(n, (k + 1) l)). Both patterns write each leaf's sum
// into leafSum[k], count the visit in visits[k] and record the depth it was reached at.
//  (1) sumTree<<<1, 128>>>(lo, hi, depth): one block per node of an implicit 4-ary tree over
//      the leaves [lo, hi). A single leaf is summed by the block (shared-memory atomic); an
//      inner node cuts its range into 4 chunks of ceil((hi - lo) / 4) leaves and threads
//      0..3 each launch sumTree<<<1, 128>>> on one chunk, if it is not empty (a kernel that
//      launches itself from several, divergent threads of one block).
//  (2) sumWide<<<g, 2>>>(lo, hi, depth): ALL T = g * 2 threads of the node's grid launch one
//      child each, on an equal share [lo + i m / T, lo + (i + 1) m / T) of the node's
//      m = hi - lo leaves (T <= m, so no share is empty): sumLeaves<<<share, 128>>> (one block
//      per leaf) for a share of at most 4 leaves or when depth + 1 reaches the depth limit -d,
//      otherwise sumWide<<<clamp(share / 64, 1, 3), 2>>> on the share (grid size depending on
//      the subrange; shares differ by one leaf). The depth limit (at most 11) keeps the nesting
//      far below 24; with the defaults it cuts the recursion at depth 6.
// The host checks every leaf (visited exactly once, at the expected depth, with the exact
// sum), and the total of the leaf sums against the CPU sum, for both patterns.
//
// Options: -n values (1 << 20)  -l leaf size (256)  -d depth limit of pattern 2 (6, 1..11)
//          -s seed (1)

#include "common/check.cuh"

#include <algorithm>
#include <vector>

constexpr int TREE_FANOUT = 4;
constexpr int TREE_BLOCK = 128;
constexpr int LEAF_BLOCK = 128;
constexpr int WIDE_BLOCK = 2;
constexpr int WIDE_MAX_GRID = 3;
constexpr int LEAF_BATCH = 4;  // pattern 2: shares of at most this many leaves go to sumLeaves

// Grid size of a sumWide node over m leaves (m > LEAF_BATCH); guarantees grid * WIDE_BLOCK <= m.
__host__ __device__ inline int wideGrid(int m) {
    int g = m / 64;
    return g < 1 ? 1 : (g > WIDE_MAX_GRID ? WIDE_MAX_GRID : g);
}

// Sums leaf `leaf` with the whole block and records it (call from all threads of the block).
__device__ void sumLeafBlock(const int *vals, int n, int leafSize, int leaf, int depth,
                             unsigned long long *acc, long long *leafSum, int *visits,
                             int *leafDepth) {
    const long long begin = (long long)leaf * leafSize;
    const long long end = min((long long)n, begin + leafSize);
    if (threadIdx.x == 0) *acc = 0;
    __syncthreads();
    long long s = 0;
    for (long long i = begin + threadIdx.x; i < end; i += blockDim.x) s += vals[i];
    atomicAdd(acc, (unsigned long long)s);  // two's complement: exact for signed sums
    __syncthreads();
    if (threadIdx.x == 0) {
        leafSum[leaf] = (long long)*acc;
        atomicAdd(&visits[leaf], 1);
        leafDepth[leaf] = depth;
    }
}

// ---- pattern 1: one block per node, threads 0..3 launch the children ----

__global__ void sumTree(const int *vals, int n, int leafSize, int lo, int hi, int depth,
                        long long *leafSum, int *visits, int *leafDepth, int *errors) {
    __shared__ unsigned long long acc;
    if (hi - lo < 1) {
        if (threadIdx.x == 0) atomicAdd(errors, 1);
        return;
    }
    if (hi - lo == 1) {
        sumLeafBlock(vals, n, leafSize, lo, depth, &acc, leafSum, visits, leafDepth);
        return;
    }
    const int chunk = (hi - lo + TREE_FANOUT - 1) / TREE_FANOUT;
    if (threadIdx.x < TREE_FANOUT) {
        const int clo = lo + (int)threadIdx.x * chunk;
        if (clo < hi) {
            const int chi = min(hi, clo + chunk);
            sumTree<<<1, TREE_BLOCK>>>(vals, n, leafSize, clo, chi, depth + 1, leafSum, visits,
                                       leafDepth, errors);
            if (cudaGetLastError() != cudaSuccess) atomicAdd(errors, 1);
        }
    }
}

// ---- pattern 2: every thread of the node's grid launches one child ----

__global__ void sumLeaves(const int *vals, int n, int leafSize, int first, int depth,
                          long long *leafSum, int *visits, int *leafDepth) {
    __shared__ unsigned long long acc;
    sumLeafBlock(vals, n, leafSize, first + (int)blockIdx.x, depth, &acc, leafSum, visits, leafDepth);
}

__global__ void sumWide(const int *vals, int n, int leafSize, int lo, int hi, int depth,
                        int maxDepth, long long *leafSum, int *visits, int *leafDepth, int *errors) {
    const long long m = (long long)hi - lo;
    const long long T = (long long)gridDim.x * blockDim.x;
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (m < T) {  // some shares would be empty: cannot happen with wideGrid
        atomicAdd(errors, 1);
        return;
    }
    const int clo = lo + (int)(i * m / T);
    const int chi = lo + (int)((i + 1) * m / T);
    const int share = chi - clo;  // >= 1 because m >= T
    if (share <= LEAF_BATCH || depth + 1 >= maxDepth) {
        sumLeaves<<<share, LEAF_BLOCK>>>(vals, n, leafSize, clo, depth + 1, leafSum, visits,
                                         leafDepth);
        if (cudaGetLastError() != cudaSuccess) atomicAdd(errors, 1);
    } else {
        sumWide<<<wideGrid(share), WIDE_BLOCK>>>(vals, n, leafSize, clo, chi, depth + 1, maxDepth,
                                                  leafSum, visits, leafDepth, errors);
        if (cudaGetLastError() != cudaSuccess) atomicAdd(errors, 1);
    }
}

// ---- CPU models of both recursions: expected leaf depths, launch counts, maximum depth ----

struct Model {
    std::vector<int> depth;  // expected depth of every leaf
    long long launches = 0;  // device-side launches
    int maxDepth = 0;        // deepest grid (host-launched grid = 0)
};

static void modelTree(int lo, int hi, int depth, Model &m) {
    m.maxDepth = std::max(m.maxDepth, depth);
    if (hi - lo == 1) {
        m.depth[lo] = depth;
        return;
    }
    const int chunk = (hi - lo + TREE_FANOUT - 1) / TREE_FANOUT;
    for (int c = 0; c < TREE_FANOUT; ++c) {
        const int clo = lo + c * chunk;
        if (clo >= hi) continue;
        ++m.launches;
        modelTree(clo, std::min(hi, clo + chunk), depth + 1, m);
    }
}

static void modelLeaves(int first, int count, int depth, Model &m) {
    m.maxDepth = std::max(m.maxDepth, depth);
    for (int k = first; k < first + count; ++k) m.depth[k] = depth;
}

static void modelWide(int lo, int hi, int depth, int limit, Model &m) {
    m.maxDepth = std::max(m.maxDepth, depth);
    const long long mm = (long long)hi - lo;
    const long long T = (long long)wideGrid(hi - lo) * WIDE_BLOCK;
    for (long long i = 0; i < T; ++i) {
        const int clo = lo + (int)(i * mm / T);
        const int chi = lo + (int)((i + 1) * mm / T);
        const int share = chi - clo;
        ++m.launches;
        if (share <= LEAF_BATCH || depth + 1 >= limit)
            modelLeaves(clo, share, depth + 1, m);
        else
            modelWide(clo, chi, depth + 1, limit, m);
    }
}

// Compares one pattern's leaves with the CPU sums and expected depths.
static bool checkLeaves(const char *pattern, const std::vector<long long> &sum,
                        const std::vector<int> &visits, const std::vector<int> &depth,
                        const std::vector<long long> &refSum, const std::vector<int> &refDepth,
                        long long refTotal, char *msg, size_t msgLen) {
    long long total = 0;
    for (size_t k = 0; k < refSum.size(); ++k) {
        if (visits[k] != 1) {
            std::snprintf(msg, msgLen, "%s: leaf %zu visited %d times", pattern, k, visits[k]);
            return false;
        }
        if (sum[k] != refSum[k] || depth[k] != refDepth[k]) {
            std::snprintf(msg, msgLen, "%s: leaf %zu sum %lld at depth %d, expected %lld at depth %d",
                          pattern, k, sum[k], depth[k], refSum[k], refDepth[k]);
            return false;
        }
        total += sum[k];
    }
    if (total != refTotal) {
        std::snprintf(msg, msgLen, "%s: total %lld, expected %lld", pattern, total, refTotal);
        return false;
    }
    return true;
}

int main(int argc, char **argv) {
    tc::g_name = "recursion";
    const long long nLL = tc::argInt(argc, argv, "-n", 1 << 20);
    const long long leafLL = tc::argInt(argc, argv, "-l", 256);
    const int limit = (int)tc::argInt(argc, argv, "-d", 6);
    const uint64_t seed = (uint64_t)tc::argInt(argc, argv, "-s", 1);
    if (nLL < 1 || nLL > (1LL << 28) || leafLL < 1 || leafLL > (1LL << 28) || limit < 1 || limit > 11)
        return tc::report(false, 0, "bad options (need 1<=n<=2^28, 1<=l<=2^28, 1<=d<=11)");
    if ((nLL + leafLL - 1) / leafLL > (1LL << 21))
        return tc::report(false, 0, "more than 2^21 leaves; raise -l");
    const int n = (int)nLL, leafSize = (int)leafLL;
    const int nLeaves = (int)((nLL + leafLL - 1) / leafLL);

    // Values in [-1000, 1000]; exact 64-bit sums per leaf and in total.
    tc::Rng rng(seed);
    std::vector<int> vals(n);
    for (int i = 0; i < n; ++i) vals[i] = (int)rng.below(2001) - 1000;
    std::vector<long long> refSum(nLeaves, 0);
    long long refTotal = 0;
    for (int i = 0; i < n; ++i) {
        refSum[i / leafSize] += vals[i];
        refTotal += vals[i];
    }

    Model tree, wide;
    tree.depth.assign(nLeaves, -1);
    wide.depth.assign(nLeaves, -1);
    modelTree(0, nLeaves, 0, tree);
    if (nLeaves <= LEAF_BATCH)
        modelLeaves(0, nLeaves, 0, wide);
    else
        modelWide(0, nLeaves, 0, limit, wide);
    if (tree.maxDepth > 20 || wide.maxDepth > 20)
        return tc::report(false, 0, "recursion too deep (launch nesting limit 24)");
    const long long launches = std::max(tree.launches, wide.launches);
    if (launches > (1LL << 22)) return tc::report(false, 0, "too many launches; raise -l");
    // The two patterns run one after the other; every launch of one may be pending at once.
    tc::ensurePendingLaunches(launches + 1024);

    int *dVals = nullptr, *dVisits[2] = {nullptr, nullptr}, *dDepth[2] = {nullptr, nullptr},
        *dErrors = nullptr;
    long long *dSum[2] = {nullptr, nullptr};
    CUDA_CHECK(cudaMalloc(&dVals, sizeof(int) * n));
    CUDA_CHECK(cudaMemcpy(dVals, vals.data(), sizeof(int) * n, cudaMemcpyHostToDevice));
    for (int p = 0; p < 2; ++p) {
        CUDA_CHECK(cudaMalloc(&dSum[p], sizeof(long long) * nLeaves));
        CUDA_CHECK(cudaMalloc(&dVisits[p], sizeof(int) * nLeaves));
        CUDA_CHECK(cudaMalloc(&dDepth[p], sizeof(int) * nLeaves));
        CUDA_CHECK(cudaMemset(dSum[p], 0x5a, sizeof(long long) * nLeaves));
        CUDA_CHECK(cudaMemset(dVisits[p], 0, sizeof(int) * nLeaves));
        CUDA_CHECK(cudaMemset(dDepth[p], 0xff, sizeof(int) * nLeaves));
    }
    CUDA_CHECK(cudaMalloc(&dErrors, sizeof(int)));
    CUDA_CHECK(cudaMemset(dErrors, 0, sizeof(int)));

    tc::GpuTimer timer;
    timer.start();
    sumTree<<<1, TREE_BLOCK>>>(dVals, n, leafSize, 0, nLeaves, 0, dSum[0], dVisits[0], dDepth[0],
                               dErrors);
    CUDA_CHECK_LAUNCH();
    if (nLeaves <= LEAF_BATCH) {
        sumLeaves<<<nLeaves, LEAF_BLOCK>>>(dVals, n, leafSize, 0, 0, dSum[1], dVisits[1], dDepth[1]);
    } else {
        sumWide<<<wideGrid(nLeaves), WIDE_BLOCK>>>(dVals, n, leafSize, 0, nLeaves, 0, limit, dSum[1],
                                                   dVisits[1], dDepth[1], dErrors);
    }
    CUDA_CHECK_LAUNCH();
    timer.stop();
    float ms = timer.ms();
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<long long> sum[2] = {std::vector<long long>(nLeaves), std::vector<long long>(nLeaves)};
    std::vector<int> visits[2] = {std::vector<int>(nLeaves), std::vector<int>(nLeaves)};
    std::vector<int> depth[2] = {std::vector<int>(nLeaves), std::vector<int>(nLeaves)};
    int errors = 0;
    for (int p = 0; p < 2; ++p) {
        CUDA_CHECK(cudaMemcpy(sum[p].data(), dSum[p], sizeof(long long) * nLeaves, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(visits[p].data(), dVisits[p], sizeof(int) * nLeaves, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(depth[p].data(), dDepth[p], sizeof(int) * nLeaves, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaFree(dSum[p]));
        CUDA_CHECK(cudaFree(dVisits[p]));
        CUDA_CHECK(cudaFree(dDepth[p]));
    }
    CUDA_CHECK(cudaMemcpy(&errors, dErrors, sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(dVals));
    CUDA_CHECK(cudaFree(dErrors));

    char msg[200];
    if (errors != 0) {
        std::snprintf(msg, sizeof msg, "%d device-side errors (launch or empty range)", errors);
        return tc::report(false, 0, msg);
    }
    if (!checkLeaves("tree", sum[0], visits[0], depth[0], refSum, tree.depth, refTotal, msg, sizeof msg))
        return tc::report(false, 0, msg);
    if (!checkLeaves("wide", sum[1], visits[1], depth[1], refSum, wide.depth, refTotal, msg, sizeof msg))
        return tc::report(false, 0, msg);
    return tc::report(true, ms, nullptr);
}
