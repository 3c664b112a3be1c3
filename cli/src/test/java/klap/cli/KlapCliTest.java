package klap.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The {@code klap} command as a user sees it: exit codes, stdout/stderr, files. */
class KlapCliTest {
    @TempDir
    Path dir;

    record Run(int rc, String out, String err) {
    }

    static Run klap(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int rc = Klap.run(args, new PrintWriter(out, true), new PrintWriter(err, true));
        return new Run(rc, out.toString(), err.toString());
    }

    static final String PROGRAM = """
            __global__ void child(int* p) { p[blockIdx.x * blockDim.x + threadIdx.x] = 1; }
            __global__ void parent(int* p, int n) {
              int i = blockIdx.x * blockDim.x + threadIdx.x;
              if (i >= n) return;
              child<<<2, 32>>>(p + 64 * i);
            }
            int main() { parent<<<1, 64>>>(0, 64); return 0; }
            """;

    @Test
    void helpAndVersion() {
        Run h = klap("--help");
        assertEquals(0, h.rc);
        assertTrue(h.out.contains("--granularity"), h.out);
        assertTrue(h.out.contains("Exit codes"), h.out);
        Run v = klap("--version");
        assertEquals(0, v.rc);
        assertTrue(v.out.startsWith("klap "), v.out);
    }

    @Test
    void usageErrorsExit2() {
        assertEquals(2, klap().rc);
        Run r = klap("--granularity=grid", "x.cu");
        assertEquals(2, r.rc);
        assertTrue(r.err.contains("expected warp, block or kernel"), r.err);
        assertEquals(2, klap("--pool-size=lots", "x.cu").rc);
        Run big = klap("--pool-size=2G", "x.cu");
        assertEquals(2, big.rc);
        assertTrue(big.err.contains("--pool-size must be between 64K and 1G"), big.err);
        assertEquals(2, klap("--pool-size=1K", "x.cu").rc);
    }

    static final String CHAIN = """
            __global__ void chain(int* p, int t, int n, long long acc) {
              __shared__ int s;
              if (threadIdx.x == 0) s = p[t];
              __syncthreads();
              if (threadIdx.x == 0 && t + 1 < n) chain<<<1, blockDim.x>>>(p, t + 1, n, acc + s);
              p[t] = (int)acc;
            }
            int main() { chain<<<1, 32>>>(0, 0, 4, 0); return 0; }
            """;

    @Test
    void promoteWritesThePromotedKernelAndThePromotionHeader() throws IOException {
        Path in = dir.resolve("chain.cu");
        Files.writeString(in, CHAIN);
        Path out = dir.resolve("out/chain.klap.cu");
        Run r = klap("--promote=PA", "--promote-depth=8", in.toString(), "-o", out.toString());
        assertEquals(0, r.rc, r.err);
        assertTrue(r.err.contains("note: 1 kernel promoted (PA-8): chain [klap-summary]"), r.err);
        String text = Files.readString(out);
        assertTrue(text.startsWith("#include \"klap/promote.cuh\" /* added by klap --promote=PA-8 */"), text);
        assertTrue(text.contains("chain_klap_pro<<<8u, (blockDim.x)"), text);
        assertTrue(Files.isRegularFile(dir.resolve("out/klap/promote.cuh")));
        Run p = klap("--promote=p", in.toString());
        assertEquals(0, p.rc, p.err);
        assertTrue(p.out.contains("new_pool<chain_klap_post>(1u)"), p.out);
    }

    static final String NP = """
            __global__ void dot(const float *a, float *y, int n) {
              float s = 0.0f;
            #pragma np parallel for reduction(+:s)
              for (int i = 0; i < n; i++) s += a[i * 64 + threadIdx.x];
              y[threadIdx.x] = s;
            }
            int main() { dot<<<1, 64>>>(nullptr, nullptr, 8); return 0; }
            """;

