// Second translation unit of the multi-TU test (see tu_a.cu).
#include "tu_common.cuh"

int run_b(char** base, bool prepare) { return tu_run(base, prepare); }
