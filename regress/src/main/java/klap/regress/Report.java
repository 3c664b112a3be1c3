package klap.regress;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.style.Styler;

/**
 * The report of a run of the benchmark set, made from the raw.csv and env.properties that
 * {@code run.sh} wrote: {@code DATE-DEVICE.csv} (one row per benchmark and variant, with
 * speedups), {@code DATE-DEVICE.md} (warm and first-repetition times, speedups over {@code cdp}
 * and over {@code flat} with geometric means, the best klap variant, launch counts, the variants
 * that did not pass), {@code DATE-DEVICE.png} (bar chart of the warm speedups over {@code cdp})
 * and, when first-repetition times exist, {@code DATE-DEVICE-first.png} (the same for them).
 *
 * <p>Two times per benchmark and variant ({@link Measure}): the <em>warm</em> time, the median
 * of repetitions 2..R of each process (median over the process runs), and the <em>first</em>
 * repetition, what a user running the program once pays. A raw file from before the two were
 * separated ({@link RawCsv#HEADER_V1}) gives a warm time only as the median of all R repetitions,
 * the first included, which the report says; its first-repetition times can come from a second
 * raw file made with {@code -r 1} (the {@code firstRaw} of {@link #read(Path, Path)}).
 *
 * <p>A speedup of variant V over baseline B on a benchmark is {@code time(B) / time(V)}, defined
 * only when both passed. A geometric mean covers the benchmarks where it is defined and says how
 * many those are out of all. The <em>best klap</em> variant of a benchmark is its fastest passing
 * klap variant (any variant other than {@code cdp} and {@code flat}).
 *
 * <p>The CUDA-NP set (testcases/np) has one baseline, {@code base} (the program as written), and no
 * cdp or flat: a raw file with a {@code base} variant and no {@code cdp} is reported against
 * {@code base} ({@link #baselines()}): its speedup tables, geometric means, chart and CSV columns are
 * over base, and the Markdown names the CUDA-NP paper's own results for comparison.
 */
public final class Report {
    /** Which of the two times of a benchmark variant. */
    public enum Measure {
        /** median of the repetitions after the first */
        WARM("warm"),
        /** the first repetition of a process */
        FIRST("first repetition");

        private final String label;

        Measure(String label) {
            this.label = label;
        }

        /** @return the measure's name in the report */
        public String label() {
            return label;
        }
    }

    /**
     * What the CUDA-NP paper measured, printed in the report on the CUDA-NP set (paper section 5,
     * Figure 10; shared/papers/cuda-np-nested-thread-parallelism.md).
     */
    public static final String NP_PAPER = "For comparison, the CUDA-NP paper (Yang and Zhou, PPoPP 2014, Figure 10) "
            + "reports speedups of 1.36x to 6.69x over its baselines, **2.18x** geometric mean over ten benchmarks "
            + "(TMV, MV, NN, LU, LE and LIB, the six here, among them) on a GTX 680 with CUDA 5.0, with the number "
            + "of slaves and the intra/inter-warp choice tuned per benchmark. Here npi and npw use klap's defaults "
            + "(8 threads per group, a 48 KB shared-memory budget) on another GPU and compiler: a reference, not an "
            + "expected result. npalli and npallw are the `--np=all` program run with `KLAP_NP=intra-warp` and "
            + "`KLAP_NP=inter-warp`.";

    /** The name of the best-klap-variant column. */
    public static final String BEST = "best klap";

    private final List<RawCsv.Row> rows;
    private final Properties env;
    private final List<RawCsv.Row> firstRows;
    private final String rawName;
    private final String firstRawName;
    private final boolean v1;
    private final List<String> benchmarks;
    private final List<String> variants;
    private final Map<String, RawCsv.Row> byKey = new LinkedHashMap<>();
    private final Map<String, RawCsv.Row> firstByKey = new LinkedHashMap<>();

    /**
     * A geometric mean of speedups.
     *
     * @param value the mean, or NaN if no benchmark counted
     * @param n how many benchmarks counted
     * @param of how many benchmarks there are
     * @param notCounted the benchmarks that did not count, each as {@code name (reason)}
     */
    public record Geomean(double value, int n, int of, List<String> notCounted) {
        /** @return e.g. {@code 4.01x (8/10)}, or {@code - (0/10)} when no benchmark counted */
        public String text() {
            return (n == 0 ? "-" : String.format(Locale.ROOT, "%.2fx", value)) + " (" + n + "/" + of + ")";
        }
    }

