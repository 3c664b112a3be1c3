// klap/malloc.cuh -- aggregated device-side cudaMalloc / cudaFree (KLAP paper II-C: "sums up the
// total allocated memory by the warp (or block), uses one thread ... to allocate that total memory
// on behalf of the others, then redistributes the allocated memory to all threads").
//
// Layout of one chunk (one device cudaMalloc per group call, from the device heap, whose size is
// cudaLimitMallocHeapSize, 8 MB by default; CUDA programming guide, CDP "Memory Allocation and
// Lifetime"):
//     [chunk header 16 B: unsigned long long refcount, padding]
//     per thread with size > 0, in rank order:
//         [sub-header 16 B: void* chunk base, padding][user data, size rounded up to 16 B]
// Every user pointer is 16-byte aligned (device cudaMalloc returns 16-byte aligned memory), the
// refcount is the number of non-zero sub-allocations, and klap::group_free releases the chunk
// when the last of them is freed. A pointer from group_malloc must be freed with group_free
// (never cudaFree/free), and group_free accepts only such pointers (or nullptr).
#ifndef KLAP_MALLOC_CUH
#define KLAP_MALLOC_CUH

#include <cuda/atomic>
#include "group.cuh"

namespace klap {

namespace detail {

constexpr unsigned long long malloc_header = 16ull;  // chunk header and sub-header size, bytes

// What group_malloc scans: bytes of the sub-allocations (sub-header included) and their number.
struct malloc_scan {
  unsigned long long bytes;
  unsigned long long count;
};
struct malloc_scan_op {
  __device__ malloc_scan operator()(const malloc_scan& a, const malloc_scan& b) const {
    return malloc_scan{a.bytes + b.bytes, a.count + b.count};
  }
};
// What rank 0 broadcasts after allocating.
struct malloc_result {
  char* base;
  cudaError_t err;
};

}  // namespace detail

// COLLECTIVE over g (block_group or warp_group; all its threads, each with its own ptr/size),
// replacing `cudaMalloc(ptr, size)` called by each thread of g. Sums the sizes (each rounded up to
// 16 bytes plus a 16-byte sub-header) with a group scan; rank 0 cudaMalloc's the total plus the
// 16-byte chunk header, stores the reference count (number of threads with size > 0) with a
// device-scope cuda::atomic_ref, and broadcasts the base; each thread gets
// base + 16 + its exclusive offset + 16 and writes the chunk base into its sub-header.
// size == 0 -> *ptr = nullptr, cudaSuccess. If the allocation fails (device heap exhausted), every
// thread gets *ptr = nullptr and the error (cudaErrorMemoryAllocation), like cudaMalloc.
// Sizes above 2^52 bytes are clamped to 2^52 so that the sum cannot wrap (the allocation then fails).
template <class G>
__device__ cudaError_t group_malloc(const G& g, void** ptr, size_t size) {
  constexpr unsigned long long clamp = 1ull << 52;
  const unsigned long long want = size > clamp ? clamp : static_cast<unsigned long long>(size);
  const unsigned long long mine =
      want ? detail::malloc_header + ((want + 15ull) & ~15ull) : 0ull;
  const detail::malloc_scan incl =
      group_inclusive_scan(g, detail::malloc_scan{mine, want ? 1ull : 0ull}, detail::malloc_scan_op{});
  const detail::malloc_scan total = group_broadcast(g, incl, g.size() - 1u);
  detail::malloc_result r{nullptr, cudaSuccess};
  if (g.rank() == 0 && total.bytes > 0ull) {
    void* p = nullptr;
    r.err = cudaMalloc(&p, static_cast<size_t>(detail::malloc_header + total.bytes));
    if (r.err == cudaSuccess && p == nullptr) r.err = cudaErrorMemoryAllocation;
    if (r.err == cudaSuccess) {
      r.base = static_cast<char*>(p);
      cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(
          *reinterpret_cast<unsigned long long*>(r.base))
          .store(total.count, cuda::std::memory_order_relaxed);
    }
  }
  r = group_broadcast(g, r, 0u);
  if (want == 0ull || r.err != cudaSuccess) {
    *ptr = nullptr;
    return want == 0ull ? cudaSuccess : r.err;
  }
  char* sub = r.base + detail::malloc_header + (incl.bytes - mine);
  *reinterpret_cast<char**>(sub) = r.base;
  *ptr = sub + detail::malloc_header;
  return cudaSuccess;
}

// Any thread, not collective; replaces `cudaFree(ptr)` for pointers from group_malloc.
// nullptr -> cudaSuccess. Otherwise reads the chunk base from the 16-byte sub-header in front of
// ptr and decrements the chunk's reference count (device scope, acq_rel: every free of the chunk
// happens-before the final cudaFree); the thread that brings it to 0 cudaFree's the chunk and
// returns cudaFree's result. Freeing a pointer twice, or one not from group_malloc, is undefined
// (as with cudaFree).
__device__ inline cudaError_t group_free(void* ptr) {
  if (ptr == nullptr) return cudaSuccess;
  char* base = *reinterpret_cast<char* const*>(static_cast<char*>(ptr) - detail::malloc_header);
  const unsigned long long left =
      cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(
          *reinterpret_cast<unsigned long long*>(base))
          .fetch_sub(1ull, cuda::std::memory_order_acq_rel);
  if (left == 1ull) return cudaFree(base);
  return cudaSuccess;
}

}  // namespace klap

#endif  // KLAP_MALLOC_CUH
