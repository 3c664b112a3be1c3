package klap.fuzz;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One test per row of {@code docs/constructs.md}: the real CLI on a snippet, at warp, block and kernel
 * granularity, with the documented outcome (transformed / transformed with warning {@code klap-ID} at
 * line:col / left unchanged with a warning / refused with error {@code klap-ID} at line:col). Every
 * run also checks that the input is unchanged, that no temporary file is left, and that an output
 * file exists exactly when the exit code is 0. The helpers take the granularities they check; a row
 * whose kernel-granularity outcome differs checks it separately.
 */
class ConstructsTableTest {
    @TempDir
    Path dir;

    /** Warp and block granularity (the table's first outcome column). */
    static final String[] WB = {"warp", "block"};
    /** All three granularities. */
    static final String[] ALL = {"warp", "block", "kernel"};
    static final String[] KERNEL = {"kernel"};

    /** The outcome of one run: what klap printed and wrote. */
    record Outcome(Cli.Run run, String input, String output) {
        long warnings() {
            return run.err().lines().filter(l -> l.contains(": warning: ")).count();
        }

        long errors() {
            return run.err().lines().filter(l -> l.contains(": error: ")).count();
        }

        long notes() {
            // the per-file summary (how many sites were aggregated) is not a diagnostic of a construct
            return run.err().lines().filter(l -> l.contains(": note: ") && !l.endsWith("[klap-summary]")).count();
        }
    }

    private Outcome klap(String granularity, String name, String src) throws IOException {
        Path in = dir.resolve(name);
        Files.writeString(in, src);
        String before = Cli.sha256(in);
        Path out = dir.resolve("out-" + granularity).resolve(name);
        Files.deleteIfExists(out);
        Cli.Run r = Cli.klap("--granularity=" + granularity, in.toString(), "-o", out.toString());
        assertFalse(r.crashed(), r.toString());
        assertEquals(before, Cli.sha256(in), "the input was modified");
        Cli.assertNoTempFiles(out.getParent());
        assertEquals(r.rc() == 0, Files.exists(out), "an output file must exist exactly when klap succeeds: " + r);
        return new Outcome(r, src, r.rc() == 0 ? Files.readString(out) : null);
    }

    private static String[] nonEmpty(String[] granularities) {
        assertTrue(granularities.length > 0, "name the granularities to check");
        return granularities;
    }

    /**
     * Asserts that {@code out} holds the aggregated variant of granularity {@code g}: {@code *_klap_agg_*}
     * at warp/block, {@code *_klap_kagg_*} launched by the parent grid's last block ({@code klap::kfinish})
     * at kernel.
     */
    private static void assertAggregated(String g, String out) {
        if (g.equals("kernel")) {
            assertTrue(out.contains("_klap_kagg_") && out.contains("klap::kfinish("), "no kernel-wide variant:\n" + out);
        } else {
            assertTrue(out.contains("_klap_agg_"), "no aggregated variant at " + g + ":\n" + out);
        }
    }

    /**
     * Transformed without any diagnostic (warning, error or note) at each of {@code granularities};
     * returns the outputs by granularity.
     */
    private Map<String, String> transformed(String name, String src, String... granularities) throws IOException {
        Map<String, String> outs = new LinkedHashMap<>();
        for (String g : nonEmpty(granularities)) {
            Outcome o = klap(g, name, src);
            assertEquals(0, o.run().rc(), o.run().toString());
            assertEquals(0, o.warnings() + o.errors() + o.notes(), "expected no diagnostics at " + g + ": " + o.run());
            assertAggregated(g, o.output());
            outs.put(g, o.output());
        }
        return outs;
    }

    /** Transformed with exactly one diagnostic, {@code kind} {@code id} at line:col; returns the outputs. */
    private Map<String, String> transformedWith(String kind, String name, String src, int line, int col, String id,
            String... granularities) throws IOException {
        Map<String, String> outs = new LinkedHashMap<>();
        for (String g : nonEmpty(granularities)) {
            Outcome o = klap(g, name, src);
            assertEquals(0, o.run().rc(), o.run().toString());
            assertEquals(1, o.warnings() + o.errors() + o.notes(), "expected exactly one diagnostic at " + g + ": " + o.run());
            assertDiagnostic(o, kind, name, line, col, id);
            assertAggregated(g, o.output());
            outs.put(g, o.output());
        }
        return outs;
    }

    private void assertDiagnostic(Outcome o, String kind, String name, int line, int col, String id) {
        String where = dir.resolve(name) + ":" + line + ":" + col + ": " + kind + ": ";
        assertTrue(o.run().err().lines().anyMatch(l -> l.startsWith(where) && l.endsWith("[klap-" + id + "]")),
                "expected '" + where + "... [klap-" + id + "]' in:\n" + o.run().err());
    }

    /** Left unchanged with warning {@code id} at each of {@code granularities}. */
    private void unchangedWithWarning(String name, String src, int line, int col, String id, String... granularities)
            throws IOException {
        for (String g : nonEmpty(granularities)) {
            Outcome o = klap(g, name, src);
            assertEquals(0, o.run().rc(), o.run().toString());
            assertDiagnostic(o, "warning", name, line, col, id);
            assertFalse(o.output().contains("_klap_agg") || o.output().contains("_klap_kagg"),
                    "expected the launch not to be aggregated at " + g);
        }
    }

    /** Refused with error {@code id} at each of {@code granularities} (exit 1, no output). */
    private void refused(String name, String src, int line, int col, String id, String... granularities)
            throws IOException {
        for (String g : nonEmpty(granularities)) {
            Outcome o = klap(g, name, src);
            assertEquals(1, o.run().rc(), o.run().toString());
            assertDiagnostic(o, "error", name, line, col, id);
        }
    }

    /**
     * Aggregated per warp: silent at warp granularity, warning {@code granularity-fallback} at block and
     * kernel granularity (whichever of {@code granularities} are given).
     */
    private void warpFallback(String name, String src, int line, int col, String... granularities) throws IOException {
        for (String g : nonEmpty(granularities)) {
            Outcome o = klap(g, name, src);
            assertEquals(0, o.run().rc(), o.run().toString());
            if (g.equals("warp")) {
                assertEquals(0, o.warnings(), o.run().toString());
            } else {
                assertDiagnostic(o, "warning", name, line, col, "granularity-fallback");
                assertTrue(o.output().contains("klap::warp_group::active()"), "expected a per-warp launch at " + g);
            }
            assertTrue(o.output().contains("_klap_agg_"), "expected the per-warp variant at " + g);
            assertFalse(o.output().contains("_klap_kagg_"), "expected no kernel-wide variant at " + g);
        }
    }

    static final String CHILD = "__global__ void child(int* p) { p[threadIdx.x] = 1; }\n";


    // ------------------------------------------------------------------ rows of docs/constructs.md

    @Test
    void launchStatementInKernel() throws IOException {
        Map<String, String> out = transformed("plain.cu", CHILD + """
                __global__ void parent(int* p) {
                  child<<<1, 32>>>(p + 32 * threadIdx.x);
                }
                int main() { parent<<<1, 32>>>(0); return 0; }
                """, ALL);
        assertTrue(out.get("block").contains("parent<<<1, 32, 0, klap::host_prepare(0, klap::host_warps(1, 32))>>>(0);"),
                "the host launch of the parent sizes the pending-launch limit:\n" + out.get("block"));
        String k = out.get("kernel");
        // the kernel keeps its signature; its kernel-granularity twin gets the state parameter
        assertTrue(k.contains("__global__ void parent(int* p) {"), k);
        assertTrue(k.contains("__global__ __launch_bounds__(1024) void parent_klap_grid(int* p, klap::kstate* klap_ks)\n"), k);
        // with the launch as written, for when klap's pool has no room for the record (issue 11)
        assertTrue(k.contains("klap::krecord<klap_args_child>(klap_ks, 0u, dim3(1), dim3(32), 0u, (cudaStream_t)0, "
                + "klap_args_child(p + 32 * threadIdx.x), [&](dim3 klap_grid, dim3 klap_block, unsigned klap_smem, "
                + "cudaStream_t klap_stream, const klap_args_child& klap_a) -> cudaError_t { cudaError_t klap_pre = "
                + "cudaPeekAtLastError(); child<<<klap_grid, klap_block, klap_smem, klap_stream>>>(klap_a.p); "
                + "return klap::launch_result(klap_pre); });"), k);
        assertTrue(k.contains("parent_klap_grid<<<1, 32, 0, klap::host_prepare(0, klap::host_warps(1, 32))>>>(0, klap::host_kstate(1, parent_klap_grid_karena)), klap::host_kstate_done());"), k);
    }

    @Test
    void launchWithSpacedChevrons() throws IOException {
        Map<String, String> out = transformed("spaced.cu", CHILD + """
                __global__ void parent(int* p) {
                  child << <1, 32 >> > (p + 32 * threadIdx.x);
                  child <<\t<1, 32>>
                    >(p);
                }
                int main() { parent << <1, 32 >> > (0); return 0; }
                """, ALL);
        assertTrue(out.get("block").contains("parent << <1, 32, 0, klap::host_prepare(0, klap::host_warps(1, 32)) >> > (0);"),
                out.get("block"));
        assertEquals(2, out.get("block").split("klap_s[0-9]+\\.record\\(", -1).length - 1, out.get("block"));
        assertEquals(2, out.get("kernel").split("klap::krecord<", -1).length - 1, out.get("kernel"));
    }

    @Test
    void launchInMacro() throws IOException {
        unchangedWithWarning("macro.cu", CHILD + """
                #define LAUNCH(p) child<<<1, 32>>>(p)
                __global__ void parent(int* p) {
                  LAUNCH(p + threadIdx.x);
                }
                """, 4, 3, "launch-in-macro", ALL);
    }

    @Test
    void launchInMacroBesideALaunchWrittenOut() throws IOException {
        for (String g : ALL) {
            Outcome o = klap(g, "macro2.cu", CHILD + """
                    #define LAUNCH(p) child<<<1, 32>>>(p)
                    __global__ void parent(int* p) {
                      LAUNCH(p + threadIdx.x);
                      child<<<1, 32>>>(p + 32 * threadIdx.x);
                    }
                    """);
            assertEquals(0, o.run().rc(), o.run().toString());
            assertDiagnostic(o, "warning", "macro2.cu", 4, 3, "launch-in-macro");
            assertTrue(o.output().contains("  LAUNCH(p + threadIdx.x);\n"), "the macro's launch stays as written:\n" + o.output());
            // the launch written out is still aggregated: the refusal is the macro's launch only
            assertTrue(o.output().contains("_klap_agg_"), "expected the other launch aggregated at " + g + ":\n" + o.output());
            if (g.equals("kernel")) {
                // the macro's launch goes out at once from its block: the later one may not wait for the last block
                assertDiagnostic(o, "warning", "macro2.cu", 5, 3, "launch-order");
            }
        }
    }

    @Test
    void launchThroughFunctionPointer() throws IOException {
        unchangedWithWarning("fptr.cu", CHILD + """
                __global__ void parent(int* p) {
                  void (*fp)(int*) = child;
                  fp<<<1, 32>>>(p + threadIdx.x);
                }
                """, 4, 3, "child-not-defined", ALL);
    }

