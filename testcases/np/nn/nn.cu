// nn: nearest neighbour (Rodinia NN as CUDA-NP modified it: 32 threads per block), the
// BASELINE input of klap's CUDA-NP transform (no dynamic parallelism).
//
// For each of n query points (latitude, longitude) the Euclidean distance, in degrees, to the
// nearest of NREF = 256 reference points. Both sets are arrays of LatLong in global memory.
// One thread per query, blocks of 32 threads, ceil(n / 32) blocks:
//   sequential part (master): q from the thread index; load the query's coordinates (a thread
//       past the last query loads query n-1 and stores nothing); best = +infinity.
//   #pragma np parallel for reduction(min:best) copyin(qlat, qlng)
//   np loop over the references r = 0 .. NREF-1: best = fminf(best, squared distance to r)
//       (all threads of a warp read the same reference: one broadcast load per iteration).
//   sequential part (master): dist[q] = sqrtf(best), past the last query nothing.
//
// Input (bb::Rng, seed -s): first the NREF references, then the n queries; latitude uniform in
// [-90, 90), longitude uniform in [-180, 180), rounded to float.
//
// Options: -n queries (65536)  -s seed (1)  -r repetitions (1)
// Output: PASS nn time_ms=.. first_ms=.. [warm_ms=..] reps=.. gbps=..  or  FAIL nn: <reason>

#include "common/bench_b.cuh"

#include <cmath>

constexpr int BLOCK = 32;
constexpr int NREF = 256;
constexpr double REL_TOL = 1e-6;  // see README.md ("Check")

struct __align__(8) LatLong {
    float lat;
    float lng;
};

__global__ void nnKernel(const LatLong *queries, const LatLong *refs, float *dist, int n)
{
    // Sequential part: this thread's query point (clamped, so that every thread runs the loop).
    const int q = blockIdx.x * blockDim.x + threadIdx.x;
    const LatLong p = queries[min(q, n - 1)];
    const float qlat = p.lat;
    const float qlng = p.lng;
    float best = INFINITY;

    // The parallel loop: the smallest squared distance to a reference point.
#pragma np parallel for reduction(min:best) copyin(qlat, qlng)
    for (int r = 0; r < NREF; r++) {
        const LatLong ref = refs[r];
        const float dlat = qlat - ref.lat;
        const float dlng = qlng - ref.lng;
        best = fminf(best, dlat * dlat + dlng * dlng);
    }

    // Sequential part: the distance itself.
    if (q < n) dist[q] = sqrtf(best);
}

int main(int argc, char **argv)
{
    bb::g_name = "nn";
    const long long nArg = bb::argInt(argc, argv, "-n", 65536);
    const long long seed = bb::argInt(argc, argv, "-s", 1);
    const long long reps = bb::argInt(argc, argv, "-r", 1);
    if (nArg < 1 || nArg > (1LL << 24)) bb::fail("-n must be in 1 .. 16777216");
    if (reps < 1 || reps > 100000) bb::fail("-r must be in 1 .. 100000");
    const int n = (int)nArg;

    // Input: the references, then the queries.
    std::vector<LatLong> hRefs(NREF), hQueries(n);
    bb::Rng rng((uint64_t)seed);
    auto point = [&rng]() {
        LatLong p;
        p.lat = (float)(-90.0 + 180.0 * rng.uniform());
        p.lng = (float)(-180.0 + 360.0 * rng.uniform());
        return p;
    };
    for (int r = 0; r < NREF; ++r) hRefs[r] = point();
    for (int i = 0; i < n; ++i) hQueries[i] = point();

    // CPU reference, computed once, in double.
    std::vector<double> ref(n);
    for (int i = 0; i < n; ++i) {
        double best = INFINITY;
        for (int r = 0; r < NREF; ++r) {
            const double dlat = (double)hQueries[i].lat - hRefs[r].lat;
            const double dlng = (double)hQueries[i].lng - hRefs[r].lng;
            best = std::fmin(best, dlat * dlat + dlng * dlng);
        }
        ref[i] = std::sqrt(best);
    }

    const bb::DeviceBuffer<LatLong> dQueries(hQueries), dRefs(hRefs);
    bb::DeviceBuffer<float> dDist(n);
    const int grid = (n + BLOCK - 1) / BLOCK;
    const std::vector<float> times = bb::repeat(
        reps, nullptr, [&] { dDist.fillBytes(0xff); },  // NaN: an unwritten distance fails
        [&] { nnKernel<<<grid, BLOCK>>>(dQueries.get(), dRefs.get(), dDist.get(), n); },
        [&](int r) { bb::expectClose(dDist, ref, REL_TOL, r, "dist"); });
    // Work: the queries and the references read once, one distance written per query.
    const double work = (8.0 * n + 8.0 * NREF + 4.0 * n) / 1e9;
    return bb::report(true, times, nullptr, "gbps", work);
}
