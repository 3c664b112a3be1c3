package klap.regress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.commons.io.FileUtils;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The compile tier of the benchmark set (ARCHITECTURE.md, "Tests", tier 2): every benchmark under
 * {@code testcases/bench} in every variant (cdp, flat, each klap granularity), every benchmark of
 * {@code testcases/promotion} in cdp, flat and each promotion variant, and every benchmark of
 * {@code testcases/np} in base and each CUDA-NP variant, is transformed and
 * compiled by {@code regress --mode=compile} (run.sh, nvcc -arch=sm_90, 2 jobs), exactly as the GPU
 * run will build it; a variant that nvcc would build exactly as another ({@link #BUILT_AS}: PA-128 as
 * PA-2, PAO-2 as PAO-128, npallw as npalli) is transformed and compared with it instead of built
 * again, and a hand-written variant (cdp, flat, base) whose sources, nvcc release and flags are those of
 * a recorded build ({@link KnownBuilds}) is not built again (one is, into {@code <work>-baselines},
 * when its record is missing or out of date). One test per benchmark and variant; a variant klap refuses passes (it is
 * recorded, not a failure; except in the promotion and CUDA-NP sets, where every variant must be
 * transformed), a missing source or a compile error fails. The work folders are left in
 * {@code regress/target/compile-tier}, {@code compile-tier-promotion} and {@code compile-tier-np} (the
 * twins' outputs in {@code compile-tier-promotion-twins} and {@code compile-tier-np-twins}).
 */
class CompileTierTest {
    static final Path BENCH = Path.of("..", "testcases", "bench").toAbsolutePath().normalize();
    static final Path PROMOTION = Path.of("..", "testcases", "promotion").toAbsolutePath().normalize();
    static final Path WORK = Path.of("target", "compile-tier").toAbsolutePath();

    /** {@link KnownBuilds}'s key holds run.sh's compile flags: a change of them must change the key. */
    @org.junit.jupiter.api.Test
    void knownBuildsKeyHoldsTheFlagsRunShCompilesWith() throws Exception {
        try (java.io.InputStream in = Regress.class.getResourceAsStream("run.sh")) {
            assertTrue(in != null, "no run.sh resource next to Regress");
            String runSh = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            assertTrue(runSh.contains("\"$NVCC\" " + KnownBuilds.FLAGS + " "), "run.sh no longer compiles with "
                    + KnownBuilds.FLAGS + ": update KnownBuilds.FLAGS (every known build is then built again)");
        }
    }

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
            FileUtils.deleteDirectory(work.toFile());
        }
        return compileSet(np, work, Variant.np(), (r, cu) -> {
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
            String out = Files.readString(cu);
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
        return compileSet(set, work, variants, (r, cu) -> {
            if (set.equals(PROMOTION) && !r.variant().equals("cdp") && !r.variant().equals("flat")) {
                // a promotion variant that klap refused, or in which it promoted nothing, measures nothing
                assertFalse(r.refused(), r.name() + "/" + r.variant() + " was refused: " + r.detail());
                assertTrue(Files.readString(cu).contains("klap::promote::release("), cu + ": nothing was promoted");
            }
        });
    }

    /** A check of one row of the compile tier's raw.csv beyond "it did not fail". */
    interface RowCheck {
        /**
         * @param r  the row
         * @param cu klap's output for the row's benchmark and variant (absent if klap refused it)
         */
        void check(RawCsv.Row r, Path cu) throws Exception;
    }

    /**
     * Variants that nvcc would build exactly as another one, so the compile tier builds only that one:
     * klap's output for {@code pa128} is its output for {@code pa2} but for the number of descendants
     * per launch (PA-n's n: a run-time argument of {@code new_pool} and the successor's grid size, and
     * the mode named in two comments), likewise {@code pao2} and {@code pao128}; {@code npallw} and
     * {@code npalli} are one program ({@code --np=all}; {@code KLAP_NP} picks the kernel when it runs).
     * Each is still transformed, and its output must be its twin's up to that constant; only its nvcc
     * build is left out (18 of the 126 builds of this class). The GPU run builds every variant.
     */
    static final Map<String, String> BUILT_AS = Map.of("pa128", "pa2", "pao2", "pao128", "npallw", "npalli");

    private static Stream<DynamicTest> compileSet(Path set, Path work, List<Variant> variants, RowCheck extra)
            throws Exception {
        assertTrue(Files.isDirectory(set), "no benchmark folder NAME/ in " + set);
        List<Benchmark> benches = Benchmark.discover(set);
        assertFalse(benches.isEmpty(), "no benchmark folders NAME/ in " + set + ": nothing to compile");
        assertEquals(variants, Variant.defaultsFor(set), "the default variants of " + set);
        List<Variant> built = variants.stream().filter(v -> !BUILT_AS.containsKey(v.name()) && v.isKlap()).toList();
        List<Variant> twins = variants.stream().filter(v -> BUILT_AS.containsKey(v.name())).toList();
        List<Variant> handWritten = variants.stream().filter(v -> !v.isKlap()).toList();
        PrintWriter out = new PrintWriter(System.out, true);
        List<DynamicTest> tests = new ArrayList<>();
        // the hand-written variants whose sources were built before as they are now (KnownBuilds)
        KnownBuilds known = KnownBuilds.load();
        List<String> unknown = new ArrayList<>();
        Map<String, String> keys = new java.util.HashMap<>(); // by benchmark: read its files once
        for (Benchmark b : benches) {
            String key = KnownBuilds.key(set, b);
            keys.put(b.name(), key);
            for (Variant v : handWritten) {
                if (known.contains(set, b, v, key)) {
                    tests.add(DynamicTest.dynamicTest(b.name() + " [" + v.name() + "] as built before", () ->
                            assertTrue(Files.isRegularFile(b.sourceFor(v)), "no " + b.sourceFor(v))));
                } else if (!unknown.contains(b.name())) {
                    unknown.add(b.name());
                }
            }
        }
        List<RawCsv.Row> rows = compile(set, work, benches.stream().map(Benchmark::name).toList(), built, out);
        assertEquals(benches.size() * built.size(), rows.size(), "one row per benchmark and built klap variant");
        if (!unknown.isEmpty() && !handWritten.isEmpty()) {
            Path baselines = work.resolveSibling(work.getFileName() + "-baselines");
            List<RawCsv.Row> hand = compile(set, baselines, unknown, handWritten, out);
            assertEquals(unknown.size() * handWritten.size(), hand.size(), "one row per benchmark and hand-written variant");
            for (RawCsv.Row r : hand) {
                if (!r.failed()) {
                    out.println("[known-builds] built; to build it only when it changes, add to " + KnownBuilds.FILE + ": "
                            + KnownBuilds.line(set, r.name(), r.variant(), keys.get(r.name())));
                }
            }
            rows = new ArrayList<>(rows);
            rows.addAll(hand);
        }
        for (RawCsv.Row r : rows) {
            tests.add(DynamicTest.dynamicTest(r.name() + " [" + r.variant() + "]", () -> {
                assertFalse(r.failed(), r.name() + "/" + r.variant() + ": " + r.status() + ": " + r.detail()
                        + " (logs in " + work.resolve("logs") + " or " + work.getFileName() + "-baselines/logs)");
                extra.check(r, output(work, r.name(), r.variant()));
            }));
        }
        if (twins.isEmpty()) {
            return tests.stream();
        }
        Path twinWork = work.resolveSibling(work.getFileName() + "-twins");
        List<Prepare.Entry> entries = Prepare.prepare(set, twinWork, benches, twins, out);
        assertEquals(benches.size() * twins.size(), entries.size(), "one entry per benchmark and twin variant");
        for (Prepare.Entry e : entries) {
            String twin = BUILT_AS.get(e.variant());
            tests.add(DynamicTest.dynamicTest(e.bench() + " [" + e.variant() + "] as built [" + twin + "]", () -> {
                RawCsv.Row r = new RawCsv.Row(e.bench(), e.variant(), e.state().equals("ready") ? "compiled" : e.state(),
                        null, null, 0, e.detail());
                assertFalse(r.failed(), e.bench() + "/" + e.variant() + ": " + e.state() + ": " + e.detail());
                Path cu = output(twinWork, e.bench(), e.variant());
                extra.check(r, cu);
                if (!r.refused()) {
                    Variant v = Variant.select(List.of(e.variant())).get(0);
                    Variant t = Variant.select(List.of(twin)).get(0);
                    assertEquals(upToDepth(Files.readString(output(work, e.bench(), twin)), t),
                            upToDepth(Files.readString(cu), v), e.bench() + ": klap's " + e.variant() + " output is not its "
                            + twin + " output up to the descendants per launch, so it needs a build of its own");
                }
            }));
        }
        return tests.stream();
    }

    /**
     * Runs {@code regress --mode=compile} on {@code only} of {@code set} in {@code variants}, two nvcc
     * jobs at a time, into {@code work}.
     *
     * @return the rows of its raw.csv
     */
    private static List<RawCsv.Row> compile(Path set, Path work, List<String> only, List<Variant> variants, PrintWriter out)
            throws Exception {
        int rc = Regress.run(new String[] {"--mode=compile", "--bench-dir", set.toString(), "--work-dir",
            work.toString(), "--jobs", "2", "--only", String.join(",", only), "--variants",
            String.join(",", variants.stream().map(Variant::name).toList())}, out, out);
        Path raw = work.resolve("raw.csv");
        assertTrue(Files.isRegularFile(raw), "regress exited " + rc + " without writing " + raw);
        return RawCsv.read(raw);
    }

    /** @return klap's output for {@code bench} in {@code variant} under a regress work folder */
    private static Path output(Path work, String bench, String variant) {
        return work.resolve("variants").resolve(bench).resolve(variant).resolve(bench + ".cu");
    }

    /**
     * @return {@code text} with {@code v}'s descendants per launch (the literal {@code Nu}, the mode
     *     {@code PA-N}/{@code PAO-N}) written as {@code DEPTH}; {@code text} itself for a variant without one
     */
    static String upToDepth(String text, Variant v) {
        if (v.depth() == 0) {
            return text;
        }
        return text.replaceAll("(?<![A-Za-z0-9_.])" + v.depth() + "u\\b", "DEPTHu")
                .replaceAll("\\b(PAO?)-" + v.depth() + "\\b", "$1-DEPTH");
    }
}