    @Test
    void npWritesTheCudaNpKernelAndItsHeader() throws IOException {
        Path in = dir.resolve("dot.cu");
        Files.writeString(in, NP);
        Path out = dir.resolve("out/dot.klap.cu");
        Run r = klap("--np=all", "--np-slaves=4", in.toString(), "-o", out.toString());
        assertEquals(0, r.rc, r.err);
        assertTrue(r.err.contains("note: 1 kernel transformed (--np=all): dot (intra-warp S=4, inter-warp S=4); "
                + "1 host launch rewritten [klap-summary]"), r.err);
        String text = Files.readString(out);
        assertTrue(text.startsWith("#include \"klap/np.cuh\" /* added by klap --np=all */"), text);
        assertTrue(text.contains("dot_klap_npi<<<klap_np_gd, klap_np_m * 4,") && text.contains("dot_klap_npw"), text);
        assertTrue(Files.isRegularFile(dir.resolve("out/klap/np.cuh")));
        assertEquals(NP, Files.readString(in), "the input is never modified");
    }

    @Test
    void npUsageErrorsExit2() {
        Run r = klap("--np=sideways", "x.cu");
        assertEquals(2, r.rc);
        assertTrue(r.err.contains("expected intra-warp, inter-warp or all"), r.err);
        r = klap("--np=intra-warp", "--promote=P", "x.cu");
        assertEquals(2, r.rc);
        assertTrue(r.err.contains("--np cannot be combined"), r.err);
        r = klap("--np=intra-warp", "--np-slaves=6", "x.cu");
        assertEquals(2, r.rc);
        assertTrue(r.err.contains("power of two"), r.err);
        assertEquals(0, klap("--np=inter-warp", "--np-slaves=6", "--help").rc);
        r = klap("--np-slaves=4", "x.cu");
        assertEquals(2, r.rc);
        assertTrue(r.err.contains("apply to --np"), r.err);
        assertEquals(2, klap("--np=all", "--np-shared-budget=2M", "x.cu").rc);
        assertEquals(2, klap("--np=all", "--np-slaves=64", "x.cu").rc);
    }

    @Test
    void leaveLaunchUsageErrorsExit2() {
        Run r = klap("--leave-launch=0", "x.cu");
        assertEquals(2, r.rc);
        assertTrue(r.err.contains("--leave-launch: 0 is not a line number"), r.err);
        r = klap("--leave-launch=3", "--promote=P", "x.cu");
        assertEquals(2, r.rc);
        assertTrue(r.err.contains("--leave-launch applies to aggregation"), r.err);
        r = klap("--leave-launch=3,x", "x.cu");
        assertEquals(2, r.rc);
        assertTrue(r.err.contains("--leave-launch"), r.err);
    }

    @Test
    void promoteUsageErrorsExit2() {
        Run r = klap("--promote=PX", "x.cu");
        assertEquals(2, r.rc);
        assertTrue(r.err.contains("expected P, PA, PO or PAO"), r.err);
        r = klap("--promote=P", "--promote-depth=4", "x.cu");
        assertEquals(2, r.rc);
        assertTrue(r.err.contains("--promote-depth applies to --promote=PA and --promote=PAO"), r.err);
        r = klap("--promote=PA", "--granularity=warp", "x.cu");
        assertEquals(2, r.rc);
        assertTrue(r.err.contains("cannot be combined"), r.err);
        assertEquals(2, klap("--promote=PAO", "--promote-depth=0", "x.cu").rc);
        assertEquals(2, klap("--promote-depth=4", "x.cu").rc);
    }

    @Test
    void transformsToAFileWithTheRuntimeHeadersAndLeavesTheInputAlone() throws IOException {
        Path in = dir.resolve("prog.cu");
        Files.writeString(in, PROGRAM);
        byte[] before = Files.readAllBytes(in);
        Path out = dir.resolve("out/prog.klap.cu");
        Run r = klap("--granularity=warp", "--pool-size=64M", in.toString(), "-o", out.toString());
        assertEquals(0, r.rc, r.err);
        assertArrayEquals(before, Files.readAllBytes(in));
        String text = Files.readString(out);
        assertTrue(text.startsWith("#define KLAP_POOL_SIZE_BYTES 67108864ull\n#include \"klap/klap.cuh\""), text);
        assertTrue(text.contains("klap::warp_group::of(klap_blk)"), text);
        assertTrue(Files.isRegularFile(dir.resolve("out/klap/klap.cuh")));
        assertTrue(Files.isRegularFile(dir.resolve("out/klap/aggregate.cuh")));
        try (Stream<Path> s = Files.list(dir.resolve("out"))) {
            assertFalse(s.anyMatch(p -> p.getFileName().toString().endsWith(".tmp")), "temporary file left behind");
        }
    }

