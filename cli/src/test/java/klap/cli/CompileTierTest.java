package klap.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
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
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The compile tier (shared/design/ARCHITECTURE.md, "Tests", tier 2): every test case under
 * {@code testcases/src}, in every variant (the original and each granularity), is transformed by
 * the real CLI and compiled with {@code nvcc -std=c++17 -rdc=true -arch=sm_90} (the original with
 * {@code -cubin}, see {@link #compile}). This catches most mistakes in generated code without a GPU.
 * The compiled programs and the transformed sources are left in {@code cli/target/compile-tier/}
 * (scripts/gpu-tier builds and runs every variant itself when a GPU is lent).
 */
class CompileTierTest {
    static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    static final Path CASES = ROOT.resolve("testcases/src");
    static final Path OUT = Path.of("target/compile-tier").toAbsolutePath();
    /** the original and one variant per granularity the compiler supports */
    static final List<String> VARIANTS = java.util.stream.Stream.concat(Stream.of("original"),
            java.util.Arrays.stream(klap.transform.Granularity.values()).map(klap.transform.Granularity::cliName)).toList();
    static final ExecutorService NVCC = Executors.newFixedThreadPool(2);

    @AfterAll
    static void shutdown() throws InterruptedException {
        NVCC.shutdown();
        NVCC.awaitTermination(1, TimeUnit.MINUTES);
    }

    static List<Path> cases() throws IOException {
        try (Stream<Path> s = Files.list(CASES)) {
            return s.filter(p -> p.toString().endsWith(".cu")).sorted().toList();
        }
    }

    @TestFactory
    Stream<DynamicTest> everyCaseInEveryVariantCompiles() throws IOException {
        List<Path> cases = cases();
        assertTrue(cases.size() >= 3, "expected the bundled test cases in " + CASES);
        List<DynamicTest> tests = new ArrayList<>();
        // start all nvcc runs first (2 at a time), then report each as a test; klap's output that
        // nvcc would build exactly as an earlier variant's (quadtree's three granularities, loops'
        // warp and block) is not built again: that build's binary is copied
        List<CompletableFuture<String>> results = new ArrayList<>();
        List<String> names = new ArrayList<>();
        java.util.Map<String, Built> built = new java.util.HashMap<>();
        for (Path c : cases) {
            String name = c.getFileName().toString().replace(".cu", "");
            for (String v : VARIANTS) {
                names.add(name + " [" + v + "]");
                Path dir = OUT.resolve(v);
                String failure = transform(c, name, v);
                if (!failure.isEmpty()) {
                    results.add(CompletableFuture.completedFuture(failure));
                    continue;
                }
                Path src = dir.resolve(name + ".cu");
                String key = name + "\0" + GRANULARITY_COMMENT.matcher(Files.readString(src)).replaceFirst("$1");
                Built earlier = built.get(key);
                if (earlier == null) {
                    boolean asWritten = v.equals("original");
                    CompletableFuture<String> r = CompletableFuture.supplyAsync(() -> compile(src, dir.resolve(name), asWritten), NVCC);
                    built.put(key, new Built(r, dir.resolve(name)));
                    results.add(r);
                } else {
                    results.add(earlier.result().thenApply(r -> r.isEmpty() ? copied(earlier.bin(), dir.resolve(name)) : r));
                }
            }
        }
        for (int i = 0; i < names.size(); i++) {
            CompletableFuture<String> r = results.get(i);
            tests.add(DynamicTest.dynamicTest(names.get(i), () -> {
                String failure = r.get();
                assertEquals("", failure, failure);
            }));
        }
        return tests.stream();
    }

    /** An nvcc build started by the compile tier: its result ("" or what failed) and its binary. */
    record Built(CompletableFuture<String> result, Path bin) {
    }

    /** The first line of klap's output names the granularity in a comment; nvcc ignores it. */
    static final java.util.regex.Pattern GRANULARITY_COMMENT =
            java.util.regex.Pattern.compile("\\A(#include \"klap/klap\\.cuh\") /\\* added by klap --granularity=[a-z]+ \\*/");

    /**
     * Writes {@code variant} of case {@code c} to {@code OUT/variant/name.cu}: the case itself, or
     * klap's output (the runtime headers next to it).
     *
     * @return "" on success, else what failed
     */
    static String transform(Path c, String name, String variant) {
        try {
            Path dir = OUT.resolve(variant);
            Files.createDirectories(dir);
            Path src = dir.resolve(name + ".cu");
            if (variant.equals("original")) {
                Files.copy(c, src, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                return "";
            }
            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            int rc = Klap.run(new String[] {"--granularity=" + variant, c.toString(), "-o", src.toString()},
                    new PrintWriter(out), new PrintWriter(err));
            return rc == 0 ? "" : "klap exited " + rc + ":\n" + err;
        } catch (IOException e) {
            return "could not run: " + e;
        }
    }

    /** @return "" after copying the binary {@code from} to {@code to}, else what failed */
    static String copied(Path from, Path to) {
        try {
            Files.copy(from, to, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            return "";
        } catch (IOException e) {
            return "could not copy " + from + " to " + to + ": " + e;
        }
    }

    /**
     * Builds {@code src} into {@code bin} with {@code nvcc -std=c++17 -rdc=true -arch=sm_90}, the
     * test cases' folder on the include path; with {@code cubin} (a case as written) only its device
     * code ({@code -cubin}: the front end reads the whole file, ptxas compiles the device code; no
     * host compiler pass and no link, about half the time), into {@code bin.cubin}: it is a
     * hand-written one-file program; only klap's variants change host code and what links
     * (scripts/gpu-tier builds every variant itself).
     *
     * @return "" on success, else what failed
     */
    static String compile(Path src, Path bin, boolean cubin) {
        try {
            List<String> cmd = new ArrayList<>(List.of("nvcc", "-std=c++17", "-rdc=true", "-arch=sm_90", "-I" + CASES));
            if (cubin) {
                cmd.add("-cubin");
            }
            cmd.addAll(List.of("-o", bin + (cubin ? ".cubin" : ""), src.toString()));
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(10, TimeUnit.MINUTES)) {
                p.destroyForcibly();
                return "nvcc timed out on " + src;
            }
            return p.exitValue() == 0 ? "" : "nvcc failed on " + src + ":\n" + log;
        } catch (IOException | InterruptedException e) {
            return "could not run: " + e;
        }
    }
}
