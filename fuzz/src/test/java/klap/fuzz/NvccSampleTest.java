package klap.fuzz;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import klap.transform.Granularity;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Compiles a sample of generated programs, the original and every granularity's variant, with
 * {@code nvcc -std=c++17 -rdc=true -arch=sm_90} (two jobs at a time). The sources and binaries are
 * left in {@code fuzz/target/fuzz-sample/} with the run.sh of {@link Main}, so that a GPU machine can
 * run them ({@code bash fuzz/target/fuzz-sample/run.sh}). Skipped when nvcc is not on the PATH.
 */
class NvccSampleTest {
    /** seeds chosen to cover shared/dynamic shared memory, recursion, device-function launches, streams */
    static final long[] SEEDS = {7, 8, 12, 29};
    static final Path OUT = Path.of("target/fuzz-sample").toAbsolutePath();
    static final ExecutorService NVCC = Executors.newFixedThreadPool(2);

    @AfterAll
    static void shutdown() throws InterruptedException {
        NVCC.shutdown();
        NVCC.awaitTermination(1, TimeUnit.MINUTES);
    }

    static boolean haveNvcc() {
        try {
            Process p = new ProcessBuilder("nvcc", "--version").redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            return p.waitFor() == 0;
        } catch (IOException | InterruptedException e) {
            return false;
        }
    }

    @TestFactory
    Stream<DynamicTest> sampleCompilesInEveryVariant() throws IOException {
        Assumptions.assumeTrue(haveNvcc(), "nvcc not on the PATH");
        List<DynamicTest> tests = new ArrayList<>();
        List<String> variants = new ArrayList<>(List.of("original"));
        for (Granularity g : Granularity.values()) {
            variants.add(g.cliName());
        }
        List<String> names = new ArrayList<>();
        List<CompletableFuture<String>> results = new ArrayList<>();
        for (long s : SEEDS) {
            Main.write(OUT, s, 1);
            Path pd = OUT.resolve(String.format("fz_%06d", s));
            for (String v : variants) {
                names.add(pd.getFileName() + " [" + v + "]");
                results.add(CompletableFuture.supplyAsync(() -> compile(pd, v), NVCC));
            }
        }
        for (int i = 0; i < names.size(); i++) {
            CompletableFuture<String> r = results.get(i);
            tests.add(DynamicTest.dynamicTest(names.get(i), () -> assertEquals("", r.get(), r.get())));
        }
        return tests.stream();
    }

    static String compile(Path pd, String variant) {
        try {
            Path src = pd.resolve(variant + ".cu");
            if (!Files.exists(src)) {
                Path refused = pd.resolve(variant + ".refused");
                return Files.exists(refused) ? "klap refused a generated program:\n" + Files.readString(refused)
                        : "missing " + src;
            }
            List<String> cmd = List.of("nvcc", "-std=c++17", "-rdc=true", "-arch=sm_90", "-diag-suppress", "177,550",
                    "-o", pd.resolve(variant + ".bin").toString(), src.toString());
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(5, TimeUnit.MINUTES)) {
                p.destroyForcibly();
                return "nvcc timed out on " + src;
            }
            return p.exitValue() == 0 ? "" : "nvcc failed on " + src + ":\n" + log;
        } catch (IOException | InterruptedException e) {
            return "could not run nvcc: " + e;
        }
    }
}
