// Second translation unit of the multi-TU test (see tu_a.cu).
#include "tu_common.cuh"

int run_b() { return tu_run(false, false); }
bool pool_b(char** base, std::vector<unsigned long long>& words) { return tu_pool(base, words); }
