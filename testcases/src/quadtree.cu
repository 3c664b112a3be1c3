// quadtree: recursive quadtree construction (KLAP Table I "qt", after NVIDIA's cdpQuadtree).
//
// build processes one node with one thread block: the block counts the node's points per
// quadrant (shared-memory atomics) and scatters them into the four children's ranges of the
// other point buffer (ping-pong by depth parity). Then threads 0..3 each write one child
// node and, if that quadrant holds more than `threshold` points and the child is above the
// maximum depth, launch build<<<1, blockDim.x>>> on it: a kernel launching itself from
// several threads of one block. Nodes that are not subdivided are leaves; a leaf at depth d
// finds its points in buffer d % 2 (buffer 0 holds the input).
//
// Options: -n points (40000)  -d max depth (8, at most 20)  -t threshold (16)  -s seed (1)
//          -b block size (128)

#include "common/check.cuh"

#include <algorithm>
#include <tuple>
#include <vector>

struct Point {
    float x, y;
    int id;
};

struct Node {
    float minX, minY, maxX, maxY;  // bounding box
    int begin, end;                // point range (in buffer depth % 2 for a leaf)
    int depth;
    int firstChild;                // index of the first of 4 children, -1 for a leaf
    unsigned long long path;       // quadrant digits from the root, 2 bits per level
};

__host__ __device__ inline int quadrantOf(float x, float y, float cx, float cy) {
    return (x >= cx ? 1 : 0) | (y >= cy ? 2 : 0);
}

__host__ __device__ inline Node childNode(const Node &parent, int q, float cx, float cy, int begin,
                                          int end) {
    Node c;
    c.minX = (q & 1) ? cx : parent.minX;
    c.maxX = (q & 1) ? parent.maxX : cx;
    c.minY = (q & 2) ? cy : parent.minY;
    c.maxY = (q & 2) ? parent.maxY : cy;
    c.begin = begin;
    c.end = end;
    c.depth = parent.depth + 1;
    c.firstChild = -1;
    c.path = (parent.path << 2) | (unsigned long long)q;
    return c;
}

__global__ void build(Node *nodes, int nodeId, int depth, Point *in, Point *out, int *nodeCount,
                      int capacity, int threshold, int maxDepth, int *errors) {
    __shared__ int count[4];
    __shared__ int offset[4];
    __shared__ int firstChild;

    const Node node = nodes[nodeId];
    const float cx = 0.5f * (node.minX + node.maxX);
    const float cy = 0.5f * (node.minY + node.maxY);

    if (threadIdx.x < 4) count[threadIdx.x] = 0;
    if (threadIdx.x == 0) {
        int base = atomicAdd(nodeCount, 4);
        if (base + 4 > capacity) {
            atomicAdd(errors, 1);
            base = -1;
        }
        firstChild = base;
    }
    __syncthreads();
    if (firstChild < 0) return;  // node pool exhausted: the node stays a leaf

    // Count the points of each quadrant.
    for (int i = node.begin + threadIdx.x; i < node.end; i += blockDim.x) {
        Point p = in[i];
        atomicAdd(&count[quadrantOf(p.x, p.y, cx, cy)], 1);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        int pos = node.begin;
        for (int q = 0; q < 4; ++q) {
            offset[q] = pos;
            pos += count[q];
        }
    }
    __syncthreads();

    // Scatter the points into the children's ranges of the other buffer.
    for (int i = node.begin + threadIdx.x; i < node.end; i += blockDim.x) {
        Point p = in[i];
        int slot = atomicAdd(&offset[quadrantOf(p.x, p.y, cx, cy)], 1);
        out[slot] = p;
    }
    __syncthreads();

    if (threadIdx.x < 4) {
        int q = threadIdx.x;
        int begin = node.begin;
        for (int r = 0; r < q; ++r) begin += count[r];
        int child = firstChild + q;
        nodes[child] = childNode(node, q, cx, cy, begin, begin + count[q]);
        if (q == 0) nodes[nodeId].firstChild = firstChild;
        if (count[q] > threshold && depth + 1 < maxDepth) {
            build<<<1, blockDim.x>>>(nodes, child, depth + 1, out, in, nodeCount, capacity, threshold,
                                     maxDepth, errors);
            if (cudaGetLastError() != cudaSuccess) atomicAdd(errors, 1);
        }
    }
}

struct Leaf {
    int depth;
    unsigned long long path;
    int count;
    float minX, minY, maxX, maxY;
    bool operator<(const Leaf &o) const { return std::tie(depth, path) < std::tie(o.depth, o.path); }
};