    /**
     * The files written.
     *
     * @param csv the per-variant CSV
     * @param markdown the Markdown report
     * @param png the chart of warm speedups over cdp
     * @param firstPng the chart of first-repetition speedups over cdp, or null when there are none
     */
    public record Written(Path csv, Path markdown, Path png, Path firstPng) {}

    /**
     * A report on one raw file, its first-repetition times (if any) taken from the same rows.
     *
     * @param rows raw.csv's rows
     * @param env the machine description (keys {@code date}, {@code device}, {@code driver},
     *     {@code cuda}, {@code runs}, {@code reps}, ...); missing keys print as "unknown"
     */
    public Report(List<RawCsv.Row> rows, Properties env) {
        this(rows, env, false, "raw.csv", null, null);
    }

    /**
     * @param rows raw.csv's rows
     * @param env the machine description of that run
     * @param v1 true if the rows come from a file of the older format (no first_ms, warm_ms)
     * @param rawName the raw file's name, for the report
     * @param firstRows the rows of a separate {@code -r 1} run whose time_ms (or first_ms) is the
     *     first repetition, or null to take first times from {@code rows}
     * @param firstRawName that file's name, or null
     */
    public Report(List<RawCsv.Row> rows, Properties env, boolean v1, String rawName, List<RawCsv.Row> firstRows,
            String firstRawName) {
        this.rows = List.copyOf(rows);
        this.env = env;
        this.v1 = v1;
        this.rawName = rawName;
        this.firstRows = firstRows == null ? null : List.copyOf(firstRows);
        this.firstRawName = firstRawName;
        Set<String> bs = new LinkedHashSet<>();
        Set<String> vs = new LinkedHashSet<>();
        for (RawCsv.Row r : rows) {
            bs.add(r.name());
            vs.add(r.variant());
            byKey.put(r.name() + "\0" + r.variant(), r);
        }
        if (firstRows != null) {
            for (RawCsv.Row r : firstRows) {
                bs.add(r.name());
                vs.add(r.variant());
                firstByKey.put(r.name() + "\0" + r.variant(), r);
            }
        }
        this.benchmarks = List.copyOf(bs);
        this.variants = List.copyOf(vs);
    }

    /**
     * Reads {@code raw} and the {@code env.properties} next to it (if present).
     *
     * @throws IOException if raw.csv cannot be read
     */
    public static Report read(Path raw) throws IOException {
        return read(raw, null);
    }

    /**
     * Reads {@code raw} and the {@code env.properties} next to it (if present), and, if
     * {@code firstRaw} is not null, the first-repetition times from that file: a raw.csv of a run
     * with {@code -r 1}, whose time_ms is then the first repetition. Its machine description is
     * {@code NAME.env.properties} next to it, else an {@code env.properties} in its folder if that
     * is not {@code raw}'s folder; if one says {@code reps} was not 1, the file is refused.
     *
     * @throws IOException if a file cannot be read
     * @throws IllegalArgumentException if a file is malformed or {@code firstRaw} was not a {@code -r 1} run
     */
    public static Report read(Path raw, Path firstRaw) throws IOException {
        Properties env = load(raw.toAbsolutePath().resolveSibling("env.properties"));
        List<RawCsv.Row> firstRows = null;
        String firstName = null;
        if (firstRaw != null) {
            Path abs = firstRaw.toAbsolutePath();
            String stem = abs.getFileName().toString().replaceFirst("\\.csv$", "");
            Path own = abs.resolveSibling(stem + ".env.properties");
            Path shared = abs.resolveSibling("env.properties");
            Properties fenv = Files.isRegularFile(own) ? load(own)
                    : !abs.getParent().equals(raw.toAbsolutePath().getParent()) ? load(shared) : new Properties();
            String reps = fenv.getProperty("reps", "").strip();
            if (!reps.isEmpty() && !reps.equals("1")) {
                throw new IllegalArgumentException(firstRaw + ": its env.properties says reps=" + reps
                        + "; --first-raw needs a run with --reps 1");
            }
            firstRows = RawCsv.read(firstRaw);
            firstName = abs.getFileName().toString();
        }
        return new Report(RawCsv.read(raw), env, RawCsv.isV1(raw), raw.getFileName().toString(), firstRows,
                firstName);
    }