    /**
     * A user's own file named like a runtime header next to the output is never replaced (review
     * 2026-12-01: {@code DIR/klap/promote.cuh} was silently overwritten): an error, and nothing is
     * written; an older klap header (its first line {@code // klap/NAME --}) is replaced.
     */
    @Test
    void aUsersOwnFileNamedLikeARuntimeHeaderIsNeverReplaced() throws IOException {
        Path in = dir.resolve("prog.cu");
        Files.writeString(in, PROGRAM);
        Path klapDir = Files.createDirectories(dir.resolve("out/klap"));
        Files.writeString(klapDir.resolve("pool.cuh"), "// my own pool\n");
        Path out = dir.resolve("out/prog.klap.cu");
        Run r = klap("--granularity=block", in.toString(), "-o", out.toString());
        assertEquals(1, r.rc, r.err);
        assertTrue(r.err.contains(klapDir.resolve("pool.cuh") + ": error: exists and was not written by klap"), r.err);
        assertEquals("// my own pool\n", Files.readString(klapDir.resolve("pool.cuh")));
        assertFalse(Files.exists(out), "nothing is written");
        assertFalse(Files.exists(klapDir.resolve("klap.cuh")), "nothing is written");
        // with --no-runtime-headers the output is written and the file stays
        r = klap("--granularity=block", "--no-runtime-headers", in.toString(), "-o", out.toString());
        assertEquals(0, r.rc, r.err);
        assertEquals("// my own pool\n", Files.readString(klapDir.resolve("pool.cuh")));
        // an older klap header is replaced
        Files.writeString(klapDir.resolve("pool.cuh"), "// klap/pool.cuh -- an older version\n");
        r = klap("--granularity=block", in.toString(), "-o", out.toString());
        assertEquals(0, r.rc, r.err);
        assertTrue(Files.readString(klapDir.resolve("pool.cuh")).contains("namespace klap"));
    }

    /**
     * {@code -o} into another directory: a quote-include that resolved next to the input is rewritten
     * relative to the output, so that nvcc still finds it (QuoteIncludes); one found next to the output
     * too, one in a comment, and one that resolves from neither directory stay as written.
     */
    @Test
    void quoteIncludesStillResolveFromTheOutputsDirectory() throws IOException {
        Path src = Files.createDirectories(dir.resolve("src"));
        Files.createDirectories(src.resolve("sub"));
        Files.writeString(src.resolve("params.h"), "#define CHILD_THREADS 32\n");
        Files.writeString(src.resolve("sub/more.h"), "#define MORE 1\n");
        Files.writeString(src.resolve("both.h"), "#define BOTH 1\n");
        Path outDir = Files.createDirectories(dir.resolve("build/out"));
        Files.writeString(outDir.resolve("both.h"), "#define BOTH 1\n");
        Path in = src.resolve("prog.cu");
        Files.writeString(in, """
                #include "params.h"
                  #  include "sub/more.h"
                #include "both.h"
                // #include "params.h" (a comment)
                #include <cstdio>
                """ + PROGRAM.replace("child<<<2, 32>>>", "child<<<2, CHILD_THREADS>>>"));
        Run r = klap("--granularity=block", "-I", src.toString(), in.toString(), "-o", outDir.resolve("prog.cu").toString());
        assertEquals(0, r.rc, r.err);
        String text = Files.readString(outDir.resolve("prog.cu"));
        assertTrue(text.contains("\n#include \"../../src/params.h\"\n"), text);
        assertTrue(text.contains("\n  #  include \"../../src/sub/more.h\"\n"), text);
        assertTrue(text.contains("\n#include \"both.h\"\n"), text);
        assertTrue(text.contains("// #include \"params.h\" (a comment)"), text);
        // next to the input: nothing to rebase
        Run same = klap("--granularity=block", in.toString(), "-o", src.resolve("prog.klap.cu").toString());
        assertEquals(0, same.rc, same.err);
        assertTrue(Files.readString(src.resolve("prog.klap.cu")).contains("\n#include \"params.h\"\n"));
    }

