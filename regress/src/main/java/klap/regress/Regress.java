package klap.regress;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code klap regress}: builds every benchmark of the CDP set in every variant ({@code cdp},
 * {@code flat} and one per klap granularity; for the promotion and CUDA-NP sets, their own variants,
 * {@link Variant#defaultsFor}) and, on a GPU, runs and times them and writes a report
 * (docs/regress.md).
 *
 * <p>Modes: {@code compile} (the CI tier: transform and compile everything, no GPU),
 * {@code prepare} (transform into a self-contained folder with {@code run.sh}, for a GPU machine
 * without Java), {@code report} (the CSV/Markdown/PNG report from the raw.csv or scale.csv run.sh
 * wrote) and {@code run} (prepare, run.sh and report on one machine). With {@code --scale}, the
 * prepared folder runs a scale sweep instead ({@link Scale}). Exit status: 0 when every variant
 * compiled (compile) or passed (run), refused variants included; 1 when some did not or nothing
 * was found; 2 for usage errors.
 */
@Command(name = "regress", mixinStandardHelpOptions = true, sortOptions = false, usageHelpAutoWidth = true,
        versionProvider = Regress.Version.class,
        description = "Transforms, compiles and (on a GPU) runs every benchmark of the CDP set in every variant.")
public final class Regress implements Callable<Integer> {

    /** What a run does. */
    public enum Mode {
        /** transform and compile every variant (no GPU needed) */
        compile,
        /** transform into the work folder and write run.sh there */
        prepare,
        /** compile, run and report on this machine */
        run,
        /** make the report from a raw.csv */
        report
    }

    @Option(names = "--mode", defaultValue = "compile", paramLabel = "compile|run|prepare|report",
            description = "compile (default; CI tier), run (needs a GPU), prepare (for a GPU machine without Java) "
                + "or report (from --raw)")
    Mode mode;

    @Option(names = "--bench-dir", paramLabel = "DIR", description = "the benchmark set (default: testcases/bench)")
    Path benchDir;

    @Option(names = "--out-dir", paramLabel = "DIR", description = "where the report goes (default: "
            + "benchmarks/results); with --mode=prepare the folder to prepare (default: the work folder)")
    Path outDir;

    @Option(names = "--work-dir", paramLabel = "DIR",
            description = "the folder for sources, binaries and logs (default: build/regress)")
    Path workDir;

    @Option(names = "--raw", paramLabel = "FILE", description = "--mode=report: the raw.csv (or scale.csv) to "
            + "report on (env.properties is read from the same folder)")
    Path raw;

    @Option(names = "--first-raw", paramLabel = "FILE", description = "--mode=report: take the first-repetition "
            + "times from this raw.csv of a run with --reps 1 (for raw files that predate first_ms)")
    Path firstRaw;

    @Option(names = "--scale", description = "prepare/run a scale sweep instead of the benchmark set: "
            + "bfs, bt, qt and sp (or --only) at every --scale-factors times their default input size; "
            + "with --bench-dir testcases/promotion and --scale-factors 2,25,3000, the promotion set's small, "
            + "medium and large datasets; default work folder build/regress-scale")
    boolean scale;

    @Option(names = "--scale-factors", split = ",", paramLabel = "F", defaultValue = "1,10,100",
            description = "the factors of the scale sweep (default: ${DEFAULT-VALUE})")
    List<Long> scaleFactors;

    @Option(names = "--only", split = ",", paramLabel = "NAME", description = "only these benchmarks")
    List<String> only = new ArrayList<>();

    @Option(names = "--variants", split = ",", paramLabel = "VARIANT",
            description = "only these variants (default: cdp, flat and every klap granularity; for a benchmark "
                + "set named promotion, cdp, flat, p, pa2, pa128, po, pao2, pao128; for one named np, base, npi, npw, "
                + "npalli, npallw)")
    List<String> variantNames = new ArrayList<>();

    @Option(names = "--runs", defaultValue = "5", paramLabel = "N",
            description = "process runs per variant; the median time is reported (default: ${DEFAULT-VALUE})")
    int runs;

    @Option(names = "--reps", defaultValue = "11", paramLabel = "N",
            description = "repetitions per process, passed as -r N: the first is reported apart, the warm time is "
                + "the median of the others (default: ${DEFAULT-VALUE})")
    int reps;

    @Option(names = "--timeout", defaultValue = "120", paramLabel = "SECONDS",
            description = "a run taking longer fails (default: ${DEFAULT-VALUE})")
    int timeout;

    @Option(names = "--jobs", defaultValue = "2", paramLabel = "N",
            description = "parallel nvcc compiles (default: ${DEFAULT-VALUE})")
    int jobs;

    @Option(names = "--arch", defaultValue = "sm_90", paramLabel = "SM",
            description = "nvcc -arch (default: ${DEFAULT-VALUE})")
    String arch;

    @Option(names = "--device-name", paramLabel = "NAME",
            description = "device name in the report (default: what nvidia-smi said during the run)")
    String deviceName;

    private PrintWriter out;
    private PrintWriter err;

    /** Entry point: {@code java -jar regress-all.jar [options]}. */
    public static void main(String[] args) {
        System.setProperty("java.awt.headless", "true");
        System.exit(run(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
    }

    /**
     * Runs the command with {@code args}, printing progress to {@code out} and errors to {@code err}.
     *
     * @return the exit status (0, 1 or 2)
     */
    public static int run(String[] args, PrintWriter out, PrintWriter err) {
        Regress r = new Regress();
        r.out = out;
        r.err = err;
        CommandLine cl = new CommandLine(r).setCaseInsensitiveEnumValuesAllowed(true);
        cl.setOut(out);
        cl.setErr(err);
        return cl.execute(args);
    }

    /** The repository root: the system property {@code klap.root} (set by scripts/regress), else the current folder. */
    static Path root() {
        return Path.of(System.getProperty("klap.root", ".")).toAbsolutePath().normalize();
    }

    @Override
    public Integer call() throws IOException, InterruptedException {
        if (runs < 1 || reps < 1 || timeout < 1 || jobs < 1 || scaleFactors.stream().anyMatch(f -> f < 1)) {
            err.println("regress: --runs, --reps, --timeout, --jobs and --scale-factors must be positive");
            return 2;
        }
        Path bench = benchDir != null ? benchDir : root().resolve("testcases/bench");
        Path work = (mode == Mode.prepare && outDir != null ? outDir : workDir != null ? workDir
                : root().resolve(scale ? "build/regress-scale" : "build/regress")).toAbsolutePath().normalize();
        Path reports = outDir != null ? outDir : root().resolve("benchmarks/results");
        if (mode == Mode.report) {
            if (raw == null) {
                err.println("regress: --mode=report needs --raw DIR/raw.csv (or DIR/scale.csv)");
                return 2;
            }
            return report(raw, reports);
        }
        List<Variant> variants;
        try {
            variants = variantNames.isEmpty() ? Variant.defaultsFor(bench) : Variant.select(variantNames);
        } catch (IllegalArgumentException e) {
            err.println("regress: " + e.getMessage());
            return 2;
        }
        if (!Files.isDirectory(bench)) {
            err.println("regress: no benchmark folder " + bench);
            return 1;
        }
        List<Benchmark> benches = Benchmark.discover(bench);
        if (scale) {
            for (String n : only) {
                if (Scale.of(n).isEmpty()) {
                    err.println("regress: no scale sweep for '" + n + "'; sweeps: "
                            + String.join(", ", Scale.ALL.stream().map(Scale::bench).toList()));
                    return 2;
                }
            }
            benches = benches.stream().filter(b -> Scale.of(b.name()).isPresent()).toList();
        }
        for (String n : only) {
            if (benches.stream().noneMatch(b -> b.name().equals(n))) {
                err.println("regress: no benchmark '" + n + "' in " + bench + "; found: "
                        + String.join(", ", benches.stream().map(Benchmark::name).toList()));
                return 2;
            }
        }
        if (!only.isEmpty()) {
            benches = benches.stream().filter(b -> only.contains(b.name())).toList();
        }
        if (benches.isEmpty()) {
            err.println("regress: no benchmarks in " + bench + " (expected NAME/NAME.cu folders)");
            return 1;
        }
        out.printf("regress: %d benchmarks x %d variants (%s), work folder %s%n", benches.size(), variants.size(),
                String.join(", ", variants.stream().map(Variant::name).toList()), work);
        List<Prepare.Entry> entries = Prepare.prepare(bench, work, benches, variants, out);
        String rawName = "raw.csv";
        if (scale) {
            Scale.writeSweep(work, benches.stream().map(b -> Scale.of(b.name()).orElseThrow()).toList(), scaleFactors);
            rawName = "scale.csv";
            out.println("scale sweep: " + String.join(", ", benches.stream().map(Benchmark::name).toList()) + " at "
                    + String.join(", ", scaleFactors.stream().sorted().distinct().map(f -> f + "x").toList())
                    + " (" + work.resolve("sweep.tsv") + ")");
        }
        if (mode == Mode.prepare) {
            out.println("prepared " + entries.size() + " variants in " + work);
            out.println("on the GPU machine: bash " + work.resolve("run.sh") + " [--runs N] [--reps N] [--timeout S] "
                    + "[--jobs N]; then regress --mode=report --raw " + work.resolve(rawName));
            return 0;
        }
        List<String> cmd = new ArrayList<>(List.of("bash", work.resolve("run.sh").toString(), "--jobs",
                Integer.toString(jobs), "--arch", arch, "--runs", Integer.toString(runs), "--reps",
                Integer.toString(reps), "--timeout", Integer.toString(timeout)));
        if (mode == Mode.compile) {
            cmd.add("--compile-only");
        }
        int rc = runScript(cmd);
        Path rawCsv = work.resolve(scale && mode == Mode.run ? rawName : "raw.csv");
        if (!Files.isRegularFile(rawCsv)) {
            err.println("regress: run.sh exited " + rc + " without writing " + rawCsv);
            return 1;
        }
        List<RawCsv.Row> rows = ScaleReport.isScaleCsv(rawCsv)
                ? ScaleReport.readPoints(rawCsv).stream().map(ScaleReport.Point::row).toList() : RawCsv.read(rawCsv);
        if (mode == Mode.run) {
            int r = report(rawCsv, reports);
            if (r != 0) {
                return r;
            }
        }
        List<RawCsv.Row> failed = rows.stream().filter(RawCsv.Row::failed).toList();
        long refused = rows.stream().filter(RawCsv.Row::refused).count();
        out.printf("regress: %d variants, %d %s, %d refused by klap, %d failed%n", rows.size(),
                rows.size() - failed.size() - refused, mode == Mode.compile ? "compiled" : "passed", refused,
                failed.size());
        for (RawCsv.Row f : failed) {
            out.printf("  FAILED %s/%s: %s %s%n", f.name(), f.variant(), f.status(), f.detail());
        }
        return failed.isEmpty() ? 0 : 1;
    }

    private int runScript(List<String> cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        try (var r = p.inputReader(StandardCharsets.UTF_8)) {
            String line;
            while ((line = r.readLine()) != null) {
                out.println(line);
            }
        }
        if (!p.waitFor(24, TimeUnit.HOURS)) {
            p.destroyForcibly();
        }
        return p.exitValue();
    }

    private int report(Path rawCsv, Path reports) throws IOException {
        try {
            if (!Files.isRegularFile(rawCsv)) {
                err.println("regress: no file " + rawCsv);
                return 1;
            }
            if (ScaleReport.isScaleCsv(rawCsv)) {
                if (firstRaw != null) {
                    err.println("regress: --first-raw goes with a raw.csv, not with a scale sweep's scale.csv");
                    return 2;
                }
                ScaleReport.Written w = ScaleReport.read(rawCsv).write(reports, deviceName);
                out.println("scale report: " + w.markdown() + ", " + w.csv() + ", "
                        + String.join(", ", w.pngs().stream().map(Path::toString).toList()));
                return 0;
            }
            Report.Written w = Report.read(rawCsv, firstRaw).write(reports, deviceName);
            out.println("report: " + w.markdown() + ", " + w.csv() + ", " + w.png()
                    + (w.firstPng() == null ? "" : ", " + w.firstPng()));
            return 0;
        } catch (IllegalArgumentException e) {
            err.println("regress: " + e.getMessage());
            return 1;
        }
    }

    /** Reads the version from the jar manifest. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = Regress.class.getPackage().getImplementationVersion();
            return new String[] {"klap regress " + (v == null ? "(development build)" : v)};
        }
    }
}
