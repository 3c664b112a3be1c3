// Tests of the klap memory pool on the device (klap/pool_state.cuh, klap/pool.cuh): a static
// __device__ buffer per program, cut into segments, reclaimed on the device. The pool is
// made small here: 2 MiB in 512 segments of 4 KiB, KLAP_POOL_WAIT_MS = 1000.
//  1. host_prepare returns its stream and raises the CDP pending-launch limit; the pool needs no
//     set-up: before any kernel every segment word, cur and the error flag are 0.
//  2. 1024 concurrent pool_alloc of 0..199 bytes: 16-byte aligned, inside klap::pool_bytes(),
//     disjoint (headers included), each inside one segment, with its pool_hdr {refs 0, span 0} in
//     front; the bytes each thread wrote survive; every segment's live count is exactly the number
//     of allocations that lie in it.
//  3. pool_free by other threads of other blocks, in a scrambled order: nothing is live after it.
//  4. spans: 64 concurrent allocations, every 4th of 2 or 3 segments: a span starts at a segment
//     boundary, its header says how many segments it has, every segment it covers counts it as
//     live, everything is disjoint; all freed again.
//  5. churn: 256 threads x 4000 rounds of alloc / fill / sleep / verify / free (~ 400 times the
//     pool, so every segment is reset and reused hundreds of times, spans included): no thread
//     ever finds its bytes or its header changed (memory handed out twice or reused too early),
//     every allocation lies in the pool, and afterwards nothing is live (no leak).
//  6. the whole pool (CAP - 16 bytes: the header takes the other 16) in ONE span succeeds after all
//     that, i.e. every segment came back; a second kernel that asks for 64 bytes while it is held
//     waits inside pool_alloc until the first kernel frees it (~300 ms later) instead of failing.
//  7. the failures, each in a child process of its own (a trap kills the CUDA context: this
//     program re-executes itself with an argument): a request larger than the pool traps at once,
//     printing "klap: error: memory pool too small for <what> ...", and a request while the
//     whole pool is held traps after waiting KLAP_POOL_WAIT_MS, printing "klap: error: memory
//     pool exhausted while allocating <what> ..."; both leave host_pool_error() != 0.
#define KLAP_POOL_SIZE_BYTES (2ull << 20)
#define KLAP_POOL_SEGMENT_BYTES 4096ull
#define KLAP_POOL_WAIT_MS 1000
#include "klap/klap.cuh"
#include "klap_test.cuh"
#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

constexpr unsigned long long SEG = klap::pool_segment_bytes;
constexpr unsigned long long NSEG = klap::pool_segments;
constexpr unsigned long long CAP = NSEG * SEG;
static_assert(SEG == 4096ull && NSEG == 512ull, "test_pool assumes 512 segments of 4 KiB");

// What pool_alloc(b) takes: the header plus b rounded up to 16 bytes; a span if more than a segment.
__host__ __device__ inline unsigned long long need_of(unsigned long long b) { return 16ull + ((b + 15ull) & ~15ull); }
__host__ __device__ inline unsigned long long span_of(unsigned long long b) {
  return need_of(b) > SEG ? (need_of(b) + SEG - 1ull) / SEG : 0ull;
}
__host__ __device__ inline char byte_of(unsigned g, unsigned i) { return static_cast<char>(g * 7u + i * 13u + 1u); }

// Thread g < n allocates sizes[g] bytes and fills them with its byte pattern.
__global__ void alloc_kernel(char** out, const unsigned* sizes, unsigned n) {
  const unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= n) return;
  char* p = static_cast<char*>(klap::pool_alloc(sizes[g], "test_pool allocations"));
  for (unsigned i = 0; i < sizes[g]; ++i) p[i] = byte_of(g, i);
  out[g] = p;
}

// After alloc_kernel completed: every thread's bytes survived (the ranges are disjoint) and its
// header is {refs 0, span span_of(size)}.
__global__ void verify_kernel(char* const* ptrs, const unsigned* sizes, unsigned n, unsigned* bad) {
  const unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= n) return;
  const char* p = ptrs[g];
  unsigned b = 0;
  for (unsigned i = 0; i < sizes[g]; ++i) b += p[i] != byte_of(g, i);
  const klap::pool_hdr* h = reinterpret_cast<const klap::pool_hdr*>(p) - 1;
  b += h->refs != 0ull || h->span != span_of(sizes[g]);
  if (b) atomicAdd(bad, b);
}

