#pragma once
__device__ int max(const int* a, int len) {   // largest of a[0..len)
  int m = a[0];
  for (int i = 1; i < len; ++i) m = a[i] > m ? a[i] : m;
  return m;
}
