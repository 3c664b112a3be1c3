package klap.aggregation;

import static klap.aggregation.Check.inOrder;
import static klap.aggregation.Check.none;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import klap.bridge.CudaParser;
import klap.model.CudaUnit;
import klap.model.Diagnostic.Severity;
import klap.transform.Granularity;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Code the model does not hold as a function of the main file (review 2026-11-27): device functions
 * defined in a project header, and calls through a lambda-valued local, a member function or a
 * function pointer. Each was a silent miscompile: an index-reading header helper in a child read the
 * aggregated grid's indices, a barrier in a header helper or a lambda after a guarded return did not
 * stop the guard rewrite (a hang), and a launch through a member, lambda or pointer overtook an
 * earlier deferred launch of the same thread.
 */
class UnseenCodeTest {

    @TempDir
    Path dir;

    /** The header every case includes: a pure helper, an index reader, a barrier, a launcher, transitive ones. */
    static final String HEADER = """
            #pragma once
            __device__ inline int twice(int x) { return 2 * x; }
            __device__ inline int my_gid() { return blockIdx.x * blockDim.x + threadIdx.x; }
            __device__ inline int my_gid_twice() { return twice(my_gid()); }
            __device__ inline int block_sum(int* s, int v) { s[threadIdx.x % 32] = v; __syncthreads(); return s[0]; }
            __device__ inline int warp_max(int v) { return max(v, __shfl_xor_sync(0xffffffffu, v, 1)); }
            __global__ void hchild(int* a);
            __device__ inline void go(int* a) { hchild<<<1, 32>>>(a); }
            __device__ inline void copy(int* d, const int* s) { cudaMemcpyAsync(d, s, 128, cudaMemcpyDeviceToDevice, 0); }
            __host__ __device__ inline unsigned arch_gid() {
            #ifdef __CUDA_ARCH__
              return blockIdx.x * blockDim.x + threadIdx.x;
            #else
              return 0;
            #endif
            }
            """;

    private CudaUnit parse(String code) throws IOException {
        Files.writeString(dir.resolve("util.cuh"), HEADER);
        Path main = dir.resolve("test.cu");
        Files.writeString(main, code);
        CudaUnit u = CudaParser.parse(main, code, List.of());
        assertFalse(u.hasErrors(), u.diagnostics().toString());
        return u;
    }

    private AggregationPass.Result run(String code, Granularity g) throws IOException {
        return AggregationPass.run(parse(code), new AggregationPass.Options(g, true, null));
    }

    @Test
    void headerFunctionsAreClassifiedByWhatTheirBodiesDo() throws IOException {
        CudaUnit u = parse("#include \"util.cuh\"\n__global__ void k(int* a) { a[0] = twice(1); }\n");
        assertEquals(Set.of("my_gid", "my_gid_twice", "block_sum"), u.headerIndexReaders());
        assertEquals(Set.of("block_sum", "warp_max"), u.headerSyncFunctions());
        // arch_gid: klap reads the host view (return 0); its device code is unseen (review 2026-11-27)
        assertTrue(u.deviceFunctionsWithoutBody().containsAll(Set.of("go", "copy", "arch_gid")),
                u.deviceFunctionsWithoutBody().toString());
        assertFalse(u.deviceFunctionsWithoutBody().contains("twice"));
        assertFalse(u.headerIndexReaders().contains("twice"));
    }

    @ParameterizedTest
    @EnumSource(Granularity.class)
    void aChildCallingAnIndexReadingHeaderHelperIsLeftAsWritten(Granularity g) throws IOException {
        var r = run("""
                #include "util.cuh"
                __global__ void child(int* p) { p[my_gid_twice()] = 1; }
                __global__ void parent(int* p, int n) {
                  int i = blockIdx.x * blockDim.x + threadIdx.x;
                  if (i < n) child<<<2, 32>>>(p + 256 * i);
                }
                """, g);
        assertEquals(0, r.sites(), r.diagnostics().toString());
        assertTrue(Check.hasDiag(r, Severity.WARNING, "child-calls-unseen"), r.diagnostics().toString());
        assertTrue(r.diagnostics().toString().contains("'my_gid_twice', which a header defines and which reads the built-in "
                + "indices"), r.diagnostics().toString());
    }

    @ParameterizedTest
    @EnumSource(Granularity.class)
    void aPureHeaderHelperChangesNothing(Granularity g) throws IOException {
        var r = run("""
                #include "util.cuh"
                __global__ void child(int* p, int v) { p[threadIdx.x] = twice(v); }
                __global__ void parent(int* p, int n) {
                  int i = blockIdx.x * blockDim.x + threadIdx.x;
                  if (i >= n) return;
                  int t = twice(i);
                  child<<<1, 32>>>(p + 32 * i, t);
                }
                """, g);
        assertEquals(1, r.sites(), r.diagnostics().toString());
        assertTrue(r.diagnostics().stream().noneMatch(d -> d.severity() == Severity.WARNING), r.diagnostics().toString());
        if (g == Granularity.KERNEL) {
            inOrder(r.text(), "klap::kfinish(");
        } else {
            inOrder(r.text(), "if (i >= n) {} else {");
        }
    }

    @ParameterizedTest
    @EnumSource(Granularity.class)
    void aBarrierInAHeaderHelperAfterAGuardedReturnKeepsTheReturn(Granularity g) throws IOException {
        for (String call : List.of("block_sum(s, i)", "warp_max(i)")) {
            var r = run("""
                    #include "util.cuh"
                    __global__ void child(int* p, int v) { p[threadIdx.x] = v; }
                    __global__ void parent(int* p, int n) {
                      __shared__ int s[32];
                      int i = blockIdx.x * blockDim.x + threadIdx.x;
                      if (i >= n) return;
                      int t = CALL;
                      if (t > 0) child<<<1, 32>>>(p + 32 * i, t);
                    }
                    """.replace("CALL", call), g);
            assertEquals(1, r.sites(), r.diagnostics().toString());
            none(r.text(), "if (i >= n) {} else {");
            none(r.text(), "klap::kfinish(");
            inOrder(r.text(), "if (i >= n) return;", "klap::warp_group::active()");
        }
    }