    /**
     * An object-like macro that names the kernel ({@code K<<<...>>>}, also through a second macro, a
     * namespace and template arguments): the kernel is the one the macro expands to, so the launch is
     * aggregated, and a host launch so written reaches the kernel-granularity twin (it was "child
     * kernel 'K' is not defined", and the host launch got no state: 2026-11-28).
     */
    @Test
    void kernelNamedByAMacro() throws IOException {
        Map<String, String> out = transformed("kmacro.cu", """
                namespace ns { template <typename T> __global__ void child(T* p) { p[threadIdx.x] = 1; } }
                #define KID ns::child<int>
                #define K KID
                #define PARENT parent
                __global__ void parent(int* p) {
                  K<<<1, 32>>>(p + 32 * threadIdx.x);
                }
                int main() { PARENT<<<1, 32, 64>>>(0); return 0; }
                """, ALL);
        assertTrue(out.get("block").contains("PARENT<<<1, 32, klap::host_smem(parent, 64), klap::host_prepare(0, "
                + "klap::host_warps(1, 32))>>>(0);"), out.get("block"));
        assertTrue(out.get("block").contains("ns::klap_args_child<int>"), out.get("block"));
        String k = out.get("kernel");
        assertTrue(k.contains("(parent_klap_grid<<<1, 32, klap::host_smem(parent_klap_grid, 64), klap::host_prepare(0, "
                + "klap::host_warps(1, 32))>>>(0, klap::host_kstate(1, parent_klap_grid_karena)), klap::host_kstate_done());"), k);
        // the launch as written, for a full pool, still launches the kernel the macro names
        assertTrue(k.contains("ns::child<int><<<klap_grid, klap_block, klap_smem, klap_stream>>>(klap_a.p);"), k);
    }

    @Test
    void launchInDeviceFunction() throws IOException {
        String src = CHILD + """
                __device__ void launch(int* p) { child<<<1, 32>>>(p); }
                __global__ void parent(int* p) {
                  launch(p + threadIdx.x);
                }
                """;
        warpFallback("devfn.cu", src, 2, 34, ALL);
        Outcome k = klap("kernel", "devfn.cu", src);
        assertTrue(k.run().err().contains("aggregated per warp, not per kernel"), k.run().err());
        assertTrue(k.output().contains("__global__ __launch_bounds__(1024) void parent(int* p) {"), "no state parameter without a kernel-wide site");
    }

    @Test
    void launchInHostDeviceFunction() throws IOException {
        unchangedWithWarning("hostdevice.cu", CHILD + """
                __host__ __device__ void launch(int* p) { child<<<1, 32>>>(p); }
                __global__ void parent(int* p) { launch(p + threadIdx.x); }
                """, 2, 43, "launch-host-device", ALL);
    }

    /** Open issue (docs/robustness.md): left unchanged without any diagnostic. */
    @Test
    void launchInLambda() throws IOException {
        String src = CHILD + """
                __global__ void parent(int* p) {
                  auto f = [=] __device__ (int i) { child<<<1, 32>>>(p + i); };
                  f(threadIdx.x);
                }
                """;
        unchangedWithWarning("lambda.cu", src, 3, 12, "launch-in-lambda", ALL);
        for (String g : ALL) {
            assertEquals(src, klap(g, "lambda.cu", src).output(), "the lambda's launch is left as written");
        }
    }

    @Test
    void launchWhoseFullBufferErrorTheKernelHandles() throws IOException {
        String src = CHILD + """
                __global__ void parent(int* p, int* retry) {
                  child<<<1, 32, 0, cudaStreamFireAndForget>>>(p + 32 * threadIdx.x);
                  cudaError_t err = cudaGetLastError();
                  if (err == cudaErrorLaunchPendingCountExceeded) atomicAdd(retry, 1);
                }
                """;
        unchangedWithWarning("recover.cu", src, 3, 3, "launch-error-recovery", ALL);
        for (String g : ALL) {
            assertEquals(src, klap(g, "recover.cu", src).output(), "the launch is left exactly as written");
        }
    }

    @Test
    void pointerIntoTheParentsSharedOrLocalMemory() throws IOException {
        for (String arg : new String[] {"s", "&v"}) {
            String src = CHILD + """
                    __global__ void parent(int* p) {
                      __shared__ int s[32]; int v = 1;
                      s[threadIdx.x % 32] = v;
                      child<<<1, 32>>>(ARG);
                    }
                    """.replace("ARG", arg);
            unchangedWithWarning("parentmem.cu", src, 5, 3, "child-arg-parent-memory", ALL);
            for (String g : ALL) {
                assertEquals(src, klap(g, "parentmem.cu", src).output(), "the launch is left exactly as written");
            }
        }
    }

    @Test
    void codeUnderCudaArchInAKernel() throws IOException {
        String src = CHILD + """
                __global__ void parent(int* p) {
                #if __CUDA_ARCH__ >= 700
                  if (threadIdx.x >= 16) return;
                #endif
                  child<<<1, 32>>>(p + threadIdx.x);
                }
                """;
        unchangedWithWarning("arch.cu", src, 3, 1, "cuda-arch", ALL);
        for (String g : ALL) {
            assertEquals(src, klap(g, "arch.cu", src).output(), "the kernel is left exactly as written");
        }
    }

    @Test
    void codeUnderCudaArchAtFileScope() throws IOException {
        // a function defined under a file-scope conditional, and a kernel that uses it (review 2026-12-01)
        String src = CHILD + """
                #ifdef __CUDA_ARCH__
                __device__ int lane_base() { return threadIdx.x; }
                #else
                __device__ int lane_base() { return 0; }
                #endif
                __global__ void parent(int* p) {
                  child<<<1, 32>>>(p + lane_base());
                }
                """;
        unchangedWithWarning("arch2.cu", src, 8, 24, "cuda-arch", ALL);
        for (String g : ALL) {
            assertEquals(src, klap(g, "arch2.cu", src).output(), "the kernel is left exactly as written");
        }
    }

    @Test
    void statementExpressionInAKernel() throws IOException {
        String src = CHILD + """
                __global__ void parent(int* p) {
                  int v = ({ int r = threadIdx.x; r * 2; });
                  child<<<1, 32>>>(p + v);
                }
                """;
        unchangedWithWarning("stmtexpr.cu", src, 3, 11, "statement-expression", ALL);
    }

    @Test
    void asmExitBeforeALaunch() throws IOException {
        unchangedWithWarning("asmexit.cu", CHILD + """
                __global__ void parent(int* p, const int* cnt) {
                  if (cnt[threadIdx.x] == 0) asm volatile("exit;");
                  child<<<1, 32>>>(p + threadIdx.x);
                }
                """, 4, 3, "asm-exit", ALL);
    }

    @Test
    void identifiersNamedLikeKlaps() throws IOException {
        unchangedWithWarning("reserved.cu", CHILD + """
                __global__ void parent(int* p, int klap_x0) {
                  child<<<1, 32>>>(p + klap_x0 * threadIdx.x);
                }
                """, 3, 3, "reserved-name", ALL);
    }

    @Test
    void valueDeclaredInAConditionOrAnInitStatement() throws IOException {
        Map<String, String> out = transformed("conddecl.cu", CHILD + """
                __device__ int next;
                __global__ void parent(int* p) {
                  if (int slot = atomicAdd(&next, 1); slot < 64) child<<<1, 32>>>(p + 32 * slot);
                }
                """, ALL);
        assertTrue(out.get("block").contains("child_klap_agg_v<<<"), "slot is per thread: " + out.get("block"));
        assertTrue(out.get("kernel").contains("child_klap_kagg_v<<<"), "slot is per thread: " + out.get("kernel"));
    }

    @Test
    void launchOfTemplateChildWithExplicitArguments() throws IOException {
        Map<String, String> out = transformed("tmpl.cu", """
                template <typename T> __global__ void child(T* p) { p[threadIdx.x] = 1; }
                __global__ void parent(int* p) {
                  child<int><<<1, 32>>>(p + threadIdx.x);
                }
                """, ALL);
        assertTrue(out.get("block").contains("child_klap_agg_v<int>"), "the variant is instantiated with the same arguments");
        assertTrue(out.get("kernel").contains("child_klap_kagg_v<int><<<"), out.get("kernel"));
    }

    @Test
    void launchOfTemplateChildWithDeducedArguments() throws IOException {
        unchangedWithWarning("tmpl_deduced.cu", """
                template <typename T> __global__ void child(T* p) { p[threadIdx.x] = 1; }
                __global__ void parent(int* p) {
                  int* q = p + threadIdx.x; child<<<1, 32>>>(q);
                }
                """, 3, 29, "template-args", ALL);
    }

    /**
     * Template arguments left to deduction from plain parameters of the parent (a public quicksort's
     * {@code bruteSort<<<...>>>(data, ...)} in a template parent): klap writes those C++ deduces
     * ({@code TemplateDeduction}) and aggregates the launch.
     */
    @Test
    void launchOfTemplateChildWhoseArgumentsKlapDeduces() throws IOException {
        Map<String, String> out = transformed("tmpl_deducible.cu", """
                template <typename T> __global__ void child(T* p, const T* q) { p[threadIdx.x] = q[threadIdx.x]; }
                template <typename Type> __global__ void parent(Type* __restrict__ p, const Type* q) {
                  child<<<1, 32>>>(p, q);
                }
                __global__ void fparent(float* p, const float* q) {
                  child<<<1, 32>>>(p, q);
                }
                template __global__ void parent<int>(int*, const int*);
                """, ALL);
        assertTrue(out.get("block").contains("child_klap_agg_uu<Type><<<") && out.get("block").contains("child_klap_agg_uu<float><<<"),
                out.get("block"));
        assertTrue(out.get("kernel").contains("child_klap_kagg_uu<Type><<<") && out.get("kernel").contains("child_klap_kagg_uu<float><<<"),
                out.get("kernel"));
    }

    @Test
    void templateParametersLeftToTheirDefaults() throws IOException {
        Map<String, String> out = transformed("tmpl_defaults.cu", """
                template <typename T, int N = 2> __global__ void child(T* p, int n);
                template <typename T, int N> __global__ void child(T* p, int n) { p[threadIdx.x] = T(N * n); }
                template <int S = 4> __global__ void tile(int* p) { p[threadIdx.x] = S; }
                __global__ void parent(float* p, int* q, int n) {
                  child<<<1, 32>>>(p, n);
                  tile<<<1, 32>>>(q + 32 * threadIdx.x);
                }
                """, ALL);
        String b = out.get("block");
        assertTrue(b.contains("child_klap_agg_uu<float><<<") && b.contains("tile_klap_agg_v<><<<")
                && b.contains("template <typename T, int N = 2>\n__global__ __launch_bounds__(1024) void child_klap_agg_uu("), b);
        assertTrue(out.get("kernel").contains("tile_klap_kagg_v<><<<"), out.get("kernel"));
    }

    @Test
    void launchInTemplateParent() throws IOException {
        Map<String, String> out = transformed("tmpl_parent.cu", CHILD + """
                template <int N> __global__ void parent(int* p) {
                  child<<<N, 32>>>(p + threadIdx.x);
                }
                int main() { parent<2><<<1, 32>>>(0); return 0; }
                """, ALL);
        String k = out.get("kernel");
        assertTrue(k.contains("template <int N>\n __global__ __launch_bounds__(1024) void parent_klap_grid(int* p, klap::kstate* klap_ks)"), k);
        assertTrue(k.contains("parent_klap_grid<2><<<1, 32, 0, klap::host_prepare(0, klap::host_warps(1, 32))>>>(0, klap::host_kstate(1)), klap::host_kstate_done());"), k);
    }

    @Test
    void launchInUniformLoop() throws IOException {
        String src = CHILD + """
                __global__ void parent(int* p, int n) {
                  for (int r = 0; r < n; r++) {
                    child<<<1, 32>>>(p + threadIdx.x + r);
                  }
                }
                """;
        transformed("loop_uniform.cu", src, WB);
        String k = transformedWith("note", "loop_uniform.cu", src, 4, 5, "kernel-per-round", KERNEL).get("kernel");
        assertTrue(k.contains("unsigned klap_seq = 0;") && k.contains("klap::krecord_seq<klap_args_child>("), k);
    }

