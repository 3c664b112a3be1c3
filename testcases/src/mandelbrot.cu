// mandelbrot: the Mariani-Silver escape-time image, the classic recursive use of dynamic
// parallelism (one block per square; a square whose border has one dwell is filled, else split).
//
// The image is w x w pixels of the region [-1.5, 0.5] x [-1, 1]. msBlock<<<(s, s), (16, 8)>>> is
// first launched on s x s squares of side d = w / s; each block of it takes square
// (blockIdx.x, blockIdx.y) of its grid, and all its threads compute the dwell of the square's
// border pixels together (a __device__ helper with a __shared__ reduction and __syncthreads()).
// Then thread (0, 0) alone launches one child:
//  - msFill<<<(ceil(d/16), ceil(d/8)), (16, 8)>>> if every border pixel has the same dwell
//    (the square is filled with it),
//  - msBlock<<<(4, 4), blockDim>>> on the square's 4 x 4 sub-squares if the depth limit allows,
//    d is a multiple of 4 and a sub-square is larger than 32 pixels (a kernel that launches
//    itself from a 2-D block, with a struct argument passed by value and blockIdx.y read by the
//    child),
//  - msPixel<<<(ceil(d/16), ceil(d/8)), (16, 8)>>> otherwise (every pixel of the square).
// Every pixel is written by exactly one fill or pixel thread, which counts it in visits[] and
// records in how[] whether it was computed (1) or filled (2); a fill thread at the square's corner
// (x0, y0) also records the square's side in side[]. The host checks every pixel against a
// flat kernel that computes each pixel's dwell with the same __device__ function: a computed pixel
// must equal it, a filled square must hold one value, the flat dwell of its four corners (they are
// border pixels), and each pixel is visited exactly once. At most 16 + 16 * 16 launches are
// pending at a time (the default pending-launch limit is 2048).
//
// Options: -w image side (1024, a multiple of 16 * s)  -s initial squares per side (4)
//          -d depth limit (4, 1..8)

#include "common/check.cuh"

#include <vector>

constexpr int MS_MAX_DWELL = 256;
constexpr int MS_BLOCK_X = 16;
constexpr int MS_BLOCK_Y = 8;
constexpr int MS_SUBDIV = 4;
constexpr int MS_MIN_SIDE = 32;
constexpr int MS_NEUTRAL = MS_MAX_DWELL + 1;  // no dwell seen yet
constexpr int MS_MIXED = -1;                  // the border has several dwells

// A point of the complex plane.
struct Point {
    float re, im;
    __host__ __device__ Point(float r = 0.0f, float i = 0.0f) : re(r), im(i) {}
};
__host__ __device__ inline Point operator+(Point a, Point b) { return Point(a.re + b.re, a.im + b.im); }
__host__ __device__ inline Point operator*(Point a, Point b) {
    return Point(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re);
}

// The view: the lower left corner of the region and its size.
struct View {
    Point origin;
    float size;
    int side;  // pixels per side
};

__host__ __device__ inline int ceilDiv(int a, int b) { return (a + b - 1) / b; }

// Escape time of pixel (x, y): iterations of z = z * z + c until |z| >= 2, at most MS_MAX_DWELL.
__device__ int dwellAt(View v, int x, int y) {
    Point c = v.origin + Point(v.size * x / v.side, v.size * y / v.side);
    Point z = c;
    int n = 0;
    while (n < MS_MAX_DWELL && z.re * z.re + z.im * z.im < 4.0f) {
        z = z * z + c;
        ++n;
    }
    return n;
}

__device__ int combine(int a, int b) {
    if (a == b || b == MS_NEUTRAL) return a;
    if (a == MS_NEUTRAL) return b;
    return MS_MIXED;
}

