// ccl (CDP): connected component labelling of binary frames (KLAP Table I "ccl": 8 frames,
// 4 host streams, parent block 2, child block 256; after NUPAR's CCL).
//
// Per frame the host launches cclParent<<<1, P>>> (P = 2) into host stream f % 4. Parent thread
// t takes the t-th horizontal band of the frame and launches localLabel over it (one 16 x 16
// tile per child block of 256 threads, cudaStreamFireAndForget: the bands are independent):
// each block initialises the labels of its tile (pixel index for a foreground pixel, -1 for
// background) and unites every foreground pixel with its left and upper neighbour inside the
// tile (a lock-free union-find with atomicMin, the smaller index becomes the root). The CDP1
// version waited for its children with a device-side cudaDeviceSynchronize and then merged
// across the tile borders; on CDP2 that work moves into kernels that thread 0 launches into
// cudaStreamTailLaunch, which start only after the parent grid and all its children are done
// and run one after another: mergeBorders (unions across tile borders, the band border
// included) and then flatten (each label becomes its root, i.e. the smallest pixel index of
// its component). Checked against a CPU labelling (4-connectivity) of every frame.
// Timed: all 8 frames in their streams (events on the legacy default stream), median of -r
// repetitions.
//
// Options: -w frame width (1024, a multiple of 16)  -h frame height (1024, a multiple of 16 P)
//          -f frames (8)  -q host streams (4)  -p parent threads = bands (2)  -s seed (1)
//          -r repetitions (1)
// Output:  PASS ccl time_ms=<median> launches=<frames * (P + 2)>

#include "common/bench_a.cuh"

#include <vector>

static constexpr int TILE = 16;                 // tile edge; one child block per tile
static constexpr int CHILD_BLOCK = TILE * TILE;  // 256 threads
static constexpr int FLAT_BLOCK = 256;

// Root of x. Labels only decrease and always point into x's component, so a stale read is
// harmless; volatile keeps the loop re-reading memory that other threads update.
__device__ int findRoot(const int *labels, int x) {
    const volatile int *L = labels;
    int next = L[x];
    while (next != x) {
        x = next;
        next = L[x];
    }
    return x;
}

// Unites the components of a and b: the larger root is linked to the smaller one with
// atomicMin; if the supposed root changed meanwhile, try again from its new label.
__device__ void unite(int *labels, int a, int b) {
    bool done = false;
    while (!done) {
        a = findRoot(labels, a);
        b = findRoot(labels, b);
        if (a < b) {
            int old = atomicMin(&labels[b], a);
            done = (old == b);
            b = old;
        } else if (b < a) {
            int old = atomicMin(&labels[a], b);
            done = (old == a);
            a = old;
        } else {
            done = true;
        }
    }
}

// One block per TILE x TILE tile of rows [rowBegin, rowBegin + rows): initialise, then unite
// inside the tile only (no other block touches these labels).
__global__ void localLabel(const unsigned char *img, int *labels, int width, int rowBegin) {
    const int tilesX = width / TILE;
    const int tx = blockIdx.x % tilesX;
    const int ty = blockIdx.x / tilesX;
    const int lx = threadIdx.x % TILE;
    const int ly = threadIdx.x / TILE;
    const int x = tx * TILE + lx;
    const int y = rowBegin + ty * TILE + ly;
    const int p = y * width + x;
    const bool fg = img[p] != 0;
    labels[p] = fg ? p : -1;
    __syncthreads();
    if (!fg) return;
    if (lx > 0 && img[p - 1] != 0) unite(labels, p, p - 1);
    if (ly > 0 && img[p - width] != 0) unite(labels, p, p - width);
}

// One thread per pixel: unites across the tile borders (left and upper neighbour).
__global__ void mergeBorders(const unsigned char *img, int *labels, int width, int height) {
    const int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= width * height) return;
    if (img[p] == 0) return;
    const int x = p % width;
    const int y = p / width;
    if (x > 0 && x % TILE == 0 && img[p - 1] != 0) unite(labels, p, p - 1);
    if (y > 0 && y % TILE == 0 && img[p - width] != 0) unite(labels, p, p - width);
}

// One thread per pixel: the final label is the root (smallest pixel index of the component).
__global__ void flatten(const unsigned char *img, int *labels, int width, int height) {
    const int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= width * height) return;
    if (img[p] == 0) return;
    labels[p] = findRoot(labels, p);
}

