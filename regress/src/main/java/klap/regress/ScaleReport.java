package klap.regress;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.TreeSet;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * The report of a scale sweep, made from the scale.csv and env.properties that {@code run.sh}
 * wrote for a folder prepared with {@code --scale}: {@code DATE-DEVICE-scale.md} (per benchmark,
 * the warm and first-repetition time of every variant at every input size, and the points without
 * a time with the reason), {@code DATE-DEVICE-scale.csv} and one log-log chart of time against
 * input size per benchmark, {@code DATE-DEVICE-scale-NAME.png}, one line per variant. A point
 * that failed, timed out or was skipped is a gap in its line and listed in the Markdown.
 */
public final class ScaleReport {
    /** The header of scale.csv. */
    public static final String HEADER =
            "name,variant,factor,size,args,status,time_ms,first_ms,warm_ms,launches,runs,detail";

    /**
     * One benchmark variant at one input size.
     *
     * @param factor the factor over the default input size
     * @param size the input size
     * @param args the program arguments that set it
     * @param row the outcome (status, times, launches, runs, detail), as in raw.csv
     */
    public record Point(long factor, long size, String args, RawCsv.Row row) {}

    /**
     * The files written.
     *
     * @param csv the per-point CSV
     * @param markdown the Markdown report
     * @param pngs one chart per benchmark, in benchmark order
     */
    public record Written(Path csv, Path markdown, List<Path> pngs) {}

    private final List<Point> points;
    private final Properties env;
    private final String rawName;

    /**
     * @param points scale.csv's rows
     * @param env the machine description of the run (env.properties); missing keys print as "unknown"
     * @param rawName the raw file's name, for the report
     */
    public ScaleReport(List<Point> points, Properties env, String rawName) {
        this.points = List.copyOf(points);
        this.env = env;
        this.rawName = rawName;
    }

    /** @return true if {@code file} starts with the scale.csv header */
    public static boolean isScaleCsv(Path file) throws IOException {
        return RawCsv.firstLine(file).equals(HEADER);
    }

    /**
     * Reads scale.csv ({@link #HEADER}, RFC 4180 quoting).
     *
     * @throws IOException if it cannot be read
     * @throws IllegalArgumentException if its header or a row is malformed (the message names the line)
     */
    public static List<Point> readPoints(Path file) throws IOException {
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        if (lines.isEmpty() || !lines.get(0).strip().equals(HEADER)) {
            throw new IllegalArgumentException(file + ":1: expected the header '" + HEADER + "'");
        }
        List<Point> ps = new ArrayList<>();
        for (int i = 1; i < lines.size(); i++) {
            if (lines.get(i).isBlank()) {
                continue;
            }
            List<String> f = RawCsv.split(lines.get(i));
            if (f.size() != 12) {
                throw new IllegalArgumentException(file + ":" + (i + 1) + ": expected 12 fields, got " + f.size());
            }
            try {
                ps.add(new Point(Long.parseLong(f.get(2)), Long.parseLong(f.get(3)), f.get(4),
                        new RawCsv.Row(f.get(0), f.get(1), f.get(5), RawCsv.dbl(f.get(6)), RawCsv.dbl(f.get(7)),
                                RawCsv.dbl(f.get(8)), RawCsv.lng(f.get(9)), RawCsv.integer(f.get(10)), f.get(11))));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(file + ":" + (i + 1) + ": bad number: " + e.getMessage());
            }
        }
        return ps;
    }

    /**
     * Reads {@code raw} (a scale.csv) and the {@code env.properties} next to it (if present).
     *
     * @throws IOException if a file cannot be read
     */
    public static ScaleReport read(Path raw) throws IOException {
        Properties env = new Properties();
        Path envFile = raw.toAbsolutePath().resolveSibling("env.properties");
        if (Files.isRegularFile(envFile)) {
            try (var in = Files.newBufferedReader(envFile, StandardCharsets.UTF_8)) {
                env.load(in);
            }
        }
        return new ScaleReport(readPoints(raw), env, raw.getFileName().toString());
    }

    /** @return the benchmarks, in file order */
    public List<String> benchmarks() {
        return points.stream().map(p -> p.row().name()).distinct().toList();
    }

    /** @return the variants of {@code bench}, in file order */
    public List<String> variants(String bench) {
        LinkedHashSet<String> vs = new LinkedHashSet<>();
        points.stream().filter(p -> p.row().name().equals(bench)).forEach(p -> vs.add(p.row().variant()));
        return List.copyOf(vs);
    }

    /** @return the points of {@code bench}, smallest factor first, in file order per factor */
    public List<Point> points(String bench) {
        return points.stream().filter(p -> p.row().name().equals(bench))
                .sorted(java.util.Comparator.comparingLong(Point::factor)).toList();
    }

