package klap.regress;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;

/**
 * How a benchmark's input grows in a scale sweep ({@code regress --scale}): the program options
 * that set its input size and their defaults. At factor F every option is given F times its
 * default; the input size plotted is F times the first option's default.
 *
 * <table>
 * <caption>The benchmarks with a sweep (defaults as in testcases/bench/README.md)</caption>
 * <tr><th>benchmark</th><th>options at factor F</th><th>size</th></tr>
 * <tr><td>bfs</td><td>{@code -n 10000F} (out-degree {@code -d 1000} kept: 10 M edges at 1x, 1 G at 100x)</td><td>vertices</td></tr>
 * <tr><td>bt</td><td>{@code -n 25600F}</td><td>Bezier lines</td></tr>
 * <tr><td>qt</td><td>{@code -n 40000F}</td><td>points</td></tr>
 * <tr><td>sp</td><td>{@code -v 10000F -m 42000F} (4.2 clauses per variable kept)</td><td>variables</td></tr>
 * <tr><td>sc, pt, unq</td><td>{@code -n 8192F} (F tiles)</td><td>elements</td></tr>
 * <tr><td>los</td><td>{@code -n 2048F} (F tiles)</td><td>terrain points</td></tr>
 * <tr><td>pd, upd</td><td>{@code -n 2F} (about F tiles)</td><td>matrix rows</td></tr>
 * </table>
 *
 * @param bench the benchmark's name
 * @param unit what the size counts, for axis titles (e.g. "vertices (-n)")
 * @param options the options scaled, the first one giving the size
 */
public record Scale(String bench, String unit, List<Option> options) {

    /**
     * One scaled program option.
     *
     * @param flag the option, e.g. {@code -n}
     * @param base its default value (factor 1)
     */
    public record Option(String flag, long base) {}

    /**
     * One input size of a sweep.
     *
     * @param bench the benchmark
     * @param factor the factor over the default size
     * @param size the input size (factor x the first option's default)
     * @param args the program arguments that set it, e.g. {@code -n 100000}
     */
    public record Point(String bench, long factor, long size, String args) {}

    /** The default factors of {@code --scale}: 1x, 10x and 100x the default input size. */
    public static final List<Long> DEFAULT_FACTORS = List.of(1L, 10L, 100L);

    /** The benchmarks with a sweep and how their input grows (see the class comment). */
    public static final List<Scale> ALL = List.of(
            new Scale("bfs", "vertices (-n; out-degree -d 1000 kept)", List.of(new Option("-n", 10000))),
            new Scale("bt", "Bezier lines (-n)", List.of(new Option("-n", 25600))),
            new Scale("qt", "points (-n)", List.of(new Option("-n", 40000))),
            new Scale("sp", "variables (-v; clauses -m = 4.2 v)",
                    List.of(new Option("-v", 10000), new Option("-m", 42000))),
            // the promotion set (testcases/promotion): the base is one tile, so the factors
            // 2, 25 and 3000 (PROMOTION_FACTORS) are KLAP's small, medium and large datasets
            new Scale("sc", "elements (-n; 8192 per tile)", List.of(new Option("-n", 8192))),
            new Scale("pt", "elements (-n; 8192 per tile)", List.of(new Option("-n", 8192))),
            new Scale("unq", "elements (-n; 8192 per tile)", List.of(new Option("-n", 8192))),
            new Scale("los", "terrain points (-n; 2048 per tile)", List.of(new Option("-n", 2048))),
            new Scale("pd", "matrix rows (-n; 1000 + 20 columns, about 2 rows per tile)", List.of(new Option("-n", 2))),
            new Scale("upd", "matrix rows (-n; 1000 + 20 columns, about 2 rows per tile)", List.of(new Option("-n", 2))));

    /**
     * The factors that give the promotion set's datasets (KLAP section IV-A, Table I): small
     * (2 tiles, two recurrences), medium (25 tiles, the deepest chain CDP can run: nesting depths 0
     * to 24) and large (3000 tiles, only PA-128 and PAO-128 can run it). Use them with
     * {@code regress --scale --scale-factors 2,25,3000 --bench-dir testcases/promotion}.
     */
    public static final List<Long> PROMOTION_FACTORS = List.of(2L, 25L, 3000L);

    /** @return the sweep of {@code bench}, if it has one */
    public static Optional<Scale> of(String bench) {
        return ALL.stream().filter(s -> s.bench.equals(bench)).findFirst();
    }

    /** @return the input size at {@code factor} */
    public long size(long factor) {
        return Math.multiplyExact(options.get(0).base, factor);
    }

    /** @return the program arguments at {@code factor}, e.g. {@code -v 100000 -m 420000} */
    public String args(long factor) {
        List<String> a = new ArrayList<>();
        for (Option o : options) {
            a.add(o.flag);
            a.add(Long.toString(Math.multiplyExact(o.base, factor)));
        }
        return String.join(" ", a);
    }

    /** @return one point per factor, smallest first (duplicates dropped) */
    public List<Point> points(List<Long> factors) {
        List<Point> ps = new ArrayList<>();
        for (long f : new TreeSet<>(factors)) {
            if (f < 1) {
                throw new IllegalArgumentException("scale factors must be positive, got " + f);
            }
            ps.add(new Point(bench, f, size(f), args(f)));
        }
        return ps;
    }

    /**
     * Writes {@code sweep.tsv} into the work folder: one line per benchmark and factor,
     * {@code name TAB factor TAB size TAB args}, smallest factor first. Its presence makes
     * {@code run.sh} run the sweep and write {@code scale.csv}.
     *
     * @throws IOException if it cannot be written
     */
    public static Path writeSweep(Path work, List<Scale> scales, List<Long> factors) throws IOException {
        StringBuilder sb = new StringBuilder("# name\tfactor\tsize\targs (written by klap regress --scale)\n");
        for (Scale s : scales) {
            for (Point p : s.points(factors)) {
                sb.append(p.bench).append('\t').append(p.factor).append('\t').append(p.size).append('\t')
                        .append(p.args).append('\n');
            }
        }
        Path f = work.resolve("sweep.tsv");
        Files.writeString(f, sb, StandardCharsets.UTF_8);
        return f;
    }
}
