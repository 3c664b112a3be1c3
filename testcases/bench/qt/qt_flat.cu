// qt_flat (no CDP): the same quadtree construction as qt.cu, level by level from the host
// instead of recursively from the device. The nodes of one depth occupy a contiguous range of
// the node pool (the children of depth k are all allocated while depth k is processed), so
// the host launches buildLevel<BLOCK> with one block per node of the current depth (the same
// per-node code as qt.cu: leaf copy-back, count, scatter, write the four children, but no
// launch), reads the pool counter, and goes on with the range of new nodes until no node was
// subdivided. Timed: the whole level loop (counter read-backs included), median of -r
// repetitions.
//
// Options: -n points (40000)  -d maximum depth (12, at most 20)  -t minimum points per node (1)
//          -s seed (1)  -b block size (128; 64, 128, 256 or 512)  -r repetitions (1)
// Output:  PASS qt_flat time_ms=<median>

#include "common/bench_a.cuh"

#include <algorithm>
#include <tuple>
#include <vector>

struct Point {
    float x, y;
    int id;
};

struct Node {
    float minX, minY, maxX, maxY;  // bounding box
    int begin, end;                // point range (in buffer 0 once the tree is built)
    int depth;
    int firstChild;                // index of the first of 4 children, -1 for a leaf
    unsigned long long path;       // quadrant digits from the root, 2 bits per level
};

// Dynamic shared memory of buildLevel: count[4], offset[4], firstChild.
static constexpr size_t SMEM_BYTES = 9 * sizeof(int);

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