// Thread g frees allocation (g * 7 + 3) mod n (n odd or a power of 2: a permutation), i.e. memory
// that other threads of other blocks allocated.
__global__ void free_kernel(char* const* ptrs, unsigned n) {
  const unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g < n) klap::pool_free(ptrs[(g * 7u + 3u) % n]);
}

struct churn_out {
  unsigned long long bytes;  // requested in total
  unsigned long long rounds;
  unsigned bad_data;         // words found changed by someone else
  unsigned bad_header;
  unsigned outside;          // allocations not inside pool_bytes
  unsigned misaligned;
};

// Every thread: `rounds` times allocate 0..1499 bytes (every 8th round of every 64th thread: a
// span of 4097..9096 bytes), fill it with words no other thread writes, sleep 0..4 us while
// holding it, verify the words and the header, free it. At most one live allocation per thread:
// 256 threads pin at most 256 + 8 of the 512 segments, so the pool never runs out.
__global__ void churn_kernel(unsigned rounds, churn_out* o) {
  const unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned long long bytes = 0;
  unsigned bad_data = 0, bad_header = 0, outside = 0, misaligned = 0;
  for (unsigned r = 0; r < rounds; ++r) {
    const unsigned long long h = kt_mix64((static_cast<unsigned long long>(g) << 32) | r);
    const unsigned size = (g % 64u == 0u && r % 8u == 0u) ? 4097u + static_cast<unsigned>(h % 5000u)
                                                           : static_cast<unsigned>(h % 1500u);
    unsigned* p = static_cast<unsigned*>(klap::pool_alloc(size, "test_pool churn"));
    const char* c = reinterpret_cast<const char*>(p);
    if (c < klap::pool_bytes() || c + size > klap::pool_bytes() + CAP) {
      ++outside;
      continue;  // do not write outside the pool
    }
    misaligned += (reinterpret_cast<unsigned long long>(p) & 15ull) != 0ull;
    const unsigned tag = g * 0x9E3779B9u ^ (r << 12);
    const unsigned words = size / 4u;
    for (unsigned w = 0; w < words; ++w) p[w] = tag + w;
    __nanosleep(static_cast<unsigned>(h >> 52));  // 0..4095 ns with the memory held
    for (unsigned w = 0; w < words; ++w) bad_data += p[w] != tag + w;
    const klap::pool_hdr* hd = reinterpret_cast<const klap::pool_hdr*>(p) - 1;
    bad_header += hd->refs != 0ull || hd->span != span_of(size);
    klap::pool_free(p);
    bytes += size;
  }
  atomicAdd(&o->bytes, bytes);
  atomicAdd(&o->rounds, static_cast<unsigned long long>(rounds));
  if (bad_data) atomicAdd(&o->bad_data, bad_data);
  if (bad_header) atomicAdd(&o->bad_header, bad_header);
  if (outside) atomicAdd(&o->outside, outside);
  if (misaligned) atomicAdd(&o->misaligned, misaligned);
}

// Takes `bytes` from the pool into out[0], raises the mapped host flag, holds the memory for about
// `hold_ns` (%globaltimer), then frees it.
__global__ void holder_kernel(char** out, unsigned long long bytes, unsigned long long hold_ns, volatile int* flag) {
  char* p = static_cast<char*>(klap::pool_alloc(bytes, "test_pool holder"));
  out[0] = p;
  __threadfence_system();
  *flag = 1;
  __threadfence_system();
  const unsigned long long t0 = kt_now_ns();
  while (kt_now_ns() - t0 < hold_ns) __nanosleep(10000);
  klap::pool_free(p);
}

// Asks for 64 bytes and reports how long pool_alloc took (out[1], *waited_ns).
__global__ void waiter_kernel(char** out, unsigned long long* waited_ns) {
  const unsigned long long t0 = kt_now_ns();
  char* p = static_cast<char*>(klap::pool_alloc(64, "test_pool waiter"));
  *waited_ns = kt_now_ns() - t0;
  out[1] = p;
  klap::pool_free(p);
}

