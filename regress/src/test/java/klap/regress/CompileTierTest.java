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
 * {@code testcases/bench} in every variant (cdp, flat, each klap granularity) is transformed and
 * compiled by {@code regress --mode=compile} (run.sh, nvcc -arch=sm_90, 2 jobs), exactly as the GPU
 * run will build it. One test per benchmark and variant; a variant klap refuses passes (it is
 * recorded, not a failure), a missing source or a compile error fails. The work folder is left in
 * {@code regress/target/compile-tier/}.
 */
class CompileTierTest {
    static final Path BENCH = Path.of("..", "testcases", "bench").toAbsolutePath().normalize();
    static final Path WORK = Path.of("target", "compile-tier").toAbsolutePath();

    @TestFactory
    Stream<DynamicTest> everyBenchmarkInEveryVariantCompiles() throws Exception {
        assertTrue(Files.isDirectory(BENCH), "no benchmark set at " + BENCH
                + ": the compile tier needs testcases/bench/NAME/NAME.cu (issue 4)");
        List<Benchmark> benches = Benchmark.discover(BENCH);
        assertFalse(benches.isEmpty(), "no benchmark folders NAME/ in " + BENCH + ": nothing to compile");
        PrintWriter out = new PrintWriter(System.out, true);
        int rc = Regress.run(new String[] {"--mode=compile", "--bench-dir", BENCH.toString(), "--work-dir",
            WORK.toString(), "--jobs", "2"}, out, out);
        Path raw = WORK.resolve("raw.csv");
        assertTrue(Files.isRegularFile(raw), "regress exited " + rc + " without writing " + raw);
        List<RawCsv.Row> rows = RawCsv.read(raw);
        assertEquals(benches.size() * Variant.all().size(), rows.size(), "one row per benchmark and variant");
        return rows.stream().map(r -> DynamicTest.dynamicTest(r.name() + " [" + r.variant() + "]", () ->
                assertFalse(r.failed(), r.name() + "/" + r.variant() + ": " + r.status() + ": " + r.detail()
                        + " (logs in " + WORK.resolve("logs") + ")")));
    }
}