    @ParameterizedTest
    @EnumSource(Granularity.class)
    void aLaunchOrStreamOperationInAHeaderHelperKeepsTheThreadsOrder(Granularity g) throws IOException {
        for (String call : List.of("go(p + 32 * i)", "copy(p, p + 32 * i)")) {
            var r = run("""
                    #include "util.cuh"
                    __global__ void child(int* p) { p[threadIdx.x] += 1; }
                    __global__ void hchild(int* a) { a[threadIdx.x] *= 2; }
                    __global__ void parent(int* p, int n) {
                      int i = blockIdx.x * blockDim.x + threadIdx.x;
                      if (i >= n) return;
                      child<<<1, 32>>>(p + 32 * i);
                      CALL;
                    }
                    """.replace("CALL", call), g);
            assertEquals(1, r.sites(), r.diagnostics().toString());
            // the launch goes out before the helper runs: in place, never at the end of the region or grid
            inOrder(r.text(), "klap::warp_group::active()", "klap_s0.flush(", call);
            none(r.text(), "klap::kfinish(");
        }
    }

    @ParameterizedTest
    @EnumSource(Granularity.class)
    void launchesThroughAMemberALambdaOrAPointerKeepTheThreadsOrder(Granularity g) throws IOException {
        String common = """
                __global__ void produce(int* b) { b[threadIdx.x] = 1; }
                __global__ void consume(int* b, int* o) { o[threadIdx.x] = b[threadIdx.x]; }
                struct Stage { int* b; int* o; __device__ void finish() const { consume<<<1, 32>>>(b, o); } };
                __device__ void fin(int* b, int* o) { consume<<<1, 32>>>(b, o); }
                __device__ void (*fin_ptr)(int*, int*) = fin;
                """;
        for (String body : List.of(
                "Stage s{b + 32 * i, o + 32 * i}; produce<<<1, 32>>>(s.b); s.finish();",
                "auto then = [&](int j) { consume<<<1, 32>>>(b + 32 * j, o + 32 * j); }; produce<<<1, 32>>>(b + 32 * i); then(i);",
                "produce<<<1, 32>>>(b + 32 * i); fin_ptr(b + 32 * i, o + 32 * i);",
                // review 2026-11-29: a copy of a lambda local, and a lambda called through another's parameter
                "auto then = [&] { consume<<<1, 32>>>(b + 32 * i, o + 32 * i); }; auto again = then; "
                        + "produce<<<1, 32>>>(b + 32 * i); again();",
                "auto run = [&](auto f) { f(); }; auto then = [&] { consume<<<1, 32>>>(b + 32 * i, o + 32 * i); }; "
                        + "produce<<<1, 32>>>(b + 32 * i); run(then);")) {
            var r = run(common + """
                    __global__ void parent(int* b, int* o, int n) {
                      int i = blockIdx.x * blockDim.x + threadIdx.x;
                      if (i >= n) return;
                      BODY
                    }
                    """.replace("BODY", body), g);
            String call = body.substring(body.lastIndexOf(';', body.length() - 2) + 1).strip();
            // produce goes out in place (it launches consume too, which klap aggregates with collectives:
            // launch-order or granularity-fallback says so), before the call that launches consume
            inOrder(r.text(), ".record(dim3(1), dim3(32), 0u, (cudaStream_t)0, klap_args_produce(", ".flush(", call);
            assertTrue(g == Granularity.WARP || Check.hasDiag(r, Severity.WARNING, "launch-order")
                    || Check.hasDiag(r, Severity.WARNING, "granularity-fallback"), body + ": " + r.diagnostics());
            none(r.text(), "klap::kfinish(");
        }
    }

    @ParameterizedTest
    @EnumSource(Granularity.class)
    void aBarrierInALambdaAfterAGuardedReturnKeepsTheReturn(Granularity g) throws IOException {
        var r = run("""
                __global__ void child(int* p, int v) { p[threadIdx.x] = v; }
                __global__ void parent(int* p, int n) {
                  __shared__ int s[64];
                  auto block_sum = [&](int v) { s[threadIdx.x] = v; __syncthreads(); return s[0] + s[63]; };
                  int i = blockIdx.x * blockDim.x + threadIdx.x;
                  if (i >= n) return;
                  int t = block_sum(i);
                  if (t > 0) child<<<1, 32>>>(p + 32 * i, t);
                }
                """, g);
        assertEquals(1, r.sites(), r.diagnostics().toString());
        none(r.text(), "if (i >= n) {} else {");
        none(r.text(), "klap::kfinish(");
    }

    @Test
    void aTailLaunchOfARecursiveKernelStaysATailLaunchAtKernelGranularity() throws IOException {
        var r = run("""
                __global__ void produce(int* d, int level, int i) { d[level * 64 + i] = level + 1; }
                __global__ void step(int* d, int level) {
                  int i = threadIdx.x;
                  produce<<<1, 1, 0, cudaStreamFireAndForget>>>(d, level, i);
                  if (i == 0 && level < 3) step<<<1, 64, 0, cudaStreamTailLaunch>>>(d, level + 1);
                  for (int r = 0; r < 2; ++r) if (i == r) produce<<<1, 1, 0, cudaStreamTailLaunch>>>(d, r, i);
                }
                """, Granularity.KERNEL);
        assertEquals(3, r.sites(), r.diagnostics().toString());
        // the recorded stream is the tail stream, which waits for the fire-and-forget children too
        inOrder(r.text(), "klap::krecord_seq<klap_args_step>(klap_ks, {{[^;]*}}(cudaStream_t)(cudaStreamTailLaunch), "
                + "klap_args_step(d, level + 1))");
        inOrder(r.text(), "klap::krecord_seq<klap_args_produce>(klap_ks, {{[^;]*}}(cudaStream_t)(cudaStreamTailLaunch), "
                + "klap_args_produce(d, r, i))");
        assertFalse(Check.hasDiag(r, Severity.NOTE, "stream-serialized"), r.diagnostics().toString());
    }

    // ------------------------------------------------ review of this change (2026-11-27, second round)

    @ParameterizedTest
    @EnumSource(value = Granularity.class, names = {"WARP", "BLOCK"})
    void aFunctorParameterOrAHostLaunchMakesNoCallALaunch(Granularity g) throws IOException {
        // a functor's call and a host launch's <<< are no pointer to a launching function
        var r = run("""
                __global__ void child(int* a, int i) { a[i] += 1; }
                __global__ void child2(int* a, int i) { a[i] *= 2; }
                template <class F>
                __global__ void parent(int* a, int n, F f) {
                  int i = blockIdx.x * blockDim.x + threadIdx.x;
                  if (i >= n) return;
                  child<<<1, 32>>>(a, i);
                  a[i] = f(a[i]);
                  child2<<<1, 32>>>(a, i);
                }
                struct Inc { __device__ int operator()(int x) const { return x + 1; } };
                int main() { parent<<<1, 64>>>((int*) 0, 10, Inc{}); }
                """, g);
        assertEquals(2, r.sites(), r.diagnostics().toString());
        assertTrue(r.diagnostics().stream().noneMatch(d -> d.severity() == Severity.WARNING), r.diagnostics().toString());
        none(r.text(), "klap::warp_group::active()");
    }

