package klap.bridge;

import static klap.bridge.TestSupport.*;
import static org.junit.jupiter.api.Assertions.*;

import org.junit.jupiter.api.Test;

import klap.model.CudaUnit;
import klap.model.FunctionDef;

/** Function definitions: kinds, namespaces, linkage, templates, members, parameters, prototypes. */
class FunctionsTest {

    static final String SRC = """
        __global__ void proto(int *p, int n);
        namespace a { namespace b {
        __global__ void nk(int *p) { }
        } }
        static __global__ void __launch_bounds__(256, 2) sk(const float * __restrict__ in, int n) { }
        extern "C" __global__ void ck(void) { }
        extern "C" {
        __device__ int dev(int x) { return x; }
        __host__ __device__ float hd(float y) { return y; }
        }
        template <typename T, int K>
        __global__ void tk(T *a) { a[0] = K; }
        struct S {
          __device__ int get() const { return v; }
          int v;
        };
        __host__ void hostOnly() { }
        int main(int argc, char **argv) { return 0; }
        __global__ void proto(int *p, int n) { p[0] = n; }
        """;

    @Test
    void allDefinitionsInSourceOrder() {
        CudaUnit u = parse(SRC);
        assertFalse(u.hasErrors(), () -> u.diagnostics().toString());
        assertEquals(java.util.List.of("nk", "sk", "ck", "dev", "hd", "tk", "get", "hostOnly", "main", "proto"),
            u.functions().stream().map(FunctionDef::name).toList());
    }

    @Test
    void kinds() {
        CudaUnit u = parse(SRC);
        assertEquals(FunctionDef.Kind.KERNEL, fn(u, "nk").kind());
        assertEquals(FunctionDef.Kind.KERNEL, fn(u, "sk").kind());
        assertEquals(FunctionDef.Kind.KERNEL, fn(u, "ck").kind());
        assertEquals(FunctionDef.Kind.DEVICE, fn(u, "dev").kind());
        assertEquals(FunctionDef.Kind.HOST_DEVICE, fn(u, "hd").kind());
        assertEquals(FunctionDef.Kind.KERNEL, fn(u, "tk").kind());
        assertEquals(FunctionDef.Kind.DEVICE, fn(u, "get").kind());
        assertEquals(FunctionDef.Kind.HOST, fn(u, "hostOnly").kind());
        assertEquals(FunctionDef.Kind.HOST, fn(u, "main").kind());
    }

    @Test
    void namespacesStaticLinkageAndLaunchBounds() {
        CudaUnit u = parse(SRC);
        FunctionDef nk = fn(u, "nk");
        assertEquals("a::b", nk.namespace());
        assertEquals("", fn(u, "sk").namespace());

        FunctionDef sk = fn(u, "sk");
        assertTrue(sk.isStatic());
        assertFalse(sk.externC());
        assertEquals("static __global__ void __launch_bounds__(256, 2) sk(const float * __restrict__ in, int n) { }",
            slice(u, sk.range()));
        assertEquals("sk", slice(u, sk.nameRange()));
        assertEquals("const float * __restrict__ in, int n", slice(u, sk.paramsRange()));
        assertEquals(2, sk.params().size());
        assertEquals("const float * __restrict__ in", slice(u, sk.params().get(0).range()));
        assertEquals("in", sk.params().get(0).name());
        assertEquals("in", slice(u, sk.params().get(0).nameRange()));

        FunctionDef ck = fn(u, "ck");
        assertTrue(ck.externC());
        assertEquals("extern \"C\" __global__ void ck(void) { }", slice(u, ck.range()));
        assertEquals(0, ck.params().size());
        assertEquals("void", slice(u, ck.paramsRange()));

        FunctionDef dev = fn(u, "dev");
        assertTrue(dev.externC());
        assertEquals("__device__ int dev(int x) { return x; }", slice(u, dev.range()));
        assertFalse(fn(u, "main").externC());
    }

    @Test
    void templatesAndMembers() {
        CudaUnit u = parse(SRC);
        FunctionDef tk = fn(u, "tk");
        assertEquals("template <typename T, int K>", slice(u, tk.templateHeader()));
        assertEquals("template <typename T, int K>\n__global__ void tk(T *a) { a[0] = K; }", slice(u, tk.range()));
        assertEquals("tk", slice(u, tk.nameRange()));
        assertNull(fn(u, "nk").templateHeader());

        FunctionDef get = fn(u, "get");
        assertEquals("S", get.memberOf());
        assertEquals("", slice(u, get.paramsRange()));
        assertNull(fn(u, "nk").memberOf());
    }

    @Test
    void firstDeclarationOfAPrototype() {
        CudaUnit u = parse(SRC);
        FunctionDef proto = fn(u, "proto");
        assertEquals("__global__ void proto(int *p, int n);", slice(u, proto.firstDeclaration()));
        assertEquals("__global__ void proto(int *p, int n) { p[0] = n; }", slice(u, proto.range()));
        assertNull(fn(u, "nk").firstDeclaration());
    }