    @Test
    void withoutOutputTheResultGoesToStdout() throws IOException {
        Path in = dir.resolve("prog.cu");
        Files.writeString(in, PROGRAM);
        Run r = klap(in.toString());
        assertEquals(0, r.rc, r.err);
        assertTrue(r.out.contains("child_klap_agg_"), r.out);
    }

    @Test
    void refusesToOverwriteItsInput() throws IOException {
        Path in = dir.resolve("prog.cu");
        Files.writeString(in, PROGRAM);
        Run r = klap(in.toString(), "-o", in.toString());
        assertEquals(2, r.rc);
        assertEquals(PROGRAM, Files.readString(in));
    }

    @Test
    void badInputGetsADiagnosticNotAStackTrace() throws IOException {
        Path syntax = dir.resolve("bad.cu");
        Files.writeString(syntax, "__global__ void k(int* p) {\n  p[0] = ;\n}\n");
        Run r = klap(syntax.toString());
        assertEquals(1, r.rc);
        assertTrue(r.err.matches("(?s).*bad\\.cu:2:\\d+: error: .*\\[klap-parse\\].*"), r.err);
        assertFalse(r.err.contains("Exception"), r.err);

        Path binary = dir.resolve("bin.cu");
        Files.write(binary, new byte[] {(byte) 0xff, (byte) 0xfe, 0, 1, 2, (byte) 0x80});
        r = klap(binary.toString());
        assertEquals(1, r.rc);
        assertTrue(r.err.contains("not valid UTF-8"), r.err);

        Path empty = dir.resolve("empty.cu");
        Files.writeString(empty, "");
        r = klap(empty.toString());
        assertEquals(1, r.rc);
        assertTrue(r.err.contains("empty"), r.err);

        r = klap(dir.resolve("missing.cu").toString());
        assertEquals(1, r.rc);
        assertTrue(r.err.contains("no such file"), r.err);
    }

    @Test
    void cdp1SynchronizationIsRefusedWithTheLine() throws IOException {
        Path in = dir.resolve("cdp1.cu");
        Files.writeString(in, """
                __global__ void child(int* p) { p[0] = 1; }
                __global__ void parent(int* p) {
                  child<<<1, 1>>>(p);
                  cudaDeviceSynchronize();
                }
                """);
        Run r = klap(in.toString(), "-o", dir.resolve("o.cu").toString());
        assertEquals(1, r.rc);
        assertTrue(r.err.contains("cdp1.cu:4:3: error: device-side cudaDeviceSynchronize()"), r.err);
        assertFalse(Files.exists(dir.resolve("o.cu")));
    }

    @Test
    void warningsCanBeErrors() throws IOException {
        Path in = dir.resolve("loop.cu");
        Files.writeString(in, """
                __global__ void child(int* p) { p[0] = 1; }
                __global__ void parent(int* p, const int* n) {
                  int i = 0;
                  do { __syncwarp(__activemask()); child<<<1, 1>>>(p); } while (++i < n[threadIdx.x]);
                }
                """);
        // (a loop whose trip count differs between threads with a warp collective in it: in place per warp,
        // a warning at block granularity; without the collective it is made convergent and warns no more,
        // and since the seventh session of 2026-11-27 so it is with a return in it)
        Run r = klap(in.toString());
        assertEquals(0, r.rc);
        assertTrue(r.err.contains("warning: launch of 'child' is aggregated per warp, not per block"), r.err);
        assertEquals(1, klap("--Werror", in.toString()).rc);
    }

