// bh (CDP): Barnes-Hut n-body simulation with an octree (KLAP Table I "bh": 4096 bodies,
// 4 time steps, parent block 256, child block 256; after LonestarGPU's BH, ported to CDP).
//
// Every time step: boundingBox (one block) computes the root cell; the octree is built top
// down, one host launch of buildLevel per depth (one block per cell of that depth: a cell with
// more than `leafCap` bodies below the maximum depth takes 8 children from a node pool and
// scatters its bodies' indices into the children's ranges, otherwise it is a leaf that stores
// its bodies in tree order, computes its centre of mass and appends itself to the leaf list);
// summarize computes the internal cells' centres of mass bottom up (one launch per depth);
// then the forces: forceParent runs one thread per leaf; an empty leaf returns at once, any
// other leaf launches forceChild<<<ceil(count / 256), 256, 0, cudaStreamFireAndForget>>>, one
// long-running child thread per body of the leaf that walks the whole tree (theta = 0.5,
// softening 0.05) and stores the body's acceleration. integrate (host launch, so after every
// child) advances velocities and positions (dt = 0.025). The CDP port groups the bodies by leaf,
// hence the tiny, long-running children that aggregation makes fuller.
// Checked against a CPU simulation with the same tree rules: the accelerations of every step
// (relative error 2e-3 allowed for 1% of the bodies, where an opening decision may flip on
// rounding, 5e-2 for all) and the final positions.
// Timed: the whole time-step loop (tree levels need one 8-byte read-back each), median of -r
// repetitions, each starting again from the initial bodies.
//
// Options: -n bodies (4096)  -t time steps (4)  -l leaf capacity (16 bodies)  -s seed (1)
//          -r repetitions (1)
// Output:  PASS bh time_ms=<median> launches=<non-empty leaves summed over the steps>

#include "common/bench_a.cuh"

#include <cmath>
#include <vector>

static constexpr int MAX_DEPTH = 20;                 // octree depth limit (coincident bodies)
static constexpr int STACK_SIZE = 8 * (MAX_DEPTH + 1);  // >= 7 * MAX_DEPTH + 8 pending cells
static constexpr int BLOCK = 256;                    // all kernels; forceChild blocks too
static constexpr float THETA = 0.5f;
static constexpr float EPS2 = 0.05f * 0.05f;
static constexpr float DT = 0.025f;

// counters[]: node pool, leaf list, errors, non-empty leaves (= force launches) so far.
enum { C_NODES = 0, C_LEAVES = 1, C_ERRORS = 2, C_NONEMPTY = 3, C_COUNT = 4 };

struct Node {
    float4 com;         // centre of mass (x, y, z) and mass (w)
    float cx, cy, cz;   // cell centre
    float half;         // half the cell's edge
    int begin, end;     // bodies sorted[begin, end)
    int firstChild;     // first of 8 children, -1 for a leaf
    int depth;
};

__host__ __device__ inline int octantOf(float x, float y, float z, float cx, float cy, float cz) {
    return (x >= cx ? 1 : 0) | (y >= cy ? 2 : 0) | (z >= cz ? 4 : 0);
}

__host__ __device__ inline Node childCell(const Node &parent, int o, int begin, int end) {
    Node c;
    const float hh = 0.5f * parent.half;
    c.cx = (o & 1) ? parent.cx + hh : parent.cx - hh;
    c.cy = (o & 2) ? parent.cy + hh : parent.cy - hh;
    c.cz = (o & 4) ? parent.cz + hh : parent.cz - hh;
    c.half = hh;
    c.begin = begin;
    c.end = end;
    c.firstChild = -1;
    c.depth = parent.depth + 1;
    c.com = make_float4(c.cx, c.cy, c.cz, 0.0f);
    return c;
}