template <int BLOCK>
__global__ void __launch_bounds__(BLOCK) buildLevel(Node *nodes, int firstNode, int depth, Point *buf0,
                                                    Point *buf1, int *nodeCount, int capacity,
                                                    int minPoints, int maxDepth, int *errors) {
    extern __shared__ int smem[];
    int *count = smem;         // points per quadrant
    int *offset = smem + 4;    // next free slot per quadrant
    int *sFirst = smem + 8;    // first of the four child nodes

    const int nodeId = firstNode + blockIdx.x;
    const Node node = nodes[nodeId];
    const int numPoints = node.end - node.begin;

    // A leaf: make sure its points end up in buffer 0.
    if (depth >= maxDepth || numPoints <= minPoints) {
        if (depth & 1) {
            for (int i = node.begin + threadIdx.x; i < node.end; i += BLOCK) buf0[i] = buf1[i];
        }
        return;
    }

    Point *in = (depth & 1) ? buf1 : buf0;
    Point *out = (depth & 1) ? buf0 : buf1;
    const float cx = 0.5f * (node.minX + node.maxX);
    const float cy = 0.5f * (node.minY + node.maxY);

    if (threadIdx.x < 4) count[threadIdx.x] = 0;
    if (threadIdx.x == 0) {
        int base = atomicAdd(nodeCount, 4);
        if (base + 4 > capacity) {
            atomicAdd(errors, 1);
            base = -1;
        }
        *sFirst = base;
    }
    __syncthreads();
    const int first = *sFirst;
    if (first < 0) return;  // node pool exhausted (reported): the node stays a leaf

    // Count the points of each quadrant.
    for (int i = node.begin + threadIdx.x; i < node.end; i += BLOCK) {
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
    for (int i = node.begin + threadIdx.x; i < node.end; i += BLOCK) {
        Point p = in[i];
        int slot = atomicAdd(&offset[quadrantOf(p.x, p.y, cx, cy)], 1);
        out[slot] = p;
    }
    __syncthreads();

    // One thread writes the children; the next level's launch processes them.
    if (threadIdx.x == 0) {
        int begin = node.begin;
        for (int q = 0; q < 4; ++q) {
            nodes[first + q] = childNode(node, q, cx, cy, begin, begin + count[q]);
            begin += count[q];
        }
        nodes[nodeId].firstChild = first;
    }
}

struct Leaf {
    int depth;
    unsigned long long path;
    int count;
    float minX, minY, maxX, maxY;
    bool operator<(const Leaf &o) const { return std::tie(depth, path) < std::tie(o.depth, o.path); }
};

// CPU reference with the same rules; returns the leaves and counts the subdivided nodes.
static void cpuBuild(const Node &node, std::vector<Point> &pts, int minPoints, int maxDepth,
                     std::vector<Leaf> &leaves, long long &internal) {
    int n = node.end - node.begin;
    if (node.depth >= maxDepth || n <= minPoints) {
        leaves.push_back({node.depth, node.path, n, node.minX, node.minY, node.maxX, node.maxY});
        return;
    }
    ++internal;
    float cx = 0.5f * (node.minX + node.maxX), cy = 0.5f * (node.minY + node.maxY);
    std::vector<Point> part[4];
    for (int i = node.begin; i < node.end; ++i)
        part[quadrantOf(pts[i].x, pts[i].y, cx, cy)].push_back(pts[i]);
    int pos = node.begin;
    for (int q = 0; q < 4; ++q) {
        std::copy(part[q].begin(), part[q].end(), pts.begin() + pos);
        Node c = childNode(node, q, cx, cy, pos, pos + (int)part[q].size());
        pos += (int)part[q].size();
        cpuBuild(c, pts, minPoints, maxDepth, leaves, internal);
    }
}

// Checks the tree built on the GPU: links, ranges, that every point lies in exactly one leaf
// (in buffer 0) inside the leaf's box, and that the leaves equal the CPU reference's.
static bool verifyTree(const std::vector<Node> &nodes, int nodeCount, const std::vector<Point> &buf,
                       const std::vector<Point> &pts, const std::vector<Leaf> &refSorted, char *msg,
                       size_t msgLen) {
    const int n = (int)pts.size();
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
        for (int i = nd.begin; i < nd.end; ++i) {
            const Point &p = buf[i];
            if (p.id < 0 || p.id >= n || seen[p.id]++ != 0 || p.x != pts[p.id].x || p.y != pts[p.id].y) {
                std::snprintf(msg, msgLen, "leaf %d: slot %d holds a bad or repeated point (id %d)", id, i,
                              p.id);
                return false;
            }
            if (!(p.x >= nd.minX && p.x <= nd.maxX && p.y >= nd.minY && p.y <= nd.maxY)) {
                std::snprintf(msg, msgLen, "leaf %d: point %d (%g, %g) outside its box", id, p.id, p.x, p.y);
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
    std::sort(leaves.begin(), leaves.end());
    if (leaves.size() != refSorted.size()) {
        std::snprintf(msg, msgLen, "%zu leaves, expected %zu", leaves.size(), refSorted.size());
        return false;
    }
    for (size_t i = 0; i < refSorted.size(); ++i) {
        const Leaf &g = leaves[i], &e = refSorted[i];
        if (g.depth != e.depth || g.path != e.path || g.count != e.count || g.minX != e.minX ||
            g.minY != e.minY || g.maxX != e.maxX || g.maxY != e.maxY) {
            std::snprintf(msg, msgLen, "leaf (depth %d, path %llx): %d points, expected %d", e.depth, e.path,
                          g.count, e.count);
            return false;
        }
    }
    return true;
}

// Half the points uniform in [0,1)^2, half in 8 tight clusters (deep subtrees).
static std::vector<Point> makePoints(int n, uint64_t seed) {
    ba::Rng rng(seed);
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
    return pts;
}

static Node rootNode(int n) {
    Node root;
    root.minX = root.minY = 0.0f;
    root.maxX = root.maxY = 1.0f;
    root.begin = 0;
    root.end = n;
    root.depth = 0;
    root.firstChild = -1;
    root.path = 0;
    return root;
}

// Launches the grid of one level: one block per node in [levelBegin, levelEnd).
template <int BLOCK>
static void launchLevel(int levelBegin, int levelEnd, int depth, Node *dNodes, Point *dBuf0, Point *dBuf1,
                        int *dNodeCount, int capacity, int minPoints, int maxDepth, int *dErrors) {
    buildLevel<BLOCK><<<levelEnd - levelBegin, BLOCK, SMEM_BYTES>>>(dNodes, levelBegin, depth, dBuf0, dBuf1,
                                                                   dNodeCount, capacity, minPoints, maxDepth,
                                                                   dErrors);
}

int main(int argc, char **argv) {
    ba::g_name = "qt_flat";
    const int n = (int)ba::argInt(argc, argv, "-n", 40000);
    const int maxDepth = (int)ba::argInt(argc, argv, "-d", 12);
    const int minPoints = (int)ba::argInt(argc, argv, "-t", 1);
    const uint64_t seed = (uint64_t)ba::argInt(argc, argv, "-s", 1);
    const int block = (int)ba::argInt(argc, argv, "-b", 128);
    const int reps = ba::argReps(argc, argv);
    if (n < 1 || n > (1 << 24) || maxDepth < 0 || maxDepth > 20 || minPoints < 0 ||
        (block != 64 && block != 128 && block != 256 && block != 512))
        return ba::report(false, 0, "bad options (need 1<=n<=2^24, 0<=d<=20, t>=0, b in {64,128,256,512})");

    const std::vector<Point> pts = makePoints(n, seed);
    const Node root = rootNode(n);

    // CPU reference: the leaves and the number of subdivided nodes.
    std::vector<Leaf> ref;
    long long internal = 0;
    {
        std::vector<Point> cpuPts = pts;
        cpuBuild(root, cpuPts, minPoints, maxDepth, ref, internal);
        std::sort(ref.begin(), ref.end());
    }
    const long long capLL = 1 + 4 * internal + 4096;
    if (capLL > (1 << 26)) return ba::report(false, 0, "node pool too large; raise -t");
    const int capacity = (int)capLL;

    Node *dNodes = nullptr;
    Point *dBuf0 = nullptr, *dBuf1 = nullptr;
    int *dNodeCount = nullptr, *dErrors = nullptr;
    CUDA_CHECK(cudaMalloc(&dNodes, sizeof(Node) * capacity));
    CUDA_CHECK(cudaMalloc(&dBuf0, sizeof(Point) * n));
    CUDA_CHECK(cudaMalloc(&dBuf1, sizeof(Point) * n));
    CUDA_CHECK(cudaMalloc(&dNodeCount, sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dErrors, sizeof(int)));

    std::vector<float> times;
    std::vector<Point> buf(n);
    std::vector<Node> nodes;
    char msg[200];
    ba::GpuTimer timer;
    for (int r = 0; r < reps; ++r) {
        CUDA_CHECK(cudaMemcpy(dNodes, &root, sizeof(Node), cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemcpy(dBuf0, pts.data(), sizeof(Point) * n, cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemset(dBuf1, 0xff, sizeof(Point) * n));
        const int one = 1;
        CUDA_CHECK(cudaMemcpy(dNodeCount, &one, sizeof(int), cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemset(dErrors, 0, sizeof(int)));
        CUDA_CHECK(cudaDeviceSynchronize());

        timer.start();
        int levelBegin = 0, levelEnd = 1, depth = 0;
        while (levelBegin < levelEnd) {
            if (depth > maxDepth) return ba::report(false, 0, "tree deeper than the maximum depth");
            switch (block) {
                case 64: launchLevel<64>(levelBegin, levelEnd, depth, dNodes, dBuf0, dBuf1, dNodeCount, capacity, minPoints, maxDepth, dErrors); break;
                case 128: launchLevel<128>(levelBegin, levelEnd, depth, dNodes, dBuf0, dBuf1, dNodeCount, capacity, minPoints, maxDepth, dErrors); break;
                case 256: launchLevel<256>(levelBegin, levelEnd, depth, dNodes, dBuf0, dBuf1, dNodeCount, capacity, minPoints, maxDepth, dErrors); break;
                default: launchLevel<512>(levelBegin, levelEnd, depth, dNodes, dBuf0, dBuf1, dNodeCount, capacity, minPoints, maxDepth, dErrors); break;
            }
            CUDA_CHECK_LAUNCH();
            int count = 0;
            CUDA_CHECK(cudaMemcpy(&count, dNodeCount, sizeof(int), cudaMemcpyDeviceToHost));
            levelBegin = levelEnd;
            levelEnd = count < capacity ? count : capacity;
            ++depth;
        }
        timer.stop();
        times.push_back(timer.ms());
        CUDA_CHECK(cudaDeviceSynchronize());

        int nodeCount = 0, errors = 0;
        CUDA_CHECK(cudaMemcpy(&nodeCount, dNodeCount, sizeof(int), cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(&errors, dErrors, sizeof(int), cudaMemcpyDeviceToHost));
        if (errors != 0) {
            std::snprintf(msg, sizeof msg, "rep %d: %d device-side errors (node pool)", r, errors);
            return ba::report(false, 0, msg);
        }
        if (nodeCount < 1 || nodeCount > capacity) {
            std::snprintf(msg, sizeof msg, "rep %d: node count %d out of range", r, nodeCount);
            return ba::report(false, 0, msg);
        }
        nodes.resize(nodeCount);
        CUDA_CHECK(cudaMemcpy(nodes.data(), dNodes, sizeof(Node) * nodeCount, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(buf.data(), dBuf0, sizeof(Point) * n, cudaMemcpyDeviceToHost));
        if (!verifyTree(nodes, nodeCount, buf, pts, ref, msg, sizeof msg)) return ba::report(false, 0, msg);
    }
    CUDA_CHECK(cudaFree(dNodes));
    CUDA_CHECK(cudaFree(dBuf0));
    CUDA_CHECK(cudaFree(dBuf1));
    CUDA_CHECK(cudaFree(dNodeCount));
    CUDA_CHECK(cudaFree(dErrors));
    return ba::report(true, times, nullptr);
}
