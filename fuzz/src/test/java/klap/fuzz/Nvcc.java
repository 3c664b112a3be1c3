package klap.fuzz;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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

    /**
     * Like {@link #build(List, Path)}, but sources that nvcc would build exactly as an earlier call's
     * (klap's output at one granularity is often its output at another, e.g. block falling back to
     * warp, but for the comment on its first line that names the granularity) are not built again:
     * the result is the earlier build's, whose binary is copied to {@code bin} (run.sh runs every
     * variant's binary).
     *
     * @param built the builds so far, by {@link #buildKey}; one map per set of programs
     */
    static CompletableFuture<Result> build(List<Path> sources, Path bin, Map<String, Built> built) {
        String key;
        try {
            key = buildKey(sources);
        } catch (IOException e) {
            return build(sources, bin);
        }
        Built earlier = built.get(key);
        if (earlier == null) {
            CompletableFuture<Result> r = build(sources, bin);
            built.put(key, new Built(r, bin));
            return r;
        }
        return earlier.result().thenApply(r -> {
            try {
                if (r.linked()) {
                    Files.copy(earlier.bin(), bin, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                }
                return r;
            } catch (IOException e) {
                return new Result(r.compiled(), false, "could not copy " + earlier.bin() + " to " + bin + ": " + e);
            }
        });
    }

    /** A build started by {@link #build(List, Path, Map)}: its result and its binary. */
    record Built(CompletableFuture<Result> result, Path bin) {
    }

    /** The first line of klap's output names the granularity in a comment; nvcc ignores it. */
    private static final java.util.regex.Pattern GRANULARITY_COMMENT =
            java.util.regex.Pattern.compile("\\A(#include \"klap/klap\\.cuh\") /\\* added by klap --granularity=[a-z]+ \\*/");

    /**
     * @return what decides nvcc's build of {@code sources}: the first file's folder (where its quoted
     *     includes are found) and text without klap's granularity comment, and the other files' paths
     */
    static String buildKey(List<Path> sources) throws IOException {
        StringBuilder key = new StringBuilder(sources.get(0).toAbsolutePath().getParent().toString()).append('\0');
        key.append(GRANULARITY_COMMENT.matcher(Files.readString(sources.get(0))).replaceFirst("$1"));
        for (Path p : sources.subList(1, sources.size())) {
            key.append('\0').append(p.toAbsolutePath());
        }
        return key.toString();
    }

    /** The command and flags of every build here. */
    private static final List<String> BASE = List.of("nvcc", "-std=c++17", "-rdc=true", "-arch=sm_90", "-diag-suppress", "177,550");

    /**
     * Compiles the device code of one hand-written source ({@code -cubin}: the front end reads the
     * whole file, host code included; no host compiler pass, no link) into {@code cubin}, on the
     * pool: for programs that are not klap's output (a fixture's original), where a full build
     * would only check what the front end does (a link step checks nothing in a one-file program
     * that is not klap's), and for the chain and CUDA-NP samples in every variant (about a third of
     * a full build's time; the regress compile tier links every promotion and CUDA-NP variant of
     * the benchmark sets). Its result counts as linked when it compiled.
     */
    static CompletableFuture<Result> cubin(Path source, Path cubin) {
        return cubinNow(source, cubin);
    }

    /**
     * Like {@link #cubin(Path, Path)}, for klap's variants of a one-file program: a source that nvcc
     * would compile exactly as an earlier call's ({@link #buildKey}: another granularity's identical
     * output) is not compiled again; the result is the earlier one's.
     *
     * @param compiled the compilations so far, by {@link #buildKey}; one map per set of programs
     */
    static CompletableFuture<Result> cubin(Path source, Path cubin, Map<String, CompletableFuture<Result>> compiled) {
        try {
            return compiled.computeIfAbsent(buildKey(List.of(source)), k -> cubinNow(source, cubin));
        } catch (IOException e) {
            return cubinNow(source, cubin);
        }
    }

    /**
     * A compiled cubin and its device link: the {@code -cubin} result, and where it compiled, the
     * static shared memory nvlink gives each entry function (bytes, by mangled name; nvlink's
     * {@code -v} "Function properties"), or why the device link failed (e.g. "uses too much shared
     * data": nvlink lays out the {@code __shared__} variables of functions that several kernels reach
     * only here, so {@code -cubin} alone does not see it).
     */
    record Layout(Result result, Map<String, Long> smem, String linkError) {
    }

    /**
     * Like {@link #cubin(Path, Path, Map)}, then, if {@code link}, links the cubin's device code
     * alone ({@code nvcc -dlink -Xnvlink -v} with the device runtime; about half a second) and reads
     * each entry function's static shared memory (else the layout is empty).
     *
     * @param compiled the compilations so far, by {@link #buildKey}; one map per set of programs
     */
    static CompletableFuture<Layout> cubinLayout(Path source, Path cubin, boolean link,
            Map<String, CompletableFuture<Layout>> compiled) {
        java.util.function.Supplier<CompletableFuture<Layout>> now = () -> cubinNow(source, cubin)
                .thenApplyAsync(r -> r.linked() && link ? deviceLink(r, cubin) : new Layout(r, Map.of(), null), POOL);
        try {
            return compiled.computeIfAbsent(buildKey(List.of(source)), k -> now.get());
        } catch (IOException e) {
            return now.get();
        }
    }

    private static final java.util.regex.Pattern PROPERTIES = java.util.regex.Pattern.compile(
            "Function properties for '([^']+)':\\s*\\n[^\\n]*?(\\d+) bytes smem");

    private static Layout deviceLink(Result compiled, Path cubin) {
        List<String> cmd = List.of("nvcc", "-arch=sm_90", "-dlink", "-Xnvlink", "-v", "-o", cubin + ".dlink.o", cubin.toString(),
                "-lcudadevrt");
        try {
            Ran r = execute(cmd);
            if (!r.ok()) {
                return new Layout(compiled, Map.of(), String.join(" ", cmd) + "\n" + r.log());
            }
            String log = r.log();
            Map<String, Long> smem = new java.util.TreeMap<>();
            java.util.regex.Matcher m = PROPERTIES.matcher(log);
            while (m.find()) {
                smem.put(m.group(1), Long.parseLong(m.group(2)));
            }
            return new Layout(compiled, smem, null);
        } catch (IOException | InterruptedException e) {
            return new Layout(compiled, Map.of(), "could not run nvcc -dlink: " + e);
        }
    }

    private static CompletableFuture<Result> cubinNow(Path source, Path cubin) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                List<String> cmd = new ArrayList<>(BASE);
                cmd.addAll(List.of("-cubin", "-o", cubin.toString(), source.toString()));
                String log = run(cmd);
                return log == null ? new Result(true, true, "") : new Result(false, false, log);
            } catch (IOException | InterruptedException e) {
                return new Result(false, false, "could not run nvcc: " + e);
            }
        }, POOL);
    }

    private static Result buildNow(List<Path> sources, Path bin) {
        try {
            if (sources.size() == 1) {
                List<String> cmd = new ArrayList<>(BASE);
                cmd.addAll(List.of("-o", bin.toString(), sources.get(0).toString()));
                String log = run(cmd);
                return log == null ? new Result(true, true, "") : new Result(false, false, log);
            }
            List<String> objects = new ArrayList<>();
            for (Path s : sources) {
                String o = bin + "." + s.getFileName() + ".o";
                List<String> cmd = new ArrayList<>(BASE);
                cmd.addAll(List.of("-c", "-o", o, s.toString()));
                String log = run(cmd);
                if (log != null) {
                    return new Result(false, false, log);
                }
                objects.add(o);
            }
            List<String> cmd = new ArrayList<>(BASE);
            cmd.addAll(List.of("-o", bin.toString()));
            cmd.addAll(objects);
            String log = run(cmd);
            return log == null ? new Result(true, true, "") : new Result(true, false, log);
        } catch (IOException | InterruptedException e) {
            return new Result(false, false, "could not run nvcc: " + e);
        }
    }

    /** @return null if the command succeeded, else the command and its output */
    private static String run(List<String> cmd) throws IOException, InterruptedException {
        Ran r = execute(cmd);
        return r.ok() ? null : String.join(" ", cmd) + "\n" + r.log();
    }

    /** What a command printed (stdout and stderr), and whether it exited with 0 within 5 minutes. */
    private record Ran(boolean ok, String log) {
    }

    private static Ran execute(List<String> cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(5, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            return new Ran(false, "timed out: " + String.join(" ", cmd));
        }
        return new Ran(p.exitValue() == 0, log);
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