// A request larger than the whole pool.
__global__ void oversize_kernel(char** out) { out[0] = static_cast<char*>(klap::pool_alloc(CAP + 1ull, "test_pool oversize")); }

// Loads holder_kernel and waiter_kernel (a harmless run of each) before they run concurrently: with
// lazy module loading (the default since CUDA 12.2) the first launch of a kernel may wait for the
// kernels already running, so a waiter launched for the first time next to a holder could start
// only after the holder ended (CUDA programming guide, "Lazy Loading", concurrent execution).
static void warm_up(char** d_ptrs, unsigned long long* d_waited, int* d_flag) {
  holder_kernel<<<1, 1>>>(d_ptrs, 16ull, 0ull, d_flag);
  waiter_kernel<<<1, 1>>>(d_ptrs, d_waited);
  KT_CUDA(cudaDeviceSynchronize());
}

static std::vector<unsigned long long> read_words(unsigned* cur = nullptr, unsigned* error = nullptr) {
  std::vector<unsigned char> raw(sizeof(klap::pool_state));
  KT_CUDA(cudaMemcpyFromSymbol(raw.data(), klap::pool_dev_symbol(), raw.size()));
  const klap::pool_state* st = reinterpret_cast<const klap::pool_state*>(raw.data());
  if (cur) *cur = st->cur;
  if (error) *error = st->error;
  return std::vector<unsigned long long>(st->seg, st->seg + NSEG);
}

// Host checks of n live allocations (ptrs, sizes) against the pool at `base`: alignment, bounds,
// segment placement, disjointness (headers included), and every segment's live count.
static void check_layout(const char* what, const std::vector<char*>& ptrs, const std::vector<unsigned>& sizes,
                         const char* base) {
  const unsigned n = static_cast<unsigned>(ptrs.size());
  std::vector<std::pair<const char*, const char*>> ranges;  // [header, end)
  std::vector<unsigned long long> live(NSEG, 0ull);
  for (unsigned g = 0; g < n; ++g) {
    const char* p = ptrs[g];
    const unsigned long long need = need_of(sizes[g]);
    KT_EXPECT((reinterpret_cast<unsigned long long>(p) & 15ull) == 0ull, "%s: allocation %u at %p not 16-byte aligned",
              what, g, (void*)p);
    const bool inside = p - 16 >= base && p - 16 + need <= base + CAP;
    KT_EXPECT(inside, "%s: allocation %u [%p, +%llu) outside the pool [%p, +%llu)", what, g, (void*)(p - 16), need,
              (void*)base, CAP);
    if (!inside) continue;
    const unsigned long long off = static_cast<unsigned long long>(p - 16 - base);
    if (span_of(sizes[g]) == 0ull) {
      KT_EXPECT(off / SEG == (off + need - 1ull) / SEG, "%s: allocation %u (%u bytes) crosses a segment boundary",
                what, g, sizes[g]);
      ++live[off / SEG];
    } else {
      KT_EXPECT(off % SEG == 0ull, "%s: span %u (%u bytes) does not start at a segment boundary (offset %llu)", what,
                g, sizes[g], off);
      for (unsigned long long k = 0; k < span_of(sizes[g]) && off / SEG + k < NSEG; ++k) ++live[off / SEG + k];
    }
    ranges.push_back({p - 16, p - 16 + need});
  }
  std::sort(ranges.begin(), ranges.end());
  for (size_t i = 1; i < ranges.size(); ++i)
    KT_EXPECT(ranges[i].first >= ranges[i - 1].second, "%s: [%p, %p) overlaps [%p, %p)", what,
              (void*)ranges[i - 1].first, (void*)ranges[i - 1].second, (void*)ranges[i].first, (void*)ranges[i].second);
  const std::vector<unsigned long long> words = read_words();
  for (unsigned long long s = 0; s < NSEG; ++s)
    KT_EXPECT((words[s] >> klap::pool_live_shift) == live[s], "%s: segment %llu counts %llu live allocations, %llu lie in it",
              what, s, words[s] >> klap::pool_live_shift, live[s]);
}