    @Test
    void headerHelpersTakingAFunctorAreNotOpaque() throws IOException {
        Files.writeString(dir.resolve("red.cuh"), """
                #pragma once
                template <class T, class Op> __device__ T warp_reduce(T v, Op op) {
                  for (int o = 16; o > 0; o /= 2) v = op(v, __shfl_down_sync(0xffffffffu, v, o));
                  return v;
                }
                struct Plus { __device__ int operator()(int a, int b) const { return a + b; } };
                """);
        var r = run("""
                #include "red.cuh"
                __global__ void child(int* a, int i) { int v = warp_reduce(a[threadIdx.x], Plus{}); if (threadIdx.x == 0) a[i] = v; }
                __global__ void parent(int* a, int n) {
                  int i = blockIdx.x * blockDim.x + threadIdx.x;
                  if (i < n) child<<<1, 32>>>(a, i);
                }
                """, Granularity.BLOCK);
        assertEquals(1, r.sites(), r.diagnostics().toString());
        assertTrue(r.diagnostics().stream().noneMatch(d -> d.severity() == Severity.WARNING), r.diagnostics().toString());
    }

    @ParameterizedTest
    @EnumSource(Granularity.class)
    void indexReadsThroughHeaderTemplatesAndConstructorsAreSeen(Granularity g) throws IOException {
        Files.writeString(dir.resolve("idx.cuh"), """
                #pragma once
                struct Idx { int v; __device__ Idx() : v(threadIdx.x + blockIdx.x * blockDim.x) {} };
                template <class T> __device__ T tid_of(T) { return (T)threadIdx.x; }
                template <class T> __device__ T twice(T x) { return tid_of(x) * 2; }
                __device__ inline int sync_it(int) { __syncthreads(); return 0; }
                """);
        for (String child : List.of("Idx i; a[i.v] = 1;", "a[twice(threadIdx.x)] = 1;")) {
            var r = run("""
                    #include "idx.cuh"
                    __global__ void child(int* a) { CHILD }
                    __global__ void parent(int* a, int n) {
                      int i = blockIdx.x * blockDim.x + threadIdx.x;
                      if (i < n) child<<<1, 32>>>(a + 64 * i);
                    }
                    """.replace("CHILD", child), g);
            assertEquals(0, r.sites(), child + ": " + r.diagnostics());
            assertTrue(Check.hasDiag(r, Severity.WARNING, "child-calls-unseen"), r.diagnostics().toString());
        }
        // a file function of the same name as a header function with a barrier: the barrier counts
        var clash = run("""
                #include "idx.cuh"
                __device__ int sync_it(float x) { return (int)x; }
                __global__ void child(int* a) { a[threadIdx.x] = 1; }
                __global__ void parent(int* a, int n) {
                  int i = blockIdx.x * blockDim.x + threadIdx.x;
                  if (i >= n) return;
                  int t = sync_it(1);
                  child<<<1, 32>>>(a + 64 * i + t);
                }
                """, g);
        none(clash.text(), "if (i >= n) {} else {");
        none(clash.text(), "klap::kfinish(");
    }

    @ParameterizedTest
    @EnumSource(Granularity.class)
    void attributeCallsInMacrosAreRewrittenOnceEach(Granularity g) throws IOException {
        var r = run("""
                #include <cstdio>
                #define CHECK(x) do { if ((x) != cudaSuccess) printf("%s failed: %d\\n", #x, (int)(x)); } while (0)
                #define CALL2(a, b) do { a; b; } while (0)
                __global__ void child(int* a, int i) { extern __shared__ int s[]; s[threadIdx.x] = i; a[i] += s[threadIdx.x]; }
                __global__ void child2(int* a, int i) { a[i] *= 2; }
                __global__ void parent(int* a, int n) {
                  int i = blockIdx.x * blockDim.x + threadIdx.x;
                  if (i >= n) return;
                  child<<<1, 32, 65536>>>(a, i);
                  child2<<<1, 32>>>(a, i);
                }
                int main() {
                  CHECK(cudaFuncSetAttribute(child, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536));
                  CALL2(cudaFuncSetAttribute(child, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536),
                        cudaFuncSetAttribute(/* two */ child2, cudaFuncAttributePreferredSharedMemoryCarveout, 50));
                  return 0;
                }
                """, g);
        assertFalse(r.hasErrors(), r.diagnostics().toString());
        assertTrue(r.diagnostics().stream().noneMatch(d -> d.id().equals("attribute-in-macro")), r.diagnostics().toString());
        String v = g == Granularity.KERNEL ? "kagg" : "agg";
        inOrder(r.text(), "CHECK((cudaFuncSetAttribute(child_klap_" + v, "CALL2((cudaFuncSetAttribute(child_klap_" + v,
                "(cudaFuncSetAttribute(/* two */ child2_klap_" + v);
    }

    /**
     * An overload declared and defined nowhere in the unit (its body in another file), beside a
     * defined overload of the same name that reads the indices: klap matched calls by name, so the
     * variant's {@code gid(2.5f)} became {@code gid(klap_v, 2.5f)}, which called the clone of
     * {@code gid(int)} with 2 (a silent wrong call). The name now counts as a function whose body
     * klap cannot see, and the launch stays as written.
     */
    @ParameterizedTest
    @EnumSource(Granularity.class)
    void anOverloadDefinedInAnotherFileKeepsTheChildAsWritten(Granularity g) throws IOException {
        String code = """
                __device__ int gid(int s) { return (blockIdx.x * blockDim.x + threadIdx.x) * s; }
                __device__ int gid(float x, int k = 0);
                __global__ void child(int* out) { out[gid(1)] = gid(2.5f); }
                __global__ void parent(int* out) { child<<<1, 32>>>(out + 32 * threadIdx.x); }
                """;
        assertTrue(parse(code).deviceFunctionsWithoutBody().contains("gid"));
        var r = run(code, g);
        assertEquals(0, r.sites(), r.diagnostics().toString());
        assertTrue(Check.hasDiag(r, Severity.WARNING, "child-calls-unseen"), r.diagnostics().toString());
        // every overload defined (a prototype and its definition): the launch is aggregated
        var defined = run(code.replace("__device__ int gid(float x, int k = 0);",
                "__device__ int gid(float x, int k = 0);\n__device__ int gid(float x, int k) { return (int)x + k; }"), g);
        assertEquals(1, defined.sites(), defined.diagnostics().toString());
    }

