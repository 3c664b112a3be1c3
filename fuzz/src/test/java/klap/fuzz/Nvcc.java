package klap.fuzz;

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

/**
 * Builds programs and klap variants with {@code nvcc -std=c++17 -rdc=true -arch=sm_90}, two jobs at
 * a time (the CI machine has two cores), as run.sh of {@link Main} does on the GPU machine.
 */
final class Nvcc {
    private Nvcc() {
    }

    private static final ExecutorService POOL = Executors.newFixedThreadPool(2, r -> {
        Thread t = new Thread(r, "nvcc");
        t.setDaemon(true);
        return t;
    });

    private static Boolean available;

    /** @return true if {@code nvcc --version} runs */
    static synchronized boolean available() {
        if (available == null) {
            try {
                Process p = new ProcessBuilder("nvcc", "--version").redirectErrorStream(true).start();
                p.getInputStream().readAllBytes();
                available = p.waitFor() == 0;
            } catch (IOException | InterruptedException e) {
                available = false;
            }
        }
        return available;
    }

    /**
     * The outcome of a build.
     *
     * @param compiled every translation unit compiled
     * @param linked the binary was linked
     * @param log nvcc's output for the step that failed (empty when linked)
     */
    record Result(boolean compiled, boolean linked, String log) {
    }

    /**
     * Builds {@code sources} into {@code bin} on the pool: a single file in one nvcc call; several
     * files each with {@code -c}, then a separate link, so that a link failure is told apart.
     */
    static CompletableFuture<Result> build(List<Path> sources, Path bin) {
        return CompletableFuture.supplyAsync(() -> buildNow(sources, bin), POOL);
    }

    private static Result buildNow(List<Path> sources, Path bin) {
        try {
            List<String> base = List.of("nvcc", "-std=c++17", "-rdc=true", "-arch=sm_90", "-diag-suppress", "177,550");
            if (sources.size() == 1) {
                List<String> cmd = new ArrayList<>(base);
                cmd.addAll(List.of("-o", bin.toString(), sources.get(0).toString()));
                String log = run(cmd);
                return log == null ? new Result(true, true, "") : new Result(false, false, log);
            }
            List<String> objects = new ArrayList<>();
            for (Path s : sources) {
                String o = bin + "." + s.getFileName() + ".o";
                List<String> cmd = new ArrayList<>(base);
                cmd.addAll(List.of("-c", "-o", o, s.toString()));
                String log = run(cmd);
                if (log != null) {
                    return new Result(false, false, log);
                }
                objects.add(o);
            }
            List<String> cmd = new ArrayList<>(base);
            cmd.addAll(List.of("-o", bin.toString()));
            cmd.addAll(objects);
            String log = run(cmd);
            return log == null ? new Result(true, true, "") : new Result(true, false, log);
        } catch (IOException | InterruptedException e) {
            return new Result(false, false, "could not run nvcc: " + e);
        }
    }

    /** @return null if the command succeeded, else its output */
    private static String run(List<String> cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(5, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            return "nvcc timed out: " + String.join(" ", cmd);
        }
        return p.exitValue() == 0 ? null : String.join(" ", cmd) + "\n" + log;
    }

    /**
     * Checks one build: the original and every variant must compile and link. A two-file program's
     * kernel-granularity variant links because klap keeps every kernel's name and signature (its
     * aggregated form is a separate {@code _klap_grid} twin), so main.cu, which klap never sees,
     * still finds the kernels it refers to (issue 10).
     */
    static void check(String what, boolean twoFiles, String variant, Result r) {
        if (r.linked()) {
            return;
        }
        throw new AssertionError((r.compiled() ? "link failed: " : "nvcc failed: ") + what + " (" + variant
                + (twoFiles ? ", two files" : "") + ")\n" + tail(r.log()));
    }

    private static String tail(String log) {
        String[] lines = log.split("\n");
        int from = Math.max(0, lines.length - 30);
        return String.join("\n", java.util.Arrays.copyOfRange(lines, from, lines.length));
    }

    /** Deletes {@code dir} and everything in it, if it exists (an output directory of an earlier run). */
    static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (java.util.stream.Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    /**
     * @return the sources nvcc builds for {@code variant} of the program in {@code pd} (laid out by
     *     {@link Main}): {@code original.cu} or {@code <variant>.cu}; for a two-file program {@code
     *     kernels.cu} or {@code <variant>.cu}, then {@code main.cu}
     */
    static List<Path> sources(Path pd, String variant) {
        Path main = pd.resolve(ProgramGenerator.MAIN_FILE);
        if (Files.exists(main)) {
            Path k = pd.resolve(variant.equals("original") ? ProgramGenerator.KERNELS_FILE : variant + ".cu");
            return List.of(k, main);
        }
        return List.of(pd.resolve(variant + ".cu"));
    }
}