// Allocates sizes[] concurrently, checks them on the device and the host, frees them, checks that
// nothing is live.
static void alloc_check_free(const char* what, const std::vector<unsigned>& sizes, const char* base) {
  const unsigned n = static_cast<unsigned>(sizes.size());
  char** d_ptrs;
  unsigned *d_sizes, *d_bad;
  KT_CUDA(cudaMalloc(&d_ptrs, sizeof(char*) * n));
  KT_CUDA(cudaMalloc(&d_sizes, sizeof(unsigned) * n));
  KT_CUDA(cudaMalloc(&d_bad, sizeof(unsigned)));
  KT_CUDA(cudaMemcpy(d_sizes, sizes.data(), sizeof(unsigned) * n, cudaMemcpyHostToDevice));
  KT_CUDA(cudaMemset(d_bad, 0, sizeof(unsigned)));
  alloc_kernel<<<(n + 127) / 128, 128>>>(d_ptrs, d_sizes, n);
  KT_CUDA(cudaGetLastError());
  verify_kernel<<<(n + 127) / 128, 128>>>(d_ptrs, d_sizes, n, d_bad);
  KT_CUDA(cudaDeviceSynchronize());
  std::vector<char*> ptrs(n);
  unsigned bad = 0;
  KT_CUDA(cudaMemcpy(ptrs.data(), d_ptrs, sizeof(char*) * n, cudaMemcpyDeviceToHost));
  KT_CUDA(cudaMemcpy(&bad, d_bad, sizeof(unsigned), cudaMemcpyDeviceToHost));
  KT_EXPECT(bad == 0, "%s: %u bytes or headers overwritten: allocations overlap", what, bad);
  check_layout(what, ptrs, sizes, base);
  free_kernel<<<(n + 127) / 128, 128>>>(d_ptrs, n);
  KT_CUDA(cudaDeviceSynchronize());
  const kt_pool_snapshot s = kt_pool();
  KT_EXPECT(s.live == 0ull && s.busy == 0u && s.error == 0u, "%s: after freeing everything: %llu live in %u segments, error %u",
            what, s.live, s.busy, s.error);
  KT_CUDA(cudaFree(d_ptrs));
  KT_CUDA(cudaFree(d_sizes));
  KT_CUDA(cudaFree(d_bad));
}

// ---- the failure cases, run in a child process each ----------------------------------------------

