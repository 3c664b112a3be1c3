// streams: device-side launches into a device-created stream and into cudaStreamFireAndForget.
//
// Each thread of streamsParent creates a non-blocking stream and launches two children into
// it: fillChild writes its segment, then stepChild (same stream, so it starts only after
// fillChild completed) transforms every element in place, reading fillChild's values. The
// stream is destroyed right after the launches (its work still completes). A third child,
// tagChild, goes to cudaStreamFireAndForget. The host checks every segment for
// step(fill(...)) and every tag: a step that ran before or during its fill leaves wrong values.
//
// Options: -n parent threads (1024)  -m max segment length (256)  -b parent block (128)

#include "common/check.cuh"

#include <vector>

constexpr int CHILD_BLOCK = 64;
constexpr int TAGS_PER_PARENT = 32;

// Deliberately a little slow, so that a step child reordered before it would be noticed.
__host__ __device__ inline unsigned int fillValue(int parent, int i) {
    unsigned int h = (unsigned int)parent * 0x9e3779b1u ^ (unsigned int)i * 0x85ebca77u;
    for (int r = 0; r < 64; ++r) h = (h ^ (h >> 15)) * 0x2c1b3c6du + (unsigned int)r;
    return h | 1u;
}

__host__ __device__ inline unsigned int stepValue(unsigned int v, int i) { return v * 3u + (unsigned int)i + 1u; }

__host__ __device__ inline int segmentLength(int parent, int maxLen) { return 1 + (parent * 37) % maxLen; }

__global__ void fillChild(unsigned int *seg, int len, int parent) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= len) return;
    seg[i] = fillValue(parent, i);
}

__global__ void stepChild(unsigned int *seg, int len) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= len) return;
    seg[i] = stepValue(seg[i], i);
}

__global__ void tagChild(unsigned int *tags, int parent) {
    int i = threadIdx.x;
    tags[i] = (unsigned int)(parent * TAGS_PER_PARENT + i + 1);
}

__global__ void streamsParent(unsigned int *data, unsigned int *tags, int n, int maxLen, int *errors) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) return;

    unsigned int *seg = data + (size_t)t * maxLen;
    int len = segmentLength(t, maxLen);
    int blocks = (len + CHILD_BLOCK - 1) / CHILD_BLOCK;

    cudaStream_t s;
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
        atomicAdd(errors, 1);
        return;
    }
    fillChild<<<blocks, CHILD_BLOCK, 0, s>>>(seg, len, t);
    if (cudaGetLastError() != cudaSuccess) atomicAdd(errors, 1);
    stepChild<<<blocks, CHILD_BLOCK, 0, s>>>(seg, len);
    if (cudaGetLastError() != cudaSuccess) atomicAdd(errors, 1);
    if (cudaStreamDestroy(s) != cudaSuccess) atomicAdd(errors, 1);

    tagChild<<<1, TAGS_PER_PARENT, 0, cudaStreamFireAndForget>>>(tags + (size_t)t * TAGS_PER_PARENT, t);
    if (cudaGetLastError() != cudaSuccess) atomicAdd(errors, 1);
}

int main(int argc, char **argv) {
    tc::g_name = "streams";
    const int n = (int)tc::argInt(argc, argv, "-n", 1024);
    const int maxLen = (int)tc::argInt(argc, argv, "-m", 256);
    const int block = (int)tc::argInt(argc, argv, "-b", 128);
    if (n < 1 || n > (1 << 22) || maxLen < 1 || (long long)n * maxLen > (1LL << 28) || block < 1 || block > 1024)
        return tc::report(false, 0, "bad options (need 1<=n<=2^22, m>=1, n*m <= 2^28, 1<=b<=1024)");

    tc::ensurePendingLaunches(3LL * n + 1024);

    const size_t dataElems = (size_t)n * maxLen, tagElems = (size_t)n * TAGS_PER_PARENT;
    unsigned int *dData = nullptr, *dTags = nullptr;
    int *dErrors = nullptr;
    CUDA_CHECK(cudaMalloc(&dData, sizeof(unsigned int) * dataElems));
    CUDA_CHECK(cudaMalloc(&dTags, sizeof(unsigned int) * tagElems));
    CUDA_CHECK(cudaMalloc(&dErrors, sizeof(int)));
    CUDA_CHECK(cudaMemset(dData, 0, sizeof(unsigned int) * dataElems));
    CUDA_CHECK(cudaMemset(dTags, 0, sizeof(unsigned int) * tagElems));
    CUDA_CHECK(cudaMemset(dErrors, 0, sizeof(int)));

    tc::GpuTimer timer;
    timer.start();
    streamsParent<<<(n + block - 1) / block, block>>>(dData, dTags, n, maxLen, dErrors);
    CUDA_CHECK_LAUNCH();
    timer.stop();
    float ms = timer.ms();
    CUDA_CHECK(cudaDeviceSynchronize());

    int errors = 0;
    std::vector<unsigned int> data(dataElems), tags(tagElems);
    CUDA_CHECK(cudaMemcpy(&errors, dErrors, sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(data.data(), dData, sizeof(unsigned int) * dataElems, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(tags.data(), dTags, sizeof(unsigned int) * tagElems, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(dData));
    CUDA_CHECK(cudaFree(dTags));
    CUDA_CHECK(cudaFree(dErrors));

    char msg[200];
    if (errors != 0) {
        std::snprintf(msg, sizeof msg, "%d device-side stream/launch errors", errors);
        return tc::report(false, 0, msg);
    }
    for (int t = 0; t < n; ++t) {
        const int len = segmentLength(t, maxLen);
        for (int i = 0; i < maxLen; ++i) {
            unsigned int got = data[(size_t)t * maxLen + i];
            unsigned int fill = i < len ? fillValue(t, i) : 0u;
            unsigned int expected = i < len ? stepValue(fill, i) : 0u;
            if (got != expected) {
                const char *why = i >= len ? "written outside the segment"
                                  : got == fill ? "step child missing or ran before fill"
                                  : got == 0 ? "not written"
                                             : "step did not observe fill (stream order broken)";
                std::snprintf(msg, sizeof msg, "parent %d element %d: %s (got %08x, expected %08x)", t, i,
                              why, got, expected);
                return tc::report(false, 0, msg);
            }
        }
        for (int i = 0; i < TAGS_PER_PARENT; ++i) {
            unsigned int got = tags[(size_t)t * TAGS_PER_PARENT + i];
            if (got != (unsigned int)(t * TAGS_PER_PARENT + i + 1)) {
                std::snprintf(msg, sizeof msg, "parent %d tag %d: got %u (fire-and-forget child missing?)",
                              t, i, got);
                return tc::report(false, 0, msg);
            }
        }
    }
    return tc::report(true, ms, nullptr);
}