    /**
     * Functions defined outside their namespace ({@code __global__ void a::child(...) {...}}, C++
     * [namespace.memdef]/2): the prototypes klap adds name them unqualified, inside the namespace
     * where the file declares them, or in a {@code namespace a { }} of their own where only a header
     * does (with the record, which a launch names {@code a::klap_args_child}); the definitions keep
     * the qualified name. klap wrote {@code a::child_klap_agg_uu(...);} inside {@code namespace a}
     * (nvcc: "should have been declared inside 'a'") and the record at file scope.
     */
    @ParameterizedTest
    @EnumSource(Granularity.class)
    void declarationsOfFunctionsDefinedOutsideTheirNamespace(Granularity g) throws IOException {
        String body = """
                __global__ void parent(int* p, int n) { if (threadIdx.x == 0) a::child<<<2, 32>>>(p, n); }
                __device__ int a::b::gid(int s) { return (blockIdx.x * blockDim.x + threadIdx.x) * s; }
                __global__ void a::child(int* p, int n) { int i = a::b::gid(); if (i < n) p[i] += a::b::gid(2); }
                int main() { parent<<<1, 32>>>(0, 64); }
                """;
        String decls = "namespace a { namespace b { __device__ int gid(int s = 1); }\n"
                + "__global__ void child(int* p, int n); }\n";
        Files.writeString(dir.resolve("ns.cuh"), "#pragma once\n" + decls);
        Path main = dir.resolve("ns.cu");
        for (String code : new String[] {"#include \"ns.cuh\"\n" + body, decls + body}) {
            Files.writeString(main, code);
            CudaUnit u = CudaParser.parse(main, code, List.of());
            assertFalse(u.hasErrors(), u.diagnostics().toString());
            AggregationPass.Result r = AggregationPass.run(u, new AggregationPass.Options(g, true, null));
            assertEquals(1, r.sites(), r.diagnostics().toString());
            String t = r.text();
            String variant = g == Granularity.KERNEL ? "child_klap_kagg_uu(" : "child_klap_agg_uu(";
            if (code.startsWith("#include")) {
                Check.inOrder(t, "namespace a { /* klap: per-parent-thread arguments of 'child' */", "struct klap_args_child {",
                        "void " + variant, "void parent(", "namespace a::b { __device__ int gid(const klap::vctx& klap_v, int s = 1); }",
                        "__device__ int a::b::gid(int s)", "__device__ int a::b::gid(const klap::vctx& klap_v, int s) {",
                        "void a::child(", "void a:: " + variant);
            } else {
                Check.inOrder(t, "namespace a { namespace b { __device__ int gid(const klap::vctx& klap_v, int s = 1);",
                        "__device__ int gid(int s = 1); }", "struct klap_args_child {", "void " + variant,
                        "__global__ void child(int* p, int n); }", "void parent(", "__device__ int a::b::gid(const klap::vctx& klap_v, int s) {",
                        "void a:: " + variant);
            }
            // the qualified names only on the definitions (klap wrote them on the prototypes too)
            assertEquals(1, Check.count(t, "a:: " + variant), t);
            assertEquals(1, Check.count(t, "int a::b::gid(const klap::vctx& klap_v"), t);
        }
        // a child found through a using-declaration: the record and the variant are named with the
        // child's namespace (the declaration brings only 'child' along)
        String using = decls + "using a::child;\n" + body.replace("a::child<<<", "child<<<");
        Files.writeString(main, using);
        AggregationPass.Result r = AggregationPass.run(CudaParser.parse(main, using, List.of()), new AggregationPass.Options(g, true, null));
        assertEquals(1, r.sites(), r.diagnostics().toString());
        Check.inOrder(r.text(), "void parent(", g == Granularity.KERNEL ? "::a::klap_args_child" : "klap::agg_begin<::a::klap_args_child>",
                g == Granularity.KERNEL ? "::a::child_klap_kagg_uu<<<" : "::a::child_klap_agg_uu<<<");
    }

    /**
     * Review 2026-11-30: a child declared only in a header and defined later in the file, launched
     * first from a class member or from a function in a namespace. klap's record and variants went
     * before the first file-scope function that uses the child, after such a launch (nvcc:
     * identifier "klap_args_child" is undefined); such launches were then left as written
     * ({@code child-declared-later}). Now they go before the outermost declaration that holds the
     * first user ({@link klap.model.FunctionDef#fileScopeStart}: {@code struct S {}), at file scope,
     * and every launch is aggregated.
     */
    @ParameterizedTest
    @EnumSource(Granularity.class)
    void aLaunchInAClassOrNamespaceBeforeTheChildIsDeclaredInTheFile(Granularity g) throws IOException {
        Files.writeString(dir.resolve("kh.cuh"), "#pragma once\n__global__ void child(unsigned* out, int i);\n");
        String code = """
                #include "kh.cuh"
                struct S {
                  __device__ static void go(unsigned* out, int t) { child<<<1, 32>>>(out, t); }
                };
                namespace ns {
                namespace deep {
                __global__ void inner(unsigned* out, int n) { if (threadIdx.x < n) child<<<1, 32>>>(out, 7); }
                }
                }
                __global__ void parent(unsigned* out, int n) {
                  int t = blockIdx.x * blockDim.x + threadIdx.x;
                  if (t < n) S::go(out, t);
                  if (t < n) child<<<2, 32>>>(out, t);
                }
                __global__ void child(unsigned* out, int i) { out[threadIdx.x] = i; }
                """;
        Path main = dir.resolve("later.cu");
        Files.writeString(main, code);
        CudaUnit u = CudaParser.parse(main, code, List.of());
        assertFalse(u.hasErrors(), u.diagnostics().toString());
        AggregationPass.Result r = AggregationPass.run(u, new AggregationPass.Options(g, true, null));
        String d = r.diagnostics().toString();
        assertTrue(r.diagnostics().stream().noneMatch(x -> x.id().endsWith("child-declared-later")), d);
        assertEquals(3, r.sites(), d);
        Check.inOrder(r.text(), "struct klap_args_child", "struct S {", "static void go(", "namespace ns {", "void parent(");
        Check.none(r.text(), "child<<<1, 32>>>(out, t); }");
        // (at kernel granularity 'inner' stays as written beside its twin, for code klap does not see)
        assertEquals(g == Granularity.KERNEL ? 1 : 0, r.text().split("child<<<1, 32>>>\\(out, 7\\)", -1).length - 1, r.text());
        // the child's own namespace function: its declarations stay in its namespace, where it is declared
        String nested = """
                namespace app {
                __global__ void child(unsigned* out, int i);
                struct S { __device__ static void go(unsigned* out, int t) { child<<<1, 32>>>(out, t); } };
                __global__ void child(unsigned* out, int i) { out[threadIdx.x] = i; }
                }
                """;
        Files.writeString(main, nested);
        AggregationPass.Result n = AggregationPass.run(CudaParser.parse(main, nested, List.of()), new AggregationPass.Options(g, true, null));
        assertEquals(1, n.sites(), n.diagnostics().toString());
        Check.inOrder(n.text(), "namespace app {", "struct klap_args_child", "__global__ void child(unsigned* out, int i);", "struct S {");
    }

