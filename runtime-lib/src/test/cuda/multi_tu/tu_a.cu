// Multi-translation-unit test (with tu_b.cu and tu_c.cu): every unit includes klap.cuh and
// aggregates launches; linked with -rdc=true. Units a and b have the same pool configuration and
// must share ONE pool (pool_state.cuh: one pool per program, not one per file); unit c has another
// pool size and must have a pool of its own. Unit a runs 500 launches through host_prepare, unit b
// 500 without it (no unit needs any set-up), unit c 500 through host_prepare. Checks: every child
// ran once per launch and found its slot arrays in the pool of its unit's configuration; a and b
// see the same buffer and the same segment words, c another buffer; a's launches used the shared
// pool and left c's untouched, c's launches used c's and left the shared one as it was; nothing is
// live in either pool afterwards; no klap error; the CUDA-NP registry is shared. Prints PASS or
// FAIL.
#include "tu_common.cuh"
#include <algorithm>

int run_b();                                                       // tu_b.cu
bool pool_b(char** base, std::vector<unsigned long long>& words);  // tu_b.cu
int run_c();                                                       // tu_c.cu
bool pool_c(char** base, std::vector<unsigned long long>& words);  // tu_c.cu

static bool all_zero(const std::vector<unsigned long long>& w) {
  return std::all_of(w.begin(), w.end(), [](unsigned long long x) { return x == 0ull; });
}

int main() {
  char *base_a = nullptr, *base_b = nullptr, *base_c = nullptr;
  std::vector<unsigned long long> a0, b0, c0, a1, b1, c1, a2, a3, c3;
  bool ok = tu_pool(&base_a, a0) && pool_b(&base_b, b0) && pool_c(&base_c, c0);
  ok = ok && all_zero(a0) && all_zero(b0) && all_zero(c0);
  const bool shared = ok && base_a != nullptr && base_a == base_b;
  const bool separate = ok && base_c != nullptr && base_c != base_a;
  const int bad_a = tu_run(true, true);
  ok = ok && tu_pool(&base_a, a1) && pool_b(&base_b, b1) && pool_c(&base_c, c1);
  const bool a_used_shared = !all_zero(a1) && a1 == b1 && all_zero(c1);
  const int bad_b = run_b();
  ok = ok && tu_pool(&base_a, a2);
  const int bad_c = run_c();
  ok = ok && tu_pool(&base_a, a3) && pool_c(&base_c, c3);
  const bool c_used_own = !all_zero(c3) && a3 == a2;
  ok = ok && bad_a == 0 && bad_b == 0 && bad_c == 0 && shared && separate && a_used_shared && c_used_own;
  std::printf("multi_tu: units a and b: %d and %d problem(s), pools at %p and %p (one pool: %s), a used it: %s; "
              "unit c: %d problem(s), pool at %p (its own: %s), used it: %s\n%s\n",
              bad_a, bad_b, (void*)base_a, (void*)base_b, shared ? "yes" : "NO", a_used_shared ? "yes" : "NO", bad_c,
              (void*)base_c, separate ? "yes" : "NO", c_used_own ? "yes" : "NO", ok ? "multi_tu: PASS" : "FAIL");
  return ok ? 0 : 1;
}
