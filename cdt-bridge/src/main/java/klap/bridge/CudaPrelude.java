package klap.bridge;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * What CDT is told about CUDA before it reads a file: scanner macros that turn CUDA keywords into
 * GNU attributes, and a forced-include prelude (a separate file, so it shifts no offsets of the
 * main file) that declares the CUDA builtins, vector types and runtime API the programs use, so
 * that these names resolve to bindings.
 */
final class CudaPrelude {

    private CudaPrelude() {
    }

    /** The path under which the prelude is force-included; it never exists on disk. */
    static final String PATH = "/__klap__/cuda_prelude.cuh";

    /** The builtin variables: {@code threadIdx}, {@code blockIdx}, {@code blockDim}, {@code gridDim}, {@code warpSize}. */
    static final Set<String> BUILTINS = Set.of("threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize");

    /**
     * @return the scanner macros: CUDA keywords as GNU attributes ({@code __global__} becomes
     *         {@code __attribute__((global))}, ...), {@code __CUDACC__} defined as 1 and
     *         {@code __CUDA_ARCH__} left undefined (host compilation view)
     */
    static Map<String, String> macros() {
        Map<String, String> m = new LinkedHashMap<>();
        for (String kw : new String[] {"global", "device", "host", "shared", "constant", "managed",
            "grid_constant", "noinline"}) {
            m.put("__" + kw + "__", "__attribute__((" + kw + "))");
        }
        m.put("__forceinline__", "__attribute__((forceinline))");
        m.put("__launch_bounds__(...)", "__attribute__((launch_bounds(__VA_ARGS__)))");
        m.put("__cluster_dims__(...)", "__attribute__((cluster_dims(__VA_ARGS__)))");
        m.put("__block_size__(...)", "__attribute__((block_size(__VA_ARGS__)))");
        m.put("__maxnreg__(n)", "__attribute__((maxnreg(n)))");
        m.put("__align__(n)", "__attribute__((aligned(n)))");
        m.put("__builtin_align__(n)", "__attribute__((aligned(n)))");
        m.put("__CUDACC__", "1");
        m.put("__NVCC__", "1");
        m.put("CUDART_CB", "");
        // the LP64 sizes that gcc/clang define on x86-64 and aarch64 Linux (nvcc's host compilers),
        // which device code shares: CDT's sizeof calculator reads them (VarDecl.sharedBytes)
        String[][] sizes = {{"SHORT", "2"}, {"INT", "4"}, {"LONG", "8"}, {"LONG_LONG", "8"}, {"POINTER", "8"},
            {"FLOAT", "4"}, {"DOUBLE", "8"}, {"LONG_DOUBLE", "16"}, {"WCHAR_T", "4"}, {"SIZE_T", "8"},
            {"PTRDIFF_T", "8"}, {"INT128", "16"}};
        for (String[] s : sizes) {
            m.put("__SIZEOF_" + s[0] + "__", s[1]);
        }
        m.put("__BIGGEST_ALIGNMENT__", "16");
        return m;
    }