    /**
     * A child and a parent declared only in an included header and defined after their first use in
     * the file (public code, 2026-11-29): klap's record type and variant prototypes go before the
     * parent that launches the child, and at kernel granularity the twin's prototype (and its arena
     * helper's) before main, whose host launch uses it; they went next to the definitions, after
     * their uses (nvcc: identifier "klap_args_child" is undefined).
     */
    @ParameterizedTest
    @EnumSource(Granularity.class)
    void declarationsGoBeforeTheFirstUseOfAKernelDeclaredInAHeader(Granularity g) throws IOException {
        Files.writeString(dir.resolve("decl.cuh"), "#pragma once\n__global__ void child(int* out, int v);\n"
                + "__global__ void parent(int* out);\n");
        String code = """
                #include "decl.cuh"
                int main() { parent<<<2, 32>>>(0); return 0; }
                __global__ void parent(int* out) {
                  int t = blockIdx.x * blockDim.x + threadIdx.x;
                  child<<<1, 1>>>(out + t, t);
                }
                __global__ void child(int* out, int v) { *out = v; }
                """;
        Path main = dir.resolve("decl.cu");
        Files.writeString(main, code);
        CudaUnit u = CudaParser.parse(main, code, List.of());
        assertFalse(u.hasErrors(), u.diagnostics().toString());
        AggregationPass.Result r = AggregationPass.run(u, new AggregationPass.Options(g, true, null));
        assertFalse(r.hasErrors(), r.diagnostics().toString());
        String t = r.text();
        int parent = t.indexOf("void parent(int* out) {");
        assertTrue(t.indexOf("struct klap_args_child") >= 0 && t.indexOf("struct klap_args_child") < parent, t);
        assertTrue(t.indexOf("void child_klap_") >= 0 && t.indexOf("void child_klap_") < parent, t);
        if (g == Granularity.KERNEL) {
            int mainAt = t.indexOf("int main()");
            assertTrue(t.indexOf("void parent_klap_grid(int* out, klap::kstate* klap_ks);") < mainAt, t);
            assertTrue(t.indexOf("static inline unsigned long long parent_klap_grid_karena(unsigned long long klap_threads);")
                    < mainAt, t);
        }
        // declared in the file before its use: the declarations stay at that declaration
        String early = code.replace("#include \"decl.cuh\"\n", "__global__ void child(int* out, int v);\n"
                + "__global__ void parent(int* out);\n");
        Files.writeString(main, early);
        AggregationPass.Result e = AggregationPass.run(CudaParser.parse(main, early, List.of()),
                new AggregationPass.Options(g, true, null));
        assertTrue(e.text().startsWith("#include \"klap/klap.cuh\""), e.text());
        assertTrue(e.text().indexOf("struct klap_args_child") < e.text().indexOf("__global__ void child(int* out, int v);"),
                e.text());
    }

    /** Classes whose operators, constructor, destructor or conversion read the indices, synchronize or launch. */
    static final String CLASSES = """
            #pragma once
            struct Idx { __device__ unsigned operator()() const { return blockIdx.x; } };
            struct V { unsigned a; __device__ operator unsigned() const { return a + threadIdx.x; } };
            __device__ inline unsigned operator*(V v, unsigned b) { return v.a * b + blockIdx.x; }
            struct W { unsigned v; __device__ W() : v(threadIdx.x) {} };
            struct D { unsigned* o; __device__ ~D() { o[threadIdx.x] = 1; } };
            struct S { unsigned* s; __device__ S& operator+=(unsigned v) { s[threadIdx.x] = v; __syncthreads(); return *this; } };
            struct B0 { unsigned v; __device__ B0() : v(threadIdx.x) {} };
            struct DB : B0 { };
            struct M { unsigned a = threadIdx.x; };
            struct G { D d; };
            struct P3 { float x; };
            __device__ inline P3 operator+(P3 a, P3 b) { return P3{a.x + b.x}; }
            __device__ inline P3& operator+=(P3& a, P3 b) { a.x += b.x; return a; }
            """;

    /**
     * Review 2026-11-29: a child that reads the indices through a call it does not write as one (a
     * functor, an operator, a constructor, a destructor, a conversion function) was aggregated and read
     * the aggregated grid's indices, with the classes in the file and in a header alike. Such a child
     * is left as written; one whose operators only compute (a P3 + P3 next to an S += that reads
     * threadIdx) is aggregated.
     */
    @ParameterizedTest
    @EnumSource(Granularity.class)
    void aChildReadingTheIndicesThroughAnImplicitCallIsLeftAsWritten(Granularity g) throws IOException {
        String parent = """
                __global__ void parent(unsigned* out, int n) {
                  int i = blockIdx.x * blockDim.x + threadIdx.x;
                  if (i < n) child<<<2, 32>>>(out + 64 * i);
                }
                """;
        for (boolean inHeader : List.of(false, true)) {
            Files.writeString(dir.resolve("classes.cuh"), CLASSES);
            String prefix = inHeader ? "#include \"classes.cuh\"\n" : CLASSES.replace("#pragma once\n", "");
            // also what the compiler's constructors and destructors run: a base's constructor, a default
            // member initializer, a member's destructor, a temporary's destructor
            for (String body : List.of("Idx x; out[x()] = 1;", "V v{1}; out[v * 2u] = 1;", "W w; out[w.v] = 1;",
                    "D d{out};", "V v{1}; unsigned u = v; out[u] = 1;", "DB b; out[b.v] = 1;", "M m; out[m.a] = 1;",
                    "G g{D{out}};", "(void) D{out};")) {
                var r = run(prefix + "__global__ void child(unsigned* out) { " + body + " }\n" + parent, g);
                assertEquals(0, r.sites(), body + ": " + r.diagnostics());
                assertTrue(Check.hasDiag(r, Severity.WARNING, "child-calls-unseen"), body + ": " + r.diagnostics());
            }
            // a header's operator is told apart from another class's operator of the same name (the function
            // called, not its name); the file's own operators are matched by name, conservatively: P3's
            // operator += counts as S's there, so the same child is left as written when both are in the file
            var pure = run(prefix + "__global__ void child(unsigned* out) { P3 a{1}, b{2}; P3 c = a + b; c += a; "
                    + "out[threadIdx.x] = (unsigned) c.x; }\n" + parent, g);
            assertEquals(inHeader ? 1 : 0, pure.sites(), pure.diagnostics().toString());
            assertEquals(!inHeader, Check.hasDiag(pure, Severity.WARNING, "child-calls-unseen"), pure.diagnostics().toString());
        }
        var pureInFile = run(CLASSES.substring(CLASSES.indexOf("struct P3")) + "__global__ void child(unsigned* out) { "
                + "P3 a{1}, b{2}; P3 c = a + b; c += a; out[threadIdx.x] = (unsigned) c.x; }\n" + parent, g);
        assertEquals(1, pureInFile.sites(), pureInFile.diagnostics().toString());
        assertTrue(pureInFile.diagnostics().stream().noneMatch(d -> d.severity() == Severity.WARNING),
                pureInFile.diagnostics().toString());
    }