    private static Properties load(Path file) throws IOException {
        Properties p = new Properties();
        if (Files.isRegularFile(file)) {
            try (var in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
                p.load(in);
            }
        }
        return p;
    }

    /** @return the benchmarks, in raw.csv order */
    public List<String> benchmarks() {
        return benchmarks;
    }

    /** @return the variants, in raw.csv order */
    public List<String> variants() {
        return variants;
    }

    /** @return the variants made by klap: every variant but the baselines {@code cdp}, {@code flat} and {@code base} */
    public List<String> klapVariants() {
        return variants.stream().filter(v -> !Variant.BASELINES.contains(v)).toList();
    }

    /**
     * @return the baselines the speedups are taken over: {@code base} for the CUDA-NP set (a
     *     {@code base} variant and no {@code cdp}), else {@code cdp} and {@code flat}; the first one
     *     is the chart's
     */
    public List<String> baselines() {
        return isNp() ? List.of("base") : List.of("cdp", "flat");
    }

    /** @return true for a report on the CUDA-NP set: it has a {@code base} variant and no {@code cdp} */
    public boolean isNp() {
        return variants.contains("base") && !variants.contains("cdp");
    }

    /** @return the row of {@code bench} and {@code variant} in the main raw file, or null */
    public RawCsv.Row row(String bench, String variant) {
        return byKey.get(bench + "\0" + variant);
    }

    /** @return the row that gives the first-repetition time of {@code bench} and {@code variant}, or null */
    public RawCsv.Row firstRow(String bench, String variant) {
        return firstRows != null ? firstByKey.get(bench + "\0" + variant) : row(bench, variant);
    }

    private RawCsv.Row rowFor(String bench, String variant, Measure m) {
        return m == Measure.WARM ? row(bench, variant) : firstRow(bench, variant);
    }

