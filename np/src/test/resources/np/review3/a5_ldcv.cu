// __ldcv is a volatile load (ld.volatile: a relaxed system-scope read in the PTX memory model),
// the same thing the planner refuses 'volatile' for; klap lets every member repeat it
__global__ void consume(const int *published, const float *data, float *out) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int ready = __ldcv(published);          // a producer (another block / stream) keeps publishing
  float s = 0;
#pragma np parallel for reduction(+:s)
  for (int i = 0; i < ready; i++) s += data[i];
  out[t] = s;                             // original: a prefix sum of data; NP: any mix
}
int main() { int *p; float *d, *o; consume<<<4, 128>>>(p, d, o); }