    @Test
    void templatePrototype() {
        String src = """
            template <class T> __global__ void t(T *p);
            void h(float *f) { }
            template <class T> __global__ void t(T *p) { }
            """;
        CudaUnit u = parse(src);
        assertEquals("template <class T> __global__ void t(T *p);", slice(u, fn(u, "t").firstDeclaration()));
    }

    @Test
    void kernelsDeclaredElsewhere() {
        String src = """
            __global__ void external(int *p);
            __global__ void local(int *p);
            __global__ void local(int *p) { }
            """;
        CudaUnit u = parse(src);
        assertEquals(java.util.Set.of("external"), u.kernelsDeclaredElsewhere());
        // declared in one namespace, defined here in another: the simple name names two kernels
        CudaUnit v = parse("""
            namespace ns { __global__ void scale(int *p); }
            __global__ void scale(int *p) { }
            namespace ns { __global__ void only(int *p); __global__ void only(int *p) { } }
            """);
        assertEquals(java.util.Set.of("scale", "ns::scale"), v.kernelsDeclaredElsewhere());
    }

    @Test
    void outOfLineMembersAndClassTemplates() {
        String src = """
            template <class T> struct Box {
              T v;
              __device__ T get() const { return v; }
            };
            struct A { void f(); };
            void A::f() { }
            """;
        CudaUnit u = parse(src);
        assertFalse(u.hasErrors(), () -> u.diagnostics().toString());
        assertEquals("Box", fn(u, "get").memberOf());
        assertEquals(FunctionDef.Kind.DEVICE, fn(u, "get").kind());
        FunctionDef f = fn(u, "f");
        assertEquals("A", f.memberOf());
        assertEquals("f", slice(u, f.nameRange()));
        assertEquals("void A::f() { }", slice(u, f.range()));
        assertNull(f.firstDeclaration(), "an in-class member declaration is not a prototype");
    }

