package klap.regress;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
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
 * The final report of a run, made from raw.csv and the machine description env.properties that
 * {@code run.sh} wrote: {@code DATE-DEVICE.csv} (one row per benchmark and variant, with speedups),
 * {@code DATE-DEVICE.md} (times, speedups over {@code cdp} and over {@code flat} with geometric
 * means, launch counts, the variants that did not pass) and {@code DATE-DEVICE.png} (bar chart of
 * the speedups over {@code cdp}).
 *
 * <p>A speedup of variant V over baseline B on a benchmark is {@code time(B) / time(V)}, defined
 * only when both passed. A geometric mean covers the benchmarks where it is defined and says how
 * many those are.
 */
public final class Report {
    private final List<RawCsv.Row> rows;
    private final Properties env;
    private final List<String> benchmarks;
    private final List<String> variants;
    private final Map<String, RawCsv.Row> byKey = new LinkedHashMap<>();

    /**
     * A geometric mean.
     *
     * @param value the mean, or NaN if no benchmark counted
     * @param n how many benchmarks counted
     * @param of how many benchmarks there are
     */
    public record Geomean(double value, int n, int of) {}

    /**
     * The three files written.
     *
     * @param csv the per-variant CSV
     * @param markdown the Markdown report
     * @param png the chart
     */
    public record Written(Path csv, Path markdown, Path png) {}

    /**
     * @param rows raw.csv's rows
     * @param env the machine description (keys {@code date}, {@code device}, {@code driver},
     *     {@code cuda}, {@code runs}, {@code reps}, ...); missing keys print as "unknown"
     */
    public Report(List<RawCsv.Row> rows, Properties env) {
        this.rows = List.copyOf(rows);
        this.env = env;
        Set<String> bs = new LinkedHashSet<>();
        Set<String> vs = new LinkedHashSet<>();
        for (RawCsv.Row r : rows) {
            bs.add(r.name());
            vs.add(r.variant());
            byKey.put(r.name() + "\0" + r.variant(), r);
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
        Properties env = new Properties();
        Path envFile = raw.toAbsolutePath().resolveSibling("env.properties");
        if (Files.isRegularFile(envFile)) {
            try (var in = Files.newBufferedReader(envFile, StandardCharsets.UTF_8)) {
                env.load(in);
            }
        }
        return new Report(RawCsv.read(raw), env);
    }

    /** @return the benchmarks, in raw.csv order */
    public List<String> benchmarks() {
        return benchmarks;
    }

    /** @return the variants, in raw.csv order */
    public List<String> variants() {
        return variants;
    }

    /** @return the row of {@code bench} and {@code variant}, or null */
    public RawCsv.Row row(String bench, String variant) {
        return byKey.get(bench + "\0" + variant);
    }

    /** @return the median time of a passing variant, or null */
    public Double time(String bench, String variant) {
        RawCsv.Row r = row(bench, variant);
        return r != null && r.passed() ? r.timeMs() : null;
    }

    /** @return {@code time(baseline) / time(variant)}, or null unless both passed with a positive time */
    public Double speedup(String bench, String variant, String baseline) {
        Double t = time(bench, variant);
        Double b = time(bench, baseline);
        return t == null || b == null || t <= 0 || b <= 0 ? null : b / t;
    }

    /** @return the geometric mean of {@code variant}'s speedups over {@code baseline} */
    public Geomean geomean(String variant, String baseline) {
        double logSum = 0;
        int n = 0;
        for (String b : benchmarks) {
            Double s = speedup(b, variant, baseline);
            if (s != null) {
                logSum += Math.log(s);
                n++;
            }
        }
        return new Geomean(n == 0 ? Double.NaN : Math.exp(logSum / n), n, benchmarks.size());
    }

    /** @return the value of {@code key} in env.properties, or "unknown" */
    public String env(String key) {
        String v = env.getProperty(key, "").strip();
        return v.isEmpty() ? "unknown" : v;
    }

    /** @return the run's date (env.properties {@code date}), else today */
    public String date() {
        String d = env.getProperty("date", "").strip();
        return d.isEmpty() ? LocalDate.now().toString() : d;
    }

    /** @return {@code name} in lower case with every run of other characters than a-z and 0-9 made one '-' */
    public static String slug(String name) {
        String s = name.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "-").replaceAll("^-+|-+$", "");
        return s.isEmpty() ? "unknown-device" : s;
    }

