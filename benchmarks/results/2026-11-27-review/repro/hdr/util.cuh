#pragma once
__device__ inline unsigned my_gid() { return blockIdx.x * blockDim.x + threadIdx.x; }
