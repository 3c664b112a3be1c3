// Multi-translation-unit test (with tu_b.cu): both units include klap.cuh and aggregate launches;
// linked with -rdc=true, each must use its own memory pool, and a host_prepare in one unit must set
// up the pools of all units. Prints PASS or FAIL.
#include "tu_common.cuh"
#include <cstdio>

int run_b(char** base, bool prepare);  // tu_b.cu

int main() {
  char *base_a = nullptr, *base_b = nullptr;
  const int bad_a = tu_run(&base_a);
  // unit b's launch calls no host_prepare of its own: unit a's call prepared b's pool too
  const int bad_b = run_b(&base_b, false);
  const bool ok = bad_a == 0 && bad_b == 0 && base_a != nullptr && base_b != nullptr && base_a != base_b;
  std::printf("multi_tu: unit a: %d bad, pool %p; unit b: %d bad, pool %p\n%s\n", bad_a, (void*)base_a, bad_b,
              (void*)base_b, ok ? "multi_tu: PASS" : "FAIL");
  return ok ? 0 : 1;
}