    @Test
    void launchInDivergentLoop() throws IOException {
        String src = CHILD + """
                __global__ void parent(int* p, const int* cnt) {
                  for (int r = 0; r < cnt[threadIdx.x]; r++) {
                    child<<<1, 32>>>(p + threadIdx.x + r);
                  }
                }
                """;
        // a convergent loop: it runs while any thread of the group has an iteration left, each thread's
        // body and step only while its own condition held; the region is the body
        Map<String, String> out = transformed("loop_divergent.cu", src, WB);
        for (String g : WB) {
            String grp = g.equals("block") ? "klap_blk" : "klap::warp_group::of(klap_blk)";
            String o = out.get(g);
            assertTrue(o.contains("{ bool klap_on0 = true; for (int r = 0; klap::group_any(" + grp
                    + ", klap_on0 = klap_on0 && (r < cnt[threadIdx.x])); klap_on0 ? (void)(r++) : (void)0) { auto klap_g0 = "
                    + grp + "; auto klap_s0 = klap::agg_begin") && o.contains("if (klap_on0) {") && !o.contains("warp_group::active()"), o);
        }
        // no region is needed at kernel granularity: per round, like the uniform loop
        String k = transformedWith("note", "loop_divergent.cu", src, 4, 5, "kernel-per-round", KERNEL).get("kernel");
        assertTrue(k.contains("klap::krecord_seq<klap_args_child>("), k);
        assertFalse(k.contains("warp_group"), k);
    }

    @Test
    void launchAfterEarlyReturn() throws IOException {
        Map<String, String> out = transformed("early_return.cu", CHILD + """
                __global__ void parent(int* p, int n) {
                  int i = blockIdx.x * blockDim.x + threadIdx.x;
                  if (i >= n) return;
                  child<<<1, 32>>>(p + i);
                }
                """, ALL);
        assertTrue(out.get("block").contains("if (i >= n) {} else {"), "the guard is made convergent");
        assertTrue(out.get("kernel").contains("if (i >= n) return;") && !out.get("kernel").contains("{} else {"),
                "no guard rewriting at kernel granularity");
    }

    @Test
    void launchAfterNestedDivergentReturn() throws IOException {
        String src = CHILD + """
                __global__ void parent(int* p, int n) {
                  int i = blockIdx.x * blockDim.x + threadIdx.x;
                  if (i < n) {
                    if (p[i] == 0) return;
                    child<<<1, 32>>>(p + i);
                  }
                }
                """;
        // the return is an exit of the region (the divergent if): it goes through the flush first
        Map<String, String> out = transformed("nested_return.cu", src, ALL);
        for (String g : new String[] {"warp", "block"}) {
            assertTrue(out.get(g).contains("if (p[i] == 0) { klap_x0 = 1; goto klap_r0; }"), out.get(g));
            assertTrue(out.get(g).contains("klap_r0:; klap_s0.flush("), out.get(g));
        }
    }

    @Test
    void launchWithGotoInKernel() throws IOException {
        String src = CHILD + """
                __global__ void parent(int* p) {
                  if (threadIdx.x == 0) goto done;
                  child<<<1, 32>>>(p + threadIdx.x);
                done:
                  return;
                }
                """;
        warpFallback("goto.cu", src, 4, 3, WB);
        transformed("goto.cu", src, KERNEL);
    }

    @Test
    void launchUnderSwitch() throws IOException {
        Map<String, String> out = transformed("switch.cu", CHILD + """
                __global__ void parent(int* p, int k) {
                  switch (threadIdx.x % 3) {
                    case 0: child<<<1, 32>>>(p + threadIdx.x); break;
                    case 1: child<<<2, 32>>>(p + threadIdx.x); break;
                    default: break;
                  }
                }
                """, ALL);
        String k = out.get("kernel");
        assertTrue(k.contains("klap::krecord<klap_args_child>(klap_ks, 0u, dim3(1)")
                && k.contains("klap::krecord<klap_args_child>(klap_ks, 1u, dim3(2)"), "one site per case:\n" + k);
    }

    @Test
    void launchIntoFireAndForgetOrTailStream() throws IOException {
        for (String s : new String[] {"cudaStreamFireAndForget", "cudaStreamTailLaunch"}) {
            String src = CHILD + """
                    __global__ void parent(int* p) {
                      child<<<1, 32, 0, %s>>>(p + threadIdx.x);
                    }
                    """.formatted(s);
            boolean tail = s.equals("cudaStreamTailLaunch");
            Map<String, String> out = new LinkedHashMap<>(transformed("stream_" + s + ".cu", src,
                    tail ? new String[] {"warp", "block"} : ALL));
            if (tail) {
                // a kernel that makes tail launches cannot send its launches into the tail stream when the pool is full
                out.putAll(transformedWith("note", "stream_" + s + ".cu", src, 3, 3, "kernel-no-fallback", "kernel"));
            }
            for (String g : ALL) {
                assertTrue(out.get(g).contains("(cudaStream_t)(" + s + ")"), "the stream is kept: " + s + " at " + g);
            }
        }
    }

    @Test
    void launchIntoPerThreadDeviceStream() throws IOException {
        String src = CHILD + """
                __global__ void parent(int* p) {
                  cudaStream_t s;
                  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
                  child<<<1, 32, 0, s>>>(p + threadIdx.x);
                  cudaStreamDestroy(s);
                }
                """;
        for (String g : ALL) {
            Outcome o = klap(g, "stream_thread.cu", src);
            assertEquals(0, o.run().rc(), o.run().toString());
            assertEquals(0, o.warnings(), o.run().toString());
            // a stream the kernel only creates, launches into and destroys is never cudaStreamTailLaunch
            assertEquals(1, o.notes(), o.run().toString());
            assertDiagnostic(o, "note", "stream_thread.cu", 5, 21, "stream-serialized");
            assertTrue(o.output().contains("(cudaStream_t)0"), "the aggregated launch goes into the NULL stream");
            assertAggregated(g, o.output());
            if (g.equals("kernel")) {
                assertTrue(o.output().contains("child<<<klap_grid, klap_block, klap_smem, klap_stream>>>"),
                        "the launch as written, for a full pool:\n" + o.output());
            }
        }
    }

    /**
     * A stream variable that may hold cudaStreamTailLaunch: no launch as written when the pool is
     * full (krecord); kfinish still pairs the site with its launch as written for a refused launch.
     */
    @Test
    void launchIntoStreamVariableThatMayBeTail() throws IOException {
        String[] bodies = {
            // assigned the tail stream on some path
            "cudaStream_t s;\n  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);\n"
                    + "  if (threadIdx.x == 0) s = cudaStreamTailLaunch;\n  child<<<1, 32, 0, s>>>(p + threadIdx.x);\n",
            // its address goes to a helper
            "cudaStream_t s;\n  pick(&s);\n  child<<<1, 32, 0, s>>>(p + threadIdx.x);\n",
            // initialized from a parameter
            "cudaStream_t s = q;\n  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);\n"
                    + "  child<<<1, 32, 0, s>>>(p + threadIdx.x);\n",
            // the parameter itself
            "child<<<1, 32, 0, q>>>(p + threadIdx.x);\n",
            // a reference to a created stream
            "cudaStream_t t;\n  cudaStreamCreateWithFlags(&t, cudaStreamNonBlocking);\n  cudaStream_t& s = t;\n"
                    + "  s = cudaStreamTailLaunch;\n  child<<<1, 32, 0, s>>>(p + threadIdx.x);\n",
            // a reference bound to it
            "cudaStream_t s;\n  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);\n  cudaStream_t& r = s;\n"
                    + "  r = cudaStreamTailLaunch;\n  child<<<1, 32, 0, s>>>(p + threadIdx.x);\n",
            // written in a lambda
            "cudaStream_t s = 0;\n  auto f = [&] { s = cudaStreamTailLaunch; };\n  f();\n"
                    + "  child<<<1, 32, 0, s>>>(p + threadIdx.x);\n",
        };
        for (int i = 0; i < bodies.length; i++) {
            String src = CHILD + "__device__ void pick(cudaStream_t* s) { *s = cudaStreamTailLaunch; }\n"
                    + "__global__ void parent(int* p, cudaStream_t q) {\n  " + bodies[i] + "}\n";
            Outcome o = klap("kernel", "stream_var" + i + ".cu", src);
            assertEquals(0, o.run().rc(), o.run().toString());
            // either the kernel keeps trapping on a full pool, or (a stream that differs between threads
            // and may be the tail stream) the launch is not aggregated at all
            assertTrue(o.run().err().contains("[klap-kernel-no-fallback]") || o.run().err().contains("[klap-stream-may-be-tail]"),
                    "case " + i + ":\n" + o.run().err());
            // krecord gets no launch as written (a pool-full record would go out as a tail launch,
            // before children the program orders first); kfinish's, for a refused aggregated launch,
            // launches each record where the aggregated grid would have gone, into its own stream
            // (a krecord call up to its first ';': its launch as written would begin there)
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("klap::krecord(_seq)?<[^;]*;").matcher(o.output());
            while (m.find()) {
                assertFalse(m.group().contains("[&](dim3 klap_grid"), "case " + i + ": no launch as written for a full pool:\n"
                        + o.output());
            }
        }
    }

    /**
     * A stream or event operation after the launch: deferring the launch (to the end of its region,
     * or to the grid's last block) would put it after the operation, so it goes out in place.
     */
    @Test
    void launchFollowedByEventRecordInItsRegion() throws IOException {
        String src = CHILD + """
                __global__ void parent(int* p, int n, cudaEvent_t e) {
                  int i = threadIdx.x;
                  if (i >= n) return;
                  child<<<1, 32>>>(p + i);
                  cudaEventRecord(e, 0);
                }
                """;
        // at every granularity the launch is made in place, per warp, before the event
        warpFallback("event.cu", src, 5, 3, ALL);
    }

    @Test
    void deviceSideCudaDeviceSynchronize() throws IOException {
        refused("cdp1.cu", CHILD + """
                __global__ void parent(int* p) {
                  child<<<1, 32>>>(p);

                  cudaDeviceSynchronize();
                }
                """, 5, 3, "cdp1-sync", ALL);
    }

    @Test
    void childWithSyncthreadsAndSharedMemory() throws IOException {
        Map<String, String> outs = transformed("sync_child.cu", """
                __global__ void child(int* p) {
                  __shared__ int s[32];
                  s[threadIdx.x] = threadIdx.x;
                  __syncthreads();
                  p[threadIdx.x] = s[31 - threadIdx.x];
                }
                __global__ void parent(int* p) {
                  child<<<1, 32>>>(p + 32 * threadIdx.x);
                }
                """, ALL);
        String out = outs.get("block");
        String variant = out.substring(out.indexOf("child_klap_agg_v(const klap::launch_cfg* klap_cfg, unsigned klap_n, "
                + "const klap_args_child* klap_args) {"));
        String shadow = "const uint3 threadIdx = klap_v.threadIdx;";
        assertTrue(variant.contains("__syncthreads()") && variant.contains(shadow) && variant.contains("s[threadIdx.x]"),
                variant);
        String k = outs.get("kernel");
        String kvariant = k.substring(k.indexOf("child_klap_kagg_v(const klap::ksite* klap_site) {"));
        assertTrue(kvariant.contains("__syncthreads()") && kvariant.contains(shadow) && kvariant.contains("s[threadIdx.x]"),
                kvariant);
    }

    @Test
    void childReadingGridDimAndBlockIdx() throws IOException {
        Map<String, String> outs = transformed("griddim.cu", """
                __global__ void child(int* p) { p[blockIdx.x * blockDim.x + threadIdx.x] = gridDim.x; }
                __global__ void parent(int* p) {
                  child<<<1 + threadIdx.x % 4, 32>>>(p + 128 * threadIdx.x);
                }
                """, ALL);
        for (String g : ALL) {
            String out = outs.get(g);
            assertTrue(out.contains("const dim3 gridDim = klap_v.gridDim;") && out.contains("const uint3 blockIdx = klap_v.blockIdx;"),
                    "virtual indices in the variant at " + g);
        }
    }