// CPU reference with the same rules: returns the leaves.
static void cpuBuild(const Node &node, std::vector<Point> &pts, int threshold, int maxDepth,
                     std::vector<Leaf> &leaves) {
    int n = node.end - node.begin;
    if (!(n > threshold && node.depth < maxDepth)) {
        leaves.push_back({node.depth, node.path, n, node.minX, node.minY, node.maxX, node.maxY});
        return;
    }
    float cx = 0.5f * (node.minX + node.maxX), cy = 0.5f * (node.minY + node.maxY);
    std::vector<Point> part[4];
    for (int i = node.begin; i < node.end; ++i)
        part[quadrantOf(pts[i].x, pts[i].y, cx, cy)].push_back(pts[i]);
    int pos = node.begin;
    for (int q = 0; q < 4; ++q) {
        std::copy(part[q].begin(), part[q].end(), pts.begin() + pos);
        Node c = childNode(node, q, cx, cy, pos, pos + (int)part[q].size());
        pos += (int)part[q].size();
        cpuBuild(c, pts, threshold, maxDepth, leaves);
    }
}

// Checks the tree built on the GPU: links, ranges, that every point lies in exactly one leaf
// inside the leaf's box, and that the leaves equal those of the CPU-built reference.
static bool verifyTree(const std::vector<Node> &nodes, int nodeCount, const std::vector<Point> buf[2],
                       const std::vector<Point> &pts, const Node &root, int threshold, int maxDepth,
                       char *msg, size_t msgLen) {
    const int n = (int)pts.size();
    // Walk the tree from the root: check the links, collect the leaves and their points.
    std::vector<Leaf> leaves;
    std::vector<int> seen(n, 0);
    std::vector<int> stack = {0};
    int visited = 0;
    while (!stack.empty()) {
        int id = stack.back();
        stack.pop_back();
        if (++visited > nodeCount) {
            std::snprintf(msg, msgLen, "node links do not form a tree");
            return false;
        }
        const Node &nd = nodes[id];
        if (nd.firstChild != -1) {
            int fc = nd.firstChild;
            if (fc < 1 || fc + 4 > nodeCount || (fc - 1) % 4 != 0) {
                std::snprintf(msg, msgLen, "node %d: bad firstChild %d", id, fc);
                return false;
            }
            int pos = nd.begin;
            for (int q = 0; q < 4; ++q) {
                const Node &c = nodes[fc + q];
                if (c.begin != pos || c.end < c.begin || c.depth != nd.depth + 1 ||
                    c.path != ((nd.path << 2) | (unsigned long long)q)) {
                    std::snprintf(msg, msgLen, "node %d: child %d inconsistent", id, fc + q);
                    return false;
                }
                pos = c.end;
                stack.push_back(fc + q);
            }
            if (pos != nd.end) {
                std::snprintf(msg, msgLen, "node %d: children do not cover its range", id);
                return false;
            }
            continue;
        }
        if (nd.begin < 0 || nd.end > n || nd.begin > nd.end) {
            std::snprintf(msg, msgLen, "leaf %d: bad range [%d, %d)", id, nd.begin, nd.end);
            return false;
        }
        const std::vector<Point> &b = buf[nd.depth % 2];
        for (int i = nd.begin; i < nd.end; ++i) {
            const Point &p = b[i];
            if (p.id < 0 || p.id >= n || seen[p.id]++ != 0 || p.x != pts[p.id].x ||
                p.y != pts[p.id].y) {
                std::snprintf(msg, msgLen, "leaf %d: slot %d holds a bad or repeated point (id %d)",
                              id, i, p.id);
                return false;
            }
            if (!(p.x >= nd.minX && p.x <= nd.maxX && p.y >= nd.minY && p.y <= nd.maxY)) {
                std::snprintf(msg, msgLen, "leaf %d: point %d (%g, %g) outside its box", id, p.id,
                              p.x, p.y);
                return false;
            }
        }
        leaves.push_back({nd.depth, nd.path, nd.end - nd.begin, nd.minX, nd.minY, nd.maxX, nd.maxY});
    }
    if (visited != nodeCount) {
        std::snprintf(msg, msgLen, "%d nodes allocated, %d reachable", nodeCount, visited);
        return false;
    }
    for (int i = 0; i < n; ++i) {
        if (seen[i] != 1) {
            std::snprintf(msg, msgLen, "point %d is in no leaf", i);
            return false;
        }
    }

    // Compare the leaves with the CPU-built quadtree.
    std::vector<Leaf> ref;
    std::vector<Point> cpuPts = pts;
    cpuBuild(root, cpuPts, threshold, maxDepth, ref);
    std::sort(leaves.begin(), leaves.end());
    std::sort(ref.begin(), ref.end());
    if (leaves.size() != ref.size()) {
        std::snprintf(msg, msgLen, "%zu leaves, expected %zu", leaves.size(), ref.size());
        return false;
    }
    for (size_t i = 0; i < ref.size(); ++i) {
        const Leaf &g = leaves[i], &e = ref[i];
        if (g.depth != e.depth || g.path != e.path || g.count != e.count || g.minX != e.minX ||
            g.minY != e.minY || g.maxX != e.maxX || g.maxY != e.maxY) {
            std::snprintf(msg, msgLen, "leaf (depth %d, path %llx): %d points, expected %d", e.depth,
                          e.path, g.count, e.count);
            return false;
        }
    }
    return true;
}