    private int reps() {
        try {
            return Integer.parseInt(env.getProperty("reps", "").strip());
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /**
     * @return true if a warm time of {@code row} is only the median of all its repetitions: it has
     *     no warm_ms (an older raw file or program) but ran more than one repetition (or an unknown number)
     */
    public boolean warmIncludesFirst(RawCsv.Row row) {
        return row != null && row.passed() && row.warmMs() == null && reps() != 1;
    }

    /** @return true if some warm time is the median of all repetitions ({@link #warmIncludesFirst}) */
    public boolean anyWarmIncludesFirst() {
        return benchmarks.stream().anyMatch(b -> variants.stream()
                .anyMatch(v -> time(b, v, Measure.WARM) != null && warmIncludesFirst(row(b, v))));
    }

    /**
     * The time of a passing variant.
     *
     * @return the warm time (warm_ms, or for rows without one the median of all repetitions, see
     *     {@link #warmIncludesFirst}), or the first repetition (first_ms, or the time_ms of a run with
     *     {@code -r 1}), in ms; null when it did not pass or that time was not measured
     */
    public Double time(String bench, String variant, Measure m) {
        RawCsv.Row r = rowFor(bench, variant, m);
        if (r == null || !r.passed()) {
            return null;
        }
        if (m == Measure.WARM) {
            return r.warmMs() != null ? r.warmMs() : reps() != 1 ? r.timeMs() : null;
        }
        if (r.firstMs() != null) {
            return r.firstMs();
        }
        // a -r 1 run: its time is the first repetition (the --first-raw file is one by contract)
        return firstRows != null || reps() == 1 ? r.timeMs() : null;
    }

    /** @return the warm time of a passing variant, or null ({@link #time(String, String, Measure)}) */
    public Double time(String bench, String variant) {
        return time(bench, variant, Measure.WARM);
    }

    /** @return true if any benchmark variant has a time of measure {@code m} */
    public boolean has(Measure m) {
        for (String b : benchmarks) {
            for (String v : variants) {
                if (time(b, v, m) != null) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * @return what stands in a table where {@code bench}/{@code variant} has no time of measure
     *     {@code m}: its status in capitals (FAIL, TIMEOUT, ...), "" when there is no row, "n/a"
     *     when it passed without that time; null when it has one
     */
    public String noTime(String bench, String variant, Measure m) {
        if (time(bench, variant, m) != null) {
            return null;
        }
        RawCsv.Row r = rowFor(bench, variant, m);
        return r == null ? "" : r.passed() ? "n/a" : r.status().toUpperCase(Locale.ROOT);
    }

    /** @return {@code time(baseline) / time(variant)} for measure {@code m}, or null unless both have a positive time */
    public Double speedup(String bench, String variant, String baseline, Measure m) {
        Double t = time(bench, variant, m);
        Double b = time(bench, baseline, m);
        return t == null || b == null || t <= 0 || b <= 0 ? null : b / t;
    }

    /** @return the warm speedup ({@link #speedup(String, String, String, Measure)}) */
    public Double speedup(String bench, String variant, String baseline) {
        return speedup(bench, variant, baseline, Measure.WARM);
    }

    /** @return the fastest klap variant of {@code bench} with a time of measure {@code m}, or null if none has one */
    public String bestKlap(String bench, Measure m) {
        String best = null;
        for (String v : klapVariants()) {
            Double t = time(bench, v, m);
            if (t != null && (best == null || t < time(bench, best, m))) {
                best = v;
            }
        }
        return best;
    }

    /** @return the speedup of {@link #bestKlap} over {@code baseline}, or null */
    public Double bestSpeedup(String bench, String baseline, Measure m) {
        String best = bestKlap(bench, m);
        return best == null ? null : speedup(bench, best, baseline, m);
    }

    /**
     * @param variant a variant, or {@link #BEST} for the best klap variant of each benchmark
     * @return the geometric mean of {@code variant}'s speedups over {@code baseline} for measure
     *     {@code m}, over the benchmarks where both have a time, naming the others
     */
    public Geomean geomean(String variant, String baseline, Measure m) {
        double logSum = 0;
        int n = 0;
        List<String> not = new ArrayList<>();
        for (String b : benchmarks) {
            boolean best = variant.equals(BEST);
            Double s = best ? bestSpeedup(b, baseline, m) : speedup(b, variant, baseline, m);
            if (s != null) {
                logSum += Math.log(s);
                n++;
            } else {
                String why = time(b, baseline, m) == null ? baseline + " " + noTime(b, baseline, m)
                        : best ? "no klap variant passed" : noTime(b, variant, m);
                not.add(b + " (" + (why.isBlank() ? "no result" : why.strip()) + ")");
            }
        }
        return new Geomean(n == 0 ? Double.NaN : Math.exp(logSum / n), n, benchmarks.size(), List.copyOf(not));
    }

    /** @return the warm geometric mean ({@link #geomean(String, String, Measure)}) */
    public Geomean geomean(String variant, String baseline) {
        return geomean(variant, baseline, Measure.WARM);
    }

    /** @return the value of {@code key} in env.properties, or "unknown" */
    public String env(String key) {
        return RunEnv.get(env, key);
    }

    /** @return the run's date (env.properties {@code date}), else today */
    public String date() {
        return RunEnv.date(env);
    }

    /** @return {@code name} in lower case with every run of other characters than a-z and 0-9 made one '-' */
    public static String slug(String name) {
        String s = name.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "-").replaceAll("^-+|-+$", "");
        return s.isEmpty() ? "unknown-device" : s;
    }

    /**
     * Writes {@code DATE-DEVICE.csv}, {@code .md}, {@code .png} and, when there are first-repetition
     * times, {@code DATE-DEVICE-first.png} into {@code outDir}.
     *
     * @param deviceName the device's name, or null for env.properties' {@code device}
     * @throws IOException if a file cannot be written
     */
    public Written write(Path outDir, String deviceName) throws IOException {
        String device = deviceName != null && !deviceName.isBlank() ? deviceName.strip() : env("device");
        String base = date() + "-" + slug(device);
        Files.createDirectories(outDir);
        boolean first = has(Measure.FIRST);
        Written w = new Written(outDir.resolve(base + ".csv"), outDir.resolve(base + ".md"),
                outDir.resolve(base + ".png"), first ? outDir.resolve(base + "-first.png") : null);
        Files.writeString(w.csv(), csv(device), StandardCharsets.UTF_8);
        Files.writeString(w.markdown(), markdown(device, w.png().getFileName().toString(),
                first ? w.firstPng().getFileName().toString() : null), StandardCharsets.UTF_8);
        writeChart(w.png(), device, Measure.WARM);
        if (first) {
            writeChart(w.firstPng(), device, Measure.FIRST);
        }
        return w;
    }

    /** The header of the report's CSV for the CDP sets (baselines cdp and flat). */
    public static final String CSV_HEADER = "date,device,name,variant,status,warm_ms,warm_of,first_status,first_ms,"
            + "launches,runs,first_runs,warm_speedup_vs_cdp,warm_speedup_vs_flat,first_speedup_vs_cdp,"
            + "first_speedup_vs_flat,detail,first_detail";

    /**
     * @return the header of this report's CSV: {@link #CSV_HEADER}, whose speedup columns are
     *     {@code warm_speedup_vs_B} for each of the {@link #baselines()}, then {@code first_speedup_vs_B}
     */
    public String csvHeader() {
        List<String> cols = new ArrayList<>();
        for (String m : List.of("warm", "first")) {
            baselines().forEach(b -> cols.add(m + "_speedup_vs_" + b));
        }
        return "date,device,name,variant,status,warm_ms,warm_of,first_status,first_ms,launches,runs,first_runs,"
                + String.join(",", cols) + ",detail,first_detail";
    }

    /**
     * @return the report's CSV ({@link #csvHeader()}): per benchmark and variant, the status and time
     *     of each measure, where the warm time comes from ({@code warm_of}: {@code reps-2-to-R}, or
     *     {@code all-reps} when the first repetition is included) and the speedups
     */
    public String csv(String device) {
        StringBuilder sb = new StringBuilder(csvHeader()).append('\n');
        for (String b : benchmarks) {
            for (String v : variants) {
                RawCsv.Row r = row(b, v);
                RawCsv.Row f = firstRow(b, v);
                if (r == null && f == null) {
                    continue;
                }
                Double warm = time(b, v, Measure.WARM);
                List<String> speedups = new ArrayList<>();
                for (Measure m : List.of(Measure.WARM, Measure.FIRST)) {
                    baselines().forEach(base -> speedups.add(ratio(speedup(b, v, base, m))));
                }
                String warmOf = warm == null ? "" : warmIncludesFirst(r) ? "all-reps" : "reps-2-to-" + env("reps");
                sb.append(String.join(",", RawCsv.field(date()), RawCsv.field(device), RawCsv.field(b),
                        RawCsv.field(v), r == null ? "" : RawCsv.field(r.status()), ms(warm), warmOf,
                        f == null ? "" : RawCsv.field(f.status()), ms(time(b, v, Measure.FIRST)),
                        r == null || r.launches() == null ? "" : r.launches().toString(),
                        r == null ? "" : Integer.toString(r.runs()), f == null ? "" : Integer.toString(f.runs()),
                        String.join(",", speedups),
                        r == null ? "" : RawCsv.field(r.detail()),
                        f == null || f == r ? "" : RawCsv.field(f.detail()))).append('\n');
            }
        }
        return sb.toString();
    }

    /** @return the Markdown report (no chart of first-repetition speedups) */
    public String markdown(String device, String png) {
        return markdown(device, png, null);
    }

    /**
     * @param device the device name for the title
     * @param png the file name of the chart of warm speedups, linked from the report
     * @param firstPng the file name of the chart of first-repetition speedups, or null
     * @return the Markdown report
     */
    public String markdown(String device, String png, String firstPng) {
        boolean warm = has(Measure.WARM);
        boolean first = has(Measure.FIRST);
        boolean allReps = anyWarmIncludesFirst();
        StringBuilder sb = new StringBuilder();
        sb.append(isNp() ? "# CUDA-NP benchmarks on " : "# CDP benchmarks on ").append(device).append(" (").append(date()).append(")\n\n");
        sb.append("Generated by `scripts/regress --mode=report` from `").append(rawName).append('`');
        if (firstRawName != null) {
            sb.append(" and `").append(firstRawName).append('`');
        }
        sb.append(" (docs/regress.md). Times in ms, lower is better.\n\n");
        if (isNp()) {
            sb.append(NP_PAPER).append("\n\n");
        }
        sb.append("| | |\n|---|---|\n");
        sb.append("| device | ").append(device).append(" |\n");
        sb.append("| driver | ").append(env("driver")).append(" |\n");
        sb.append("| CUDA (nvcc) | ").append(env("cuda")).append(" |\n");
        sb.append("| arch | ").append(env("arch")).append(" |\n");
        sb.append("| date | ").append(date()).append(" |\n");
        sb.append("| host | ").append(env("host")).append(" |\n");
        String runs = env("runs");
        String reps = env("reps");
        sb.append("| warm time | ");
        if (!warm) {
            sb.append("not measured (`-r ").append(reps).append("`: no repetition after the first)");
        } else if (allReps) {
            sb.append("median of all ").append(reps).append(" repetitions of a process (`-r ").append(reps)
                    .append("`), **the first included**: `").append(rawName).append("` predates the separation of ")
                    .append("the first repetition (no warm_ms); median over ").append(runs).append(" process runs");
        } else {
            sb.append("median of repetitions 2..").append(reps).append(" of a process (`-r ").append(reps)
                    .append("`), median over ").append(runs).append(" process runs");
        }
        sb.append(" |\n| first repetition | ");
        if (!first) {
            sb.append("not measured");
        } else if (firstRawName != null) {
            List<Integer> counts = firstRows.stream().filter(RawCsv.Row::passed).map(RawCsv.Row::runs).distinct()
                    .toList();
            sb.append("time_ms of `").append(firstRawName).append("`, a run with `-r 1` (each process times one ")
                    .append("repetition), median over ").append(counts.size() == 1 ? counts.get(0) + " process runs"
                            : "its process runs (column `first_runs` of the CSV)");
        } else {
            sb.append("repetition 1 of a process, median over ").append(runs).append(" process runs");
        }
        sb.append(" |\n| timeout | ").append(env("timeout_s")).append(" s per process |\n\n");
        sb.append("Cells without a time: FAIL (wrong result, error or non-zero exit), TIMEOUT, CRASH, COMPILE-ERROR, "
                + (isNp() ? "REFUSED (klap refused the program in that variant, or kept the original kernel: see "
                        + "Not passing), " : "REFUSED (klap refused the program at that granularity), ")
                + "MISSING (no source). A speedup is "
                + "`time of the baseline / time of the variant`; a speedup cell shows the variant's status when it "
                + "did not pass and `n/a` when the baseline did not. `best klap` is the fastest passing klap variant "
                + "of the benchmark. A geometric mean counts the benchmarks where the speedup exists: `(8/10)` is 8 "
                + "of 10; the others are listed under the summary.\n");

        for (Measure m : Measure.values()) {
            if (!has(m)) {
                continue;
            }
            sb.append("\n## ").append(m == Measure.WARM ? "Warm time (ms)" : "First repetition (ms)").append("\n\n");
            boolean withBest = !klapVariants().isEmpty();
            List<String> cols = new ArrayList<>(variants);
            if (withBest) {
                cols.add(BEST);
            }
            header(sb, cols);
            for (String b : benchmarks) {
                sb.append("| ").append(b);
                for (String v : variants) {
                    Double t = time(b, v, m);
                    sb.append(" | ").append(t == null ? noTime(b, v, m) : num(t)
                            + (m == Measure.WARM && allReps && warmIncludesFirst(row(b, v)) ? "*" : ""));
                }
                if (withBest) {
                    String best = bestKlap(b, m);
                    sb.append(" | ").append(best == null ? "none passed" : num(time(b, best, m)) + " (" + best + ")");
                }
                sb.append(" |\n");
            }
            if (m == Measure.WARM && allReps) {
                sb.append("\n\\* median of all ").append(reps).append(" repetitions, the first included (see above).\n");
            }
        }
        for (Measure m : Measure.values()) {
            if (has(m)) {
                for (String base : baselines()) {
                    speedupTable(sb, base, m);
                }
            }
        }
        summary(sb);
        if (rows.stream().anyMatch(r -> r.launches() != null)) {
            sb.append("\n## Device-side launches (as the programs reported them)\n\n");
            header(sb, variants);
            for (String b : benchmarks) {
                sb.append("| ").append(b);
                for (String v : variants) {
                    RawCsv.Row r = row(b, v);
                    sb.append(" | ").append(r == null || r.launches() == null ? "" : r.launches().toString());
                }
                sb.append(" |\n");
            }
        }
        sb.append("\n## Not passing\n\n");
        notPassing(sb, rows, firstRows == null ? null : rawName);
        if (firstRows != null) {
            sb.append('\n');
            notPassing(sb, firstRows, firstRawName);
        }
        String ref = baselines().get(0);
        if (warm) {
            sb.append("\n![warm speedup over ").append(ref).append("](").append(png).append(")\n");
        }
        if (first && firstPng != null) {
            sb.append("\n![first-repetition speedup over ").append(ref).append("](").append(firstPng).append(")\n");
        }
        return sb.toString();
    }

    private static void notPassing(StringBuilder sb, List<RawCsv.Row> rs, String file) {
        List<RawCsv.Row> np = rs.stream().filter(r -> !r.passed()).toList();
        if (file != null) {
            sb.append("In `").append(file).append("`:");
        }
        if (np.isEmpty()) {
            sb.append(file != null ? " every variant passed.\n" : "Every variant passed.\n");
            return;
        }
        sb.append(file != null ? "\n\n" : "");
        sb.append("| benchmark | variant | status | detail |\n|---|---|---|---|\n");
        for (RawCsv.Row r : np) {
            sb.append("| ").append(r.name()).append(" | ").append(r.variant()).append(" | ")
                    .append(r.status().toUpperCase(Locale.ROOT)).append(" | ").append(cell(r.detail())).append(" |\n");
        }
    }

    private void speedupTable(StringBuilder sb, String baseline, Measure m) {
        if (!variants.contains(baseline)) {
            return;
        }
        List<String> vs = variants.stream().filter(v -> !v.equals(baseline)).toList();
        boolean withBest = !klapVariants().isEmpty();
        List<String> cols = new ArrayList<>(vs);
        if (withBest) {
            cols.add(BEST);
        }
        sb.append("\n## Speedup over ").append(baseline).append(", ").append(m.label()).append(" (time of ")
                .append(baseline).append(" / time of the variant)\n\n");
        header(sb, cols);
        for (String b : benchmarks) {
            sb.append("| ").append(b);
            for (String v : vs) {
                sb.append(" | ").append(speedupCell(b, v, baseline, m));
            }
            if (withBest) {
                String best = bestKlap(b, m);
                sb.append(" | ").append(time(b, baseline, m) == null ? "n/a" : best == null ? "none passed"
                        : x(speedup(b, best, baseline, m)) + " (" + best + ")");
            }
            sb.append(" |\n");
        }
        sb.append("| **geomean**");
        for (String v : cols) {
            Geomean g = geomean(v, baseline, m);
            sb.append(" | ").append(g.n() == 0 ? "-" : "**" + x(g.value()) + "**").append(" (").append(g.n())
                    .append('/').append(g.of()).append(')');
        }
        sb.append(" |\n");
    }

    private String speedupCell(String b, String v, String baseline, Measure m) {
        Double s = speedup(b, v, baseline, m);
        if (s != null) {
            return x(s);
        }
        return time(b, v, m) == null ? noTime(b, v, m) : "n/a";
    }

    private void summary(StringBuilder sb) {
        List<String[]> cols = new ArrayList<>();
        for (Measure m : Measure.values()) {
            if (!has(m)) {
                continue;
            }
            for (String base : baselines()) {
                if (variants.contains(base)) {
                    cols.add(new String[] {m.name(), base});
                }
            }
        }
        if (cols.isEmpty()) {
            return;
        }
        sb.append("\n## Summary: geometric means of the speedups\n\n| variant");
        for (String[] c : cols) {
            sb.append(" | ").append(Measure.valueOf(c[0]).label()).append(" over ").append(c[1]);
        }
        sb.append(" |\n|---");
        cols.forEach(c -> sb.append("|---:"));
        sb.append("|\n");
        List<String> rowsOf = new ArrayList<>(variants);
        if (!klapVariants().isEmpty()) {
            rowsOf.add(BEST);
        }
        List<String> notes = new ArrayList<>();
        for (String v : rowsOf) {
            sb.append("| ").append(v.equals(BEST) ? "**" + BEST + "**" : v);
            for (String[] c : cols) {
                Measure m = Measure.valueOf(c[0]);
                if (v.equals(c[1])) {
                    sb.append(" | ");
                    continue;
                }
                Geomean g = geomean(v, c[1], m);
                sb.append(" | ").append(g.text());
                if (!g.notCounted().isEmpty()) {
                    notes.add(v + ", " + m.label() + " over " + c[1] + ": " + String.join(", ", g.notCounted()));
                }
            }
            sb.append(" |\n");
        }
        if (!notes.isEmpty()) {
            sb.append("\nNot counted in a geometric mean:\n\n");
            notes.forEach(n -> sb.append("- ").append(cell(n)).append('\n'));
        }
    }

    private static void header(StringBuilder sb, List<String> cols) {
        sb.append("| benchmark");
        cols.forEach(c -> sb.append(" | ").append(c));
        sb.append(" |\n|---");
        cols.forEach(c -> sb.append("|---:"));
        sb.append("|\n");
    }

    /**
     * Draws the speedups over {@code cdp} ({@code base} for the CUDA-NP set) of measure {@code m} (one group of bars per benchmark plus
     * the geometric mean, one bar per other variant and one for the best klap variant) and writes
     * it as PNG. A missing bar means no result. Runs headless.
     *
     * @throws IOException if the file cannot be written
     */
    public void writeChart(Path png, String device, Measure m) throws IOException {
        System.setProperty("java.awt.headless", "true");
        List<String> xs = new ArrayList<>(benchmarks);
        xs.add("geomean");
        boolean allReps = m == Measure.WARM && anyWarmIncludesFirst();
        String what = m == Measure.WARM ? "Warm speedup" + (allReps ? " (median of all repetitions, first included)"
                : "") : "First-repetition speedup";
        String ref = baselines().get(0);
        CategoryChart chart = new CategoryChartBuilder().width(Math.max(900, 120 * xs.size())).height(560)
                .title(what + " over " + (isNp() ? "base" : "CDP") + ", " + device + ", " + date())
                .xAxisTitle("benchmark")
                .yAxisTitle("speedup over " + ref + " (time " + ref + " / time variant)").build();
        chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideE);
        chart.getStyler().setChartBackgroundColor(java.awt.Color.WHITE);
        chart.getStyler().setYAxisDecimalPattern("0.00");
        chart.getStyler().setOverlapped(false);
        boolean any = false;
        List<String> series = new ArrayList<>(variants.stream().filter(v -> !v.equals(ref)).toList());
        if (!klapVariants().isEmpty()) {
            series.add(BEST);
        }
        for (String v : series) {
            List<Double> ys = new ArrayList<>();
            for (String b : benchmarks) {
                Double s = v.equals(BEST) ? bestSpeedup(b, ref, m) : speedup(b, v, ref, m);
                ys.add(s == null ? 0.0 : s);
                any |= s != null;
            }
            Geomean g = geomean(v, ref, m);
            ys.add(g.n() == 0 ? 0.0 : g.value());
            chart.addSeries(v, xs, ys);
        }
        if (!any) {
            // nothing measured (compile-only results, or cdp failed everywhere): an empty chart says so
            chart.setTitle("No speedup over " + (isNp() ? "base" : "CDP") + " measured, " + device + ", " + date());
            if (series.isEmpty()) {
                chart.addSeries("none", xs, xs.stream().map(q -> 0.0).toList());
            }
        }
        try (OutputStream out = Files.newOutputStream(png)) {
            BitmapEncoder.saveBitmap(chart, out, BitmapEncoder.BitmapFormat.PNG);
        }
    }

    /** @return {@code d} in ms with three decimals, the resolution the programs print */
    static String num(double d) {
        return String.format(Locale.ROOT, "%.3f", d);
    }

    private static String ms(Double d) {
        return d == null ? "" : String.format(Locale.ROOT, "%.4f", d);
    }

    private static String x(double d) {
        return String.format(Locale.ROOT, "%.2fx", d);
    }

    private static String ratio(Double d) {
        return d == null ? "" : String.format(Locale.ROOT, "%.4f", d);
    }

    static String cell(String s) {
        return s.replace("|", "\\|").replace("\n", " ");
    }
}