// Root cell from the bodies' bounding box; identity order in idx0; resets pool and leaf list.
__global__ void boundingBox(const float4 *pos, int n, Node *nodes, int *idx0, int *counters) {
    __shared__ float smin[3][BLOCK], smax[3][BLOCK];
    float mn[3] = {INFINITY, INFINITY, INFINITY}, mx[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int i = threadIdx.x; i < n; i += BLOCK) {
        float4 p = pos[i];
        mn[0] = fminf(mn[0], p.x), mn[1] = fminf(mn[1], p.y), mn[2] = fminf(mn[2], p.z);
        mx[0] = fmaxf(mx[0], p.x), mx[1] = fmaxf(mx[1], p.y), mx[2] = fmaxf(mx[2], p.z);
        idx0[i] = i;
    }
    for (int k = 0; k < 3; ++k) smin[k][threadIdx.x] = mn[k], smax[k][threadIdx.x] = mx[k];
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            for (int k = 0; k < 3; ++k) {
                smin[k][threadIdx.x] = fminf(smin[k][threadIdx.x], smin[k][threadIdx.x + s]);
                smax[k][threadIdx.x] = fmaxf(smax[k][threadIdx.x], smax[k][threadIdx.x + s]);
            }
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        Node root;
        root.cx = 0.5f * (smin[0][0] + smax[0][0]);
        root.cy = 0.5f * (smin[1][0] + smax[1][0]);
        root.cz = 0.5f * (smin[2][0] + smax[2][0]);
        float ext = fmaxf(smax[0][0] - smin[0][0], fmaxf(smax[1][0] - smin[1][0], smax[2][0] - smin[2][0]));
        // Explicit rounding (no FMA contraction) so that the CPU reference gets the same box.
        root.half = __fadd_rn(__fmul_rn(0.5f * ext, 1.001f), 1e-6f);
        root.begin = 0;
        root.end = n;
        root.firstChild = -1;
        root.depth = 0;
        root.com = make_float4(root.cx, root.cy, root.cz, 0.0f);
        nodes[0] = root;
        counters[C_NODES] = 1;
        counters[C_LEAVES] = 0;
    }
}

// One block per cell of one depth (cells firstNode + blockIdx.x). Body indices of a cell at
// depth d are in idx[d % 2][begin, end).
__global__ void __launch_bounds__(BLOCK) buildLevel(Node *nodes, int firstNode, const float4 *pos, int *idx0,
                                                    int *idx1, int *sorted, int *leafList, int *counters,
                                                    int capacity, int leafCap, int maxDepth) {
    __shared__ int count[8], offset[8];
    __shared__ int sFirst;
    const int id = firstNode + blockIdx.x;
    const Node node = nodes[id];
    const int num = node.end - node.begin;
    int *in = (node.depth & 1) ? idx1 : idx0;
    int *out = (node.depth & 1) ? idx0 : idx1;

    if (num <= leafCap || node.depth >= maxDepth) {
        // Leaf: bodies into tree order, centre of mass, leaf list.
        for (int i = node.begin + threadIdx.x; i < node.end; i += BLOCK) sorted[i] = in[i];
        if (threadIdx.x == 0) {
            float m = 0.0f, x = 0.0f, y = 0.0f, z = 0.0f;
            for (int i = node.begin; i < node.end; ++i) {
                float4 p = pos[in[i]];
                m += p.w;
                x += p.w * p.x;
                y += p.w * p.y;
                z += p.w * p.z;
            }
            nodes[id].com = m > 0.0f ? make_float4(x / m, y / m, z / m, m) : make_float4(node.cx, node.cy, node.cz, 0.0f);
            int slot = atomicAdd(&counters[C_LEAVES], 1);
            leafList[slot] = id;
            if (num > 0) atomicAdd(&counters[C_NONEMPTY], 1);
        }
        return;
    }

    if (threadIdx.x < 8) count[threadIdx.x] = 0;
    if (threadIdx.x == 0) {
        int base = atomicAdd(&counters[C_NODES], 8);
        if (base + 8 > capacity) {
            atomicAdd(&counters[C_ERRORS], 1);
            base = -1;
        }
        sFirst = base;
    }
    __syncthreads();
    const int first = sFirst;
    if (first < 0) return;  // node pool exhausted (reported)

    for (int i = node.begin + threadIdx.x; i < node.end; i += BLOCK) {
        float4 p = pos[in[i]];
        atomicAdd(&count[octantOf(p.x, p.y, p.z, node.cx, node.cy, node.cz)], 1);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        int at = node.begin;
        for (int o = 0; o < 8; ++o) {
            offset[o] = at;
            at += count[o];
        }
    }
    __syncthreads();
    for (int i = node.begin + threadIdx.x; i < node.end; i += BLOCK) {
        int b = in[i];
        float4 p = pos[b];
        int slot = atomicAdd(&offset[octantOf(p.x, p.y, p.z, node.cx, node.cy, node.cz)], 1);
        out[slot] = b;
    }
    __syncthreads();
    if (threadIdx.x < 8) {
        const int o = threadIdx.x;
        int begin = node.begin;
        for (int r = 0; r < o; ++r) begin += count[r];
        nodes[first + o] = childCell(node, o, begin, begin + count[o]);
        if (o == 0) nodes[id].firstChild = first;
    }
}