    /**
     * klap's output given to the same pass again (a Makefile rule that runs klap twice): a warning
     * that names the marker line, exit 0 and a valid output (klap leaves its own code as written);
     * with --Werror, exit 1 and no output. Another pass on it (aggregation after promotion) is no
     * mistake and gets no warning.
     */
    @Test
    void klapsOwnOutputGivenToTheSamePassAgainIsNamed() throws IOException {
        Path in = dir.resolve("p.cu");
        Files.writeString(in, PROGRAM);
        Path once = dir.resolve("once.cu");
        assertEquals(0, klap("--granularity=block", in.toString(), "-o", once.toString()).rc);
        Path twice = dir.resolve("twice.cu");
        Run r = klap("--granularity=warp", once.toString(), "-o", twice.toString());
        assertEquals(0, r.rc, r.err);
        assertTrue(r.err.contains("once.cu:1:1: warning: this file is already klap's output ('#include \"klap/klap.cuh\" /* added "
                + "by klap --granularity=block */'); klap leaves its own code as written, so a second --granularity= pass adds "
                + "nothing; give klap the original file instead [klap-already-transformed]"), r.err);
        assertTrue(Files.exists(twice));
        Path strict = dir.resolve("strict.cu");
        assertEquals(1, klap("--Werror", once.toString(), "-o", strict.toString()).rc);
        assertFalse(Files.exists(strict));
        assertFalse(klap("--granularity=block", in.toString()).err.contains("already-transformed"));
        Path chain = dir.resolve("chain.cu");
        Files.writeString(chain, CHAIN);
        Path promoted = dir.resolve("promoted.cu");
        assertEquals(0, klap("--promote=P", chain.toString(), "-o", promoted.toString()).rc);
        assertFalse(klap("--granularity=block", promoted.toString()).err.contains("already-transformed"));
        assertTrue(klap("--promote=PA", promoted.toString()).err.contains("[klap-already-transformed]"));
    }

    @Test
    void nvccErrorsInUserCodePointAtTheUsersLine() throws Exception {
        Path in = dir.resolve("user.cu");
        Files.writeString(in, """
                __global__ void child(int* p) {
                  p[threadIdx.x] = 1;
                  p[0] = not_declared_anywhere;
                }
                __global__ void parent(int* p) {
                  if (threadIdx.x % 2) child<<<1, 32>>>(p);
                }
                """);
        Path out = dir.resolve("user.klap.cu");
        assertEquals(0, klap(in.toString(), "-o", out.toString()).rc);
        Process nvcc = new ProcessBuilder("nvcc", "-std=c++17", "-rdc=true", "-arch=sm_90", "-c", out.toString(),
                "-o", dir.resolve("user.o").toString()).redirectErrorStream(true).start();
        String log = new String(nvcc.getInputStream().readAllBytes());
        assertEquals(1, nvcc.waitFor() == 0 ? 0 : 1, log);
        // reported in the original child and in its aggregated copy, both at user.cu line 3
        String where = in + "(3)";
        assertTrue(log.indexOf(where) >= 0 && log.indexOf(where) != log.lastIndexOf(where), log);
    }

    @Test
    void emitRuntimeWritesTheHeaders() {
        Run r = klap("--emit-runtime", dir.toString());
        assertEquals(0, r.rc, r.err);
        assertTrue(Files.isRegularFile(dir.resolve("klap/klap.cuh")));
    }

    /**
     * Klap.Parses: runs of one input in several variants parse it once and print exactly what runs of
     * their own print; a changed input text or other -D options parse again.
     */
    @Test
    void sharedParsesGiveTheOutputOfRunsOfTheirOwn() throws IOException {
        Path in = dir.resolve("p.cu");
        Files.writeString(in, PROGRAM.replace("int n) {", "int n) {\n#ifdef WIDE\n  n *= 2;\n#endif"));
        Klap.Parses parses = new Klap.Parses();
        java.util.List<String[]> variants = java.util.List.of(new String[] {"--granularity=kernel"},
                new String[] {"--granularity=warp"}, new String[] {"--granularity=block", "-DWIDE"},
                new String[] {"--granularity=block"}, new String[] {"--promote=pao"}, new String[] {"--granularity=warp", "-DWIDE"});
        for (String[] v : variants) {
            String[] args = Stream.concat(Stream.of(v), Stream.of(in.toString())).toArray(String[]::new);
            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            int rc = Klap.run(args, new PrintWriter(out, true), new PrintWriter(err, true), parses);
            Run alone = klap(args);
            assertEquals(alone, new Run(rc, out.toString(), err.toString()), String.join(" ", args));
        }
        assertEquals(4, parses.reused(), "six runs, two parses: without WIDE (4 runs), with it (2 runs)");
        Files.writeString(in, PROGRAM.replace("2, 32", "4, 32"));
        StringWriter out = new StringWriter();
        assertEquals(0, Klap.run(new String[] {in.toString()}, new PrintWriter(out, true), new PrintWriter(new StringWriter()), parses));
        assertEquals(4, parses.reused(), "a changed input is parsed again");
        assertEquals(klap(in.toString()).out, out.toString());
    }
}
