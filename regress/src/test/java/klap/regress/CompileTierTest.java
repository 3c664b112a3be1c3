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
