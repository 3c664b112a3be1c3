// klap/malloc.cuh -- aggregated device-side cudaMalloc / cudaFree (KLAP paper II-C: "sums up the
// total allocated memory by the warp (or block), uses one thread ... to allocate that total memory
// on behalf of the others, then redistributes the allocated memory to all threads").
//
// Layout of one chunk (one device cudaMalloc per group call, from the device heap, whose size is
// cudaLimitMallocHeapSize, 8 MB by default; CUDA programming guide, CDP "Memory Allocation and
// Lifetime"):
//     [chunk header 16 B: unsigned long long refcount, padding]
//     per thread with size > 0, in rank order:
//         [sub-header 16 B: char* chunk base, unsigned long long check = base ^ malloc_tag]
//         [user data, size rounded up to 16 B]
// Every user pointer is 16-byte aligned (device cudaMalloc returns 16-byte aligned memory), the
// refcount is the number of non-zero sub-allocations, and klap::group_free releases the chunk
// when the last of them is freed. A pointer from group_malloc must be freed with group_free
// (never cudaFree/free). group_free also accepts pointers from a plain device cudaMalloc/malloc
// (klap turns every device cudaFree of a file into group_free once one cudaMalloc there is
// aggregated): it tells them apart by the sub-header's check word and cudaFree's those.
// The chunks come from the device heap (not klap's pool): the program's cudaLimitMallocHeapSize
// applies, as for the cudaMalloc calls they replace.
#ifndef KLAP_MALLOC_CUH
#define KLAP_MALLOC_CUH

#include <cuda/atomic>
#include "group.cuh"

namespace klap {

namespace detail {

constexpr unsigned long long malloc_header = 16ull;  // chunk header and sub-header size, bytes
// XORed with the chunk base into the sub-header's check word ("klapmall" in ASCII).
constexpr unsigned long long malloc_tag = 0x6B6C61706D616C6CULL;

// The 16 bytes in front of a group_malloc pointer.
struct malloc_sub {
  char* base;
  unsigned long long check;
};

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

// DEVICE, COLLECTIVE over g (block_group or warp_group; all its threads, each with its own ptr/size),
// replacing `cudaMalloc(ptr, size)` called by each thread of g. Sums the sizes (each rounded up to
// 16 bytes plus a 16-byte sub-header) with a group scan; rank 0 cudaMalloc's the total plus the
// 16-byte chunk header, stores the reference count (number of threads with size > 0) with a
// device-scope cuda::atomic_ref, and broadcasts the base; each thread gets
// base + 16 + its exclusive offset + 16 and writes the chunk base and its check word
// (base ^ malloc_tag) into its sub-header.
// size == 0 -> *ptr = nullptr, cudaSuccess (a group of one thread: see below). If the group's one
// allocation fails (the device heap has no contiguous room for the sum, or one request is huge),
// each thread with size > 0 calls cudaMalloc(ptr, size) itself, as the original code did: it gets
// its own pointer or its own error (group_free frees such plain pointers too). Review 2026-11-27:
// before, every thread of the group got nullptr and the error, where the original failed only the
// request that did not fit.
// Sizes above 2^52 bytes are clamped to 2^52 so that the sum cannot wrap (the allocation then fails).
// A group of one thread makes the original call, cudaMalloc(ptr, size), whatever the size (0
// included): there is nothing to aggregate, and the chunk header and sub-header would only cost
// heap space (group_free frees the plain pointer). The group's size is the same for all its
// threads, so none waits for it.
template <class G>
__device__ cudaError_t group_malloc(const G& g, void** ptr, size_t size) {
  if (g.size() == 1u) return cudaMalloc(ptr, size);
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
  order_after_broadcast(g);  // the reference count's store happens before any group_free of the chunk
  if (want == 0ull) {
    *ptr = nullptr;
    return cudaSuccess;
  }
  if (r.err != cudaSuccess) return cudaMalloc(ptr, size);  // each thread its own, as written
  char* sub = r.base + detail::malloc_header + (incl.bytes - mine);
  ::new (static_cast<void*>(sub)) detail::malloc_sub{r.base, reinterpret_cast<unsigned long long>(r.base) ^ detail::malloc_tag};
  *ptr = sub + detail::malloc_header;
  return cudaSuccess;
}

// DEVICE, any thread, not collective; replaces `cudaFree(ptr)` in a file where a device cudaMalloc
// was aggregated. nullptr -> cudaSuccess. Otherwise reads the 16-byte sub-header in front of ptr:
//   * check word == base ^ malloc_tag: a group_malloc pointer. Decrements the chunk's reference
//     count (device scope, acq_rel: every free of the chunk happens-before the final cudaFree);
//     the thread that brings it to 0 cudaFree's the chunk and returns cudaFree's result, the
//     others cudaSuccess;
//   * otherwise: a pointer from a plain device cudaMalloc (or malloc): returns cudaFree(ptr).
// Reading the 16 bytes in front of a plain device-heap pointer reads the heap allocator's own
// bookkeeping (readable heap memory); a false match would need those 16 bytes to hold a pointer
// and that pointer XOR a fixed 64-bit tag. Freeing a pointer twice, a host-allocated pointer, or a
// pointer into the middle of an allocation is undefined (as with cudaFree).
// Source: KLAP paper II-C (aggregated cudaMalloc); CUDA programming guide, CDP, "Memory Allocation
// and Lifetime" (device cudaMalloc/cudaFree use the device heap).
__device__ inline cudaError_t group_free(void* ptr) {
  if (ptr == nullptr) return cudaSuccess;
  const detail::malloc_sub sub = *reinterpret_cast<const detail::malloc_sub*>(static_cast<char*>(ptr) - detail::malloc_header);
  if (sub.check != (reinterpret_cast<unsigned long long>(sub.base) ^ detail::malloc_tag)) return cudaFree(ptr);
  // the share is gone: its sub-header must not look valid to a later group_free of a plain pointer
  // that the heap places right after these bytes (review 2026-11-27)
  reinterpret_cast<detail::malloc_sub*>(static_cast<char*>(ptr) - detail::malloc_header)->check = 0ull;
  char* base = sub.base;
  const unsigned long long left =
      cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(
          *reinterpret_cast<unsigned long long*>(base))
          .fetch_sub(1ull, cuda::std::memory_order_acq_rel);
  if (left == 1ull) return cudaFree(base);
  return cudaSuccess;
}

}  // namespace klap

#endif  // KLAP_MALLOC_CUH
