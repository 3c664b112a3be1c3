// big_pool test (with big_b.cu): two translation units with a 1 GiB pool each link into one
// program (big_common.cuh says why they did not before), and share that one pool: both see the
// same buffer, and allocations from either unit's kernels lie inside it, including one of 900 MiB
// (a span of most of the pool) from each, one after the other. Prints PASS or FAIL.
#include "big_common.cuh"

void unit_b(char** base, char** got, unsigned long long bytes);  // big_b.cu

int main() {
  kt_watchdog("big_pool", 120);
  const unsigned long long size = klap::pool_segments * klap::pool_segment_bytes;
  const unsigned long long sizes[] = {64ull, 900ull << 20};
  for (unsigned long long bytes : sizes) {
    char *base_a = nullptr, *base_b = nullptr, *got_a = nullptr, *got_b = nullptr;
    big_unit(&base_a, &got_a, bytes);
    unit_b(&base_b, &got_b, bytes);
    KT_EXPECT(base_a == base_b, "units a and b see different pools (%p, %p)", (void*)base_a, (void*)base_b);
    KT_EXPECT(got_a >= base_a && got_a + bytes <= base_a + size, "unit a: %llu bytes at %p, outside the pool at %p",
              bytes, (void*)got_a, (void*)base_a);
    KT_EXPECT(got_b >= base_a && got_b + bytes <= base_a + size, "unit b: %llu bytes at %p, outside the pool at %p",
              bytes, (void*)got_b, (void*)base_a);
  }
  KT_EXPECT(klap::host_pool_error() == 0u, "klap error flag set");
  return kt_finish("big_pool");
}