// Centres of mass of the internal cells in [levelBegin, levelEnd), children already done.
__global__ void summarize(Node *nodes, int levelBegin, int levelEnd) {
    const int id = levelBegin + blockIdx.x * blockDim.x + threadIdx.x;
    if (id >= levelEnd) return;
    const int fc = nodes[id].firstChild;
    if (fc < 0) return;
    float m = 0.0f, x = 0.0f, y = 0.0f, z = 0.0f;
    for (int o = 0; o < 8; ++o) {
        float4 c = nodes[fc + o].com;
        m += c.w;
        x += c.w * c.x;
        y += c.w * c.y;
        z += c.w * c.z;
    }
    const Node &nd = nodes[id];
    nodes[id].com = m > 0.0f ? make_float4(x / m, y / m, z / m, m) : make_float4(nd.cx, nd.cy, nd.cz, 0.0f);
}

__device__ inline void addForce(float3 &a, float dx, float dy, float dz, float m) {
    float r2 = dx * dx + dy * dy + dz * dz + EPS2;
    float inv = rsqrtf(r2);
    float s = m * inv * inv * inv;
    a.x += s * dx;
    a.y += s * dy;
    a.z += s * dz;
}

// Acceleration on body b: depth-first walk from the root; a cell whose edge is small against
// its distance (edge^2 < theta^2 d^2) counts as its centre of mass, leaves are summed exactly.
__device__ float3 accelerationOn(int b, const Node *nodes, const int *sorted, const float4 *pos, int *errors) {
    const float4 pb = pos[b];
    float3 a = make_float3(0.0f, 0.0f, 0.0f);
    int stack[STACK_SIZE];
    int sp = 0;
    stack[sp++] = 0;
    while (sp > 0) {
        const int id = stack[--sp];
        const Node nd = nodes[id];
        if (nd.com.w == 0.0f) continue;
        if (nd.firstChild < 0) {
            for (int i = nd.begin; i < nd.end; ++i) {
                int j = sorted[i];
                if (j == b) continue;
                float4 pj = pos[j];
                addForce(a, pj.x - pb.x, pj.y - pb.y, pj.z - pb.z, pj.w);
            }
            continue;
        }
        float dx = nd.com.x - pb.x, dy = nd.com.y - pb.y, dz = nd.com.z - pb.z;
        float d2 = dx * dx + dy * dy + dz * dz;
        float size = 2.0f * nd.half;
        if (size * size < THETA * THETA * d2) {
            addForce(a, dx, dy, dz, nd.com.w);
        } else if (sp + 8 <= STACK_SIZE) {
            for (int o = 7; o >= 0; --o) stack[sp++] = nd.firstChild + o;
        } else {
            atomicAdd(errors, 1);
        }
    }
    return a;
}

__global__ void integrate(float4 *pos, float4 *vel, const float4 *acc, int n) {
    const int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= n) return;
    float4 p = pos[b], v = vel[b], a = acc[b];
    v.x += a.x * DT;
    v.y += a.y * DT;
    v.z += a.z * DT;
    p.x += v.x * DT;
    p.y += v.y * DT;
    p.z += v.z * DT;
    pos[b] = p;
    vel[b] = v;
}

// One child thread per body of one leaf: bodies sorted[begin, begin + count).
__global__ void forceChild(const Node *nodes, const int *sorted, const float4 *pos, int begin, int count,
                           float4 *acc, int *errors) {
    const int k = blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= count) return;
    const int b = sorted[begin + k];
    float3 a = accelerationOn(b, nodes, sorted, pos, errors);
    acc[b] = make_float4(a.x, a.y, a.z, 0.0f);
}

