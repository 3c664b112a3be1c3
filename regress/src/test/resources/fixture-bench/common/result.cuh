// Test fixture for klap regress: the result line of the benchmark contract.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cstring>

inline int fixture_reps(int argc, char **argv) {
  for (int i = 1; i + 1 < argc; i++)
    if (!strcmp(argv[i], "-r")) return atoi(argv[i + 1]);
  return 1;
}
