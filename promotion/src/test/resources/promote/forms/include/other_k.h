#pragma once
namespace other {
__global__ void K(int* p, int t) { if (threadIdx.x == 0) p[t] = -1; }   // the end marker
}
