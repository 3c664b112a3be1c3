package klap.regress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The compile tier of the benchmark set (ARCHITECTURE.md, "Tests", tier 2): every benchmark under
 * {@code testcases/bench} in every variant (cdp, flat, each klap granularity), and every benchmark of
 * {@code testcases/promotion} in cdp, flat and each promotion variant, is transformed and
 * compiled by {@code regress --mode=compile} (run.sh, nvcc -arch=sm_90, 2 jobs), exactly as the GPU
 * run will build it. One test per benchmark and variant; a variant klap refuses passes (it is
 * recorded, not a failure), a missing source or a compile error fails. The work folder is left in
 * {@code regress/target/compile-tier/}.
 */
class CompileTierTest {
    static final Path BENCH = Path.of("..", "testcases", "bench").toAbsolutePath().normalize();
    static final Path PROMOTION = Path.of("..", "testcases", "promotion").toAbsolutePath().normalize();
    static final Path WORK = Path.of("target", "compile-tier").toAbsolutePath();

    @TestFactory
    Stream<DynamicTest> everyBenchmarkInEveryVariantCompiles() throws Exception {
        return compileSet(BENCH, WORK, Variant.all());
    }

    /** The promotion set (issue 12): every benchmark in cdp, flat and the six promotion variants. */
    @TestFactory
    Stream<DynamicTest> everyPromotionBenchmarkInEveryVariantCompiles() throws Exception {
        return compileSet(PROMOTION, WORK.resolveSibling("compile-tier-promotion"), Variant.promotion());
    }

    /**
     * The CUDA-NP baselines (issue 13, testcases/np): each NAME/NAME.cu compiles with nvcc as written
     * (its np pragmas are ignored until klap transforms them).
     */
    @TestFactory
    Stream<DynamicTest> everyNpBaselineCompiles() throws Exception {
        Path np = Path.of("..", "testcases", "np").toAbsolutePath().normalize();
        List<Benchmark> benches = Benchmark.discover(np);
        assertTrue(benches.size() >= 6, "expected the six CUDA-NP baselines in " + np);
        Path out = WORK.resolveSibling("compile-tier-np");
        Files.createDirectories(out);
        List<Process> procs = new java.util.ArrayList<>();
        for (Benchmark b : benches) {
            String env = System.getenv("NVCC");
            procs.add(new ProcessBuilder(env != null && !env.isBlank() ? env : "nvcc", "-std=c++17", "-arch=sm_90",
                    "-I", np.toString(), "-o", out.resolve(b.name()).toString(), b.cdpSource().toString())
                    .redirectErrorStream(true).start());
            if (procs.size() % 2 == 0) {
                procs.get(procs.size() - 2).waitFor();
            }
        }
        return java.util.stream.IntStream.range(0, benches.size()).mapToObj(i -> DynamicTest.dynamicTest(
                benches.get(i).name(), () -> {
                    Process p = procs.get(i);
                    String log = new String(p.getInputStream().readAllBytes());
                    assertTrue(p.waitFor(600, java.util.concurrent.TimeUnit.SECONDS), "nvcc timed out");
                    assertEquals(0, p.exitValue(), benches.get(i).name() + ":\n" + log);
                }));
    }

    private static Stream<DynamicTest> compileSet(Path set, Path work, List<Variant> variants) throws Exception {
        assertTrue(Files.isDirectory(set), "no benchmark set at " + set);
        List<Benchmark> benches = Benchmark.discover(set);
        assertFalse(benches.isEmpty(), "no benchmark folders NAME/ in " + set + ": nothing to compile");
        assertEquals(variants, Variant.defaultsFor(set), "the default variants of " + set);
        PrintWriter out = new PrintWriter(System.out, true);
        int rc = Regress.run(new String[] {"--mode=compile", "--bench-dir", set.toString(), "--work-dir",
            work.toString(), "--jobs", "2"}, out, out);
        Path raw = work.resolve("raw.csv");
        assertTrue(Files.isRegularFile(raw), "regress exited " + rc + " without writing " + raw);
        List<RawCsv.Row> rows = RawCsv.read(raw);
        assertEquals(benches.size() * variants.size(), rows.size(), "one row per benchmark and variant");
        return rows.stream().map(r -> DynamicTest.dynamicTest(r.name() + " [" + r.variant() + "]", () -> {
            assertFalse(r.failed(), r.name() + "/" + r.variant() + ": " + r.status() + ": " + r.detail()
                    + " (logs in " + work.resolve("logs") + ")");
            if (set.equals(PROMOTION) && !r.variant().equals("cdp") && !r.variant().equals("flat")) {
                // a promotion variant that klap refused, or in which it promoted nothing, measures nothing
                assertFalse(r.refused(), r.name() + "/" + r.variant() + " was refused: " + r.detail());
                Path cu = work.resolve("variants").resolve(r.name()).resolve(r.variant()).resolve(r.name() + ".cu");
                assertTrue(Files.readString(cu).contains("klap::promote::release("), cu + ": nothing was promoted");
            }
        }));
    }
}
