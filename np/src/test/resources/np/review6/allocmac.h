#define ALLOC(T, n) new T[n]
#define RELEASE(p) delete[] p
