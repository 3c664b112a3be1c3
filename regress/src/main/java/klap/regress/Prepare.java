package klap.regress;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;
import klap.cli.Klap;
import org.apache.commons.io.FileUtils;

/**
 * The Java half of a regression run: copies the benchmark sources into a self-contained work
 * folder, transforms every benchmark with klap at every selected granularity, and writes
 * {@code manifest.tsv} and {@code run.sh} there. The folder can then be carried to a machine
 * without Java, where {@code bash run.sh} compiles and runs everything (docs/regress.md).
 *
 * <pre>
 * WORK/run.sh                      compile + run script (a copy of this module's resource)
 * WORK/manifest.tsv                name, variant, state (ready|refused|missing|klap-error), source, detail,
 *                                  env (tab-separated; "-" stands for an empty field)
 * WORK/src/common/...              copy of BENCH/common
 * WORK/src/NAME/NAME.cu, NAME_flat.cu   copy of BENCH/NAME (cdp and flat compile from here)
 * WORK/variants/NAME/G/NAME.cu     klap's output in variant G, with klap/*.cuh next to it
 * </pre>
 *
 * <p>A CUDA-NP variant ({@link Variant#npMode()}) is {@code ready} only if klap's output contains
 * the kernel variant it runs ({@link Variant#npMarker()}); where klap left it out (exit 0 with a
 * {@code [klap-np]} warning, e.g. lud's perimeter kernel at inter-warp) it is {@code refused} with
 * that warning, so that no original kernel is measured under a CUDA-NP variant's name.
 */
public final class Prepare {
    /** Files larger than this in a benchmark directory are not copied (build outputs, not sources). */
    static final long MAX_COPY_BYTES = 16L << 20;

    private Prepare() {}

    /**
     * One manifest line.
     *
     * @param bench the benchmark
     * @param variant the variant
     * @param state {@code ready}, {@code refused}, {@code missing} or {@code klap-error}
     * @param source the file to compile, relative to the work folder ("" unless ready)
     * @param detail why it is not ready, else ""
     * @param env the environment the binary runs with ({@link Variant#env()}), "" for none
     */
    public record Entry(String bench, String variant, String state, String source, String detail, String env) {
        /** An entry whose binary runs without extra environment. */
        public Entry(String bench, String variant, String state, String source, String detail) {
            this(bench, variant, state, source, detail, "");
        }

        String toTsv() {
            // "-" for an empty field: bash's read joins consecutive tabs (tab is IFS white space)
            return String.join("\t", bench, variant, state, source.isEmpty() ? "-" : source,
                    detail.isBlank() ? "-" : clean(detail), env.isBlank() ? "-" : clean(env));
        }

        private static String clean(String s) {
            return s.replace('\t', ' ').replace('\n', ' ').replace('\r', ' ').strip();
        }
    }

    /**
     * Prepares {@code work}: removes what an earlier prepare left there, copies the sources,
     * transforms and writes the manifest and run.sh. Benchmarks whose sources are missing and
     * variants klap refuses are recorded in the manifest; the preparation goes on.
     *
     * @param benchDir the benchmark set, e.g. {@code testcases/bench}
     * @param work the folder to fill; must be absent, empty, or an earlier work folder
     * @param benches the benchmarks to prepare
     * @param variants the variants to prepare
     * @param progress receives one progress line per transformed variant
     * @return the manifest entries, in order
     * @throws IOException if a file cannot be copied or written, or {@code work} is some other folder
     */
    public static List<Entry> prepare(Path benchDir, Path work, List<Benchmark> benches, List<Variant> variants,
            PrintWriter progress) throws IOException {
        benchDir = benchDir.toAbsolutePath().normalize();
        clean(work);
        Path src = work.resolve("src");
        Files.createDirectories(src);
        if (Files.isDirectory(benchDir.resolve("common"))) {
            copyTree(benchDir.resolve("common"), src.resolve("common"));
        }
        for (Benchmark b : benches) {
            copyTree(b.dir(), src.resolve(b.name()));
        }
        long klapSteps = benches.size() * variants.stream().filter(Variant::isKlap).count();
        int step = 0;
        List<Entry> entries = new ArrayList<>();
        // each benchmark's source is parsed once for its variants: the set's files do not change meanwhile
        Klap.Parses parses = new Klap.Parses();
        for (Benchmark b : benches) {
            for (Variant v : variants) {
                Path in = b.sourceFor(v).toAbsolutePath().normalize();
                if (!Files.isRegularFile(in)) {
                    entries.add(new Entry(b.name(), v.name(), "missing", "", "no " + benchDir.relativize(in)));
                    if (v.isKlap()) {
                        step++;
                        progress.printf("[%2d/%d] %-14s missing: no %s%n", step, klapSteps, b.name() + "/" + v.name(),
                                in.getFileName());
                    }
                } else if (!v.isKlap()) {
                    entries.add(new Entry(b.name(), v.name(), "ready",
                            "src/" + b.name() + "/" + in.getFileName(), "", v.env()));
                } else {
                    step++;
                    entries.add(transform(benchDir, work, b, v, in, step, klapSteps, progress, parses));
                }
                progress.flush();
            }
        }
        StringBuilder tsv = new StringBuilder("# name\tvariant\tstate\tsource\tdetail\tenv (written by klap regress)\n");
        entries.forEach(e -> tsv.append(e.toTsv()).append('\n'));
        Files.writeString(work.resolve("manifest.tsv"), tsv, StandardCharsets.UTF_8);
        writeRunScript(work);
        return entries;
    }