    @Test
    void childReadingIndicesThroughAMacro() throws IOException {
        // the body keeps its text: the macro expands to the shadowing constants of the variant
        Map<String, String> outs = transformed("macro_index.cu", """
                #define TID (blockIdx.x * blockDim.x + threadIdx.x)
                __global__ void child(int* a, int i) { a[i * 32 + TID] += 1; }
                __global__ void parent(int* a, int n) {
                  int i = blockIdx.x * blockDim.x + threadIdx.x;
                  if (i < n) child<<<2, 4>>>(a, i);
                }
                """, ALL);
        for (String g : ALL) {
            String out = outs.get(g);
            int v = out.indexOf(g.equals("kernel") ? "child_klap_kagg_" : "child_klap_agg_");
            assertTrue(v >= 0 && out.indexOf("const uint3 threadIdx = klap_v.threadIdx;", v) > v
                    && out.indexOf("{ a[i * 32 + TID] += 1; }", v) > v, "the variant at " + g + ":\n" + out);
        }
    }

    @Test
    void childCallingAnIndexReadingHelperThroughAMacro() throws IOException {
        // the variant would have to pass klap_v to gid() inside the macro's expansion
        String src = """
                __device__ int gid() { return blockIdx.x * blockDim.x + threadIdx.x; }
                #define G gid()
                __global__ void child(int* a) { a[G] = 1; }
                __global__ void parent(int* a) { child<<<2, 64>>>(a + 128 * threadIdx.x); }
                """;
        unchangedWithWarning("call_macro.cu", src, 4, 34, "child-call-in-macro", ALL);
        // a helper that reads no index needs no rewrite: a call of it through a macro is aggregated
        // (a public Perlin-noise generator, 2026-11-29)
        transformed("pure_macro.cu", """
                __device__ float grad(int h, float x) { return (h & 1) ? -x : x; }
                #define LERP(t, a, b) ((a) + (t) * ((b) - (a)))
                __global__ void child(float* o, float t) { int i = blockIdx.x * blockDim.x + threadIdx.x; o[i] = LERP(t, grad(i, 1.0f), grad(i + 1, 2.0f)); }
                __global__ void parent(float* o) { child<<<1, 32>>>(o + 32 * threadIdx.x, 0.5f * threadIdx.x); }
                """, ALL);
    }

    @Test
    void childCallingAnIndexReadingHelperOfAHeader() throws IOException {
        // klap can give the original indices only to functions of the file it rewrites
        Files.writeString(dir.resolve("gid.cuh"), "__device__ inline int gid() { return blockIdx.x * blockDim.x + threadIdx.x; }\n");
        String src = """
                #include "gid.cuh"
                __global__ void child(int* a) { a[gid()] = 1; }
                __global__ void parent(int* a) { child<<<2, 64>>>(a + 128 * threadIdx.x); }
                """;
        unchangedWithWarning("header_gid.cu", src, 3, 34, "child-calls-unseen", ALL);
    }

    @Test
    void barrierInAHeaderHelperAfterAGuardedReturn() throws IOException {
        // the threads that returned must not wait in klap's collective while the others wait at the helper's barrier
        Files.writeString(dir.resolve("bsum.cuh"), "__device__ inline int bsum(int* s, int v) { s[threadIdx.x] = v; "
                + "__syncthreads(); return s[0]; }\n");
        String src = CHILD + """
                #include "bsum.cuh"
                __global__ void parent(int* p, int n) {
                  __shared__ int s[64];
                  int i = blockIdx.x * blockDim.x + threadIdx.x;
                  if (i >= n) return;
                  if (bsum(s, i) > 0) child<<<1, 32>>>(p + 32 * i);
                }
                """;
        warpFallback("header_bsum.cu", src, 7, 23, ALL);
    }

    @Test
    void childWithDynamicSharedMemory() throws IOException {
        Map<String, String> outs = transformed("dynshared.cu", """
                __global__ void child(int* p) { extern __shared__ int s[]; s[threadIdx.x] = 1; __syncthreads(); p[threadIdx.x] = s[0]; }
                __global__ void parent(int* p) {
                  child<<<1, 32, (1 + threadIdx.x % 4) * 32 * sizeof(int)>>>(p + 32 * threadIdx.x);
                }
                """, ALL);
        for (String g : ALL) {
            assertTrue(outs.get(g).contains("(unsigned)((1 + threadIdx.x % 4) * 32 * sizeof(int))"), "per-thread size recorded at " + g);
        }
    }

    /**
     * Cooperative groups that read the hardware block or grid ({@code this_thread_block()}, also
     * through a __device__ function) would see the aggregated grid: the launch stays as written.
     */
    @Test
    void childUsingCooperativeGroups() throws IOException {
        unchangedWithWarning("cg.cu", """
                #include <cooperative_groups.h>
                namespace cg = cooperative_groups;
                __device__ unsigned rank() { return cg::this_thread_block().thread_rank(); }
                __global__ void child(int* p) {
                  cg::thread_block b = cg::this_thread_block();
                  p[b.group_index().x * 32 + rank()] = 1;
                  b.sync();
                }
                __global__ void parent(int* p) {
                  child<<<2, 32>>>(p + 64 * threadIdx.x);
                }
                """, 10, 3, "child-cooperative-groups", ALL);
    }

    @Test
    void recursiveLaunch() throws IOException {
        Map<String, String> outs = transformed("recursion.cu", """
                __global__ void node(int* p, int depth) {
                  p[threadIdx.x] += 1;
                  if (depth > 0 && threadIdx.x < 2) node<<<1, 32>>>(p + 32 * (threadIdx.x + 1), depth - 1);
                }
                """, ALL);
        String out = outs.get("block");
        assertTrue(out.contains("node_klap_agg_"), out);
        String k = outs.get("kernel");
        // a kernel launched from a kernel: no argument of its own kernel-wide launches is scalarized (in its
        // aggregated variant one grid holds the virtual grids of many records)
        assertTrue(k.contains("__global__ __launch_bounds__(1024) void node_klap_kagg_vv(const klap::ksite* klap_site, klap::kstate* klap_ks) {")
                && k.contains("klap::kstate* klap_cks = klap::kstate_new(1, klap::on_full::launch_as_written, klap_ksite); node_klap_kagg_vv<<<"), k);
    }

    @Test
    void launchInsideExpression() throws IOException {
        unchangedWithWarning("expr.cu", CHILD + """
                __global__ void parent(int* p) {
                  bool ok = (child<<<1, 32>>>(p + threadIdx.x), true);
                  (void)ok;
                }
                """, 3, 14, "launch-in-expression", ALL);
    }

    @Test
    void childDefinedInAnotherFile() throws IOException {
        unchangedWithWarning("extern_child.cu", """
                __global__ void child(int* p);
                __global__ void parent(int* p) {
                  child<<<1, 32>>>(p + threadIdx.x);
                }
                """, 3, 3, "child-not-defined", ALL);
        // defined in an included header: the warning says where, and what to do
        Files.writeString(dir.resolve("child.cuh"), "__global__ void child(int* p) { p[threadIdx.x] = 1; }\n");
        String src = "#include \"child.cuh\"\n__global__ void parent(int* p) {\n  child<<<1, 32>>>(p + threadIdx.x);\n}\n";
        unchangedWithWarning("header_child.cu", src, 3, 3, "child-not-defined", ALL);
        Outcome o = klap("block", "header_child.cu", src);
        assertTrue(o.run().err().contains("child kernel 'child' is defined in the included file " + dir.resolve("child.cuh")
                + ", not in this file") && o.run().err().contains("move 'child' into header_child.cu"), o.run().err());
    }

    @Test
    void childReadingIndicesThroughAnImplicitCall() throws IOException {
        String parent = """
                __global__ void parent(unsigned* out, int n) {
                  child<<<1, 32>>>(out + 32 * threadIdx.x);
                }
                """;
        for (String cls : List.of(
                "struct Idx { __device__ unsigned operator()() const { return blockIdx.x; } };\n"
                        + "__global__ void child(unsigned* out) { Idx x; out[x()] = 1; }\n",
                "struct W { unsigned v; __device__ W() : v(threadIdx.x) {} };\n"
                        + "__global__ void child(unsigned* out) { W w; out[w.v] = 1; }\n",
                "struct V { unsigned a; __device__ operator unsigned() const { return a + threadIdx.x; } };\n"
                        + "__global__ void child(unsigned* out) { V v{1}; unsigned u = v; out[u] = 1; }\n")) {
            unchangedWithWarning("implicit.cu", cls + parent, 4, 3, "child-calls-unseen", ALL);
        }
    }

    @Test
    void launchArgumentsThatOperatorsOrConversionsComputeArePerThread() throws IOException {
        String decls = """
                struct V { int x; };
                struct Acc { int s; __device__ Acc& operator<<(int v) { s += v; return *this; } };
                struct Tally { int s; };
                struct Lane { int base; __device__ operator int() const { return base + (int)threadIdx.x; } };
                __device__ V operator+(V a, V b) { V r; r.x = a.x + b.x + (int)threadIdx.x; return r; }
                __device__ void operator>>(int v, Tally& t) { t.s += v; }
                __global__ void child(int* out, int s) { out[threadIdx.x] = s; }
                """;
        for (String body : List.of("V a; a.x = 1; V b; b.x = 2; V c = a + b; int s = c.x;",
                "Acc a; a.s = 1; a << (int)threadIdx.x; int s = a.s;",
                "Tally t; t.s = 1; (int)threadIdx.x >> t; int s = t.s;",
                "Lane l; l.base = 5; int s = l;")) {
            String src = decls + "__global__ void parent(int* out) {\n  " + body
                    + "\n  child<<<1, 32>>>(out + 32 * threadIdx.x, s);\n}\n";
            Map<String, String> out = transformed("operators.cu", src, ALL);
            for (Map.Entry<String, String> e : out.entrySet()) {
                // both arguments per parent thread: no scalar 's' in the variant's name
                assertTrue(e.getValue().contains("child_klap_" + (e.getKey().equals("kernel") ? "k" : "") + "agg_vv"),
                        body + " at " + e.getKey() + ":\n" + e.getValue());
                assertFalse(e.getValue().contains("vctx& klap_v, V a"), "an operator is not cloned: " + body);
            }
        }
    }

    @Test
    void cpp20ConstraintsAndTemplateLambdas() throws IOException {
        String src = """
                template <class T> concept Small = sizeof(T) <= 8 && requires(T a) { a + a; };
                template <typename T> requires Small<T>
                __global__ void child(T* out, T v) { out[threadIdx.x] = v; }
                template <typename T> __device__ T twice(T x) requires (sizeof(T) >= 4) {
                  if constexpr (requires { x * x; }) return x * 2; else return x + x;
                }
                __global__ void parent(int* out) {
                  auto inc = []<typename T>(T v) { return v + 1; };
                  if (threadIdx.x < 4) child<int><<<1, 32>>>(out + 32 * threadIdx.x, twice(inc((int)threadIdx.x)));
                }
                """;
        Map<String, String> out = transformed("cpp20.cu", src, ALL);
        for (String text : out.values()) {
            // the constraints are the user's text, kept in the output
            assertTrue(text.contains("template <typename T> requires Small<T>") && text.contains("[]<typename T>(T v)"), text);
        }
    }

