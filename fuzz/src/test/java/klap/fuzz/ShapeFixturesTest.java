package klap.fuzz;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
import klap.transform.Granularity;
import org.apache.commons.io.FileUtils;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * The hand-written fixtures of {@code src/test/resources/shapes/}: for each issue 10 shape the
 * smallest self-checking program that shows its bug class ({@code ref_out.cu}, {@code
 * barrier_return.cu}, {@code dependent.cu}, {@code ff_loop.cu}, and {@code two_files/} with {@code
 * kernels.cu}, {@code main.cu} and a shared header). Each is transformed in-process at every
 * granularity (exit 0 with an aggregated child, never a crash) and, when nvcc is on the PATH, every
 * variant of a two-file fixture is built and linked (main.cu untouched next to each variant of
 * kernels.cu: the kernels' names and signatures must still link), and so is the fixture as written;
 * a one-file fixture, as written and in each variant, is compiled with {@code -cubin} ({@link
 * Nvcc#cubinLayout}: the front end reads the whole file, host code included, and ptxas compiles the
 * device code; no host compiler pass, about half the time of a full build) and its device code
 * linked alone where it declares {@code __shared__} variables ({@code nvcc -dlink}, half a second;
 * nvlink lays them out): each variant must link, and each kernel of the fixture as written must keep
 * its static shared memory, up to klap's scratch ({@link #checkSharedMemory}). Full builds and links
 * of klap's one-file output are the cli compile tier's (every testcases/src program at every
 * granularity), NvccSampleTest's (random programs with every shape) and the GPU tier's. The fixtures are left in {@code fuzz/target/fuzz-fixtures/}
 * with a run.sh that builds and runs them on a GPU machine ({@code klap.fuzz.Main OUTDIR
 * --fixtures=fuzz/src/test/resources/shapes} writes the same).
 */
class ShapeFixturesTest {
    static final Path FIXTURES = Path.of("src/test/resources/shapes").toAbsolutePath();
    static final Path OUT = Path.of("target/fuzz-fixtures").toAbsolutePath();

    /** @return the fixture of {@code s}: a file or directory named after {@link Shape#cliName} */
    static Path fixture(Shape s) {
        String base = s.cliName.replace('-', '_');
        Path dir = FIXTURES.resolve(base);
        return Files.isDirectory(dir) ? dir : FIXTURES.resolve(base + ".cu");
    }

    @Test
    void everyIssue10ShapeHasASelfCheckingFixture() throws IOException {
        for (Shape s : Shape.values()) {
            if (s == Shape.RANDOM) {
                continue;
            }
            Path f = fixture(s);
            assertTrue(Files.exists(f), "no fixture for shape " + s.cliName + " (" + f + ")");
            String text;
            String first;
            if (Files.isDirectory(f)) {
                assertTrue(Files.exists(f.resolve(ProgramGenerator.KERNELS_FILE)), f + " has no kernels.cu");
                text = Files.readString(f.resolve(ProgramGenerator.MAIN_FILE));
                assertTrue(text.contains("int main("), f + "/main.cu has no main");
                first = Files.readString(f.resolve(ProgramGenerator.KERNELS_FILE));
                assertFalse(first.contains("int main("), f + "/kernels.cu must not have the host code");
            } else {
                text = Files.readString(f);
                first = text;
            }
            assertTrue(text.contains("RESULT %08x") && text.contains("\"PASS ") && text.contains("\"FAIL "),
                    f + " must print RESULT <hex> and PASS or FAIL");
            assertTrue(first.startsWith("// Shape \"" + s.cliName + "\""), f + " must name its shape in its first comment");
        }
    }

    @TestFactory
    Stream<DynamicTest> everyFixtureIsTransformedAndBuiltAtEveryGranularity() throws IOException {
        FileUtils.deleteDirectory(OUT.toFile());
        Main.writeFixtures(OUT, FIXTURES);
        List<DynamicTest> tests = new ArrayList<>();
        // a variant that nvcc would build exactly as an earlier one is not built again
        java.util.Map<String, Nvcc.Built> built = new java.util.HashMap<>();
        java.util.Map<String, CompletableFuture<Nvcc.Layout>> compiled = new java.util.HashMap<>();
        try (Stream<Path> s = Files.list(OUT)) {
            for (Path pd : s.filter(p -> p.getFileName().toString().startsWith("fx_")).sorted().toList()) {
                boolean two = Files.exists(pd.resolve(ProgramGenerator.MAIN_FILE));
                Path in = pd.resolve(two ? ProgramGenerator.KERNELS_FILE : "original.cu");
                for (Granularity g : Granularity.values()) {
                    tests.add(DynamicTest.dynamicTest(pd.getFileName() + " --granularity=" + g.cliName(), () -> {
                        Cli.Run r = Cli.klap("--granularity=" + g.cliName(), in.toString());
                        assertFalse(r.crashed(), "klap crashed: " + r);
                        assertEquals(0, r.rc(), "klap refused a fixture: " + r);
                        // (or every launch left as written, with the warning of the 2026-11-27 GPU run)
                        assertTrue(GeneratedProgramsTest.AGGREGATED.matcher(r.out()).find()
                                || r.err().contains("[klap-loop-divergent-site]"), "no aggregated child in the output: " + r.err());
                        assertTrue(Files.exists(pd.resolve(g.cliName() + ".cu")), "Main did not write the variant");
                    }));
                }
                if (!Nvcc.available()) {
                    continue;
                }
                List<String> variants = new ArrayList<>(List.of("original"));
                for (Granularity g : Granularity.values()) {
                    variants.add(g.cliName());
                }
                // only where the fixture declares __shared__ variables can a variant move them into
                // other kernels (otherwise only klap's parents reach shared memory: its scan scratch)
                boolean shared = !two && Files.readString(in).contains("__shared__");
                CompletableFuture<Nvcc.Layout> asWritten = null;
                for (String v : variants) {
                    List<Path> src = Nvcc.sources(pd, v.equals("original") && !two ? "original" : v);
                    if (!Files.exists(src.get(0))) {
                        tests.add(DynamicTest.dynamicTest(pd.getFileName() + " [" + v + "] built", () -> fail("missing " + src.get(0))));
                        continue;
                    }
                    // a one-file fixture (as written and klap's variants) is compiled and its device code
                    // linked alone (Nvcc.cubinLayout; the GPU tier builds and runs it); a two-file one is
                    // linked with main.cu
                    CompletableFuture<Nvcc.Layout> layout = two ? null
                            : Nvcc.cubinLayout(src.get(0), pd.resolve(v + ".cubin"), shared, compiled);
                    CompletableFuture<Nvcc.Result> r = !two ? layout.thenApply(Nvcc.Layout::result)
                            : Nvcc.build(src, pd.resolve(v + ".bin"), built);
                    tests.add(DynamicTest.dynamicTest(pd.getFileName() + " [" + v + "] built",
                            () -> Nvcc.check(pd + " " + v, two, v, r.get())));
                    if (!shared) {
                        continue;
                    }
                    if (v.equals("original")) {
                        asWritten = layout;
                    } else if (asWritten != null) {
                        CompletableFuture<Nvcc.Layout> original = asWritten;
                        tests.add(DynamicTest.dynamicTest(pd.getFileName() + " [" + v + "] shared memory",
                                () -> checkSharedMemory(pd + " " + v, original.get(), layout.get())));
                    }
                }
            }
        }
        assertEquals(Shape.values().length - 1, tests.stream().filter(t -> t.getDisplayName().endsWith("--granularity=warp")).count(),
                "expected one fixture per shape other than random");
        return tests.stream();
    }

    /**
     * The most static shared memory klap's output may add to a kernel of the program: the scan
     * scratch of a block-granularity parent (about 1.8 KiB; docs/robustness.md, "Shared memory klap
     * adds to a kernel"), and what nvlink's layout of its scratch next to a helper's {@code
     * __shared__} variable that the kernel shares with a parent adds (up to that scratch again).
     */
    static final long KLAP_SHARED_ALLOWANCE = 4096;

    /**
     * Checks that klap's {@code variant} of a one-file program links its device code (nvlink lays out
     * the {@code __shared__} variables of functions several kernels reach: "uses too much shared
     * data") and that every kernel of the program as written keeps its static shared memory, up to
     * {@link #KLAP_SHARED_ALLOWANCE}: a variant or twin that reaches a helper's {@code __shared__}
     * variable made nvlink lay another helper's after it, in every kernel (shape shared-helpers).
     */
    static void checkSharedMemory(String what, Nvcc.Layout original, Nvcc.Layout variant) {
        if (!original.result().linked() || !variant.result().linked()) {
            return; // a compile failure: reported by the "built" test
        }
        assertNull(original.linkError(), "the device code of " + what + " as written does not link: " + original.linkError());
        assertNull(variant.linkError(), "the device code of " + what + " does not link: " + variant.linkError());
        assertFalse(original.smem().isEmpty(), "nvlink reported no entry function of " + what + " as written");
        for (var e : original.smem().entrySet()) {
            Long now = variant.smem().get(e.getKey());
            if (now == null) {
                continue; // an instantiation of a template kernel that only the host launch klap rewrote named
            }
            assertTrue(now <= e.getValue() + KLAP_SHARED_ALLOWANCE, what + ": kernel " + e.getKey() + " reserves " + now
                    + " bytes of static shared memory, " + e.getValue() + " as written");
        }
    }
}
