package klap.fuzz;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
import klap.transform.Granularity;
import org.apache.commons.io.FileUtils;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Compiles a sample of generated programs, the original and every granularity's variant, with
 * {@code nvcc -std=c++17 -rdc=true -arch=sm_90} (two jobs at a time): one program with every shape,
 * the random parents of the default mix included, in two files (the kernels of each shape,
 * generated; each shape alone is built from its hand-written fixture by {@link ShapeFixturesTest},
 * so the single-shape programs this test also built until 2026-11-28 added nvcc time, not shapes;
 * so did a second program of the default mix, whose random parents this one has, until the
 * fourteenth session of 2026-11-28 cut it for the CI's 30 minutes). The sources and
 * binaries are left in {@code fuzz/target/fuzz-sample/} with the run.sh of {@link Main}, so that a GPU
 * machine can run them ({@code bash fuzz/target/fuzz-sample/run.sh}). Skipped when nvcc is not on
 * the PATH. The seeds were never run before (the GPU run used 101-132 and 1000-1099, the earlier CI
 * 7, 8, 12 and 29).
 */
class NvccSampleTest {
    static final Path OUT = Path.of("target/fuzz-sample").toAbsolutePath();

    /** One sample program: a seed and its shapes (null: the default mix). */
    record Sample(long seed, Set<Shape> shapes) {
    }

    static final List<Sample> SAMPLES = List.of(new Sample(400_105, EnumSet.allOf(Shape.class)));

    @TestFactory
    Stream<DynamicTest> sampleCompilesInEveryVariant() throws IOException {
        Assumptions.assumeTrue(Nvcc.available(), "nvcc not on the PATH");
        List<String> variants = new ArrayList<>(List.of("original"));
        for (Granularity g : Granularity.values()) {
            variants.add(g.cliName());
        }
        List<DynamicTest> tests = new ArrayList<>();
        // a variant that nvcc would build exactly as an earlier one is not built again
        java.util.Map<String, Nvcc.Built> built = new java.util.HashMap<>();
        FileUtils.deleteDirectory(OUT.toFile());
        for (Sample s : SAMPLES) {
            int refused = Main.write(OUT, s.seed, 1, s.shapes);
            ProgramGenerator.Program p = s.shapes == null ? ProgramGenerator.generate(s.seed) : ProgramGenerator.generate(s.seed, s.shapes);
            Path pd = OUT.resolve(p.dirName());
            String name = p.dirName() + " " + p.shapes();
            tests.add(DynamicTest.dynamicTest(name + " transformed", () -> {
                assertTrue(refused == 0, "klap refused " + refused + " variants of " + name + ": " + refusals(pd));
            }));
            for (String v : variants) {
                List<Path> src = Nvcc.sources(pd, v);
                if (!Files.exists(src.get(0))) {
                    continue; // refused: reported above
                }
                CompletableFuture<Nvcc.Result> r = Nvcc.build(src, pd.resolve(v + ".bin"), built);
                tests.add(DynamicTest.dynamicTest(name + " [" + v + "]", () -> Nvcc.check(pd + " " + v, p.twoFiles(), v, r.get())));
            }
        }
        tests.add(DynamicTest.dynamicTest("run.sh written", () -> assertFalse(Files.readString(OUT.resolve("run.sh")).isEmpty())));
        return tests.stream();
    }

    private static String refusals(Path pd) throws IOException {
        StringBuilder sb = new StringBuilder();
        try (Stream<Path> s = Files.list(pd)) {
            for (Path f : s.filter(f -> f.toString().endsWith(".refused")).toList()) {
                sb.append('\n').append(f.getFileName()).append(": ").append(Files.readString(f));
            }
        }
        return sb.toString();
    }
}
