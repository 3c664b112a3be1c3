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
 * {@code testcases/bench} in every variant (cdp, flat, each klap granularity), every benchmark of
 * {@code testcases/promotion} in cdp, flat and each promotion variant, and every benchmark of
 * {@code testcases/np} in base and each CUDA-NP variant, is transformed and
 * compiled by {@code regress --mode=compile} (run.sh, nvcc -arch=sm_90, 2 jobs), exactly as the GPU
 * run will build it. One test per benchmark and variant; a variant klap refuses passes (it is
 * recorded, not a failure; except in the promotion and CUDA-NP sets, where every variant must be
 * transformed), a missing source or a compile error fails. The work folders are left in
 * {@code regress/target/compile-tier}, {@code compile-tier-promotion} and {@code compile-tier-np}.
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
     * The CUDA-NP set (issue 13, testcases/np): every benchmark as written ({@code base}) and transformed
     * by {@code klap --np} ({@code npi}, {@code npw}, {@code npalli}, {@code npallw}). A CUDA-NP variant
     * must really be transformed: its output holds the kernel variant it runs ({@code NAME_klap_npi} or
     * {@code NAME_klap_npw}; both and the run-time choice for {@code --np=all}). The one exception is
     * lud at inter-warp: the loops of lud_perimeter are inside {@code if (t < BS)}, which not every
     * thread of the block reaches, so klap emits no inter-warp kernel and warns ([klap-np]); regress
     * records npw and npallw of lud as refused with that warning.
     */
    @TestFactory
    Stream<DynamicTest> everyNpBenchmarkInEveryVariantCompiles() throws Exception {
        Path np = Path.of("..", "testcases", "np").toAbsolutePath().normalize();
        assertTrue(Benchmark.discover(np).size() >= 6, "expected the six CUDA-NP benchmarks in " + np);
        Path work = WORK.resolveSibling("compile-tier-np");
        if (Files.isDirectory(work) && !Files.exists(work.resolve("manifest.tsv"))) {
            // binaries of the earlier baseline-only test, which prepare would refuse to clear
            try (Stream<Path> s = Files.walk(work)) {
                for (Path p : s.sorted(java.util.Comparator.reverseOrder()).toList()) {
                    Files.delete(p);
                }
            }
        }
        return compileSet(np, work, Variant.np(), r -> {
            Variant v = Variant.select(List.of(r.variant())).get(0);
            if (!v.isKlap()) {
                return;
            }
            String what = r.name() + "/" + r.variant();
            if (r.name().equals("lud") && v.npKind().equals("inter-warp")) {
                assertTrue(r.refused(), what + ": klap was expected to keep lud_perimeter (loops under "
                        + "if (t < BS)) out of the inter-warp variant, but the row is " + r.status());
                assertTrue(r.detail().contains("[klap-np]") && r.detail().contains("lud_perimeter")
                        && r.detail().contains("inter-warp"), what + ": " + r.detail());
                return;
            }
            assertFalse(r.refused(), what + " was refused: " + r.detail());
            String out = Files.readString(work.resolve("variants").resolve(r.name()).resolve(r.variant())
                    .resolve(r.name() + ".cu"));
            assertTrue(out.contains(v.npMarker()), what + ": no " + v.npMarker() + " kernel in klap's output");
            assertTrue(out.contains("#include \"klap/np.cuh\""), what + ": np.cuh not included");
            if (v.npMode().equals("all")) {
                assertTrue(out.contains("klap::np::chosen("), what + ": no run-time choice of the variant");
            } else {
                String other = v.npMarker().equals("_klap_npi") ? "_klap_npw" : "_klap_npi";
                assertFalse(out.contains(other), what + ": --np=" + v.npMode() + " also emitted " + other);
            }
        });
    }

    private static Stream<DynamicTest> compileSet(Path set, Path work, List<Variant> variants) throws Exception {
        return compileSet(set, work, variants, r -> {
            if (set.equals(PROMOTION) && !r.variant().equals("cdp") && !r.variant().equals("flat")) {
                // a promotion variant that klap refused, or in which it promoted nothing, measures nothing
                assertFalse(r.refused(), r.name() + "/" + r.variant() + " was refused: " + r.detail());
                Path cu = work.resolve("variants").resolve(r.name()).resolve(r.variant()).resolve(r.name() + ".cu");
                assertTrue(Files.readString(cu).contains("klap::promote::release("), cu + ": nothing was promoted");
            }
        });
    }

    /** A check of one row of the compile tier's raw.csv beyond "it did not fail". */
    interface RowCheck {
        void check(RawCsv.Row r) throws Exception;
    }

    private static Stream<DynamicTest> compileSet(Path set, Path work, List<Variant> variants, RowCheck extra)
            throws Exception {
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
            extra.check(r);
        }));
    }
}