    /**
     * Review 2026-11-29: an operator with a barrier after a guarded return did not stop the guard
     * rewrite (the issue-10 hang), and one that launches overtook an earlier deferred launch of the same
     * thread at kernel granularity; an operator that only computes changes nothing.
     */
    @ParameterizedTest
    @EnumSource(Granularity.class)
    void anOperatorThatSynchronizesOrLaunchesIsASynchronizationSiteOrALaunch(Granularity g) throws IOException {
        Files.writeString(dir.resolve("classes.cuh"), CLASSES);
        String head = """
                #include "classes.cuh"
                __global__ void child(unsigned* out) { out[threadIdx.x] = 1; }
                __global__ void parent(unsigned* out, int n) {
                  __shared__ unsigned sh[1024];
                  int i = blockIdx.x * blockDim.x + threadIdx.x;
                  if (i >= n) return;
                """;
        var sync = run(head + "  S x{sh}; x += 3u;\n  child<<<1, 32>>>(out + 32 * i);\n}\n", g);
        assertEquals(1, sync.sites(), sync.diagnostics().toString());
        none(sync.text(), "if (i >= n) {} else {");
        none(sync.text(), "klap::kfinish(");
        inOrder(sync.text(), "if (i >= n) return;", "klap::warp_group::active()");
        var pure = run(head + "  P3 a{1}; a += a; sh[threadIdx.x] = (unsigned) a.x;\n  child<<<1, 32>>>(out + 32 * i);\n}\n", g);
        assertEquals(1, pure.sites(), pure.diagnostics().toString());
        assertTrue(pure.diagnostics().stream().noneMatch(d -> d.severity() == Severity.WARNING), pure.diagnostics().toString());

        var order = run("""
                __global__ void a(int* p) { p[threadIdx.x] = 1; }
                __global__ void b(int* p) { p[threadIdx.x] *= 2; }
                struct L { int* p; __device__ L& operator+=(int k) { b<<<1, 32>>>(p + k); return *this; } };
                __global__ void parent(int* p, int n) {
                  int c = p[threadIdx.x];
                  a<<<1, 32>>>(p);
                  L l{p}; l += c;
                }
                """, g);
        // a goes out before the operator's launch of b: flushed before it, never at the grid's end
        inOrder(order.text(), "klap_args_a(p)", ".flush(", "L l{p}; l += c;");
        none(order.text().substring(order.text().indexOf("void parent(int* p, int n)")), "klap::kfinish(");
    }

    /**
     * A host lambda's launches are host launches: a call through a functor in device code does not
     * count as a launch because of one (the rule that a call through a variable may reach any lambda
     * of the unit takes device code's lambdas and extended {@code __device__} lambdas only).
     */
    @ParameterizedTest
    @EnumSource(Granularity.class)
    void aHostLambdaThatLaunchesDoesNotMakeDeviceCallsThroughVariablesLaunch(Granularity g) throws IOException {
        String code = """
                __global__ void child(int* p) { p[threadIdx.x] = 1; }
                template <typename Op> __device__ int apply(Op op, int v) { return op(v); }
                struct Twice { __device__ int operator()(int v) const { return 2 * v; } };
                __global__ void parent(int* p, int n) {
                  int i = blockIdx.x * blockDim.x + threadIdx.x;
                  child<<<1, 32>>>(p + 32 * i);
                  p[i] = apply(Twice{}, i);
                }
                int main() {
                  int* p = nullptr;
                  auto run = [&] { parent<<<1, 32>>>(p, 32); };
                  run();
                  return 0;
                }
                """;
        var r = run(code, g);
        assertEquals(1, r.sites(), r.diagnostics().toString());
        assertTrue(r.diagnostics().stream().noneMatch(d -> d.id().equals("launch-order")), r.diagnostics().toString());
        var ext = run(code.replace("auto run = [&] {", "auto dev = [=] __device__ (int* q) { child<<<1, 32>>>(q); };\n"
                + "  auto run = [&] {"), g);
        if (g == Granularity.KERNEL) {
            // an extended __device__ lambda may reach apply's op: the launch before the call goes out first
            assertTrue(ext.diagnostics().stream().anyMatch(d -> d.id().equals("launch-order")), ext.diagnostics().toString());
        }
    }

    /**
     * Review 2026-11-29: a parent's argument computed by an overloaded operator. {@code a + b} whose
     * {@code operator+} reads {@code threadIdx}, and {@code acc << t} whose non-const member writes
     * {@code acc}, were scalarized (passed as one lane's value); and every non-member operator that
     * reads the indices got a clone with a {@code klap_v} parameter more, which nvcc rejects ("too many
     * parameters for this operator function"), at every granularity.
     */
    @ParameterizedTest
    @EnumSource(Granularity.class)
    void operatorsInTheParentAreCallsAndGetNoClone(Granularity g) {
        var r = Check.run("""
                struct V { int x; };
                struct Acc { int s; __device__ Acc& operator<<(int v) { s += v; return *this; } };
                __device__ V operator+(V a, V b) { V r; r.x = a.x + b.x + threadIdx.x; return r; }
                __global__ void child(int* out, int s, int t) { out[threadIdx.x] = s + t; }
                __global__ void parent(int* out) {
                  V a; a.x = 1; V b; b.x = 2;
                  V c = a + b;
                  Acc acc; acc.s = 0; acc << (int)threadIdx.x;
                  child<<<1, 32>>>(out + 32 * threadIdx.x, c.x, acc.s);
                }
                """, g);
        assertEquals(1, r.sites(), r.diagnostics().toString());
        inOrder(r.text(), "child_klap_{{k?}}agg_vvv");
        none(r.text(), "vctx& klap_v, V a", "child_klap_{{k?}}agg_v{{[uv]*}}u");
    }