// Returns the child's exit status: 0 if the kernel failed as it must (and in the expected time).
static int child_main(const char* mode) {
  kt_watchdog("test_pool child", 40);
  char** d_ptrs;
  unsigned long long* d_waited;
  KT_CUDA(cudaMalloc(&d_ptrs, 2 * sizeof(char*)));
  KT_CUDA(cudaMalloc(&d_waited, sizeof(unsigned long long)));
  KT_CUDA(cudaDeviceSynchronize());
  std::chrono::steady_clock::time_point t0;
  bool must_wait = false;
  if (std::strcmp(mode, "oversize") == 0) {
    t0 = std::chrono::steady_clock::now();
    oversize_kernel<<<1, 1>>>(d_ptrs);
  } else if (std::strcmp(mode, "exhausted") == 0) {
    // the holder keeps the whole pool for 10 s; the waiter must give up after KLAP_POOL_WAIT_MS
    cudaStream_t s1, s2;
    KT_CUDA(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    KT_CUDA(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    int* flag;
    int* d_flag;
    KT_CUDA(cudaHostAlloc(&flag, sizeof(int), cudaHostAllocMapped));
    *flag = 0;
    KT_CUDA(cudaHostGetDevicePointer(&d_flag, flag, 0));
    warm_up(d_ptrs, d_waited, d_flag);
    *flag = 0;
    holder_kernel<<<1, 1, 0, s1>>>(d_ptrs, CAP - 16ull, 10ull * 1000ull * 1000ull * 1000ull, d_flag);
    KT_CUDA(cudaGetLastError());
    for (int i = 0; i < 5000 && *static_cast<volatile int*>(flag) == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (*static_cast<volatile int*>(flag) == 0) {
      std::printf("test_pool child: the holder did not take the pool within 5 s\n");
      return 1;
    }
    t0 = std::chrono::steady_clock::now();
    waiter_kernel<<<1, 1, 0, s2>>>(d_ptrs, d_waited);
    must_wait = true;
  } else {
    std::printf("test_pool child: unknown mode %s\n", mode);
    return 1;
  }
  const cudaError_t e = cudaDeviceSynchronize();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const unsigned flag = klap::host_pool_error();
  std::printf("test_pool child %s: the kernel ended with \"%s\" after %.0f ms; host_pool_error() = 0x%x\n", mode,
              cudaGetErrorString(e), ms, flag);
  bool ok = e != cudaSuccess && flag != 0u;
  if (must_wait) ok = ok && ms >= 0.9 * KLAP_POOL_WAIT_MS;   // it waited for frees first
  else ok = ok && ms < 0.9 * KLAP_POOL_WAIT_MS;              // it did not wait: no wait can help
  return ok ? 0 : 1;
}

// Runs this program with `mode`; true if the child exited with 0 and its output contains `expect`.
static bool run_child(const char* mode, const char* expect) {
  char exe[4096];
  const ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (len <= 0) {
    std::printf("test_pool: cannot read /proc/self/exe\n");
    return false;
  }
  exe[len] = '\0';
  const std::string cmd = std::string("'") + exe + "' " + mode + " 2>&1";
  std::fflush(stdout);
  FILE* f = popen(cmd.c_str(), "r");
  if (!f) return false;
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof(buf), f)) out += buf;
  const int st = pclose(f);
  std::printf("test_pool: child process \"%s\" (exit status %d) printed:\n", mode, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  size_t pos = 0;
  while (pos < out.size()) {
    const size_t nl = out.find('\n', pos);
    const std::string line = out.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    std::printf("    %s\n", line.c_str());
    if (nl == std::string::npos) break;
    pos = nl + 1;
  }
  const bool found = out.find(expect) != std::string::npos;
  if (!found) std::printf("test_pool: the child's output lacks \"%s\"\n", expect);
  return WIFEXITED(st) && WEXITSTATUS(st) == 0 && found;
}

int main(int argc, char** argv) {
  if (argc > 1) return child_main(argv[1]);
  kt_watchdog("test_pool", 90);

  // 1. host_prepare, and a pool that needs no set-up
  unsigned cur = 1, error = 1;
  std::vector<unsigned long long> words = read_words(&cur, &error);
  KT_EXPECT(std::all_of(words.begin(), words.end(), [](unsigned long long w) { return w == 0ull; }) && cur == 0u &&
                error == 0u,
            "the pool before any kernel: not all segment words 0, or cur %u, error %u", cur, error);
  char* base = nullptr;
  KT_CUDA(cudaGetSymbolAddress(reinterpret_cast<void**>(&base), klap::pool_bytes_symbol()));
  size_t pool_size = 0;
  KT_CUDA(cudaGetSymbolSize(&pool_size, klap::pool_bytes_symbol()));
  KT_EXPECT(pool_size == CAP && (reinterpret_cast<unsigned long long>(base) & 255ull) == 0ull,
            "klap::pool_bytes(): %zu bytes at %p, want %llu bytes 256-byte aligned", pool_size, (void*)base, CAP);
  cudaStream_t s1, s2;
  KT_CUDA(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
  KT_CUDA(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
  KT_EXPECT(klap::host_prepare(0) == cudaStream_t(0), "host_prepare(0) must return 0");
  KT_EXPECT(klap::host_prepare(s1) == s1, "host_prepare(s) must return s");
  size_t pending = 0;
  KT_CUDA(cudaDeviceGetLimit(&pending, cudaLimitDevRuntimePendingLaunchCount));
  KT_EXPECT(pending >= KLAP_PENDING_LAUNCH_LIMIT, "pending launch limit %zu < %d", pending, KLAP_PENDING_LAUNCH_LIMIT);

  // 2. + 3. concurrent small allocations, then freed by others
  {
    std::vector<unsigned> sizes(1024);
    for (unsigned g = 0; g < sizes.size(); ++g) sizes[g] = (g * 37u) % 200u;  // 0 included
    alloc_check_free("small", sizes, base);
  }
  // 4. spans among small allocations
  {
    std::vector<unsigned> sizes(64);
    for (unsigned g = 0; g < sizes.size(); ++g) sizes[g] = g % 4u == 0u ? 4081u + g * 97u : 16u * g;
    unsigned spans = 0;
    for (unsigned s : sizes) spans += span_of(s) != 0ull;
    KT_EXPECT(spans == 16u && span_of(4081u) == 2ull && span_of(4081u + 60u * 97u) == 3ull, "test set-up: span sizes");
    alloc_check_free("spans", sizes, base);
  }

  // 5. churn
  {
    churn_out* d_o;
    KT_CUDA(cudaMalloc(&d_o, sizeof(churn_out)));
    KT_CUDA(cudaMemset(d_o, 0, sizeof(churn_out)));
    const auto t0 = std::chrono::steady_clock::now();
    churn_kernel<<<4, 64>>>(4000u, d_o);
    KT_CUDA(cudaGetLastError());
    KT_CUDA(cudaDeviceSynchronize());
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    churn_out o;
    KT_CUDA(cudaMemcpy(&o, d_o, sizeof(o), cudaMemcpyDeviceToHost));
    std::printf("test_pool: churn: %llu allocations, %.1f MiB (%.0f times the pool) in %.0f ms\n", o.rounds,
                o.bytes / 1048576.0, double(o.bytes) / double(CAP), ms);
    KT_EXPECT(o.rounds == 256ull * 4000ull, "churn: %llu rounds ran, want %llu", o.rounds, 256ull * 4000ull);
    KT_EXPECT(o.bytes > 100ull * CAP, "churn: only %llu bytes allocated", o.bytes);
    KT_EXPECT(o.bad_data == 0u && o.bad_header == 0u,
              "churn: %u words and %u headers changed while their owner held them (memory handed out twice)", o.bad_data,
              o.bad_header);
    KT_EXPECT(o.outside == 0u && o.misaligned == 0u, "churn: %u allocations outside the pool, %u misaligned", o.outside,
              o.misaligned);
    const kt_pool_snapshot s = kt_pool();
    KT_EXPECT(s.live == 0ull && s.error == 0u, "churn: afterwards %llu allocations live in %u segments, error %u", s.live,
              s.busy, s.error);
    if (s.live != 0ull) {
      // which segments, and whether each count is a leak (small) or an underflow (near 2^24: a release
      // given to a segment the allocation did not count in); the H200 run of 2026-11-27 saw 2^25 in 4
      // segments, i.e. two of each
      unsigned cur_now = 0;
      const std::vector<unsigned long long> w = read_words(&cur_now);
      for (unsigned long long i = 0; i < NSEG; ++i) {
        const unsigned long long live = w[i] >> klap::pool_live_shift;
        if (live == 0ull) continue;
        const long long signed_live = live >= (1ull << 23) ? static_cast<long long>(live) - (1ll << 24) : static_cast<long long>(live);
        std::printf("test_pool: churn: segment %llu: live %lld, used %llu units of %llu%s\n", i, signed_live,
                    w[i] & klap::pool_used_mask, SEG / 16ull, i == cur_now ? " (current)" : "");
      }
    }
    // (a segment that pool_advance reset last may read 0 again: not every word need be non-zero)
    KT_EXPECT(s.touched > NSEG / 2u, "churn: only %u of %llu segments were ever used", s.touched, NSEG);
    KT_CUDA(cudaFree(d_o));
  }

  // 6. the whole pool in one span; a concurrent request waits for it to be freed
  {
    char** d_ptrs;
    unsigned long long* d_waited;
    KT_CUDA(cudaMalloc(&d_ptrs, 2 * sizeof(char*)));
    KT_CUDA(cudaMalloc(&d_waited, sizeof(unsigned long long)));
    KT_CUDA(cudaMemset(d_ptrs, 0, 2 * sizeof(char*)));
    int* flag;
    int* d_flag;
    KT_CUDA(cudaHostAlloc(&flag, sizeof(int), cudaHostAllocMapped));
    *flag = 0;
    KT_CUDA(cudaHostGetDevicePointer(&d_flag, flag, 0));
    warm_up(d_ptrs, d_waited, d_flag);
    *flag = 0;
    const unsigned long long hold_ns = 300ull * 1000ull * 1000ull;
    holder_kernel<<<1, 1, 0, s1>>>(d_ptrs, CAP - 16ull, hold_ns, d_flag);
    KT_CUDA(cudaGetLastError());
    for (int i = 0; i < 5000 && *static_cast<volatile int*>(flag) == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    KT_EXPECT(*static_cast<volatile int*>(flag) == 1, "the holder did not get the whole pool within 5 s");
    waiter_kernel<<<1, 1, 0, s2>>>(d_ptrs, d_waited);
    KT_CUDA(cudaGetLastError());
    KT_CUDA(cudaDeviceSynchronize());
    char* got[2];
    unsigned long long waited = 0;
    KT_CUDA(cudaMemcpy(got, d_ptrs, sizeof(got), cudaMemcpyDeviceToHost));
    KT_CUDA(cudaMemcpy(&waited, d_waited, sizeof(waited), cudaMemcpyDeviceToHost));
    std::printf("test_pool: the whole pool at %p (base %p); the waiter waited %.1f ms for it\n", (void*)got[0],
                (void*)base, waited / 1e6);
    KT_EXPECT(got[0] == base + 16, "whole pool: got %p, want the first segment's data %p", (void*)got[0], (void*)(base + 16));
    KT_EXPECT(got[1] >= base + 16 && got[1] + 64 <= base + CAP, "waiter: got %p, outside the pool", (void*)got[1]);
    KT_EXPECT(waited >= 100ull * 1000ull * 1000ull && waited < 1000ull * 1000ull * KLAP_POOL_WAIT_MS,
              "the waiter's pool_alloc took %.1f ms; the holder kept the pool for %.0f ms after the waiter was launched",
              waited / 1e6, hold_ns / 1e6);
    const kt_pool_snapshot s = kt_pool();
    KT_EXPECT(s.live == 0ull && s.error == 0u, "after holder and waiter: %llu live, error %u", s.live, s.error);
    KT_CUDA(cudaFreeHost(flag));
    KT_CUDA(cudaFree(d_ptrs));
    KT_CUDA(cudaFree(d_waited));
  }

  // every other device has a pool of its own (a __device__ variable exists once per device)
  int ndev = 1;
  KT_CUDA(cudaGetDeviceCount(&ndev));
  for (int d = 1; d < ndev; ++d) {
    KT_CUDA(cudaSetDevice(d));
    char* base_d = nullptr;
    KT_CUDA(cudaGetSymbolAddress(reinterpret_cast<void**>(&base_d), klap::pool_bytes_symbol()));
    char** d_ptrs;
    unsigned* d_sizes;
    const unsigned sixteen = 16;
    KT_CUDA(cudaMalloc(&d_ptrs, sizeof(char*)));
    KT_CUDA(cudaMalloc(&d_sizes, sizeof(unsigned)));
    KT_CUDA(cudaMemcpy(d_sizes, &sixteen, sizeof(unsigned), cudaMemcpyHostToDevice));
    alloc_kernel<<<1, 1>>>(d_ptrs, d_sizes, 1);
    KT_CUDA(cudaDeviceSynchronize());
    char* p = nullptr;
    KT_CUDA(cudaMemcpy(&p, d_ptrs, sizeof(char*), cudaMemcpyDeviceToHost));
    KT_EXPECT(p >= base_d && p < base_d + CAP, "device %d: allocation %p not in its own pool at %p", d, (void*)p,
              (void*)base_d);
    KT_CUDA(cudaFree(d_ptrs));
    KT_CUDA(cudaFree(d_sizes));
  }
  KT_CUDA(cudaSetDevice(0));
  std::printf("test_pool: %d device(s) checked for a pool of their own\n", ndev);
  KT_EXPECT(klap::host_pool_error() == 0u, "host_pool_error() != 0 before the failure cases");

  // 7. the failures, in child processes
  KT_EXPECT(run_child("oversize", "klap: error: memory pool too small for test_pool oversize (2097153 bytes"),
            "a request larger than the pool must trap at once with the too-small message");
  KT_EXPECT(run_child("exhausted", "klap: error: memory pool exhausted while allocating test_pool waiter (64 bytes"),
            "a request while the whole pool is held must wait KLAP_POOL_WAIT_MS, then trap with the exhaustion message");
  return kt_finish("test_pool");
}