    /** @return the point of {@code bench}/{@code variant} at {@code factor}, or null */
    public Point point(String bench, String variant, long factor) {
        return points.stream().filter(p -> p.row().name().equals(bench) && p.row().variant().equals(variant)
                && p.factor() == factor).findFirst().orElse(null);
    }

    /**
     * @return the time plotted for a point: its warm time, or when the run had a single repetition
     *     (no warm_ms) its first repetition, or for a program that reported neither its time_ms;
     *     null when it did not pass
     */
    public static Double time(Point p) {
        RawCsv.Row r = p.row();
        if (!r.passed()) {
            return null;
        }
        return r.warmMs() != null ? r.warmMs() : r.firstMs() != null ? r.firstMs() : r.timeMs();
    }

    /** @return the points without a time, in file order */
    public List<Point> missing() {
        return points.stream().filter(p -> time(p) == null).toList();
    }

    /** @return the value of {@code key} in env.properties, or "unknown" */
    public String env(String key) {
        return RunEnv.get(env, key);
    }

    /** @return the run's date (env.properties {@code date}), else today */
    public String date() {
        return RunEnv.date(env);
    }

    /** @return what the size of {@code bench} counts ({@link Scale#unit}), or "input size" */
    public static String unit(String bench) {
        return Scale.of(bench).map(Scale::unit).orElse("input size");
    }

    /**
     * Writes {@code DATE-DEVICE-scale.csv}, {@code .md} and one {@code DATE-DEVICE-scale-NAME.png}
     * per benchmark into {@code outDir}.
     *
     * @param deviceName the device's name, or null for env.properties' {@code device}
     * @throws IOException if a file cannot be written
     */
    public Written write(Path outDir, String deviceName) throws IOException {
        String device = deviceName != null && !deviceName.isBlank() ? deviceName.strip() : env("device");
        String base = date() + "-" + Report.slug(device) + "-scale";
        Files.createDirectories(outDir);
        List<Path> pngs = new ArrayList<>();
        for (String b : benchmarks()) {
            Path png = outDir.resolve(base + "-" + Report.slug(b) + ".png");
            writeChart(png, b, device);
            pngs.add(png);
        }
        Written w = new Written(outDir.resolve(base + ".csv"), outDir.resolve(base + ".md"), List.copyOf(pngs));
        Files.writeString(w.csv(), csv(device), StandardCharsets.UTF_8);
        Files.writeString(w.markdown(), markdown(device, base), StandardCharsets.UTF_8);
        return w;
    }

    /** @return the report's CSV: date, device and scale.csv's columns, one row per point */
    public String csv(String device) {
        StringBuilder sb = new StringBuilder("date,device,").append(HEADER).append('\n');
        for (Point p : points) {
            RawCsv.Row r = p.row();
            sb.append(String.join(",", RawCsv.field(date()), RawCsv.field(device), RawCsv.field(r.name()),
                    RawCsv.field(r.variant()), Long.toString(p.factor()), Long.toString(p.size()),
                    RawCsv.field(p.args()), RawCsv.field(r.status()), RawCsv.number(r.timeMs()),
                    RawCsv.number(r.firstMs()), RawCsv.number(r.warmMs()),
                    r.launches() == null ? "" : r.launches().toString(), Integer.toString(r.runs()),
                    RawCsv.field(r.detail()))).append('\n');
        }
        return sb.toString();
    }