    /**
     * Review 2026-11-29 (seventh session) of the operator change: each parent passes a per-thread value
     * that klap still took as uniform ({@code child_klap_agg_uu}): a conversion inside parentheses (the
     * model reads {@code (l)} as {@code l}), a conversion to a template parameter ({@code operator T()},
     * which CDT names {@code operator #0}), a non-const conversion of an overloaded operator's operand,
     * an operator inside a macro, a user-defined literal, a non-const {@code operator->}, a functor
     * parameter, a functor local named {@code max}, the user's own {@code max}, a conversion in a
     * template parent; and the children that read the indices through a template's conversion.
     */
    @ParameterizedTest
    @EnumSource(Granularity.class)
    void operatorsAndConversionsTheFirstChangeMissed(Granularity g) {
        String child = "__global__ void child(int* out, int s) { out[threadIdx.x] = s; }\n";
        String lane = "struct Lane { int base; __device__ operator int() const { return base + threadIdx.x; } };\n";
        String tick = "struct Tick { int n; __device__ operator int() { n += threadIdx.x; return n; } };\n";
        List<String> parents = List.of(
                lane + child + "__global__ void parent(int* out) { Lane l; l.base = 5; int v = (l); child<<<1, 32>>>(out, v); }",
                tick + child + "__global__ void parent(int* out) { Tick t; t.n = 0; int v = (t); child<<<1, 32>>>(out, t.n); }",
                "template <class T> struct Wrap { T b; __device__ operator T() const { return b + threadIdx.x; } };\n" + child
                        + "__global__ void parent(int* out) { Wrap<int> w; w.b = 5; int v = w; child<<<1, 32>>>(out, v); }",
                "struct L2 { int base; template <class T> __device__ operator T() const { return base + threadIdx.x; } };\n"
                        + child + "__global__ void parent(int* out) { L2 l; l.base = 5; int v = l; child<<<1, 32>>>(out, v); }",
                tick + "struct Foo { int z; }; __device__ int operator+(const Foo& f, int x) { return f.z + x; }\n" + child
                        + "__global__ void parent(int* out) { Tick t; t.n = 0; Foo f; f.z = 1; int v = f + t; child<<<1, 32>>>(out, t.n); }",
                "struct V { int x; }; __device__ V operator+(V a, V b) { V r; r.x = a.x + b.x + threadIdx.x; return r; }\n"
                        + "#define ADD(p, q) ((p) + (q))\n" + child
                        + "__global__ void parent(int* out) { V a; a.x = 1; V b; b.x = 2; V c = ADD(a, b); child<<<1, 32>>>(out, c.x); }",
                "__device__ int operator\"\" _lane(unsigned long long v) { return (int)v + threadIdx.x; }\n" + child
                        + "__global__ void parent(int* out) { int v = 5_lane; child<<<1, 32>>>(out, v); }",
                "struct Self { int v; __device__ Self* operator->() { return this; } };\n" + child
                        + "__global__ void parent(int* out) { Self s; s.v = 0; s->v = threadIdx.x; child<<<1, 32>>>(out, s.v); }",
                "struct F { int s; __device__ void operator()(int x) { s += x; } };\n" + child
                        + "__global__ void parent(int* out, F f) { f(threadIdx.x); child<<<1, 32>>>(out, f.s); }",
                "struct F { __device__ int operator()(int a, int b) const { return a + b + threadIdx.x; } };\n" + child
                        + "__global__ void parent(int* out) { F max; int v = max(1, 2); child<<<1, 32>>>(out, v); }",
                "struct V { int x; }; __device__ int max(V a, V b) { return a.x + threadIdx.x; }\n" + child
                        + "__global__ void parent(int* out) { V a; a.x = 1; int v = max(a, a); child<<<1, 32>>>(out, v); }",
                lane + child + "template <class T> __global__ void parent(int* out, T l) { int v = l; child<<<1, 32>>>(out, v); }\n"
                        + "template __global__ void parent<Lane>(int*, Lane);");
        for (String src : parents) {
            var r = Check.run(src, g);
            assertEquals(1, r.sites(), src + "\n" + r.diagnostics());
            inOrder(r.text(), "child_klap_{{k?}}agg_uv");
            none(r.text(), "child_klap_{{k?}}agg_uu");
        }
        for (String src : List.of(
                "template <class T> struct Wrap { T b; __device__ operator T() const { return b + threadIdx.x; } };\n"
                        + "__global__ void child(int* out, int s) { Wrap<int> w; w.b = s; int v = w; out[v] = 1; }\n"
                        + "__global__ void parent(int* out, int n) { child<<<1, 32>>>(out, n); }",
                "template <class T> __device__ int g(T t) { return t + 0; }\n" + lane
                        + "__global__ void child(int* out, Lane l) { out[g(l)] = 1; }\n"
                        + "__global__ void parent(int* out, int n) { Lane l; l.base = n; child<<<1, 32>>>(out, l); }",
                "struct V { int x; }; __device__ V operator+(V a, V b) { V r; r.x = a.x + b.x + threadIdx.x; return r; }\n"
                        + "__global__ void child(int* out, int s) { V a; a.x = s; V b; b.x = 0; out[operator+(a, b).x] = 1; }\n"
                        + "__global__ void parent(int* out, int n) { child<<<1, 32>>>(out, n); }")) {
            var r = Check.run(src, g);
            assertEquals(0, r.sites(), "the child reads the indices: left as written\n" + src + "\n" + r.text());
        }
    }

    /** Review 2026-11-29: a barrier in a class template's {@code operator T()} after a guarded return stops the guard rewrite. */
    @Test
    void aBarrierInATemplatesConversionAfterAGuardedReturn() {
        var r = Check.run("""
                template <class T> struct Wrap { T b; __device__ operator T() const { __syncthreads(); return b; } };
                __global__ void child(int* out, int s) { out[threadIdx.x] = s; }
                __global__ void parent(int* out, int n) {
                  int i = blockIdx.x * blockDim.x + threadIdx.x;
                  if (i >= n) return;
                  Wrap<int> w; w.b = 1; int v = w; out[0] = v;
                  child<<<1, 32>>>(out + i, 1);
                }
                """, Granularity.BLOCK);
        assertTrue(Check.hasDiag(r, Severity.WARNING, "granularity-fallback"), r.diagnostics().toString());
        none(r.text(), "if (i >= n) {} else");
    }