__global__ void cclParent(const unsigned char *img, int *labels, int width, int height, int *errors) {
    const int t = threadIdx.x;
    const int bandRows = height / blockDim.x;
    const int rowBegin = t * bandRows;
    if (bandRows > 0) {
        const int tiles = (width / TILE) * (bandRows / TILE);
        localLabel<<<tiles, CHILD_BLOCK, 0, cudaStreamFireAndForget>>>(img, labels, width, rowBegin);
        if (cudaGetLastError() != cudaSuccess) atomicAdd(errors, 1);
    }
    if (t == 0) {
        // Runs after this grid and all its children completed (CDP1: cudaDeviceSynchronize).
        const int blocks = (width * height + FLAT_BLOCK - 1) / FLAT_BLOCK;
        mergeBorders<<<blocks, FLAT_BLOCK, 0, cudaStreamTailLaunch>>>(img, labels, width, height);
        if (cudaGetLastError() != cudaSuccess) atomicAdd(errors, 1);
        flatten<<<blocks, FLAT_BLOCK, 0, cudaStreamTailLaunch>>>(img, labels, width, height);
        if (cudaGetLastError() != cudaSuccess) atomicAdd(errors, 1);
    }
}

// Frame f: background noise plus filled disks, rings and long lines, so that components of
// all sizes cross the tile and band borders.
static std::vector<unsigned char> makeFrame(int w, int h, uint64_t seed) {
    ba::Rng rng(seed);
    std::vector<unsigned char> img((size_t)w * h);
    for (size_t i = 0; i < img.size(); ++i) img[i] = rng.below(100) < 40 ? 1 : 0;
    const int shapes = 8 + (int)((long long)w * h / 40000);
    for (int s = 0; s < shapes; ++s) {
        int cx = (int)rng.below((uint32_t)w), cy = (int)rng.below((uint32_t)h);
        int r = 4 + (int)rng.below(60);
        int kind = (int)rng.below(3);
        if (kind == 2) {  // a horizontal or vertical line, 1-2 pixels thick
            bool horiz = rng.below(2) == 0;
            int len = 10 + (int)rng.below((uint32_t)(horiz ? w : h));
            int thick = 1 + (int)rng.below(2);
            for (int k = 0; k < len; ++k)
                for (int d = 0; d < thick; ++d) {
                    int x = horiz ? cx + k : cx + d, y = horiz ? cy + d : cy + k;
                    if (x >= 0 && x < w && y >= 0 && y < h) img[(size_t)y * w + x] = 1;
                }
            continue;
        }
        for (int y = cy - r; y <= cy + r; ++y)
            for (int x = cx - r; x <= cx + r; ++x) {
                if (x < 0 || x >= w || y < 0 || y >= h) continue;
                int d2 = (x - cx) * (x - cx) + (y - cy) * (y - cy);
                bool on = kind == 0 ? d2 <= r * r : (d2 <= r * r && d2 >= (r - 2) * (r - 2));
                if (on) img[(size_t)y * w + x] = 1;
            }
    }
    return img;
}

// CPU labelling, 4-connectivity: a component's label is its smallest pixel index (the first
// pixel met in raster order), -1 for background.
static std::vector<int> cpuLabel(const std::vector<unsigned char> &img, int w, int h) {
    std::vector<int> lab((size_t)w * h, -1);
    std::vector<int> stack;
    for (int p = 0; p < w * h; ++p) {
        if (img[p] == 0 || lab[p] != -1) continue;
        lab[p] = p;
        stack.push_back(p);
        while (!stack.empty()) {
            int q = stack.back();
            stack.pop_back();
            int x = q % w, y = q / w;
            int nb[4] = {x > 0 ? q - 1 : -1, x + 1 < w ? q + 1 : -1, y > 0 ? q - w : -1, y + 1 < h ? q + w : -1};
            for (int k = 0; k < 4; ++k) {
                int u = nb[k];
                if (u >= 0 && img[u] != 0 && lab[u] == -1) {
                    lab[u] = p;
                    stack.push_back(u);
                }
            }
        }
    }
    return lab;
}

