// Shared by kernels.cu and main.cu.
#pragma once
#define N_OUT 1024
__global__ void parent(unsigned* out, int n);
