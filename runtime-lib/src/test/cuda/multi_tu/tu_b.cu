// Second translation unit of the multi-TU test (see tu_a.cu).
#include "tu_common.cuh"

int run_b(char** base) { return tu_run(base); }