    @Test
    void deviceLaunchesInAnIncludedHeader() throws IOException {
        Files.writeString(dir.resolve("kernels.cuh"), """
                #pragma once
                __global__ void child(int* p) { p[threadIdx.x] = 1; }
                __global__ void parent(int* p) {
                  if (threadIdx.x < 4)
                    child<<<1, 32>>>(p + 32 * threadIdx.x);
                }
                """);
        String src = """
                #include "kernels.cuh"
                int main() {
                  int* p;
                  cudaMalloc(&p, 128 * sizeof(int));
                  parent<<<1, 32>>>(p);
                  return cudaDeviceSynchronize() != cudaSuccess;
                }
                """;
        for (String g : ALL) {
            Outcome o = klap(g, "uses_header.cu", src);
            assertEquals(0, o.run().rc(), o.run().toString());
            // nothing of the file changes but the include, rebased for the output's directory
            assertEquals(src.replace("\"kernels.cuh\"", "\"../kernels.cuh\""), o.output(), "at " + g);
            assertEquals(1, o.notes() + o.warnings() + o.errors(), o.run().toString());
            String where = dir.resolve("kernels.cuh") + ":5:10: note: 1 device-side launch site in this included file";
            assertTrue(o.run().err().lines().anyMatch(l -> l.startsWith(where) && l.endsWith("[klap-header-launches]")),
                    "expected '" + where + "... [klap-header-launches]' in:\n" + o.run().err());
        }
    }

    @Test
    void kernelsDefinedOutsideTheirNamespaceOrFoundThroughAUsingDeclaration() throws IOException {
        // the prototypes klap adds name the kernel unqualified inside the namespace; a launch through
        // a using-declaration names klap's forms with the namespace (the declaration brings only 'child')
        Map<String, String> outs = transformed("namespaces.cu", """
                namespace ns { __global__ void child(int* p); }
                __global__ void ns::child(int* p) { p[threadIdx.x] = 1; }
                using ns::child;
                __global__ void parent(int* p) {
                  child<<<1, 32>>>(p + 32 * threadIdx.x);
                }
                """, ALL);
        for (Map.Entry<String, String> e : outs.entrySet()) {
            String v = e.getKey().equals("kernel") ? "child_klap_kagg_" : "child_klap_agg_";
            String o = e.getValue();
            assertTrue(o.contains("namespace ns { /* klap: per-parent-thread arguments of 'child' */") && o.contains("void ns:: " + v)
                    && o.contains("::ns::" + v) && o.contains("::ns::klap_args_child"), o);
        }
    }

    @Test
    void launchRelyingOnDefaultArguments() throws IOException {
        // the record's constructor repeats the definition's default
        Map<String, String> outs = transformed("defaultarg.cu", """
                __global__ void child(int* p, int k = 1) { p[threadIdx.x] = k; }
                __global__ void parent(int* p) {
                  child<<<1, 32>>>(p + threadIdx.x);
                }
                """, ALL);
        outs.values().forEach(o -> assertTrue(o.contains("int klap_p1 = 1)"), o));
        // a default given only by an earlier declaration: the record repeats the prototype's
        Map<String, String> protos = transformed("defaultproto.cu", """
                __global__ void child(int* p, int k = 1);
                __global__ void child(int* p, int k) { p[threadIdx.x] = k; }
                __global__ void parent(int* p) {
                  child<<<1, 32>>>(p + threadIdx.x);
                }
                """, ALL);
        protos.values().forEach(o -> assertTrue(o.contains("int klap_p1 = 1)"), o));
        // one that names a parameter of the child (class scope would find the record's member)
        unchangedWithWarning("defaultparam.cu", """
                __device__ int k0 = 5;
                __global__ void child(int* p, int d = k0, int k0 = 3) { p[threadIdx.x] = d + k0; }
                __global__ void parent(int* p) {
                  child<<<1, 32>>>(p + threadIdx.x);
                }
                """, 4, 3, "argument-count", ALL);
    }

    @Test
    void deviceCudaMallocWrittenByAMacro() throws IOException {
        // the macro's nodes carry the range of its use: rewriting them produced 'klap::group_free;'.
        // A cudaMalloc written by a macro stays as written alone (2026-12-01: it used to keep every
        // cudaMalloc of the file as written); klap::group_free frees its plain pointer
        mallocMacro("malloc_macro.cu", """
                #define ALLOC(p, n) cudaMalloc((void**)&p, n)
                __global__ void parent(int n) {
                  int* buf;
                  ALLOC(buf, n * sizeof(int));
                  child<<<1, 32>>>(buf);
                  int* more;
                  cudaMalloc((void**)&more, n * sizeof(int));
                  cudaFree(more);
                  cudaFree(buf);
                }
                """, 5, true, "ALLOC(buf, n * sizeof(int));", "(void**)((void**)&more), n * sizeof(int))",
                "klap::group_free(more);", "klap::group_free(buf);");
        // the common error check around it
        mallocMacro("check_macro.cu", """
                #define CHECK(x) do { if ((x) != cudaSuccess) return; } while (0)
                __global__ void parent(int n) {
                  int* buf;
                  cudaMalloc((void**)&buf, n * sizeof(int));
                  child<<<1, 32>>>(buf);
                  cudaFree(buf);
                  int* checked;
                  CHECK(cudaMalloc(&checked, n * sizeof(int)));
                  cudaFree(checked);
                }
                """, 9, true, "CHECK(cudaMalloc(&checked, n * sizeof(int)));", "klap::group_free(checked);",
                "klap::group_free(buf);");
        // a cudaFree written by a macro cannot become klap::group_free: no cudaMalloc of the file is aggregated
        mallocMacro("free_macro.cu", """
                #define FREE(p) cudaFree(p)
                __global__ void parent(int n) {
                  int* buf;
                  cudaMalloc((void**)&buf, n * sizeof(int));
                  child<<<1, 32>>>(buf);
                  FREE(buf);
                }
                """, 7, false, "FREE(buf);", "cudaMalloc((void**)&buf, n * sizeof(int));");
    }

    /**
     * {@code CHILD + src} at every granularity: one warning {@code malloc-in-macro} at {@code line}:3,
     * some cudaMalloc aggregated exactly if {@code aggregated} (none: no group_free either), and
     * every text of {@code expected} in the output.
     */
    private void mallocMacro(String name, String src, int line, boolean aggregated, String... expected) throws IOException {
        Map<String, String> outs = transformedWith("warning", name, CHILD + src, line, 3, "malloc-in-macro", ALL);
        for (String g : ALL) {
            String out = outs.get(g);
            assertEquals(aggregated, out.contains("klap::group_malloc("), name + " at " + g + ":\n" + out);
            assertEquals(aggregated, out.contains("klap::group_free"), name + " at " + g + ":\n" + out);
            for (String x : expected) {
                assertTrue(out.contains(x), name + " at " + g + ": no '" + x + "' in\n" + out);
            }
        }
    }

    @Test
    void deviceCudaMallocWhoseSharesAreFreedAtDifferentTimes() throws IOException {
        // the review reproducer C_malloc_pin's loop: thread 0 keeps its buffer of each round, the others
        // free theirs at once; the buffer every thread frees at the end stays aggregated
        Map<String, String> outs = transformedWith("warning", "malloc_lifetime.cu", CHILD + """
                __global__ void parent(int** kept, int rounds) {
                  int* s;
                  cudaMalloc(&s, 64);
                  child<<<1, 32>>>(s);
                  for (int r = 0; r < rounds; ++r) {
                    int* p;
                    cudaMalloc(&p, 64);
                    p[0] = r;
                    if (threadIdx.x == 0) kept[r] = p; else cudaFree(p);
                  }
                  cudaFree(s);
                }
                """, 8, 5, "malloc-lifetime", ALL);
        for (String g : ALL) {
            String out = outs.get(g);
            assertTrue(out.contains("    cudaMalloc(&p, 64);") && out.contains("(void**)(&s), 64);")
                    && out.contains("else klap::group_free(p);") && out.contains("klap::group_free(s);"),
                    "the kept buffer is allocated as written, the other one aggregated, at " + g + ":\n" + out);
        }
    }

    @Test
    void deviceCudaMallocAndFree() throws IOException {
        Map<String, String> outs = transformed("malloc.cu", CHILD + """
                __global__ void parent(int** q) {
                  int* buf;
                  if (cudaMalloc(&buf, 32 * sizeof(int)) == cudaSuccess) {
                    q[threadIdx.x] = buf;
                    child<<<1, 32>>>(buf);
                  }
                }
                __global__ void release(int** q) { cudaFree(q[threadIdx.x]); }
                """, ALL);
        for (String g : ALL) {
            String out = outs.get(g);
            assertTrue(out.contains("klap::group_malloc("), "cudaMalloc is aggregated at " + g);
            assertTrue(out.contains("klap::group_free("), "cudaFree is redirected at " + g);
        }
        assertTrue(outs.get("kernel").contains("klap::group_malloc(klap_blk, (void**)(&buf), 32 * sizeof(int))"),
                "per block at kernel granularity");
    }

    @Test
    void warningsBecomeErrorsWithWerror() throws IOException {
        Path in = dir.resolve("werror.cu");
        Files.writeString(in, """
                __global__ void child(int* p);
                __global__ void parent(int* p) { child<<<1, 32>>>(p); }
                """);
        Cli.Run r = Cli.klap("--Werror", in.toString(), "-o", dir.resolve("werror.out.cu").toString());
        assertEquals(1, r.rc(), r.toString());
        assertTrue(r.err().contains(in + ":2:34: warning: ") && r.err().contains("[klap-child-not-defined]"), r.err());
        assertFalse(Files.exists(dir.resolve("werror.out.cu")));
        for (String g : ALL) {
            Path out = dir.resolve("werror." + g + ".out.cu");
            Cli.Run rg = Cli.klap("--Werror", "--granularity=" + g, in.toString(), "-o", out.toString());
            assertEquals(1, rg.rc(), g + ": " + rg);
            assertTrue(rg.err().contains(in + ":2:34: warning: ") && rg.err().contains("[klap-child-not-defined]"), rg.err());
            assertFalse(Files.exists(out), g);
        }
    }

    // ------------------------------------------------ kernel granularity: rows of docs/constructs.md

    @Test
    void kernelLaunchInLoopIntoFireAndForget() throws IOException {
        Map<String, String> outs = transformed("k_loop_ff.cu", CHILD + """
                __global__ void parent(int* p, int n) {
                  for (int r = 0; r < n; r++) {
                    child<<<1, 32, 0, cudaStreamFireAndForget>>>(p + threadIdx.x + r);
                  }
                }
                int main() { parent<<<1, 32>>>(0, 3); return 0; }
                """, ALL);
        String k = outs.get("kernel");
        assertTrue(k.contains("klap::krecord<klap_args_child>(klap_ks, 0u,"), "one record per launch, all rounds in one grid:\n" + k);
        assertFalse(k.contains("krecord_seq") || k.contains("klap_seq"), k);
        assertTrue(k.contains("klap::kfinish(klap_ks, 0u,") && k.contains("klap::host_kstate(1, parent_klap_grid_karena)), klap::host_kstate_done());"), k);
    }

    @Test
    void kernelLaunchInLoopIntoNullStream() throws IOException {
        String src = CHILD + """
                __global__ void parent(int* p, int n) {
                  for (int r = 0; r < n; r++) {
                    child<<<1, 32, 0, 0>>>(p + threadIdx.x + r);
                  }
                }
                int main() { parent<<<1, 32>>>(0, 3); return 0; }
                """;
        transformed("k_loop_null.cu", src, WB);
        String k = transformedWith("note", "k_loop_null.cu", src, 4, 5, "kernel-per-round", KERNEL).get("kernel");
        assertTrue(k.contains("{ [&]() { unsigned klap_seq = 0;")
                && k.contains("klap::krecord_seq<klap_args_child>(klap_ks, 0u, 1u, 0u, klap_seq, "), k);
        assertTrue(k.contains("klap::kfinish(klap_ks, 1u,")
                && k.contains("klap::host_kstate(0 + KLAP_KERNEL_MAX_ORDERED * 1, parent_klap_grid_karena)), klap::host_kstate_done());"), k);
        // a note, not a warning: --Werror still transforms it
        Path in = dir.resolve("k_loop_null.cu");
        Path out = dir.resolve("k_loop_null.werror.cu");
        Cli.Run r = Cli.klap("--Werror", "--granularity=kernel", in.toString(), "-o", out.toString());
        assertEquals(0, r.rc(), r.toString());
        assertTrue(Files.exists(out));
    }