int main(int argc, char **argv) {
    ba::g_name = "ccl";
    const int w = (int)ba::argInt(argc, argv, "-w", 1024);
    const int h = (int)ba::argInt(argc, argv, "-h", 1024);
    const int frames = (int)ba::argInt(argc, argv, "-f", 8);
    const int nStreams = (int)ba::argInt(argc, argv, "-q", 4);
    const int parents = (int)ba::argInt(argc, argv, "-p", 2);
    const uint64_t seed = (uint64_t)ba::argInt(argc, argv, "-s", 1);
    const int reps = ba::argReps(argc, argv);
    if (w < TILE || h < TILE || w % TILE != 0 || parents < 1 || parents > 1024 || h % (TILE * parents) != 0 ||
        (long long)w * h > (1LL << 28) || frames < 1 || frames > 1024 || nStreams < 1 || nStreams > 64)
        return ba::report(false, 0,
                          "bad options (need w%16==0, h%(16p)==0, w*h<=2^28, 1<=f<=1024, 1<=q<=64, 1<=p<=1024)");

    const size_t pix = (size_t)w * h;
    std::vector<std::vector<unsigned char>> img(frames);
    std::vector<std::vector<int>> ref(frames);
    for (int f = 0; f < frames; ++f) {
        img[f] = makeFrame(w, h, seed * 1000003ull + (uint64_t)f);
        ref[f] = cpuLabel(img[f], w, h);
    }

    // Per frame: P children and 2 tail launches.
    ba::ensurePendingLaunches((long long)frames * (parents + 2) + 1024);

    std::vector<unsigned char *> dImg(frames, nullptr);
    std::vector<int *> dLab(frames, nullptr);
    for (int f = 0; f < frames; ++f) {
        CUDA_CHECK(cudaMalloc(&dImg[f], pix));
        CUDA_CHECK(cudaMalloc(&dLab[f], sizeof(int) * pix));
        CUDA_CHECK(cudaMemcpy(dImg[f], img[f].data(), pix, cudaMemcpyHostToDevice));
    }
    int *dErrors = nullptr;
    CUDA_CHECK(cudaMalloc(&dErrors, sizeof(int)));
    // Blocking streams: they wait for, and are waited on by, the legacy default stream that
    // carries the timing events.
    std::vector<cudaStream_t> streams(nStreams);
    for (auto &s : streams) CUDA_CHECK(cudaStreamCreate(&s));

    std::vector<float> times;
    std::vector<int> lab(pix);
    char msg[200];
    ba::GpuTimer timer;
    for (int r = 0; r < reps; ++r) {
        for (int f = 0; f < frames; ++f) CUDA_CHECK(cudaMemset(dLab[f], 0x7f, sizeof(int) * pix));
        CUDA_CHECK(cudaMemset(dErrors, 0, sizeof(int)));
        CUDA_CHECK(cudaDeviceSynchronize());

        timer.start();
        for (int f = 0; f < frames; ++f) {
            cclParent<<<1, parents, 0, streams[f % nStreams]>>>(dImg[f], dLab[f], w, h, dErrors);
            CUDA_CHECK_LAUNCH();
        }
        timer.stop();
        times.push_back(timer.ms());
        CUDA_CHECK(cudaDeviceSynchronize());

        int errors = 0;
        CUDA_CHECK(cudaMemcpy(&errors, dErrors, sizeof(int), cudaMemcpyDeviceToHost));
        if (errors != 0) {
            std::snprintf(msg, sizeof msg, "rep %d: %d device-side launch errors", r, errors);
            return ba::report(false, 0, msg);
        }
        for (int f = 0; f < frames; ++f) {
            CUDA_CHECK(cudaMemcpy(lab.data(), dLab[f], sizeof(int) * pix, cudaMemcpyDeviceToHost));
            for (size_t p = 0; p < pix; ++p) {
                if (lab[p] != ref[f][p]) {
                    std::snprintf(msg, sizeof msg, "rep %d frame %d: label of pixel (%d, %d) is %d, expected %d", r,
                                  f, (int)(p % w), (int)(p / w), lab[p], ref[f][p]);
                    return ba::report(false, 0, msg);
                }
            }
        }
    }
    for (auto &s : streams) CUDA_CHECK(cudaStreamDestroy(s));
    for (int f = 0; f < frames; ++f) {
        CUDA_CHECK(cudaFree(dImg[f]));
        CUDA_CHECK(cudaFree(dLab[f]));
    }
    CUDA_CHECK(cudaFree(dErrors));
    return ba::report(true, times, nullptr, (long long)frames * (parents + 2));
}
