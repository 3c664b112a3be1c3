// a value another block may change while the group reads it: each member loads it separately
// (a work queue's tail). Members disagree on n; in the scan loop their round counts differ and
// IntraWarp::scan's __shfl_up_sync(mask) runs with members of the mask that have left the loop.
__global__ void consume(volatile int *tail, const int *items, int *pos, long long *total) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int n = *tail;                           // each member: its own load of a changing value
  long long sum = 0;
#pragma np parallel for scan(+:sum)
  for (int i = 0; i < n; i++) {
    sum += items[i];
    pos[t * 1024 + i] = (int)sum;
  }
  total[t] = sum;
}
__global__ void produce(volatile int *tail) { if (threadIdx.x == 0) atomicAdd((int *)tail, 1); }
int main() { int *tl, *it, *p; long long *tot; cudaStream_t a, b; cudaStreamCreate(&a); cudaStreamCreate(&b);
  consume<<<4, 128, 0, a>>>(tl, it, p, tot); produce<<<1000, 32, 0, b>>>(tl); }
