// Second translation unit of the big_pool test (see big_a.cu).
#include "big_common.cuh"

void unit_b(char** base, char** got, unsigned long long bytes) { big_unit(base, got, bytes); }