    /**
     * Review 2026-11-29 (docs/robustness.md, "Bugs found", item 13): a collective of a library klap
     * reads no header of (cooperative groups, CUB), after a thread-dependent return, in the parent or in
     * a project header's helper, kept the guard rewrite at warp and block granularity and sent the
     * returned threads on to {@code kfinish}'s barrier at kernel granularity (threads that returned, kept
     * alive, met klap's barrier or shuffles while the others were in the library's). The guard now stays
     * as written: the launch is aggregated in place per warp.
     */
    @ParameterizedTest
    @EnumSource(Granularity.class)
    void libraryCollectivesAfterAGuardedReturnKeepTheReturn(Granularity g) throws IOException {
        Files.writeString(dir.resolve("cubsum.cuh"), """
                #pragma once
                #include <cub/block/block_reduce.cuh>
                __device__ inline int block_total(int x, int valid) {
                  using BR = cub::BlockReduce<int, 128>;
                  __shared__ typename BR::TempStorage t;
                  return BR(t).Sum(x, valid);
                }
                """);
        List<String> forms = List.of("int s = tile.shfl(x, 0);", "int s = (int)tile.ballot(x > 3);",
                "int s = cg::reduce(tile, x, cg::plus<int>());", "int s = x; cg::wait_prior<1>(block);",
                "using BR = cub::BlockReduce<int, 128>; __shared__ typename BR::TempStorage tmp; int s = BR(tmp).Sum(x, n);",
                "using WR = cub::WarpReduce<int>; __shared__ typename WR::TempStorage tmp[4]; int s = WR(tmp[threadIdx.x / 32]).Sum(x);",
                "int s = block_total(x, n);");
        for (String form : forms) {
            var r = run("""
                    #include <cooperative_groups.h>
                    #include <cooperative_groups/reduce.h>
                    #include <cub/warp/warp_reduce.cuh>
                    #include "cubsum.cuh"
                    namespace cg = cooperative_groups;
                    __global__ void child(int* out, int v) { out[threadIdx.x] = v; }
                    __global__ void parent(int* out, const int* in, int n) {
                      cg::thread_block block = cg::this_thread_block();
                      auto tile = cg::tiled_partition<32>(block);
                      int i = blockIdx.x * blockDim.x + threadIdx.x;
                      if (i >= n) return;
                      int x = in[i];
                      FORM
                      child<<<1, 32>>>(out + i * 32, s);
                    }
                    """.replace("FORM", form), g);
            assertEquals(1, r.sites(), form + ": " + r.diagnostics());
            assertTrue(r.text().contains("if (i >= n) return;"), form + ": the guard was rewritten at " + g);
            none(r.text(), "if (i >= n) {} else");
            assertTrue(r.text().contains("klap::warp_group::active()"), form + ": not aggregated in place at " + g);
            if (g != Granularity.WARP) {
                assertTrue(Check.hasDiag(r, Severity.WARNING, "granularity-fallback"), form + ": " + r.diagnostics());
            }
        }
    }

    /**
     * Review 2026-11-29: a CUB device-wide algorithm called after a launch of the same thread launches
     * its own kernels there (CUB in device code of a relocatable build): the launch before it is made
     * in place, as before any launch of the thread, not deferred past it (it was, at every granularity).
     */
    @ParameterizedTest
    @EnumSource(Granularity.class)
    void aCubDeviceWideAlgorithmIsALaunchOfTheThread(Granularity g) throws IOException {
        var r = run("""
                #include <cub/device/device_reduce.cuh>
                __global__ void produce(int* a) { a[threadIdx.x] = threadIdx.x; }
                __global__ void parent(int* a, int* out, void* tmp, size_t bytes, int n) {
                  int i = blockIdx.x * blockDim.x + threadIdx.x;
                  if (i < n) {
                    produce<<<1, 32>>>(a + i * 32);
                    cub::DeviceReduce::Sum(tmp, bytes, a + i * 32, out + i, 32);
                  }
                }
                """, g);
        assertEquals(1, r.sites(), r.diagnostics().toString());
        assertTrue(Check.hasDiag(r, Severity.WARNING, "launch-order"), r.diagnostics().toString());
        assertTrue(r.text().contains("klap::warp_group::active()"), r.text());
    }

    /**
     * Review 2026-11-29: a child that reads the hardware grid's indices inside a library klap reads no
     * header of (libcu++'s {@code cuda::ptx::get_sreg_ctaid_x()}, CUB's {@code GridEvenShare::BlockInit})
     * was aggregated and read the aggregated grid's. It is left as written now; a function of the file
     * with such a name is judged by its body.
     */
    @ParameterizedTest
    @EnumSource(Granularity.class)
    void libraryIndexReadersInAChildAreSeen(Granularity g) throws IOException {
        for (String body : List.of("unsigned b = cuda::ptx::get_sreg_ctaid_x(); out[b] = 1;",
                "out[get_sreg_tid_y()] = 1;",
                "cub::GridEvenShare<int> es; es.DispatchInit(64, 4, 32); es.BlockInit(); out[es.block_offset] = 1;")) {
            var r = run("""
                    #include <cuda/ptx>
                    #include <cub/grid/grid_even_share.cuh>
                    using namespace cuda::ptx;
                    __global__ void child(int* out) { BODY }
                    __global__ void parent(int* out, int n) {
                      int i = blockIdx.x * blockDim.x + threadIdx.x;
                      if (i < n) child<<<2, 32>>>(out + i * 64);
                    }
                    """.replace("BODY", body), g);
            assertEquals(0, r.sites(), body + ": " + r.diagnostics());
            assertTrue(Check.hasDiag(r, Severity.WARNING, "child-calls-unseen"), body + ": " + r.diagnostics());
        }
        var own = run("""
                __device__ unsigned get_sreg_ctaid_x() { return 7u; }
                __global__ void child(int* out) { out[get_sreg_ctaid_x() + threadIdx.x] = 1; }
                __global__ void parent(int* out, int n) {
                  int i = blockIdx.x * blockDim.x + threadIdx.x;
                  if (i < n) child<<<2, 32>>>(out + i * 64);
                }
                """, g);
        assertEquals(1, own.sites(), own.diagnostics().toString());
    }
}