// The one dwell of the border of square (x0, y0, d), or MS_MIXED. Every thread of the block calls it.
__device__ int borderDwell(View v, int x0, int y0, int d) {
    __shared__ int part[MS_BLOCK_X * MS_BLOCK_Y];
    const int t = threadIdx.y * blockDim.x + threadIdx.x;
    const int threads = blockDim.x * blockDim.y;
    int mine = MS_NEUTRAL;
    for (int i = t; i < d; i += threads) {
        mine = combine(mine, dwellAt(v, x0 + i, y0));          // bottom row
        mine = combine(mine, dwellAt(v, x0 + i, y0 + d - 1));  // top row
        mine = combine(mine, dwellAt(v, x0, y0 + i));          // left column
        mine = combine(mine, dwellAt(v, x0 + d - 1, y0 + i));  // right column
    }
    part[t] = mine;
    __syncthreads();
    for (int half = threads / 2; half > 0; half /= 2) {
        if (t < half) part[t] = combine(part[t], part[t + half]);
        __syncthreads();
    }
    int all = part[0];
    __syncthreads();  // part[] is reused by the next call
    return all;
}

__global__ void msFill(int *dwell, int *visits, unsigned char *how, int *side, int w, int x0, int y0, int d,
                       int value) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= d || y >= d) return;
    const int p = (y0 + y) * w + x0 + x;
    dwell[p] = value;
    how[p] = 2;
    atomicAdd(&visits[p], 1);
    if (x == 0 && y == 0) side[p] = d;
}

__global__ void msPixel(int *dwell, int *visits, unsigned char *how, View v, int x0, int y0, int d) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= d || y >= d) return;
    const int p = (y0 + y) * v.side + x0 + x;
    dwell[p] = dwellAt(v, x0 + x, y0 + y);
    how[p] = 1;
    atomicAdd(&visits[p], 1);
}

__global__ void msBlock(int *dwell, int *visits, unsigned char *how, int *side, View v, int x0, int y0, int d,
                        int depth, int maxDepth) {
    x0 += d * blockIdx.x;
    y0 += d * blockIdx.y;
    const int border = borderDwell(v, x0, y0, d);
    if (threadIdx.x == 0 && threadIdx.y == 0) {
        if (border != MS_MIXED) {
            dim3 grid(ceilDiv(d, MS_BLOCK_X), ceilDiv(d, MS_BLOCK_Y)), block(MS_BLOCK_X, MS_BLOCK_Y);
            msFill<<<grid, block>>>(dwell, visits, how, side, v.side, x0, y0, d, border);
        } else if (depth + 1 < maxDepth && d % MS_SUBDIV == 0 && d / MS_SUBDIV > MS_MIN_SIDE) {
            dim3 grid(MS_SUBDIV, MS_SUBDIV), block(blockDim.x, blockDim.y);
            msBlock<<<grid, block>>>(dwell, visits, how, side, v, x0, y0, d / MS_SUBDIV, depth + 1, maxDepth);
        } else {
            dim3 grid(ceilDiv(d, MS_BLOCK_X), ceilDiv(d, MS_BLOCK_Y)), block(MS_BLOCK_X, MS_BLOCK_Y);
            msPixel<<<grid, block>>>(dwell, visits, how, v, x0, y0, d);
        }
    }
}

// Every pixel's dwell, one thread each (the reference; launched from the host).
__global__ void msFlat(int *dwell, View v) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < v.side && y < v.side) dwell[y * v.side + x] = dwellAt(v, x, y);
}

