// scan 'v -= e' becomes the contribution static_cast<T>(-(e)): -(e) is computed in e's type
__global__ void k(const unsigned *len, long long *pos, float *fpos, const unsigned *w) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  long long off = 1000000;
#pragma np parallel for scan(+:off)
  for (int i = 0; i < 32; i++) {
    off -= len[t * 32 + i];
    pos[t * 32 + i] = off;
  }
  float f = 0;
#pragma np parallel for
  for (int i = 0; i < 32; i++) {
    f = f - w[t * 32 + i];
    fpos[t * 32 + i] = f;
  }
}
int main() { unsigned *l, *w; long long *p; float *f; k<<<4, 128>>>(l, p, f, w); }
