// mstv_flat: the flat (non-CDP) version of mstv (KLAP Table I): Boruvka minimum spanning tree with
// every per-node edge loop in the parent thread. The flat versions of mstf and mstv are the same
// program, kept once in common/mst_flat_b.cuh; see it for the options and the output line.
#define MST_FLAT_NAME "mstv_flat"
#include "common/mst_flat_b.cuh"