int main(int argc, char **argv) {
    tc::g_name = "mandelbrot";
    const int w = (int)tc::argInt(argc, argv, "-w", 1024);
    const int s = (int)tc::argInt(argc, argv, "-s", 4);
    const int maxDepth = (int)tc::argInt(argc, argv, "-d", 4);
    if (s < 1 || w < 16 * s || w % (16 * s) != 0 || maxDepth < 1 || maxDepth > 8) {
        std::printf("FAIL mandelbrot: -w must be a multiple of 16 * s, -s >= 1, -d in 1..8\n");
        return 1;
    }
    const size_t n = (size_t)w * w;
    View v{Point(-1.5f, -1.0f), 2.0f, w};
    int *dDwell, *dFlat, *dVisits, *dSide;
    unsigned char *dHow;
    CUDA_CHECK(cudaMalloc(&dDwell, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dFlat, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dVisits, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dSide, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&dHow, n));
    CUDA_CHECK(cudaMemset(dDwell, 0xff, n * sizeof(int)));
    CUDA_CHECK(cudaMemset(dVisits, 0, n * sizeof(int)));
    CUDA_CHECK(cudaMemset(dSide, 0, n * sizeof(int)));
    CUDA_CHECK(cudaMemset(dHow, 0, n));

    tc::GpuTimer timer;
    timer.start();
    msBlock<<<dim3(s, s), dim3(MS_BLOCK_X, MS_BLOCK_Y)>>>(dDwell, dVisits, dHow, dSide, v, 0, 0, w / s, 0, maxDepth);
    CUDA_CHECK_LAUNCH();
    timer.stop();
    float ms = timer.ms();
    CUDA_CHECK(cudaDeviceSynchronize());
    msFlat<<<dim3(w / 16, w / 16), dim3(16, 16)>>>(dFlat, v);
    CUDA_CHECK_LAUNCH();
    CUDA_CHECK(cudaDeviceSynchronize());

    std::vector<int> dwell(n), flat(n), visits(n), side(n);
    std::vector<unsigned char> how(n);
    CUDA_CHECK(cudaMemcpy(dwell.data(), dDwell, n * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(flat.data(), dFlat, n * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(visits.data(), dVisits, n * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(side.data(), dSide, n * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(how.data(), dHow, n, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(dDwell));
    CUDA_CHECK(cudaFree(dFlat));
    CUDA_CHECK(cudaFree(dVisits));
    CUDA_CHECK(cudaFree(dSide));
    CUDA_CHECK(cudaFree(dHow));

    char msg[256];
    long long computed = 0, filled = 0;
    for (size_t p = 0; p < n; ++p) {
        const int x = (int)(p % w), y = (int)(p / w);
        if (visits[p] != 1) {
            std::snprintf(msg, sizeof msg, "pixel (%d, %d) written %d times", x, y, visits[p]);
            return tc::report(false, 0, msg);
        }
        if (how[p] == 1) {
            ++computed;
            if (dwell[p] != flat[p]) {
                std::snprintf(msg, sizeof msg, "computed pixel (%d, %d) = %d, flat kernel %d", x, y, dwell[p], flat[p]);
                return tc::report(false, 0, msg);
            }
        } else if (how[p] == 2) {
            ++filled;
        } else {
            std::snprintf(msg, sizeof msg, "pixel (%d, %d) neither computed nor filled", x, y);
            return tc::report(false, 0, msg);
        }
        if (side[p] > 0) {  // a filled square's top left corner
            const int d = side[p];
            const int value = dwell[p];
            const int corners[4] = {flat[p], flat[p + d - 1], flat[p + (size_t)(d - 1) * w],
                                    flat[p + (size_t)(d - 1) * w + d - 1]};
            for (int c : corners) {
                if (c != value) {
                    std::snprintf(msg, sizeof msg, "square (%d, %d) of side %d filled with %d, a corner's dwell is %d", x,
                                  y, d, value, c);
                    return tc::report(false, 0, msg);
                }
            }
            for (int yy = 0; yy < d; ++yy) {
                for (int xx = 0; xx < d; ++xx) {
                    const size_t q = p + (size_t)yy * w + xx;
                    if (how[q] != 2 || dwell[q] != value) {
                        std::snprintf(msg, sizeof msg, "pixel (%d, %d) of the square (%d, %d) of side %d is not its fill %d",
                                      x + xx, y + yy, x, y, d, value);
                        return tc::report(false, 0, msg);
                    }
                }
            }
        }
    }
    if (computed == 0 || filled == 0) {  // the default view has both kinds of square
        std::snprintf(msg, sizeof msg, "%lld pixels computed and %lld filled: the recursion did not run", computed, filled);
        return tc::report(false, 0, msg);
    }
    return tc::report(true, ms, nullptr);
}