    @Test
    void kernelUnaggregatedLaunchOfKernelWithState() throws IOException {
        String expr = CHILD + """
                __global__ void parent(int* p) {
                  child<<<1, 32>>>(p + threadIdx.x);
                }
                __global__ void top(int* p) {
                  bool ok = (parent<<<1, 32>>>(p), true);
                  (void)ok;
                }
                """;
        // at warp/block: the launch of 'child' in 'parent' is aggregated, the one of 'parent' in 'top' stays as written
        for (String g : WB) {
            Outcome o = klap(g, "k_state_expr.cu", expr);
            assertEquals(0, o.run().rc(), o.run().toString());
            assertDiagnostic(o, "warning", "k_state_expr.cu", 6, 14, "launch-in-expression");
            assertTrue(o.output().contains("bool ok = (parent<<<1, 32>>>(p), true);"), o.output());
        }
        // kernel granularity: 'parent' keeps its signature, so the launch left as written runs it as written
        transformedWith("warning", "k_state_expr.cu", expr, 6, 14, "launch-in-expression", KERNEL);
        String hd = CHILD + """
                __global__ void parent(int* p) {
                  child<<<1, 32>>>(p + threadIdx.x);
                }
                __host__ __device__ void both(int* p) { parent<<<1, 1>>>(p); }
                """;
        for (String g : WB) {
            Outcome o = klap(g, "k_state_hd.cu", hd);
            assertEquals(0, o.run().rc(), o.run().toString());
            assertDiagnostic(o, "warning", "k_state_hd.cu", 5, 41, "launch-host-device");
            assertTrue(o.output().contains("{ parent<<<1, 1>>>(p); }"), o.output());
        }
        transformedWith("warning", "k_state_hd.cu", hd, 5, 41, "launch-host-device", KERNEL);
    }

    @Test
    void kernelHostReferenceToKernelWithState() throws IOException {
        String ref = CHILD + """
                __global__ void parent(int* p) {
                  child<<<1, 32>>>(p + threadIdx.x);
                }
                int main() {
                  void (*k)(int*) = parent;
                  (void)k;
                  return 0;
                }
                """;
        transformed("k_state_ref.cu", ref, WB);
        String k = transformedWith("note", "k_state_ref.cu", ref, 6, 21, "kernel-state-ref", KERNEL).get("kernel");
        assertTrue(k.contains("void (*k)(int*) = parent;"), "the reference is left as written");
        String launchKernel = CHILD + """
                __global__ void parent(int* p) {
                  child<<<1, 32>>>(p + threadIdx.x);
                }
                int main() {
                  int* p = 0;
                  void* args[] = {&p};
                  cudaLaunchKernel((void*)parent, dim3(1), dim3(32), args, 0, 0);
                  return 0;
                }
                """;
        transformed("k_state_launchkernel.cu", launchKernel, WB);
        transformedWith("note", "k_state_launchkernel.cu", launchKernel, 8, 27, "kernel-state-ref", KERNEL);
    }

    @Test
    void kernelRecursiveKernel() throws IOException {
        Map<String, String> outs = transformed("k_recursion.cu", """
                __global__ void build(int* out, int depth);
                __global__ void build(int* out, int depth) {
                  if (threadIdx.x < 4 && depth < 5) build<<<1, blockDim.x>>>(out, depth + 1);
                  out[blockIdx.x] = depth;
                }
                int main() { build<<<1, 32>>>(0, 0); return 0; }
                """, ALL);
        String k = outs.get("kernel");
        for (String s : new String[] {
            "__global__ __launch_bounds__(1024) void build_klap_grid(int* out, int depth, klap::kstate* klap_ks);",
            "__global__ void build(int* out, int depth);",
            "__global__ __launch_bounds__(1024) void build_klap_kagg_vv(const klap::ksite* klap_site, klap::kstate* klap_ks) {",
            "klap::kstate* klap_cks = klap::kstate_new(1, klap::on_full::launch_as_written, klap_ksite); build_klap_kagg_vv<<<",
            "build_klap_grid<<<1, 32, 0, klap::host_prepare(0, klap::host_warps(1, 32))>>>(0, 0, klap::host_kstate(1, build_klap_grid_karena)), klap::host_kstate_done());"}) {
            assertTrue(k.contains(s), "expected '" + s + "' in:\n" + k);
        }
    }

    @Test
    void kernelEarlyReturnBeforeLaunch() throws IOException {
        Map<String, String> outs = transformed("k_early_return.cu", CHILD + """
                __global__ void parent(int* p, const int* cnt, int n) {
                  int v = blockIdx.x * blockDim.x + threadIdx.x;
                  if (v >= n) return;
                  int count = cnt[v];
                  if (count > 0) child<<<(count + 31) / 32, 32>>>(p + v);
                }
                """, ALL);
        assertTrue(outs.get("block").contains("if (v >= n) {} else {"), outs.get("block"));
        String k = outs.get("kernel");
        assertTrue(k.contains("{ [&]() {\n  int v = blockIdx.x * blockDim.x + threadIdx.x;\n  if (v >= n) return;\n"), k);
        assertFalse(k.contains("{} else {"), "no guard rewriting at kernel granularity:\n" + k);
    }

    @Test
    void kernelDeviceMalloc() throws IOException {
        Map<String, String> outs = transformed("k_malloc.cu", CHILD + """
                __global__ void parent(int* p, int n) {
                  int* buf;
                  cudaMalloc(&buf, n * sizeof(int));
                  child<<<1, 32>>>(buf + threadIdx.x);
                }
                """, ALL);
        assertTrue(outs.get("warp").contains("klap::group_malloc(klap::warp_group::of(klap_blk), (void**)(&buf), n * sizeof(int));"));
        assertTrue(outs.get("block").contains("klap::group_malloc(klap_blk, (void**)(&buf), n * sizeof(int));"));
        String k = outs.get("kernel");
        assertTrue(k.contains("{ [&]() { klap::block_group klap_blk = klap::block_group::hardware();")
                && k.contains("klap::group_malloc(klap_blk, (void**)(&buf), n * sizeof(int));"), k);
    }

    // ------------------------------------------------------------------ issue 10: the GPU's miscompiles

    @Test
    void valueWrittenThroughReferenceParameter() throws IOException {
        Map<String, String> out = transformed("ref_out.cu", """
                __global__ void child(const int* col, int b, int* out) { out[b + threadIdx.x] = col[b]; }
                __device__ void row_range(const int* ptr, int r, int& b, int& e) { b = ptr[r]; e = ptr[r + 1]; }
                __global__ void parent(const int* ptr, const int* col, int* out) {
                  int b = 0, e = 0;
                  row_range(ptr, blockIdx.x * blockDim.x + threadIdx.x, b, e);
                  if (e > b) child<<<1, e - b>>>(col, b, out);
                }
                """, ALL);
        assertTrue(out.get("block").contains("child_klap_agg_uvu("), "b is per thread: " + out.get("block"));
        assertTrue(out.get("kernel").contains("child_klap_kagg_uvu("), out.get("kernel"));
    }

    @Test
    void barrierAfterGuardedReturn() throws IOException {
        String src = CHILD + """
                __global__ void parent(int* p, int n) {
                  int i = blockIdx.x * blockDim.x + threadIdx.x;
                  if (i >= n) return;
                  __syncthreads();
                  if (p[i]) child<<<1, 32>>>(p + i);
                }
                """;
        barrierAfterGuardedReturn("barrier_return.cu", src, 6);
    }

    /**
     * The barrier-after-a-guarded-return rule on {@code src}, whose launch is at {@code line}:13: the
     * warp variant transformed, per warp at block granularity with the guard not rewritten, and per
     * warp in place at kernel granularity (kfinish's block barrier would pair with the user's).
     */
    private void barrierAfterGuardedReturn(String name, String src, int line) throws IOException {
        transformed(name, src, "warp");
        Map<String, String> b = transformedWith("warning", name, src, line, 13, "granularity-fallback", "block");
        assertFalse(b.get("block").contains("if (i >= n) {} else {"), "the returning threads must really leave");
        Outcome k = klap("kernel", name, src);
        assertEquals(0, k.run().rc(), k.run().toString());
        assertDiagnostic(k, "warning", name, line, 13, "granularity-fallback");
        assertFalse(k.output().contains("klap::kfinish("), k.output());
    }

    /** 2026-11-28: the same with the barrier in {@code asm} written through a macro (it was missed: a hang). */
    @Test
    void asmBarrierMacroAfterGuardedReturn() throws IOException {
        String src = CHILD + """
                #define BARRIER() asm volatile("bar.sync 0;" ::: "memory")
                __global__ void parent(int* p, int n) {
                  int i = blockIdx.x * blockDim.x + threadIdx.x;
                  if (i >= n) return;
                  BARRIER();
                  if (p[i]) child<<<1, 32>>>(p + i);
                }
                """;
        barrierAfterGuardedReturn("asm_barrier.cu", src, 7);
    }

    /**
     * 2026-11-29: the same with a collective of a library klap reads no header of (CUB's BlockReduce
     * holds a {@code __syncthreads()}; cooperative groups' {@code tile.shfl}, {@code cg::reduce}, ...: {@code
     * UnseenCodeTest.libraryCollectivesAfterAGuardedReturnKeepTheReturn}). It was no synchronization
     * site: the guard was rewritten at warp and block granularity, and at kernel granularity the
     * returned threads went on to {@code kfinish}'s barrier (the hang of issue 10, case 1).
     */
    @Test
    void libraryCollectiveAfterGuardedReturn() throws IOException {
        String src = CHILD + """
                #include <cub/block/block_reduce.cuh>
                __global__ void parent(int* p, int n) {
                  using BR = cub::BlockReduce<int, 128>;
                  __shared__ typename BR::TempStorage tmp;
                  int i = blockIdx.x * blockDim.x + threadIdx.x;
                  if (i >= n) return;
                  int s = BR(tmp).Sum(p[i], n - (int)(blockIdx.x * blockDim.x));
                  if (p[s]) child<<<1, 32>>>(p + i);
                }
                """;
        barrierAfterGuardedReturn("library_collective.cu", src, 9);
    }

    @Test
    void exitAfterLaunchInItsRegion() throws IOException {
        Map<String, String> out = transformed("exit_after_launch.cu", CHILD + """
                __global__ void parent(int* p, int n) {
                  int i = blockIdx.x * blockDim.x + threadIdx.x;
                  if (i >= n) return;
                  child<<<1, 32>>>(p + i);
                  if (blockIdx.x % 2) return;
                  child<<<1, 8>>>(p + n + i);
                }
                """, ALL);
        for (String g : new String[] {"warp", "block"}) {
            String t = out.get(g);
            assertTrue(t.contains("if (blockIdx.x % 2) { klap_x0 = 1; goto klap_r0; }"), t);
            assertTrue(t.matches("(?s).*\\} klap_r0:; klap_s0\\.flush\\(.*klap_s1\\.flush\\(.*if \\(klap_x0 == 1\\) return; \\}.*"), t);
        }
        String k = out.get("kernel");
        assertTrue(k.contains("if (blockIdx.x % 2) return;") && k.contains("klap::kfinish("), k);
    }

