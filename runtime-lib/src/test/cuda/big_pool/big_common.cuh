// Shared by big_a.cu and big_b.cu: two translation units, each compiled with the largest pool
// `klap --pool-size` allows (1 GiB). With one pool per file the program did not link: two 1 GiB
// host shadows of the pool pass the 2 GiB the x86-64 small code model reaches ("failed to convert
// GOTPCREL relocation"); a program of 17 files with the default 128 MiB failed the same way. With
// one pool per program (pool_state.cuh) it links and holds 1 GiB once.
#define KLAP_POOL_SIZE_BYTES (1024ull << 20)
#include "klap/klap.cuh"
#include "../klap_test.cuh"

// Allocates `bytes` from the pool in one thread, records where, and gives it back.
static __global__ void big_alloc(unsigned long long bytes, char** where) {
  void* p = klap::pool_alloc(bytes, "big_pool test");
  *where = static_cast<char*>(p);
  klap::pool_free(p);
}

// The pool's buffer as this unit sees it, and where an allocation of `bytes` made by this unit's
// kernel lies (the device is synchronized afterwards).
static void big_unit(char** base, char** got, unsigned long long bytes) {
  KT_CUDA(cudaGetSymbolAddress(reinterpret_cast<void**>(base), klap::pool_bytes_symbol()));
  char** d = nullptr;
  KT_CUDA(cudaMalloc(&d, sizeof(char*)));
  big_alloc<<<1, 1>>>(bytes, d);
  KT_CUDA(cudaDeviceSynchronize());
  KT_CUDA(cudaMemcpy(got, d, sizeof(char*), cudaMemcpyDeviceToHost));
  KT_CUDA(cudaFree(d));
}