    /**
     * @param device the device name for the title
     * @param base the file name stem of the charts ({@code base-NAME.png} is linked)
     * @return the Markdown report
     */
    public String markdown(String device, String base) {
        StringBuilder sb = new StringBuilder();
        sb.append("# Scale sweep on ").append(device).append(" (").append(date()).append(")\n\n");
        sb.append("Generated by `scripts/regress --mode=report` from `").append(rawName)
                .append("` (docs/regress.md). Times in ms, lower is better.\n\n");
        sb.append("| | |\n|---|---|\n");
        sb.append("| device | ").append(device).append(" |\n");
        sb.append("| driver | ").append(env("driver")).append(" |\n");
        sb.append("| CUDA (nvcc) | ").append(env("cuda")).append(" |\n");
        sb.append("| arch | ").append(env("arch")).append(" |\n");
        sb.append("| date | ").append(date()).append(" |\n");
        sb.append("| host | ").append(env("host")).append(" |\n");
        sb.append("| factors | ").append(env("factors")).append(" x the default input size |\n");
        sb.append("| time | warm: median of repetitions 2..").append(env("reps")).append(" of a process (`-r ")
                .append(env("reps")).append("`; with `-r 1` the first repetition), median over ").append(env("runs"))
                .append(" process runs |\n");
        sb.append("| timeout | ").append(env("timeout_s"))
                .append(" s per process; after a timeout the larger sizes of that variant are skipped |\n\n");
        sb.append("A cell without a time gives the status (FAIL, TIMEOUT, CRASH, SKIPPED, COMPILE-ERROR, REFUSED, "
                + "MISSING); such a point is a gap in its line of the chart and is listed under its benchmark.\n");
        for (String b : benchmarks()) {
            List<String> vs = variants(b);
            TreeSet<Long> factors = new TreeSet<>();
            points(b).forEach(p -> factors.add(p.factor()));
            sb.append("\n## ").append(b).append(": ").append(unit(b)).append("\n\n");
            for (boolean warm : new boolean[] {true, false}) {
                if (!warm && points(b).stream().noneMatch(p -> p.row().passed() && p.row().firstMs() != null
                        && p.row().warmMs() != null)) {
                    continue;  // without warm times, the first repetition is what the first table showed
                }
                sb.append(warm ? "Warm time (ms):\n\n" : "First repetition (ms):\n\n");
                sb.append("| factor | size | arguments");
                vs.forEach(v -> sb.append(" | ").append(v));
                sb.append(" |\n|---:|---:|---");
                vs.forEach(v -> sb.append("|---:"));
                sb.append("|\n");
                for (long f : factors) {
                    Point any = points(b).stream().filter(p -> p.factor() == f).findFirst().orElseThrow();
                    sb.append("| ").append(f).append("x | ").append(any.size()).append(" | `").append(any.args())
                            .append('`');
                    for (String v : vs) {
                        Point p = point(b, v, f);
                        Double t = p == null ? null : warm ? time(p) : p.row().passed() ? p.row().firstMs() : null;
                        sb.append(" | ").append(p == null ? "" : t != null ? Report.num(t)
                                : p.row().passed() ? "n/a" : p.row().status().toUpperCase(Locale.ROOT));
                    }
                    sb.append(" |\n");
                }
                sb.append('\n');
            }
            List<Point> miss = missing().stream().filter(p -> p.row().name().equals(b)).toList();
            if (miss.isEmpty()) {
                sb.append("Every point has a time.\n");
            } else {
                sb.append("Missing points:\n\n");
                for (Point p : miss) {
                    sb.append("- ").append(p.row().variant()).append(" at ").append(p.factor()).append("x (`")
                            .append(p.args()).append("`): ").append(p.row().status().toUpperCase(Locale.ROOT));
                    if (!p.row().detail().isBlank()) {
                        sb.append(": ").append(Report.cell(p.row().detail()));
                    }
                    sb.append('\n');
                }
            }
            sb.append("\n![").append(b).append(": time against input size](").append(base).append('-')
                    .append(Report.slug(b)).append(".png)\n");
        }
        return sb.toString();
    }

    /**
     * Draws the time of every variant of {@code bench} against its input size, both axes
     * logarithmic, one line per variant with a gap at each point without a time, and writes it
     * as PNG. Runs headless.
     *
     * @throws IOException if the file cannot be written
     */
    public void writeChart(Path png, String bench, String device) throws IOException {
        System.setProperty("java.awt.headless", "true");
        XYChart chart = new XYChartBuilder().width(900).height(600)
                .title(bench + ": time against input size (a gap: no result), " + device + ", " + date())
                .xAxisTitle(unit(bench)).yAxisTitle("time (ms, warm; log)").build();
        chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideE);
        chart.getStyler().setChartBackgroundColor(java.awt.Color.WHITE);
        chart.getStyler().setDefaultSeriesRenderStyle(XYSeries.XYSeriesRenderStyle.Line);
        boolean any = false;
        for (String v : variants(bench)) {
            // every size of the variant, a point without a time as null: XChart leaves a gap there
            List<Double> xs = new ArrayList<>();
            List<Double> ys = new ArrayList<>();
            boolean some = false;
            for (Point p : points(bench)) {
                if (p.row().variant().equals(v)) {
                    Double t = time(p);
                    xs.add((double) p.size());
                    ys.add(t != null && t > 0 ? t : null);
                    some |= t != null && t > 0;
                }
            }
            if (some) {
                XYSeries s = chart.addSeries(v, xs, ys);
                s.setMarker(SeriesMarkers.CIRCLE);
                any = true;
            }
        }
        if (any) {
            chart.getStyler().setXAxisLogarithmic(true);
            chart.getStyler().setYAxisLogarithmic(true);
        } else {
            // no variant has a time at any size: an empty chart that says so
            chart.setTitle(bench + ": no point has a time, " + device + ", " + date());
            List<Double> xs = points(bench).stream().map(p -> (double) p.size()).distinct().toList();
            XYSeries s = chart.addSeries("no result", xs.isEmpty() ? List.of(1.0) : xs,
                    xs.isEmpty() ? List.of(0.0) : xs.stream().map(x -> 0.0).toList());
            s.setMarker(SeriesMarkers.NONE);
        }
        try (OutputStream out = Files.newOutputStream(png)) {
            BitmapEncoder.saveBitmap(chart, out, BitmapEncoder.BitmapFormat.PNG);
        }
    }
}