    /**
     * Writes {@code DATE-DEVICE.csv}, {@code .md} and {@code .png} into {@code outDir}.
     *
     * @param deviceName the device's name, or null for env.properties' {@code device}
     * @throws IOException if a file cannot be written
     */
    public Written write(Path outDir, String deviceName) throws IOException {
        String device = deviceName != null && !deviceName.isBlank() ? deviceName.strip() : env("device");
        String base = date() + "-" + slug(device);
        Files.createDirectories(outDir);
        Written w = new Written(outDir.resolve(base + ".csv"), outDir.resolve(base + ".md"),
                outDir.resolve(base + ".png"));
        Files.writeString(w.csv(), csv(device), StandardCharsets.UTF_8);
        Files.writeString(w.markdown(), markdown(device, w.png().getFileName().toString()), StandardCharsets.UTF_8);
        writeChart(w.png(), device);
        return w;
    }

    /** @return the final CSV: the raw columns plus date, device and the two speedups */
    public String csv(String device) {
        StringBuilder sb = new StringBuilder(
                "date,device,name,variant,status,time_ms,launches,runs,speedup_vs_cdp,speedup_vs_flat,detail\n");
        for (RawCsv.Row r : rows) {
            sb.append(String.join(",", RawCsv.field(date()), RawCsv.field(device), RawCsv.field(r.name()),
                    RawCsv.field(r.variant()), RawCsv.field(r.status()), r.timeMs() == null ? "" : num(r.timeMs()),
                    r.launches() == null ? "" : r.launches().toString(), Integer.toString(r.runs()),
                    ratio(speedup(r.name(), r.variant(), "cdp")), ratio(speedup(r.name(), r.variant(), "flat")),
                    RawCsv.field(r.detail()))).append('\n');
        }
        return sb.toString();
    }

    /**
     * @param device the device name for the title
     * @param png the chart's file name, linked from the report
     * @return the Markdown report
     */
    public String markdown(String device, String png) {
        StringBuilder sb = new StringBuilder();
        sb.append("# CDP benchmarks on ").append(device).append(" (").append(date()).append(")\n\n");
        sb.append("| | |\n|---|---|\n");
        sb.append("| device | ").append(device).append(" |\n");
        sb.append("| driver | ").append(env("driver")).append(" |\n");
        sb.append("| CUDA (nvcc) | ").append(env("cuda")).append(" |\n");
        sb.append("| arch | ").append(env("arch")).append(" |\n");
        sb.append("| date | ").append(date()).append(" |\n");
        sb.append("| timing | median over ").append(env("runs")).append(" process runs of the time_ms each printed (")
                .append("`-r ").append(env("reps")).append("`), timeout ").append(env("timeout_s")).append(" s |\n");
        sb.append("| host | ").append(env("host")).append(" |\n\n");
        sb.append("Statuses other than a time: FAIL (wrong result or non-zero exit), TIMEOUT, CRASH, "
                + "COMPILE-ERROR, REFUSED (klap refused the program at that granularity), MISSING (no source yet).\n\n");

        sb.append("## Time (ms)\n\n");
        header(sb, variants);
        for (String b : benchmarks) {
            sb.append("| ").append(b);
            for (String v : variants) {
                RawCsv.Row r = row(b, v);
                sb.append(" | ").append(r == null ? "" : r.passed() ? num(r.timeMs()) : r.status().toUpperCase(Locale.ROOT));
            }
            sb.append(" |\n");
        }
        speedupTable(sb, "cdp");
        speedupTable(sb, "flat");
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
        List<RawCsv.Row> notPassing = rows.stream().filter(r -> !r.passed()).toList();
        sb.append("\n## Not passing\n\n");
        if (notPassing.isEmpty()) {
            sb.append("Every variant passed.\n");
        } else {
            sb.append("| benchmark | variant | status | detail |\n|---|---|---|---|\n");
            for (RawCsv.Row r : notPassing) {
                sb.append("| ").append(r.name()).append(" | ").append(r.variant()).append(" | ")
                        .append(r.status().toUpperCase(Locale.ROOT)).append(" | ").append(cell(r.detail())).append(" |\n");
            }
        }
        sb.append("\n![speedup over cdp](").append(png).append(")\n");
        return sb.toString();
    }