// One parent thread per leaf; non-empty leaves launch a child over their bodies.
__global__ void forceParent(const Node *nodes, const int *leafList, int numLeaves, const int *sorted,
                            const float4 *pos, float4 *acc, int *errors) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= numLeaves) return;
    const Node leaf = nodes[leafList[i]];
    const int count = leaf.end - leaf.begin;
    if (count == 0) return;
    forceChild<<<(count + BLOCK - 1) / BLOCK, BLOCK, 0, cudaStreamFireAndForget>>>(nodes, sorted, pos, leaf.begin,
                                                                                  count, acc, errors);
    if (cudaGetLastError() != cudaSuccess) atomicAdd(errors, 1);
}

// ---------------------------------------------------------------------------------------------
// CPU reference: the same tree rules (float cell geometry), double accumulation.

static void cpuBuild(std::vector<Node> &nodes, int id, std::vector<int> &idx, const std::vector<float4> &pos,
                     int leafCap, int maxDepth) {
    const Node nd = nodes[id];
    const int num = nd.end - nd.begin;
    double m = 0, x = 0, y = 0, z = 0;
    if (num <= leafCap || nd.depth >= maxDepth) {
        for (int i = nd.begin; i < nd.end; ++i) {
            const float4 &p = pos[idx[i]];
            m += p.w, x += (double)p.w * p.x, y += (double)p.w * p.y, z += (double)p.w * p.z;
        }
    } else {
        std::vector<int> part[8];
        for (int i = nd.begin; i < nd.end; ++i) {
            const float4 &p = pos[idx[i]];
            part[octantOf(p.x, p.y, p.z, nd.cx, nd.cy, nd.cz)].push_back(idx[i]);
        }
        const int first = (int)nodes.size();
        nodes[id].firstChild = first;
        int at = nd.begin;
        for (int o = 0; o < 8; ++o) {
            std::copy(part[o].begin(), part[o].end(), idx.begin() + at);
            nodes.push_back(childCell(nd, o, at, at + (int)part[o].size()));
            at += (int)part[o].size();
        }
        for (int o = 0; o < 8; ++o) {
            cpuBuild(nodes, first + o, idx, pos, leafCap, maxDepth);
            const float4 c = nodes[first + o].com;
            m += c.w, x += (double)c.w * c.x, y += (double)c.w * c.y, z += (double)c.w * c.z;
        }
    }
    nodes[id].com = m > 0 ? make_float4((float)(x / m), (float)(y / m), (float)(z / m), (float)m)
                          : make_float4(nd.cx, nd.cy, nd.cz, 0.0f);
}

static void cpuAdd(double a[3], float dx, float dy, float dz, float m) {
    double r2 = (double)dx * dx + (double)dy * dy + (double)dz * dz + (double)EPS2;
    double s = m / (r2 * std::sqrt(r2));
    a[0] += s * dx, a[1] += s * dy, a[2] += s * dz;
}