    /**
     * C++ [dcl.fct]/5: an array or function parameter has a pointer type. Its declaration as a
     * member or local must say so, and an unnamed parameter needs its name put where the
     * declarator puts it (not appended: {@code int[4] x} is not C++).
     */
    @Test
    void parameterDeclarationsInTheirAdjustedType() {
        String src = """
            #define REAL float
            __global__ void k(int a[4], const float[2], int m[][5], void g(int), void (*)(int), int (*pa)[3],
                              int *b[2], int (&r)[3], int, int *, const REAL * __restrict__ q, int (c)[6], int d = 7,
                              int (*h)(int) = nullptr, unsigned = 3u) { }
            """;
        CudaUnit u = parse(src);
        assertFalse(u.hasErrors(), () -> u.diagnostics().toString());
        String[][] want = {
            {"int (*x)", "int (*)"},
            {"const float (*x)", "const float (*)"},
            {"int (*x)[5]", "int (*)[5]"},
            {"void (*x)(int)", "void (*)(int)"},
            {"void (*x)(int)", "void (*)(int)"},
            {"int (*x)[3]", "int (*)[3]"},
            {"int *(*x)", "int *(*)"},
            {"int (&x)[3]", "int (&)[3]"},
            {"int x", "int"},
            {"int *x", "int *"},
            {"const REAL * __restrict__ x", "const REAL * __restrict__"},
            {"int ((*x))", "int ((*))"},
            {"int x", "int"},
            {"int (*x)(int)", "int (*)(int)"},
            {"unsigned x", "unsigned"},
        };
        FunctionDef k = fn(u, "k");
        assertEquals(want.length, k.params().size());
        for (int i = 0; i < want.length; i++) {
            klap.model.Param p = k.params().get(i);
            assertEquals(want[i][0], p.declaration(u.file().text(), "x"), "parameter " + i);
            assertEquals(want[i][1], p.type(u.file().text()), "parameter " + i);
        }
        assertEquals(klap.model.Param.Decay.ARRAY, k.params().get(0).decay());
        assertEquals(klap.model.Param.Decay.FUNCTION, k.params().get(3).decay());
        assertEquals(klap.model.Param.Decay.NONE, k.params().get(5).decay());
        assertEquals("", k.params().get(1).name());
        assertNull(k.params().get(1).nameRange());
    }
    /** Review 2026-11-27: klap reads the host view; a device body with code under __CUDA_ARCH__ is set aside. */
    @Test
    void deviceFunctionsWithCodeUnderCudaArchAreSetAsideWithAWarning() {
        CudaUnit u = parse("""
            __global__ void child(int* p, int v) { p[v] = v; }
            __host__ __device__ int tid() {
            #ifdef __CUDA_ARCH__
              return threadIdx.x;
            #else
              return 0;
            #endif
            }
            __global__ void parent(int* p, int n) {
            #if __CUDA_ARCH__ >= 700
              if (threadIdx.x >= n) return;
            #endif
              child<<<1, 1>>>(p, tid());
            }
            int main() {
            #ifndef __CUDA_ARCH__
              parent<<<1, 32>>>(0, 4);
            #endif
            }
            """);
        assertEquals(java.util.List.of("child", "main"), u.functions().stream().map(FunctionDef::name).toList());
        assertTrue(u.deviceFunctionsWithoutBody().contains("tid"), u.deviceFunctionsWithoutBody().toString());
        assertTrue(u.kernelsDeclaredElsewhere().contains("parent"), u.kernelsDeclaredElsewhere().toString());
        assertEquals(java.util.List.of("3:1 cuda-arch", "10:1 cuda-arch"), u.diagnostics().stream()
            .map(d -> d.line() + ":" + d.column() + " " + d.id()).toList());
        // a directive continued with a backslash
        CudaUnit c = parse("""
            __device__ void helper() {
            #if defined(NEVER) || \\
                defined(__CUDA_ARCH__)
              __syncthreads();
            #endif
            }
            """);
        assertEquals(java.util.List.of(), c.functions().stream().map(FunctionDef::name).toList());
        assertTrue(c.deviceFunctionsWithoutBody().contains("helper"), c.deviceFunctionsWithoutBody().toString());
        // a macro defined under such a conditional and used in a body; a specifier macro is harmless
        CudaUnit m = parse("""
            #ifdef __CUDA_ARCH__
            #define GID (blockIdx.x * blockDim.x + threadIdx.x)
            #define INL __forceinline__
            #else
            #define GID 0
            #define INL inline
            #endif
            __global__ void child(int* out, int v) { out[v] = v; }
            __global__ void parent(int* out) { int i = GID; child<<<1, 1>>>(out, i); }
            INL __device__ int twice(int x) { return 2 * x; }
            """);
        assertEquals(java.util.List.of("child", "twice"), m.functions().stream().map(FunctionDef::name).toList());
        assertTrue(m.kernelsDeclaredElsewhere().contains("parent"), m.kernelsDeclaredElsewhere().toString());
        assertTrue(m.diagnostics().stream().anyMatch(d -> d.message().contains("uses the macro 'GID'")),
            m.diagnostics().toString());
    }
    @Test
    void scalarTypesResolveTypedefsAliasesAndMacros() {
        String src = """
            typedef float real;
            using idx = unsigned;
            #define REAL double
            struct P { int x; };
            template <typename T> __global__ void t(T a, int b) { T c = a; }
            __global__ void k(const real a, real *p, idx n, REAL d, P q, long long w) {
              real s = 0; const REAL e = 1; idx arr[4]; P r; bool f = false;
            }
            """;
        CudaUnit u = parse(src);
        FunctionDef k = fn(u, "k");
        java.util.function.Function<String, String> at = name -> k.scalarTypes().get(src.indexOf(name, k.range().offset()));
        assertEquals("const float", at.apply("a,"));
        assertNull(at.apply("p,"), "a pointer");
        assertEquals("unsigned int", at.apply("n,"));
        assertEquals("double", at.apply("d,"));
        assertNull(at.apply("q,"), "a class");
        assertEquals("long long int", at.apply("w)"));
        assertEquals("float", at.apply("s ="));
        assertEquals("const double", at.apply("e ="));
        assertNull(at.apply("arr["), "an array");
        assertNull(at.apply("r;"));
        assertEquals("bool", at.apply("f ="));
        FunctionDef t = fn(u, "t");
        assertNull(t.scalarTypes().get(src.indexOf("a, int b")), "a dependent type");
        assertEquals("int", t.scalarTypes().get(src.indexOf("b)")));
    }
    @Test
    void scalarTypesLeaveOutNamesAMacroWritesAndTypedefsUnderCudaArch() {
        String src = """
            #define DECLS int isum = 0; float fpad = 0.0f;
            __global__ void k(const float *a, float *y) {
              DECLS
              int plain = 0;
            }
            """;
        FunctionDef k = fn(parse(src), "k");
        assertEquals(java.util.Map.of(src.indexOf("plain"), "int"), k.scalarTypes(), "isum and fpad have the expansion's offset");
        String arch = """
            #ifdef __CUDA_ARCH__
            typedef int acc_t;
            #else
            typedef float acc_t;
            #endif
            __global__ void k(float *y) { acc_t sum = 0; float f = 0; y[0] = sum + f; }
            """;
        FunctionDef ka = fn(parse(arch), "k");
        assertNull(ka.scalarTypes().get(arch.indexOf("sum =")), "the device compilation may see another type");
        assertEquals("float", ka.scalarTypes().get(arch.indexOf("f =")));
    }
}