    @Test
    void inPlaceLaunchInLoop() throws IOException {
        String src = """
                __global__ void child(int* a, int r, int i) { a[(r * 64 + i) * 32 + threadIdx.x] += r; }
                __global__ void parent(int* a, int n, int k) {
                  int i = blockIdx.x * blockDim.x + threadIdx.x;
                  if (i >= n) return;
                  __syncthreads();
                  for (int r = 0; r < 1 + i % 3; ++r) {
                    int q = r * 2;
                    child<<<1, 4>>>(a, q, k);
                  }
                }
                """;
        String w = transformed("in_place_loop.cu", src, "warp").get("warp");
        assertTrue(w.contains("child_klap_agg_uvu<<<") && !w.contains("child_klap_agg_uuu"), w);
        assertTrue(w.contains("klap::group_any(klap::warp_group::from_mask(klap_live), klap_on0 = klap_on0 && (r < 1 + i % 3))")
                && !w.contains("warp_group::active()"), w);
        for (String g : new String[] {"block", "kernel"}) {
            Outcome o = klap(g, "in_place_loop.cu", src);
            assertEquals(0, o.run().rc(), o.run().toString());
            assertDiagnostic(o, "warning", "in_place_loop.cu", 8, 5, "granularity-fallback");
            assertTrue(o.output().contains("child_klap_agg_uvu<<<") && !o.output().contains("child_klap_agg_uuu"), o.output());
        }
    }

    /** A kernel whose launch sits in a uniform loop of rounds after a guarded return: {@code body} is the loop's body. */
    private static String roundsAfterGuard(String body) {
        return """
                __global__ void child(int* a, int r, int i) { a[(r * 64 + i) * 32 + threadIdx.x] += r; }
                __global__ void parent(int* a, const unsigned* fl, int n, int k) {
                  int i = blockIdx.x * blockDim.x + threadIdx.x;
                  if (i >= n) return;
                  for (int r = 0; r < k; ++r) {
                    BODY
                  }
                }
                """.replace("BODY", body);
    }

    /** At kernel granularity the launch of {@code src} is recorded grid-wide (no warp collective). */
    private void recordedGridWide(String name, String src) throws IOException {
        Outcome o = klap("kernel", name, src);
        assertEquals(0, o.run().rc(), o.run().toString());
        assertTrue(o.output().contains("klap::krecord") && !o.output().contains("klap_live")
                && !o.output().contains("loop-divergent-site"), o.output());
    }

    @Test
    void launchUnderABranchInAUniformLoopAfterAGuard() throws IOException {
        String src = roundsAfterGuard("if ((fl[i] >> r) & 1u) child<<<1, 4>>>(a, r, i);");
        for (String g : new String[] {"warp", "block"}) {
            Outcome o = klap(g, "skip_loop.cu", src);
            assertEquals(0, o.run().rc(), o.run().toString());
            if (g.equals("warp")) {
                assertEquals(0, o.warnings(), o.run().toString());
            } else {
                assertDiagnostic(o, "warning", "skip_loop.cu", 6, 28, "granularity-fallback");
            }
            assertTrue(o.output().contains("unsigned klap_live = klap::warp_group::of(klap_blk).mask(); "
                    + "if (klap::guard_exit(klap_live, static_cast<bool>(i >= n))) return;")
                    && o.output().contains("{ auto klap_g0 = klap::warp_group::from_mask(klap_live); auto klap_s0 = klap::agg_begin")
                    && o.output().contains("child_klap_agg_uuv<<<") && !o.output().contains("warp_group::active()"), o.output());
        }
        recordedGridWide("skip_loop.cu", src);
    }

    @Test
    void launchInADeviceFunctionCalledWhereLanesSkipIt() throws IOException {
        String src = """
                __global__ void child(int* a, int r, int i) { a[(r * 64 + i) * 32 + threadIdx.x] += r; }
                __device__ void spawn(int* a, int r, int i) { child<<<1, 4>>>(a, r, i); }
                __device__ void relay(int* a, int r, int i) { spawn(a, r, i); }
                __global__ void parent(int* a, const unsigned* fl, int n, int k) {
                  int i = blockIdx.x * blockDim.x + threadIdx.x;
                  if (i >= n) return;
                  for (int r = 0; r < k; ++r) if ((fl[i] >> r) & 1u) relay(a, r, i);
                }
                """;
        for (String g : new String[] {"warp", "block", "kernel"}) {
            Outcome o = klap(g, "skip_call.cu", src);
            assertEquals(0, o.run().rc(), o.run().toString());
            assertEquals(1, o.warnings(), o.run().toString());
            assertDiagnostic(o, "warning", "skip_call.cu", 2, 47, "loop-divergent-site");
            assertTrue(o.output().contains("child<<<1, 4>>>(a, r, i);") && !o.output().contains("agg_begin"), o.output());
        }
        // called once, outside any loop: aggregated in place as before
        transformedWith("warning", "call_once.cu", src.replace("for (int r = 0; r < k; ++r) if ((fl[i] >> r) & 1u) relay(a, r, i);",
                "if (fl[i] & 1u) relay(a, 0, i);"), 2, 47, "granularity-fallback", "block");
    }

    @Test
    void inPlaceLaunchThatLanesSkipInALoop() throws IOException {
        String src = roundsAfterGuard("__syncwarp(__activemask()); if ((fl[i] >> r) & 1u) child<<<1, 4>>>(a, r, i); "
                + "if (fl[i] == 9u + r) return;");
        // (at kernel granularity too: the warp collective after the guarded return keeps it from the grid-wide path)
        for (String g : new String[] {"warp", "block", "kernel"}) {
            Outcome o = klap(g, "skip_loop.cu", src);
            assertEquals(0, o.run().rc(), o.run().toString());
            assertDiagnostic(o, "warning", "skip_loop.cu", 6, 56, "loop-divergent-site");
            assertTrue(o.output().contains("child<<<1, 4>>>(a, r, i);") && !o.output().contains("agg_begin")
                    && !o.output().contains("krecord"), o.output());
        }
    }

    @Test
    void launchBeforeAThreadDependentReturnInItsLoop() throws IOException {
        String src = roundsAfterGuard("if ((fl[i] >> r) & 1u) child<<<1, 4>>>(a, r, i); if (fl[i] == 9u + r) return;");
        for (String g : new String[] {"warp", "block"}) {
            Outcome o = klap(g, "return_loop.cu", src);
            assertEquals(0, o.run().rc(), o.run().toString());
            if (g.equals("warp")) {
                assertEquals(0, o.warnings(), o.run().toString());
            } else {
                assertDiagnostic(o, "warning", "return_loop.cu", 6, 28, "granularity-fallback");
            }
            // a convergent loop over the lanes that passed the kernel's return; the loop's return goes through
            // the flush, ends the thread's iterations and is taken after the loop, leaving the lanes' mask
            assertTrue(o.output().contains("{ bool klap_on0 = true; bool klap_ret0 = false; for (int r = 0; klap::group_any("
                    + "klap::warp_group::from_mask(klap_live), klap_on0 = klap_on0 && (r < k)); klap_on0 ? (void)(++r) : (void)0)")
                    && o.output().contains("if (fl[i] == 9u + r) { klap_x0 = 1; goto klap_r0; }")
                    && o.output().contains("if (klap_x0 == 1) { klap_on0 = false; klap_ret0 = true; } } "
                            + "if (klap::guard_exit(klap_live, klap_ret0)) return; }")
                    && !o.output().contains("warp_group::active()"), o.output());
        }
        recordedGridWide("return_loop.cu", src);
    }

    @Test
    void launchAfterAThreadDependentJumpOfItsLoop() throws IOException {
        String src = roundsAfterGuard("if ((fl[i] >> r) & 1u) continue; child<<<1, 4>>>(a, r, i); if (fl[i] == 9u + r) break;");
        for (String g : new String[] {"warp", "block"}) {
            Outcome o = klap(g, "jump_loop.cu", src);
            assertEquals(0, o.run().rc(), o.run().toString());
            if (g.equals("warp")) {
                assertEquals(0, o.warnings(), o.run().toString());
            } else {
                assertDiagnostic(o, "warning", "jump_loop.cu", 6, 38, "granularity-fallback");
            }
            // a convergent loop over the lanes that passed the return; both jumps go through the flush
            assertTrue(o.output().contains("{ bool klap_on0 = true; for (int r = 0; klap::group_any(klap::warp_group::from_mask("
                    + "klap_live), klap_on0 = klap_on0 && (r < k)); klap_on0 ? (void)(++r) : (void)0)")
                    && o.output().contains("if ((fl[i] >> r) & 1u) { klap_x0 = 3; goto klap_r0; }")
                    && o.output().contains("if (fl[i] == 9u + r) { klap_x0 = 2; goto klap_r0; }")
                    && o.output().contains("if (klap_x0 == 2) klap_on0 = false; if (klap_x0 == 3) continue;")
                    && !o.output().contains("warp_group::active()"), o.output());
        }
        recordedGridWide("jump_loop.cu", src);
    }

    @Test
    void launchInALoopTheLanesReachApart() throws IOException {
        String src = """
                __global__ void child(int* a, int r, int i) { a[(r * 64 + i) * 32 + threadIdx.x] += r; }
                __global__ void parent(int* a, const unsigned* fl, int n, int k) {
                  int i = blockIdx.x * blockDim.x + threadIdx.x;
                  if (fl[i] > 2u) {
                    for (int r = 0; r < k; ++r) {
                      if ((fl[i] >> r) & 1u) child<<<1, 4>>>(a, r, i);
                    }
                  }
                }
                """;
        for (String g : new String[] {"warp", "block"}) {
            Outcome o = klap(g, "apart_loop.cu", src);
            assertEquals(0, o.run().rc(), o.run().toString());
            if (g.equals("warp")) {
                assertEquals(0, o.warnings(), o.run().toString());
            } else {
                assertDiagnostic(o, "warning", "apart_loop.cu", 6, 30, "granularity-fallback");
            }
            // the lanes that enter the loop together run it as a convergent loop; r travels per record
            assertTrue(o.output().contains("{ bool klap_on0 = true; unsigned klap_arrived0 = klap::warp_group::active().mask(); "
                    + "for (int r = 0; klap::group_any(klap::warp_group::from_mask(klap_arrived0), klap_on0 = klap_on0 && (r < k));")
                    && o.output().contains("auto klap_g0 = klap::warp_group::from_mask(klap_arrived0);")
                    && o.output().contains("child_klap_agg_uvv<<<"), o.output());
        }
        recordedGridWide("apart_loop.cu", src);
    }

    @Test
    void dependentLaunchesOfOneThread() throws IOException {
        String src = """
                __global__ void produce(int* a, int i) { a[i * 32 + threadIdx.x] = i; }
                __global__ void consume(int* a, int i, int k) { a[i * 32 + threadIdx.x] += k; }
                __global__ void parent(int* a) {
                  int i = blockIdx.x * blockDim.x + threadIdx.x;
                  if (a[i] > 0) {
                    produce<<<1, 32>>>(a, i);
                    for (int k = 0; k < 3; ++k) consume<<<1, 32>>>(a, i, k);
                  }
                }
                """;
        transformedWith("warning", "dependent.cu", src, 6, 5, "launch-order", "warp");
        Outcome b = klap("block", "dependent.cu", src);
        assertEquals(0, b.run().rc(), b.run().toString());
        assertDiagnostic(b, "warning", "dependent.cu", 6, 5, "launch-order");
        assertDiagnostic(b, "warning", "dependent.cu", 7, 33, "granularity-fallback");
        transformedWith("note", "dependent.cu", src, 7, 33, "kernel-per-round", "kernel");
    }

