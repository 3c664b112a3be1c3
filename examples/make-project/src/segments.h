// segments: fill the segments of an array, one child grid per segment (CUDA dynamic parallelism).
#pragma once

// Fills out[offsets[s] .. offsets[s+1]) with s + 1 for every segment s < n, on the device:
// one parent thread per segment launches a child grid over its segment's elements.
// d_offsets has n + 1 entries; d_out has d_offsets[n] entries. Returns cudaSuccess or the error.
cudaError_t fill_segments(const int *d_offsets, int n, int *d_out);

// Number of elements of d[0 .. len) that differ from their expected segment value; -1 on error.
long long count_wrong(const int *d_offsets, int n, const int *d_out);
