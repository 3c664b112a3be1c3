// Probe (2026-11-30): the promotion form rv3_cub_device.cu as written, a plain CDP2 program (no
// klap code): does CUB's device-wide reduction launch from device code, ordered before the
// self-launch into the same stream? klap refuses to promote such a kernel and makes a launch
// before such a call in place, on that assumption. Prints "PASS cub_device: ..." or "FAIL ...".
// Build: nvcc -std=c++17 -rdc=true -arch=sm_90 -o probe cub_device.cu
#include "../../../../promotion/src/test/resources/promote/forms/rv3_cub_device.cu"