    @Test
    void dependentLaunchesAfterTheKernelsReturns() throws IOException {
        String src = """
                __global__ void produce(int* a, int i) { a[i * 32 + threadIdx.x] = i; }
                __global__ void consume(int* a, int i, int k) { a[i * 32 + threadIdx.x] += k; }
                __global__ void parent(int* a, int n) {
                  int i = blockIdx.x * blockDim.x + threadIdx.x;
                  if (i >= n) return;
                  produce<<<1, 32>>>(a, i);
                  for (int k = 0; k < 3; ++k) consume<<<1, 32>>>(a, i, k);
                }
                """;
        Map<String, String> w = transformedWith("note", "dependent_guard.cu", src, 6, 3, "launch-order", "warp");
        Outcome b = klap("block", "dependent_guard.cu", src);
        assertEquals(0, b.run().rc(), b.run().toString());
        assertDiagnostic(b, "warning", "dependent_guard.cu", 6, 3, "launch-order");
        assertDiagnostic(b, "warning", "dependent_guard.cu", 7, 31, "granularity-fallback");
        for (String out : List.of(w.get("warp"), b.output())) {
            // both among the lanes that passed the return: produce's region ends with its own statement
            assertTrue(out.contains("{ auto klap_g0 = klap::warp_group::from_mask(klap_live);")
                    && !out.contains("warp_group::active()"), out);
        }
        transformedWith("note", "dependent_guard.cu", src, 7, 31, "kernel-per-round", "kernel");
    }

    @Test
    void kernelAttributesAreCopiedToVariants() throws IOException {
        Map<String, String> out = transformed("attrs.cu", CHILD + """
                __global__ void parent(int* p) { child<<<1, 32>>>(p + 32 * threadIdx.x); }
                int main() {
                  cudaFuncSetAttribute(child, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536);
                  parent<<<1, 32>>>(0);
                  return 0;
                }
                """, ALL);
        assertTrue(out.get("block").contains("(cudaFuncSetAttribute(child_klap_agg_v, cudaFuncAttributeMaxDynamicSharedMemorySize, "
                + "65536), cudaFuncSetAttribute(child, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536));"), out.get("block"));
        assertTrue(out.get("kernel").contains("cudaFuncSetAttribute(child_klap_kagg_v,"), out.get("kernel"));
    }

    /**
     * The kernel named through a cast, {@code &}, {@code reinterpret_cast} or an object-like macro:
     * the variants get the attribute too (2026-11-28: klap read the argument's text as the kernel's
     * name, found none, and left the call alone without a warning; the variants' launches with more
     * than 48 KiB of dynamic shared memory would fail). A macro use of a macro-named kernel inside a
     * macro's argument is reported, not rewritten.
     */
    @Test
    void kernelAttributesOfAKernelNamedThroughACastOrAMacroAreCopied() throws IOException {
        Map<String, String> out = transformed("attrs_cast.cu", CHILD + """
                #define KCHILD child
                #define KPTR (const void*)child
                __global__ void parent(int* p) { child<<<1, 32>>>(p + 32 * threadIdx.x); }
                int main() {
                  cudaFuncSetAttribute((const void*)child, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536);
                  cudaFuncSetAttribute(reinterpret_cast<const void*>(&KCHILD), cudaFuncAttributeMaxDynamicSharedMemorySize, 1);
                  cudaFuncSetAttribute(KPTR /* child */, cudaFuncAttributePreferredSharedMemoryCarveout, 2);
                  parent<<<1, 32>>>(0);
                  return 0;
                }
                """, ALL);
        String b = out.get("block");
        assertTrue(b.contains("(cudaFuncSetAttribute((const void*)child_klap_agg_v, cudaFuncAttributeMaxDynamicSharedMemorySize, "
                + "65536), cudaFuncSetAttribute((const void*)child, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536));"), b);
        assertTrue(b.contains("(cudaFuncSetAttribute(reinterpret_cast<const void*>(&child_klap_agg_v), "
                + "cudaFuncAttributeMaxDynamicSharedMemorySize, 1), cudaFuncSetAttribute(reinterpret_cast<const void*>(&KCHILD), "), b);
        assertTrue(b.contains("(cudaFuncSetAttribute(child_klap_agg_v /* child */, cudaFuncAttributePreferredSharedMemoryCarveout, "
                + "2), cudaFuncSetAttribute(KPTR /* child */, "), b);
        assertTrue(out.get("kernel").contains("(cudaFuncSetAttribute(reinterpret_cast<const void*>(&child_klap_kagg_v), "),
                out.get("kernel"));
        String inArgument = CHILD + """
                #define KCHILD child
                #define CHECK(x) do { if ((x) != cudaSuccess) return 1; } while (0)
                __global__ void parent(int* p) { child<<<1, 32>>>(p + 32 * threadIdx.x); }
                int main() {
                  CHECK(cudaFuncSetAttribute(KCHILD, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536));
                  parent<<<1, 32>>>(0);
                  return 0;
                }
                """;
        for (String g : ALL) {
            Outcome o = klap(g, "attrs_cast2.cu", inArgument);
            assertEquals(0, o.run().rc(), o.run().toString());
            assertDiagnostic(o, "warning", "attrs_cast2.cu", 6, 3, "attribute-in-macro");
        }
    }

    /**
     * A launch whose explicit template arguments name a local of the parent (a constexpr variable,
     * a local alias): at warp and block granularity the flush is inside the body, so nothing
     * changes; at kernel granularity klap::kfinish, after the body, could not name them, so the
     * launch is aggregated per warp in place, with the warning (nvcc said "identifier 'W' is
     * undefined" before; the three outputs of this program were built by hand with nvcc 13).
     */
    @Test
    void templateArgumentsThatNameALocalAreNotGridWide() throws IOException {
        String src = """
                template <class T, int N> __global__ void child(T* p) { p[threadIdx.x] = T(N); }
                template <int B> __global__ void parent(int* p) {
                  constexpr int W = B * 2;
                  using U = int;
                  child<U, W><<<1, 32>>>(p + 32 * threadIdx.x);
                }
                template <int B> __global__ void other(int* p) { child<int, B><<<1, 32>>>(p + 32 * threadIdx.x); }
                __global__ void enumerated(int* p) {
                  enum { E = 3 };
                  child<int, E><<<1, 32>>>(p + 32 * threadIdx.x);
                }
                __global__ void suffixed(int* p) {
                  unsigned u = threadIdx.x;
                  child<int, 32u><<<1, 32>>>(p + 32 * u);
                }
                int main() {
                  parent<4><<<1, 32>>>(nullptr); other<4><<<1, 32>>>(nullptr);
                  enumerated<<<1, 32>>>(nullptr); suffixed<<<1, 32>>>(nullptr);
                  return 0;
                }
                """;
        for (String g : ALL) {
            Outcome o = klap(g, "targs_local.cu", src);
            assertEquals(0, o.run().rc(), o.run().toString());
            if (g.equals("kernel")) {
                assertDiagnostic(o, "warning", "targs_local.cu", 5, 3, "granularity-fallback");
                assertTrue(o.run().err().contains("its template arguments name 'U'"), o.run().err());
                // a local enumerator too (a declaration without a variable)
                assertDiagnostic(o, "warning", "targs_local.cu", 10, 3, "granularity-fallback");
                assertTrue(o.run().err().contains("its template arguments name 'E'"), o.run().err());
                // the launch that names only the kernel's own template parameter stays grid-wide, and
                // so does one whose literal's suffix is a local's name (32u, local u)
                assertTrue(o.output().contains("klap::klaunch_pair<klap_args_child<int, B>>"), o.output());
                assertTrue(o.output().contains("klap::klaunch_pair<klap_args_child<int, 32u>>"), o.output());
                assertFalse(o.output().contains("klap::klaunch_pair<klap_args_child<U, W>>"), o.output());
            } else {
                assertFalse(o.run().err().contains("template arguments name"), o.run().err());
            }
        }
    }

    /**
     * An attribute set through an expression that names no kernel of the file (a {@code const void*}
     * variable): klap cannot give the child's aggregated forms the attribute. A refused aggregated
     * launch runs its children as written (runtime: flush at warp and block granularity, kfinish at
     * kernel granularity): a note. The call is kept as written; nothing is said for
     * a file without aggregated child forms, for a call that names the kernel, for an attribute that
     * only changes speed (the carveout), or for {@code cudaFuncSetCacheConfig}.
     */
    @Test
    void attributeSetThroughAnExpressionThatNamesNoKernelIsReported() throws IOException {
        String src = CHILD + """
                __global__ void parent(int* p) { child<<<1, 32>>>(p + 32 * threadIdx.x); }
                int main() {
                  const void* k = (const void*)child;
                  cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536);
                  cudaFuncSetCacheConfig(k, cudaFuncCachePreferL1);
                  cudaFuncSetAttribute(k, cudaFuncAttributePreferredSharedMemoryCarveout, 50);
                  cudaFuncSetAttribute(child, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536);
                  parent<<<1, 32>>>(0);
                  return 0;
                }
                """;
        for (String g : ALL) {
            Outcome o = klap(g, "attrs_unresolved.cu", src);
            assertEquals(0, o.run().rc(), o.run().toString());
            assertDiagnostic(o, "note", "attrs_unresolved.cu", 5, 3, "attribute-unresolved");
            assertEquals(1, o.run().err().lines().filter(l -> l.contains("[klap-attribute-unresolved]")).count(), o.run().err());
            assertTrue(o.output().contains("  cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536);\n"),
                    o.output());
        }
        // no aggregated child form in the file: nothing to say
        Outcome none = klap("block", "attrs_unresolved2.cu", CHILD + """
                int main() {
                  const void* k = (const void*)child;
                  cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536);
                  child<<<1, 32>>>(0);
                  return 0;
                }
                """);
        assertEquals(0, none.run().rc(), none.run().toString());
        assertFalse(none.run().err().contains("attribute-unresolved"), none.run().err());
    }

    @Test
    void kernelAttributesSetInACheckMacroAreCopiedToVariants() throws IOException {
        Map<String, String> out = transformed("attrs_check.cu", CHILD + """
                #define CHECK(x) do { if ((x) != cudaSuccess) return 1; } while (0)
                __global__ void parent(int* p) { child<<<1, 32>>>(p + 32 * threadIdx.x); }
                int main() {
                  CHECK(cudaFuncSetAttribute(child, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536));
                  CHECK(cudaFuncSetAttribute(parent, cudaFuncAttributePreferredSharedMemoryCarveout, 50));
                  parent<<<1, 32>>>(0);
                  return 0;
                }
                """, ALL);
        // the call in the macro's argument is rewritten there: the macro still checks the user's own call
        assertTrue(out.get("block").contains("CHECK((cudaFuncSetAttribute(child_klap_agg_v, cudaFuncAttributeMaxDynamicSharedMemorySize, "
                + "65536), cudaFuncSetAttribute(child, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536)));"), out.get("block"));
        assertTrue(out.get("kernel").contains("CHECK((cudaFuncSetAttribute(child_klap_kagg_v,"), out.get("kernel"));
        assertTrue(out.get("kernel").contains("CHECK((cudaFuncSetAttribute(parent_klap_grid, cudaFuncAttributePreferredSharedMemoryCarveout, "
                + "50), cudaFuncSetAttribute(parent, cudaFuncAttributePreferredSharedMemoryCarveout, 50)));"), out.get("kernel"));
    }

    @Test
    void kernelAttributesSetInAMacrosBodyAreReported() throws IOException {
        String src = CHILD + """
                #define BIG_SMEM(k) cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536)
                __global__ void parent(int* p) { child<<<1, 32>>>(p + 32 * threadIdx.x); }
                int main() {
                  BIG_SMEM(child);
                  parent<<<1, 32>>>(0);
                  return 0;
                }
                """;
        for (String g : ALL) {
            Outcome o = klap(g, "attrs_body.cu", src);
            assertEquals(0, o.run().rc(), o.run().toString());
            assertDiagnostic(o, "warning", "attrs_body.cu", 5, 3, "attribute-in-macro");
            assertTrue(o.output().contains("  BIG_SMEM(child);\n"), o.output());
        }
    }
}
