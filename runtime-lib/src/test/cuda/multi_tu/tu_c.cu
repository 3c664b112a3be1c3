// Third translation unit of the multi-TU test (see tu_a.cu): compiled with a pool of 512 KiB, a
// configuration of its own, so it must get a pool of its own.
#define KLAP_POOL_SIZE_BYTES (512ull << 10)
#include "tu_common.cuh"

int run_c() { return tu_run(true, false); }
bool pool_c(char** base, std::vector<unsigned long long>& words) { return tu_pool(base, words); }