    private static Entry transform(Path benchDir, Path work, Benchmark b, Variant v, Path in, int step, long steps,
            PrintWriter progress, Klap.Parses parses) throws IOException {
        Path outDir = work.resolve("variants").resolve(b.name()).resolve(v.name());
        Files.createDirectories(outDir);
        Path out = outDir.resolve(b.name() + ".cu");
        StringWriter so = new StringWriter();
        StringWriter se = new StringWriter();
        long t0 = System.nanoTime();
        List<String> args = new java.util.ArrayList<>(v.klapArgs());
        args.addAll(List.of("-I", benchDir.toString(), in.toString(), "-o", out.toString()));
        int rc = Klap.run(args.toArray(String[]::new), new PrintWriter(so), new PrintWriter(se), parses);
        String secs = String.format(Locale.ROOT, "%.1f s", (System.nanoTime() - t0) / 1e9);
        String err = se.toString();
        String label = b.name() + "/" + v.name();
        if (rc == 0) {
            long warnings = err.lines().filter(l -> l.contains(": warning:")).count();
            String marker = v.npMarker();
            if (marker != null && !Files.readString(out, StandardCharsets.UTF_8).contains(marker)) {
                // klap kept the original kernel (with a warning): this variant would measure the original
                String why = err.lines().filter(l -> l.contains(": warning:") && l.contains("[klap-np]")).findFirst()
                        .orElse("klap's output has no " + v.npKind() + " kernel (no " + marker + ")").strip()
                        .replace(benchDir + java.io.File.separator, "");
                progress.printf("[%2d/%d] %-14s transform refused: no %s kernel: %s%n", step, steps, label,
                        v.npKind(), why.length() > 160 ? why.substring(0, 157) + "..." : why);
                return new Entry(b.name(), v.name(), "refused", "", why, v.env());
            }
            progress.printf("[%2d/%d] %-14s transform ok %s%s%n", step, steps, label, secs,
                    warnings == 0 ? "" : " (" + warnings + " warning" + (warnings == 1 ? "" : "s") + ")");
            return new Entry(b.name(), v.name(), "ready", work.relativize(out).toString().replace('\\', '/'), "",
                    v.env());
        }
        String first = firstDiagnostic(err).replace(benchDir + java.io.File.separator, "");
        // exit 1 is klap's "the input cannot be transformed"; an I/O error or a crash inside klap is
        // a failure of the run, not a refusal
        boolean refused = rc == 1 && !err.contains("internal error") && !first.contains("[klap-io]");
        progress.printf("[%2d/%d] %-14s transform %s: %s%n", step, steps, label,
                refused ? "refused" : "FAILED (exit " + rc + ")",
                first.length() > 160 ? first.substring(0, 157) + "..." : first);
        return new Entry(b.name(), v.name(), refused ? "refused" : "klap-error", "",
                refused ? first : "klap exited " + rc + ": " + first, v.env());
    }

    /** @return the first error line of klap's stderr, else its first non-blank line */
    static String firstDiagnostic(String err) {
        return err.lines().filter(l -> l.contains(": error:")).findFirst()
                .or(() -> err.lines().filter(l -> !l.isBlank()).findFirst())
                .orElse("(no diagnostic)").strip();
    }

    /** Copies this module's run.sh into {@code work} and makes it executable. */
    static void writeRunScript(Path work) throws IOException {
        Path script = work.resolve("run.sh");
        try (InputStream in = Prepare.class.getResourceAsStream("run.sh")) {
            if (in == null) {
                throw new IOException("run.sh is missing from the regress jar");
            }
            Files.copy(in, script, StandardCopyOption.REPLACE_EXISTING);
        }
        script.toFile().setExecutable(true, false);
    }

    /** Empties {@code work}, refusing a non-empty folder that is not an earlier work folder. */
    private static void clean(Path work) throws IOException {
        if (!Files.isDirectory(work)) {
            Files.createDirectories(work);
            return;
        }
        boolean empty;
        try (Stream<Path> s = Files.list(work)) {
            empty = s.findAny().isEmpty();
        }
        if (empty) {
            return;
        }
        if (!Files.exists(work.resolve("manifest.tsv"))) {
            throw new IOException(work + " is not empty and holds no manifest.tsv: not a regress work folder, "
                    + "refusing to clear it");
        }
        FileUtils.cleanDirectory(work.toFile());
    }

    /**
     * Copies the folders and the regular files of at most {@link #MAX_COPY_BYTES} under {@code
     * from}. A link to a file is copied as the file it points to (testcases/np/common links the
     * benchmarks' header, relative to a place the copy is not in); a link to a folder is left out
     * (it may point above itself).
     */
    private static void copyTree(Path from, Path to) throws IOException {
        FileUtils.copyDirectory(from.toFile(), to.toFile(),
                f -> (f.isDirectory() && !Files.isSymbolicLink(f.toPath())) || (f.isFile() && f.length() <= MAX_COPY_BYTES),
                false, StandardCopyOption.REPLACE_EXISTING);
    }
}