    private void speedupTable(StringBuilder sb, String baseline) {
        if (!variants.contains(baseline)) {
            return;
        }
        List<String> vs = variants.stream().filter(v -> !v.equals(baseline)).toList();
        sb.append("\n## Speedup over ").append(baseline).append(" (time of ").append(baseline)
                .append(" / time of the variant)\n\n");
        header(sb, vs);
        for (String b : benchmarks) {
            sb.append("| ").append(b);
            for (String v : vs) {
                Double s = speedup(b, v, baseline);
                sb.append(" | ").append(s == null ? "" : String.format(Locale.ROOT, "%.2fx", s));
            }
            sb.append(" |\n");
        }
        sb.append("| **geomean**");
        for (String v : vs) {
            Geomean g = geomean(v, baseline);
            sb.append(" | ");
            if (g.n() > 0) {
                sb.append(String.format(Locale.ROOT, "**%.2fx**", g.value()));
                if (g.n() < g.of()) {
                    sb.append(" (").append(g.n()).append('/').append(g.of()).append(')');
                }
            }
        }
        sb.append(" |\n");
    }

    private static void header(StringBuilder sb, List<String> cols) {
        sb.append("| benchmark");
        cols.forEach(c -> sb.append(" | ").append(c));
        sb.append(" |\n|---");
        cols.forEach(c -> sb.append("|---:"));
        sb.append("|\n");
    }

    /**
     * Draws the speedups over {@code cdp} (one group of bars per benchmark plus the geometric
     * mean, one bar per other variant) and writes it as PNG. Runs headless.
     *
     * @throws IOException if the file cannot be written
     */
    public void writeChart(Path png, String device) throws IOException {
        System.setProperty("java.awt.headless", "true");
        List<String> xs = new ArrayList<>(benchmarks);
        xs.add("geomean");
        CategoryChart chart = new CategoryChartBuilder().width(Math.max(900, 110 * xs.size())).height(560)
                .title("Speedup over CDP, " + device + ", " + date()).xAxisTitle("benchmark")
                .yAxisTitle("speedup over cdp (time cdp / time variant)").build();
        chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideE);
        chart.getStyler().setChartBackgroundColor(java.awt.Color.WHITE);
        chart.getStyler().setYAxisDecimalPattern("0.00");
        chart.getStyler().setOverlapped(false);
        boolean any = false;
        for (String v : variants) {
            if (v.equals("cdp")) {
                continue;
            }
            List<Double> ys = new ArrayList<>();
            for (String b : benchmarks) {
                Double s = speedup(b, v, "cdp");
                ys.add(s == null ? 0.0 : s);
                any |= s != null;
            }
            Geomean g = geomean(v, "cdp");
            ys.add(g.n() == 0 ? 0.0 : g.value());
            chart.addSeries(v, xs, ys);
        }
        if (!any) {
            // nothing measured (compile-only results, or cdp failed everywhere): an empty chart says so
            chart.setTitle("No speedup over CDP measured, " + device + ", " + date());
            chart.addSeries("none", xs, xs.stream().map(x -> 0.0).toList());
        }
        try (OutputStream out = Files.newOutputStream(png)) {
            BitmapEncoder.saveBitmap(chart, out, BitmapEncoder.BitmapFormat.PNG);
        }
    }

    private static String num(double d) {
        return d >= 100 ? String.format(Locale.ROOT, "%.1f", d)
                : d >= 1 ? String.format(Locale.ROOT, "%.3f", d) : String.format(Locale.ROOT, "%.4f", d);
    }

    private static String ratio(Double d) {
        return d == null ? "" : String.format(Locale.ROOT, "%.4f", d);
    }

    private static String cell(String s) {
        return s.replace("|", "\\|").replace("\n", " ");
    }
}