int main(int argc, char **argv) {
    tc::g_name = "quadtree";
    const int n = (int)tc::argInt(argc, argv, "-n", 40000);
    const int maxDepth = (int)tc::argInt(argc, argv, "-d", 8);
    const int threshold = (int)tc::argInt(argc, argv, "-t", 16);
    const uint64_t seed = (uint64_t)tc::argInt(argc, argv, "-s", 1);
    const int block = (int)tc::argInt(argc, argv, "-b", 128);
    if (n < 1 || maxDepth < 0 || maxDepth > 20 || threshold < 0 || block < 4 || block > 1024)
        return tc::report(false, 0, "bad options (need n>=1, 0<=d<=20, t>=0, 4<=b<=1024)");

    // Half the points uniform in [0,1)^2, half in 8 tight clusters (deep subtrees).
    tc::Rng rng(seed);
    std::vector<Point> pts(n);
    float clusterX[8], clusterY[8];
    for (int c = 0; c < 8; ++c) {
        clusterX[c] = 0.1f + 0.8f * rng.uniform();
        clusterY[c] = 0.1f + 0.8f * rng.uniform();
    }
    for (int i = 0; i < n; ++i) {
        float x, y;
        if (i % 2 == 0) {
            x = rng.uniform();
            y = rng.uniform();
        } else {
            int c = (int)rng.below(8);
            x = clusterX[c] + 0.02f * (rng.uniform() + rng.uniform() - 1.0f);
            y = clusterY[c] + 0.02f * (rng.uniform() + rng.uniform() - 1.0f);
        }
        pts[i] = {x, y, i};
    }

    Node root;
    root.minX = root.minY = 0.0f;
    root.maxX = root.maxY = 1.0f;
    root.begin = 0;
    root.end = n;
    root.depth = 0;
    root.firstChild = -1;
    root.path = 0;

    // Subdivided nodes of one depth hold disjoint sets of > threshold points.
    const long long maxSplits = (long long)maxDepth * (n / (threshold + 1) + 1);
    const long long capLL = 1 + 4 * maxSplits;
    if (capLL > (1 << 26)) return tc::report(false, 0, "node pool too large; raise -t");
    const int capacity = (int)capLL;
    tc::ensurePendingLaunches(maxSplits + 1024);

    Node *dNodes = nullptr;
    Point *dBuf[2] = {nullptr, nullptr};
    int *dNodeCount = nullptr, *dErrors = nullptr;
    CUDA_CHECK(cudaMalloc(&dNodes, sizeof(Node) * capacity));
    CUDA_CHECK(cudaMalloc(&dBuf[0], sizeof(Point) * n));
    CUDA_CHECK(cudaMalloc(&dBuf[1], sizeof(Point) * n));
    CUDA_CHECK(cudaMalloc(&dNodeCount, sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dErrors, sizeof(int)));
    CUDA_CHECK(cudaMemcpy(dNodes, &root, sizeof(Node), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(dBuf[0], pts.data(), sizeof(Point) * n, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dBuf[1], 0xff, sizeof(Point) * n));
    const int one = 1;
    CUDA_CHECK(cudaMemcpy(dNodeCount, &one, sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(dErrors, 0, sizeof(int)));

    tc::GpuTimer timer;
    timer.start();
    if (n > threshold && maxDepth > 0) {
        build<<<1, block>>>(dNodes, 0, 0, dBuf[0], dBuf[1], dNodeCount, capacity, threshold, maxDepth,
                            dErrors);
        CUDA_CHECK_LAUNCH();
    }
    timer.stop();
    float ms = timer.ms();
    CUDA_CHECK(cudaDeviceSynchronize());

    int nodeCount = 0, errors = 0;
    CUDA_CHECK(cudaMemcpy(&nodeCount, dNodeCount, sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&errors, dErrors, sizeof(int), cudaMemcpyDeviceToHost));
    char msg[200];
    if (errors != 0) {
        std::snprintf(msg, sizeof msg, "%d device-side errors (node pool or launch)", errors);
        return tc::report(false, 0, msg);
    }
    if (nodeCount < 1 || nodeCount > capacity) {
        std::snprintf(msg, sizeof msg, "node count %d out of range", nodeCount);
        return tc::report(false, 0, msg);
    }
    std::vector<Node> nodes(nodeCount);
    std::vector<Point> buf[2] = {std::vector<Point>(n), std::vector<Point>(n)};
    CUDA_CHECK(cudaMemcpy(nodes.data(), dNodes, sizeof(Node) * nodeCount, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(buf[0].data(), dBuf[0], sizeof(Point) * n, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(buf[1].data(), dBuf[1], sizeof(Point) * n, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(dNodes));
    CUDA_CHECK(cudaFree(dBuf[0]));
    CUDA_CHECK(cudaFree(dBuf[1]));
    CUDA_CHECK(cudaFree(dNodeCount));
    CUDA_CHECK(cudaFree(dErrors));

    if (!verifyTree(nodes, nodeCount, buf, pts, root, threshold, maxDepth, msg, sizeof msg))
        return tc::report(false, 0, msg);
    return tc::report(true, ms, nullptr);
}