// One time step on the CPU; acc receives the accelerations used for it.
static void cpuStep(std::vector<float4> &pos, std::vector<float4> &vel, std::vector<float4> &acc, int leafCap,
                    int maxDepth) {
    const int n = (int)pos.size();
    float mn[3] = {INFINITY, INFINITY, INFINITY}, mx[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (const float4 &p : pos) {
        mn[0] = std::fmin(mn[0], p.x), mn[1] = std::fmin(mn[1], p.y), mn[2] = std::fmin(mn[2], p.z);
        mx[0] = std::fmax(mx[0], p.x), mx[1] = std::fmax(mx[1], p.y), mx[2] = std::fmax(mx[2], p.z);
    }
    Node root;
    root.cx = 0.5f * (mn[0] + mx[0]);
    root.cy = 0.5f * (mn[1] + mx[1]);
    root.cz = 0.5f * (mn[2] + mx[2]);
    volatile float ext = std::fmax(mx[0] - mn[0], std::fmax(mx[1] - mn[1], mx[2] - mn[2]));
    volatile float halfScaled = (0.5f * ext) * 1.001f;
    root.half = halfScaled + 1e-6f;
    root.begin = 0, root.end = n, root.firstChild = -1, root.depth = 0;
    root.com = make_float4(root.cx, root.cy, root.cz, 0.0f);
    std::vector<Node> nodes = {root};
    std::vector<int> idx(n);
    for (int i = 0; i < n; ++i) idx[i] = i;
    cpuBuild(nodes, 0, idx, pos, leafCap, maxDepth);

    std::vector<int> stack;
    for (int b = 0; b < n; ++b) {
        const float4 pb = pos[b];
        double a[3] = {0, 0, 0};
        stack.assign(1, 0);
        while (!stack.empty()) {
            const Node nd = nodes[stack.back()];
            stack.pop_back();
            if (nd.com.w == 0.0f) continue;
            if (nd.firstChild < 0) {
                for (int i = nd.begin; i < nd.end; ++i) {
                    int j = idx[i];
                    if (j == b) continue;
                    cpuAdd(a, pos[j].x - pb.x, pos[j].y - pb.y, pos[j].z - pb.z, pos[j].w);
                }
                continue;
            }
            float dx = nd.com.x - pb.x, dy = nd.com.y - pb.y, dz = nd.com.z - pb.z;
            float d2 = dx * dx + dy * dy + dz * dz;
            float size = 2.0f * nd.half;
            if (size * size < THETA * THETA * d2)
                cpuAdd(a, dx, dy, dz, nd.com.w);
            else
                for (int o = 7; o >= 0; --o) stack.push_back(nd.firstChild + o);
        }
        acc[b] = make_float4((float)a[0], (float)a[1], (float)a[2], 0.0f);
    }
    for (int b = 0; b < n; ++b) {
        float4 &p = pos[b], &v = vel[b];
        const float4 &a = acc[b];
        v.x += a.x * DT, v.y += a.y * DT, v.z += a.z * DT;
        p.x += v.x * DT, p.y += v.y * DT, p.z += v.z * DT;
    }
}

// Plummer sphere (Aarseth, Henon, Wielen 1974) in standard units, total mass 1.
static void makeBodies(int n, uint64_t seed, std::vector<float4> &pos, std::vector<float4> &vel) {
    ba::Rng rng(seed);
    const double scale = 3.0 * M_PI / 16.0;
    const double vscale = 1.0 / std::sqrt(scale);
    pos.resize(n);
    vel.resize(n);
    auto randomDir = [&](double len, double out[3]) {
        double z = 2.0 * rng.uniformD() - 1.0, phi = 2.0 * M_PI * rng.uniformD();
        double rxy = std::sqrt(1.0 - z * z);
        out[0] = len * rxy * std::cos(phi), out[1] = len * rxy * std::sin(phi), out[2] = len * z;
    };
    for (int i = 0; i < n; ++i) {
        double r;
        do {
            double u = rng.uniformD();
            r = 1.0 / std::sqrt(std::pow(u, -2.0 / 3.0) - 1.0);
        } while (!(r < 9.0));  // u = 0 gives r = 0 (kept), u -> 1 gives far outliers (dropped)
        double q, g;
        do {
            q = rng.uniformD();
            g = 0.1 * rng.uniformD();
        } while (g > q * q * std::pow(1.0 - q * q, 3.5));
        double v = q * std::sqrt(2.0) * std::pow(1.0 + r * r, -0.25);
        double p[3], w[3];
        randomDir(r * scale, p);
        randomDir(v * vscale, w);
        pos[i] = make_float4((float)p[0], (float)p[1], (float)p[2], 1.0f / (float)n);
        vel[i] = make_float4((float)w[0], (float)w[1], (float)w[2], 0.0f);
    }
}

int main(int argc, char **argv) {
    ba::g_name = "bh";
    const int n = (int)ba::argInt(argc, argv, "-n", 4096);
    const int steps = (int)ba::argInt(argc, argv, "-t", 4);
    const int leafCap = (int)ba::argInt(argc, argv, "-l", 16);
    const uint64_t seed = (uint64_t)ba::argInt(argc, argv, "-s", 1);
    const int reps = ba::argReps(argc, argv);
    const int maxDepth = MAX_DEPTH;
    if (n < 2 || n > (1 << 22) || steps < 1 || steps > 1000 || leafCap < 1 || leafCap > (1 << 20))
        return ba::report(false, 0, "bad options (need 2<=n<=2^22, 1<=t<=1000, l>=1)");

    std::vector<float4> pos0, vel0;
    makeBodies(n, seed, pos0, vel0);

    // CPU reference: accelerations of every step and the final state.
    std::vector<float4> refAcc((size_t)steps * n), refPos = pos0, refVel = vel0;
    {
        std::vector<float4> acc(n);
        for (int s = 0; s < steps; ++s) {
            cpuStep(refPos, refVel, acc, leafCap, maxDepth);
            std::copy(acc.begin(), acc.end(), refAcc.begin() + (size_t)s * n);
        }
    }

    // Cells of one depth with children hold disjoint sets of > leafCap bodies.
    const long long capLL = 1 + 8LL * maxDepth * (n / (leafCap + 1) + 1);
    if (capLL > (1 << 26)) return ba::report(false, 0, "node pool too large; raise -l");
    const int capacity = (int)capLL;
    // At most one force child per non-empty leaf, i.e. per body, in flight.
    ba::ensurePendingLaunches((long long)n + 1024);

    float4 *dPos = nullptr, *dVel = nullptr, *dAcc = nullptr;
    Node *dNodes = nullptr;
    int *dIdx0 = nullptr, *dIdx1 = nullptr, *dSorted = nullptr, *dLeaves = nullptr, *dCounters = nullptr;
    CUDA_CHECK(cudaMalloc(&dPos, sizeof(float4) * n));
    CUDA_CHECK(cudaMalloc(&dVel, sizeof(float4) * n));
    CUDA_CHECK(cudaMalloc(&dAcc, sizeof(float4) * n * steps));
    CUDA_CHECK(cudaMalloc(&dNodes, sizeof(Node) * capacity));
    CUDA_CHECK(cudaMalloc(&dIdx0, sizeof(int) * n));
    CUDA_CHECK(cudaMalloc(&dIdx1, sizeof(int) * n));
    CUDA_CHECK(cudaMalloc(&dSorted, sizeof(int) * n));
    CUDA_CHECK(cudaMalloc(&dLeaves, sizeof(int) * capacity));
    CUDA_CHECK(cudaMalloc(&dCounters, sizeof(int) * C_COUNT));

    std::vector<float> times;
    std::vector<float4> acc((size_t)steps * n), pos(n);
    std::vector<int> levelStart;
    int counters[C_COUNT] = {0, 0, 0, 0};
    char msg[240];
    ba::GpuTimer timer;
    const int bodyBlocks = (n + BLOCK - 1) / BLOCK;
    for (int r = 0; r < reps; ++r) {
        CUDA_CHECK(cudaMemcpy(dPos, pos0.data(), sizeof(float4) * n, cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemcpy(dVel, vel0.data(), sizeof(float4) * n, cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemset(dAcc, 0xff, sizeof(float4) * n * steps));  // NaN
        CUDA_CHECK(cudaMemset(dCounters, 0, sizeof(int) * C_COUNT));
        CUDA_CHECK(cudaDeviceSynchronize());

        timer.start();
        for (int s = 0; s < steps; ++s) {
            float4 *stepAcc = dAcc + (size_t)s * n;
            boundingBox<<<1, BLOCK>>>(dPos, n, dNodes, dIdx0, dCounters);
            CUDA_CHECK_LAUNCH();
            // Top-down tree build, one launch per depth; cells of depth k: [levelStart[k], levelStart[k+1]).
            levelStart.assign(1, 0);
            int levelEnd = 1;
            while (levelStart.back() < levelEnd) {
                const int begin = levelStart.back();
                buildLevel<<<levelEnd - begin, BLOCK>>>(dNodes, begin, dPos, dIdx0, dIdx1, dSorted, dLeaves,
                                                        dCounters, capacity, leafCap, maxDepth);
                CUDA_CHECK_LAUNCH();
                CUDA_CHECK(cudaMemcpy(counters, dCounters, sizeof(int) * 2, cudaMemcpyDeviceToHost));
                levelStart.push_back(levelEnd);
                levelEnd = counters[C_NODES] < capacity ? counters[C_NODES] : capacity;
                if ((int)levelStart.size() > maxDepth + 2) return ba::report(false, 0, "tree deeper than the limit");
            }
            // Bottom-up centres of mass; the deepest level holds only leaves.
            for (int k = (int)levelStart.size() - 3; k >= 0; --k) {
                const int lb = levelStart[k], le = levelStart[k + 1];
                summarize<<<(le - lb + BLOCK - 1) / BLOCK, BLOCK>>>(dNodes, lb, le);
                CUDA_CHECK_LAUNCH();
            }
            const int numLeaves = counters[C_LEAVES];
            forceParent<<<(numLeaves + BLOCK - 1) / BLOCK, BLOCK>>>(dNodes, dLeaves, numLeaves, dSorted, dPos, stepAcc,
                                                                    dCounters + C_ERRORS);
            CUDA_CHECK_LAUNCH();
            // A host launch: starts after forceParent and all its children.
            integrate<<<bodyBlocks, BLOCK>>>(dPos, dVel, stepAcc, n);
            CUDA_CHECK_LAUNCH();
        }
        timer.stop();
        times.push_back(timer.ms());
        CUDA_CHECK(cudaDeviceSynchronize());

        CUDA_CHECK(cudaMemcpy(counters, dCounters, sizeof(int) * C_COUNT, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(acc.data(), dAcc, sizeof(float4) * n * steps, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(pos.data(), dPos, sizeof(float4) * n, cudaMemcpyDeviceToHost));
        if (counters[C_ERRORS] != 0) {
            std::snprintf(msg, sizeof msg, "rep %d: %d device-side errors (node pool, stack or launch)", r,
                          counters[C_ERRORS]);
            return ba::report(false, 0, msg);
        }
        for (int s = 0; s < steps; ++s) {
            double mean = 0;
            for (int b = 0; b < n; ++b) {
                const float4 &e = refAcc[(size_t)s * n + b];
                mean += std::sqrt((double)e.x * e.x + (double)e.y * e.y + (double)e.z * e.z);
            }
            mean /= n;
            int loose = 0;
            for (int b = 0; b < n; ++b) {
                const float4 &e = refAcc[(size_t)s * n + b], &g = acc[(size_t)s * n + b];
                double dx = (double)g.x - e.x, dy = (double)g.y - e.y, dz = (double)g.z - e.z;
                double scale = std::sqrt((double)e.x * e.x + (double)e.y * e.y + (double)e.z * e.z) + 0.01 * mean;
                double err = std::sqrt(dx * dx + dy * dy + dz * dz) / scale;
                if (!(err <= 5e-2)) {
                    std::snprintf(msg, sizeof msg, "rep %d step %d body %d: acceleration (%g, %g, %g), expected (%g, %g, %g)",
                                  r, s, b, g.x, g.y, g.z, e.x, e.y, e.z);
                    return ba::report(false, 0, msg);
                }
                if (err > 2e-3) ++loose;
            }
            if (loose > n / 100) {
                std::snprintf(msg, sizeof msg, "rep %d step %d: %d bodies with acceleration error > 2e-3", r, s, loose);
                return ba::report(false, 0, msg);
            }
        }
        for (int b = 0; b < n; ++b) {
            const float4 &e = refPos[b], &g = pos[b];
            if (!(std::fabs(g.x - e.x) <= 1e-3f && std::fabs(g.y - e.y) <= 1e-3f && std::fabs(g.z - e.z) <= 1e-3f)) {
                std::snprintf(msg, sizeof msg, "rep %d body %d: final position (%g, %g, %g), expected (%g, %g, %g)", r, b,
                              g.x, g.y, g.z, e.x, e.y, e.z);
                return ba::report(false, 0, msg);
            }
        }
    }
    CUDA_CHECK(cudaFree(dPos));
    CUDA_CHECK(cudaFree(dVel));
    CUDA_CHECK(cudaFree(dAcc));
    CUDA_CHECK(cudaFree(dNodes));
    CUDA_CHECK(cudaFree(dIdx0));
    CUDA_CHECK(cudaFree(dIdx1));
    CUDA_CHECK(cudaFree(dSorted));
    CUDA_CHECK(cudaFree(dLeaves));
    CUDA_CHECK(cudaFree(dCounters));
    return ba::report(true, times, nullptr, counters[C_NONEMPTY]);
}
