#define TID (::threadIdx.x)
