package klap.fuzz;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One test per row of {@code docs/constructs.md}: the real CLI on a snippet, at warp and at block
 * granularity, with the documented outcome (transformed / transformed with warning {@code klap-ID} at
 * line:col / left unchanged with a warning / refused with error {@code klap-ID} at line:col). Every
 * run also checks that the input is unchanged, that no temporary file is left, and that an output
 * file exists exactly when the exit code is 0.
 */
class ConstructsTableTest {
    @TempDir
    Path dir;

    /** The outcome of one run: what klap printed and wrote. */
    record Outcome(Cli.Run run, String input, String output) {
        long warnings() {
            return run.err().lines().filter(l -> l.contains(": warning: ")).count();
        }

        long errors() {
            return run.err().lines().filter(l -> l.contains(": error: ")).count();
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

    /** Transformed without diagnostics at both granularities; returns the block-granularity output. */
    private String transformed(String name, String src) throws IOException {
        String block = null;
        for (String g : new String[] {"warp", "block"}) {
            Outcome o = klap(g, name, src);
            assertEquals(0, o.run().rc(), o.run().toString());
            assertEquals(0, o.warnings() + o.errors(), "expected no diagnostics at " + g + ": " + o.run());
            assertTrue(o.output().contains("_klap_agg"), "no aggregated variant at " + g);
            block = o.output();
        }
        return block;
    }

    private void assertDiagnostic(Outcome o, String kind, String name, int line, int col, String id) {
        String where = dir.resolve(name) + ":" + line + ":" + col + ": " + kind + ": ";
        assertTrue(o.run().err().lines().anyMatch(l -> l.startsWith(where) && l.endsWith("[klap-" + id + "]")),
                "expected '" + where + "... [klap-" + id + "]' in:\n" + o.run().err());
    }

    /** Left unchanged with warning {@code id} at both granularities. */
    private void unchangedWithWarning(String name, String src, int line, int col, String id) throws IOException {
        for (String g : new String[] {"warp", "block"}) {
            Outcome o = klap(g, name, src);
            assertEquals(0, o.run().rc(), o.run().toString());
            assertDiagnostic(o, "warning", name, line, col, id);
            assertFalse(o.output().contains("_klap_agg"), "expected the launch not to be aggregated at " + g);
        }
    }

    /** Refused with error {@code id} at both granularities (exit 1, no output). */
    private void refused(String name, String src, int line, int col, String id) throws IOException {
        for (String g : new String[] {"warp", "block"}) {
            Outcome o = klap(g, name, src);
            assertEquals(1, o.run().rc(), o.run().toString());
            assertDiagnostic(o, "error", name, line, col, id);
        }
    }

    /** Aggregated per warp: silent at warp granularity, warning {@code granularity-fallback} at block. */
    private void warpFallback(String name, String src, int line, int col) throws IOException {
        Outcome w = klap("warp", name, src);
        assertEquals(0, w.run().rc(), w.run().toString());
        assertEquals(0, w.warnings(), w.run().toString());
        Outcome b = klap("block", name, src);
        assertEquals(0, b.run().rc(), b.run().toString());
        assertDiagnostic(b, "warning", name, line, col, "granularity-fallback");
        assertTrue(b.output().contains("klap::warp_group::active()"), "expected a per-warp launch");
        assertTrue(b.output().contains("_klap_agg"));
    }

    static final String CHILD = "__global__ void child(int* p) { p[threadIdx.x] = 1; }\n";

    // ------------------------------------------------------------------ rows of docs/constructs.md

    @Test
    void launchStatementInKernel() throws IOException {
        String out = transformed("plain.cu", CHILD + """
                __global__ void parent(int* p) {
                  child<<<1, 32>>>(p + 32 * threadIdx.x);
                }
                int main() { parent<<<1, 32>>>(0); return 0; }
                """);
        assertTrue(out.contains("klap::host_prepare()"), "host launch of the parent must prepare the pool");
    }

    @Test
    void launchInMacro() throws IOException {
        refused("macro.cu", CHILD + """
                #define LAUNCH(p) child<<<1, 32>>>(p)
                __global__ void parent(int* p) {
                  LAUNCH(p + threadIdx.x);
                }
                """, 4, 3, "launch-in-macro");
    }

    @Test
    void launchThroughFunctionPointer() throws IOException {
        unchangedWithWarning("fptr.cu", CHILD + """
                __global__ void parent(int* p) {
                  void (*fp)(int*) = child;
                  fp<<<1, 32>>>(p + threadIdx.x);
                }
                """, 4, 3, "child-not-defined");
    }

    @Test
    void launchInDeviceFunction() throws IOException {
        warpFallback("devfn.cu", CHILD + """
                __device__ void launch(int* p) { child<<<1, 32>>>(p); }
                __global__ void parent(int* p) {
                  launch(p + threadIdx.x);
                }
                """, 2, 34);
    }

    @Test
    void launchInHostDeviceFunction() throws IOException {
        unchangedWithWarning("hostdevice.cu", CHILD + """
                __host__ __device__ void launch(int* p) { child<<<1, 32>>>(p); }
                __global__ void parent(int* p) { launch(p + threadIdx.x); }
                """, 2, 43, "launch-host-device");
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
        unchangedWithWarning("lambda.cu", src, 3, 12, "launch-in-lambda");
        for (String g : new String[] {"warp", "block"}) {
            assertEquals(src, klap(g, "lambda.cu", src).output(), "the lambda's launch is left as written");
        }
    }

    @Test
    void launchOfTemplateChildWithExplicitArguments() throws IOException {
        String out = transformed("tmpl.cu", """
                template <typename T> __global__ void child(T* p) { p[threadIdx.x] = 1; }
                __global__ void parent(int* p) {
                  child<int><<<1, 32>>>(p + threadIdx.x);
                }
                """);
        assertTrue(out.contains("child_klap_agg_v<int>"), "the variant is instantiated with the same arguments");
    }

    @Test
    void launchOfTemplateChildWithDeducedArguments() throws IOException {
        unchangedWithWarning("tmpl_deduced.cu", """
                template <typename T> __global__ void child(T* p) { p[threadIdx.x] = 1; }
                __global__ void parent(int* p) {
                  child<<<1, 32>>>(p + threadIdx.x);
                }
                """, 3, 3, "template-args");
    }

    @Test
    void launchInTemplateParent() throws IOException {
        transformed("tmpl_parent.cu", CHILD + """
                template <int N> __global__ void parent(int* p) {
                  child<<<N, 32>>>(p + threadIdx.x);
                }
                int main() { parent<2><<<1, 32>>>(0); return 0; }
                """);
    }

    @Test
    void launchInUniformLoop() throws IOException {
        transformed("loop_uniform.cu", CHILD + """
                __global__ void parent(int* p, int n) {
                  for (int r = 0; r < n; r++) {
                    child<<<1, 32>>>(p + threadIdx.x + r);
                  }
                }
                """);
    }

    @Test
    void launchInDivergentLoop() throws IOException {
        warpFallback("loop_divergent.cu", CHILD + """
                __global__ void parent(int* p, const int* cnt) {
                  for (int r = 0; r < cnt[threadIdx.x]; r++) {
                    child<<<1, 32>>>(p + threadIdx.x + r);
                  }
                }
                """, 4, 5);
    }

    @Test
    void launchAfterEarlyReturn() throws IOException {
        String out = transformed("early_return.cu", CHILD + """
                __global__ void parent(int* p, int n) {
                  int i = blockIdx.x * blockDim.x + threadIdx.x;
                  if (i >= n) return;
                  child<<<1, 32>>>(p + i);
                }
                """);
        assertTrue(out.contains("if (i >= n) {} else {"), "the guard is made convergent");
    }

    @Test
    void launchAfterNestedDivergentReturn() throws IOException {
        warpFallback("nested_return.cu", CHILD + """
                __global__ void parent(int* p, int n) {
                  int i = blockIdx.x * blockDim.x + threadIdx.x;
                  if (i < n) {
                    if (p[i] == 0) return;
                    child<<<1, 32>>>(p + i);
                  }
                }
                """, 6, 5);
    }

    @Test
    void launchWithGotoInKernel() throws IOException {
        warpFallback("goto.cu", CHILD + """
                __global__ void parent(int* p) {
                  if (threadIdx.x == 0) goto done;
                  child<<<1, 32>>>(p + threadIdx.x);
                done:
                  return;
                }
                """, 4, 3);
    }

    @Test
    void launchUnderSwitch() throws IOException {
        transformed("switch.cu", CHILD + """
                __global__ void parent(int* p, int k) {
                  switch (threadIdx.x % 3) {
                    case 0: child<<<1, 32>>>(p + threadIdx.x); break;
                    case 1: child<<<2, 32>>>(p + threadIdx.x); break;
                    default: break;
                  }
                }
                """);
    }

    @Test
    void launchIntoFireAndForgetOrTailStream() throws IOException {
        for (String s : new String[] {"cudaStreamFireAndForget", "cudaStreamTailLaunch"}) {
            String out = transformed("stream_" + s + ".cu", CHILD + """
                    __global__ void parent(int* p) {
                      child<<<1, 32, 0, %s>>>(p + threadIdx.x);
                    }
                    """.formatted(s));
            assertTrue(out.contains("(cudaStream_t)(" + s + ")"), "the stream is kept: " + s);
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
        for (String g : new String[] {"warp", "block"}) {
            Outcome o = klap(g, "stream_thread.cu", src);
            assertEquals(0, o.run().rc(), o.run().toString());
            assertEquals(0, o.warnings(), o.run().toString());
            assertDiagnostic(o, "note", "stream_thread.cu", 5, 21, "stream-serialized");
            assertTrue(o.output().contains("(cudaStream_t)0"), "the aggregated launch goes into the NULL stream");
        }
    }

    @Test
    void launchFollowedByEventRecordInItsRegion() throws IOException {
        warpFallback("event.cu", CHILD + """
                __global__ void parent(int* p, int n, cudaEvent_t e) {
                  int i = threadIdx.x;
                  if (i >= n) return;
                  child<<<1, 32>>>(p + i);
                  cudaEventRecord(e, 0);
                }
                """, 5, 3);
    }

    @Test
    void deviceSideCudaDeviceSynchronize() throws IOException {
        refused("cdp1.cu", CHILD + """
                __global__ void parent(int* p) {
                  child<<<1, 32>>>(p);

                  cudaDeviceSynchronize();
                }
                """, 5, 3, "cdp1-sync");
    }

    @Test
    void childWithSyncthreadsAndSharedMemory() throws IOException {
        String out = transformed("sync_child.cu", """
                __global__ void child(int* p) {
                  __shared__ int s[32];
                  s[threadIdx.x] = threadIdx.x;
                  __syncthreads();
                  p[threadIdx.x] = s[31 - threadIdx.x];
                }
                __global__ void parent(int* p) {
                  child<<<1, 32>>>(p + 32 * threadIdx.x);
                }
                """);
        String variant = out.substring(out.indexOf("child_klap_agg_v(const klap::launch_cfg* klap_cfg, unsigned klap_n, "
                + "const klap_args_child* klap_args) {"));
        assertTrue(variant.contains("__syncthreads()") && variant.contains("s[klap_v.threadIdx.x]"), variant);
    }

    @Test
    void childReadingGridDimAndBlockIdx() throws IOException {
        String out = transformed("griddim.cu", """
                __global__ void child(int* p) { p[blockIdx.x * blockDim.x + threadIdx.x] = gridDim.x; }
                __global__ void parent(int* p) {
                  child<<<1 + threadIdx.x % 4, 32>>>(p + 128 * threadIdx.x);
                }
                """);
        assertTrue(out.contains("klap_v.gridDim.x") && out.contains("klap_v.blockIdx.x"), "virtual indices in the variant");
    }

    @Test
    void childWithDynamicSharedMemory() throws IOException {
        String out = transformed("dynshared.cu", """
                __global__ void child(int* p) { extern __shared__ int s[]; s[threadIdx.x] = 1; __syncthreads(); p[threadIdx.x] = s[0]; }
                __global__ void parent(int* p) {
                  child<<<1, 32, (1 + threadIdx.x % 4) * 32 * sizeof(int)>>>(p + 32 * threadIdx.x);
                }
                """);
        assertTrue(out.contains("(unsigned)((1 + threadIdx.x % 4) * 32 * sizeof(int))"), "per-thread size recorded");
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
                """, 10, 3, "child-cooperative-groups");
    }

    @Test
    void recursiveLaunch() throws IOException {
        String out = transformed("recursion.cu", """
                __global__ void node(int* p, int depth) {
                  p[threadIdx.x] += 1;
                  if (depth > 0 && threadIdx.x < 2) node<<<1, 32>>>(p + 32 * (threadIdx.x + 1), depth - 1);
                }
                """);
        assertTrue(out.contains("node_klap_agg_"), out);
    }

    @Test
    void launchInsideExpression() throws IOException {
        unchangedWithWarning("expr.cu", CHILD + """
                __global__ void parent(int* p) {
                  bool ok = (child<<<1, 32>>>(p + threadIdx.x), true);
                  (void)ok;
                }
                """, 3, 14, "launch-in-expression");
    }

    @Test
    void childDefinedInAnotherFile() throws IOException {
        unchangedWithWarning("extern_child.cu", """
                __global__ void child(int* p);
                __global__ void parent(int* p) {
                  child<<<1, 32>>>(p + threadIdx.x);
                }
                """, 3, 3, "child-not-defined");
    }

    @Test
    void launchRelyingOnDefaultArguments() throws IOException {
        unchangedWithWarning("defaultarg.cu", """
                __global__ void child(int* p, int k = 1) { p[threadIdx.x] = k; }
                __global__ void parent(int* p) {
                  child<<<1, 32>>>(p + threadIdx.x);
                }
                """, 3, 3, "argument-count");
    }

    @Test
    void deviceCudaMallocAndFree() throws IOException {
        String out = transformed("malloc.cu", CHILD + """
                __global__ void parent(int** q) {
                  int* buf;
                  if (cudaMalloc(&buf, 32 * sizeof(int)) == cudaSuccess) {
                    q[threadIdx.x] = buf;
                    child<<<1, 32>>>(buf);
                  }
                }
                __global__ void release(int** q) { cudaFree(q[threadIdx.x]); }
                """);
        assertTrue(out.contains("klap::group_malloc("), "cudaMalloc is aggregated");
        assertTrue(out.contains("klap::group_free("), "cudaFree is redirected");
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
    }
}
