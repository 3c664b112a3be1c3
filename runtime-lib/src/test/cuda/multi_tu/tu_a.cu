// Multi-translation-unit test (with tu_b.cu): both units include klap.cuh and aggregate launches;
// linked with -rdc=true, each must use its own memory pool. Unit a runs 500 launches through
// host_prepare, unit b 500 without it (no unit needs any set-up). Checks: every child ran once per
// launch and found its slot arrays in its own unit's pool; the two pools are different buffers;
// unit a's launches touched only a's pool (b's words are all still 0 after them) and b's launches
// did not change a's words; nothing is live in either pool afterwards; no klap error; the CUDA-NP
// registry is shared. Prints PASS or FAIL.
#include "tu_common.cuh"
#include <algorithm>

int run_b();                                                    // tu_b.cu
bool pool_b(char** base, std::vector<unsigned long long>& words);  // tu_b.cu

static bool all_zero(const std::vector<unsigned long long>& w) {
  return std::all_of(w.begin(), w.end(), [](unsigned long long x) { return x == 0ull; });
}

int main() {
  char *base_a = nullptr, *base_b = nullptr;
  std::vector<unsigned long long> a0, a1, a2, b0, b1, b2;
  bool ok = tu_pool(&base_a, a0) && pool_b(&base_b, b0);
  ok = ok && all_zero(a0) && all_zero(b0);
  const int bad_a = tu_run(true, true);
  ok = ok && tu_pool(&base_a, a1) && pool_b(&base_b, b1);
  const bool a_used_own = !all_zero(a1) && all_zero(b1);
  const int bad_b = run_b();
  ok = ok && tu_pool(&base_a, a2) && pool_b(&base_b, b2);
  const bool b_used_own = !all_zero(b2) && a2 == a1;
  ok = ok && bad_a == 0 && bad_b == 0 && base_a != nullptr && base_b != nullptr && base_a != base_b && a_used_own &&
       b_used_own;
  std::printf("multi_tu: unit a: %d problem(s), pool at %p, used only its own: %s; unit b: %d problem(s), pool at %p, "
              "used only its own: %s\n%s\n",
              bad_a, (void*)base_a, a_used_own ? "yes" : "NO", bad_b, (void*)base_b, b_used_own ? "yes" : "NO",
              ok ? "multi_tu: PASS" : "FAIL");
  return ok ? 0 : 1;
}