    /** @return the prelude's text */
    static String text() {
        StringBuilder b = new StringBuilder(8192);
        b.append("""
            typedef unsigned long size_t;
            typedef long ptrdiff_t;
            struct uint3 { unsigned int x, y, z; };
            struct dim3 {
              unsigned int x, y, z;
              dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1);
              dim3(uint3 v);
              operator uint3() const;
            };
            extern const uint3 threadIdx;
            extern const uint3 blockIdx;
            extern const dim3 blockDim;
            extern const dim3 gridDim;
            extern const int warpSize;
            typedef struct CUstream_st *cudaStream_t;
            typedef struct CUevent_st *cudaEvent_t;
            enum cudaError { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorMemoryAllocation = 2,
              cudaErrorLaunchFailure = 719, cudaErrorLaunchPendingCountExceeded = 69 };
            typedef enum cudaError cudaError_t;
            enum cudaMemcpyKind { cudaMemcpyHostToHost = 0, cudaMemcpyHostToDevice = 1,
              cudaMemcpyDeviceToHost = 2, cudaMemcpyDeviceToDevice = 3, cudaMemcpyDefault = 4 };
            enum cudaLimit { cudaLimitStackSize = 0, cudaLimitPrintfFifoSize = 1, cudaLimitMallocHeapSize = 2,
              cudaLimitDevRuntimeSyncDepth = 3, cudaLimitDevRuntimePendingLaunchCount = 4 };
            const unsigned int cudaStreamDefault = 0;
            const unsigned int cudaStreamNonBlocking = 1;
            const unsigned int cudaEventDefault = 0;
            const unsigned int cudaEventDisableTiming = 2;
            const unsigned int cudaMemAttachGlobal = 1;
            #define cudaStreamLegacy ((cudaStream_t)1) /* a macro, as in driver_types.h */
            #define cudaStreamPerThread ((cudaStream_t)2) /* a macro, as in driver_types.h */
            #define cudaStreamTailLaunch ((cudaStream_t)3) /* a macro, as in driver_types.h */
            #define cudaStreamFireAndForget ((cudaStream_t)4) /* a macro, as in driver_types.h */
            cudaError_t cudaMalloc(void **devPtr, size_t size);
            template <class T> cudaError_t cudaMalloc(T **devPtr, size_t size);
            cudaError_t cudaMallocManaged(void **devPtr, size_t size, unsigned int flags = 1);
            template <class T> cudaError_t cudaMallocManaged(T **devPtr, size_t size, unsigned int flags = 1);
            cudaError_t cudaMallocHost(void **ptr, size_t size);
            template <class T> cudaError_t cudaMallocHost(T **ptr, size_t size);
            cudaError_t cudaFree(void *devPtr);
            cudaError_t cudaFreeHost(void *ptr);
            cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, cudaMemcpyKind kind);
            cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, cudaMemcpyKind kind, cudaStream_t stream = 0);
            cudaError_t cudaMemcpyToSymbol(const void *symbol, const void *src, size_t count, size_t offset = 0, cudaMemcpyKind kind = cudaMemcpyHostToDevice);
            cudaError_t cudaMemset(void *devPtr, int value, size_t count);
            cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream = 0);
            cudaError_t cudaDeviceSynchronize();
            cudaError_t cudaDeviceReset();
            cudaError_t cudaDeviceSetLimit(cudaLimit limit, size_t value);
            cudaError_t cudaDeviceGetLimit(size_t *value, cudaLimit limit);
            cudaError_t cudaSetDevice(int device);
            cudaError_t cudaGetDevice(int *device);
            cudaError_t cudaGetDeviceCount(int *count);
            cudaError_t cudaGetLastError();
            cudaError_t cudaPeekAtLastError();
            const char *cudaGetErrorString(cudaError_t error);
            const char *cudaGetErrorName(cudaError_t error);
            cudaError_t cudaStreamCreate(cudaStream_t *stream);
            cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int flags);
            cudaError_t cudaStreamDestroy(cudaStream_t stream);
            cudaError_t cudaStreamSynchronize(cudaStream_t stream);
            cudaError_t cudaEventCreate(cudaEvent_t *event);
            cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags);
            cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = 0);
            cudaError_t cudaEventSynchronize(cudaEvent_t event);
            cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end);
            cudaError_t cudaEventDestroy(cudaEvent_t event);
            int printf(const char *format, ...);
            int fprintf(void *stream, const char *format, ...);
            void *malloc(size_t size);
            void free(void *ptr);
            void *memcpy(void *dst, const void *src, size_t n);
            void *memset(void *dst, int c, size_t n);
            void __syncthreads();
            int __syncthreads_count(int predicate);
            int __syncthreads_and(int predicate);
            int __syncthreads_or(int predicate);
            void __syncwarp(unsigned int mask = 0xffffffff);
            void __threadfence();
            void __threadfence_block();
            void __threadfence_system();
            unsigned int __activemask();
            unsigned int __ballot_sync(unsigned int mask, int predicate);
            int __any_sync(unsigned int mask, int predicate);
            int __all_sync(unsigned int mask, int predicate);
            template <class T> T __shfl_sync(unsigned int mask, T var, int srcLane, int width = 32);
            template <class T> T __shfl_up_sync(unsigned int mask, T var, unsigned int delta, int width = 32);
            template <class T> T __shfl_down_sync(unsigned int mask, T var, unsigned int delta, int width = 32);
            template <class T> T __shfl_xor_sync(unsigned int mask, T var, int laneMask, int width = 32);
            template <class T> T __ldg(const T *ptr);
            int __popc(unsigned int x);
            int __popcll(unsigned long long x);
            int __clz(int x);
            int __ffs(int x);
            long long clock64();
            int clock();
            float __fdividef(float x, float y);
            float __expf(float x);
            float __logf(float x);
            float __sinf(float x);
            float __cosf(float x);
            float __int_as_float(int x);
            int __float_as_int(float x);
            int __float2int_rn(float x);
            float __int2float_rn(int x);
            """);
        for (String op : new String[] {"atomicAdd", "atomicSub", "atomicExch", "atomicMin", "atomicMax",
            "atomicAnd", "atomicOr", "atomicXor"}) {
            for (String t : new String[] {"int", "unsigned int", "unsigned long long", "float", "double"}) {
                b.append(t).append(' ').append(op).append('(').append(t).append(" *address, ").append(t)
                    .append(" val);\n");
            }
        }
        b.append("unsigned int atomicInc(unsigned int *address, unsigned int val);\n");
        b.append("unsigned int atomicDec(unsigned int *address, unsigned int val);\n");
        for (String t : new String[] {"int", "unsigned int", "unsigned long long", "unsigned short"}) {
            b.append(t).append(" atomicCAS(").append(t).append(" *address, ").append(t).append(" compare, ")
                .append(t).append(" val);\n");
        }
        for (String f : new String[] {"sqrt", "rsqrt", "cbrt", "exp", "exp2", "expm1", "log", "log2", "log10",
            "log1p", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "fabs", "floor",
            "ceil", "round", "trunc", "rint", "erf", "erfc", "lgamma", "tgamma"}) {
            b.append("float ").append(f).append("f(float x);\n");
            b.append("double ").append(f).append("(double x);\n");
            b.append("float ").append(f).append("(float x);\n");
        }
        for (String f : new String[] {"pow", "fmin", "fmax", "fmod", "atan2", "hypot", "copysign", "fdim"}) {
            b.append("float ").append(f).append("f(float x, float y);\n");
            b.append("double ").append(f).append("(double x, double y);\n");
            b.append("float ").append(f).append("(float x, float y);\n");
        }
        b.append("float fmaf(float x, float y, float z);\ndouble fma(double x, double y, double z);\n");
        b.append("void sincosf(float x, float *s, float *c);\nbool isnan(float x);\nbool isnan(double x);\n");
        b.append("bool isinf(float x);\nbool isinf(double x);\nint abs(int x);\nlong long llabs(long long x);\n");
        for (String t : new String[] {"int", "unsigned int", "long", "unsigned long", "long long",
            "unsigned long long", "float", "double"}) {
            b.append(t).append(" min(").append(t).append(" a, ").append(t).append(" b);\n");
            b.append(t).append(" max(").append(t).append(" a, ").append(t).append(" b);\n");
        }
        // vector types and their make_ functions
        String[][] scalars = {{"char", "char"}, {"uchar", "unsigned char"}, {"short", "short"},
            {"ushort", "unsigned short"}, {"int", "int"}, {"uint", "unsigned int"}, {"long", "long"},
            {"ulong", "unsigned long"}, {"longlong", "long long"}, {"ulonglong", "unsigned long long"},
            {"float", "float"}, {"double", "double"}};
        String[] fields = {"x", "y", "z", "w"};
        for (String[] s : scalars) {
            for (int n = 1; n <= 4; n++) {
                String name = s[0] + n;
                if (name.equals("uint3")) {
                    b.append("uint3 make_uint3(unsigned int x, unsigned int y, unsigned int z);\n");
                    continue;
                }
                b.append("struct ").append(name).append(" { ").append(s[1]).append(' ');
                StringBuilder params = new StringBuilder();
                for (int k = 0; k < n; k++) {
                    b.append(k == 0 ? "" : ", ").append(fields[k]);
                    params.append(k == 0 ? "" : ", ").append(s[1]).append(' ').append(fields[k]);
                }
                b.append("; };\n");
                b.append(name).append(" make_").append(name).append('(').append(params).append(");\n");
            }
        }
        return b.toString();
    }
}
