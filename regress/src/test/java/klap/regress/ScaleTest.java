package klap.regress;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The scale sweep: the sizes of each benchmark, sweep.tsv and run.sh's sweep (with a fake nvcc
 * whose binaries are shell scripts that check their arguments), scale.csv, the report with its
 * log-log charts and missing points, and prepare --scale over the real benchmark set.
 */
class ScaleTest {
    @TempDir
    Path dir;

    @Test
    void sizesAndArgumentsOfTheSweeps() {
        Scale sp = Scale.of("sp").orElseThrow();
        assertEquals("-v 100000 -m 420000", sp.args(10));
        assertEquals(1_000_000, sp.size(100));
        assertEquals("-n 1000000", Scale.of("bfs").orElseThrow().args(100));
        assertEquals("-n 2560000", Scale.of("bt").orElseThrow().args(100));
        assertEquals("-n 400000", Scale.of("qt").orElseThrow().args(10));
        assertEquals(List.of("bfs", "bt", "qt", "sp", "sc", "pt", "unq", "los", "pd", "upd"),
                Scale.ALL.stream().map(Scale::bench).toList());
        // the promotion datasets: 2, 25 and 3000 tiles (KLAP Table I small, medium, large)
        assertEquals(List.of("-n 16384", "-n 204800", "-n 24576000"), Scale.PROMOTION_FACTORS.stream()
                .map(f -> Scale.of("sc").orElseThrow().args(f)).toList());
        assertTrue(Scale.of("bh").isEmpty());
        // smallest first, duplicates dropped
        assertEquals(List.of(1L, 10L, 100L), Scale.of("qt").orElseThrow().points(List.of(100L, 1L, 10L, 10L))
                .stream().map(Scale.Point::factor).toList());
        assertThrows(IllegalArgumentException.class, () -> sp.points(List.of(0L)));
    }

    private static void script(Path p, String body) throws Exception {
        Files.writeString(p, "#!/usr/bin/env bash\n" + body + "\n", StandardCharsets.UTF_8);
        assertTrue(p.toFile().setExecutable(true));
    }

    /** A prepared sweep folder for "bfs" (-n 10 at 1x) with four variants, and fake binaries. */
    private Path sweepFolder() throws Exception {
        Path work = dir.resolve("work");
        Path behaviours = Files.createDirectories(dir.resolve("behaviours"));
        Files.createDirectories(work.resolve("src"));
        Prepare.writeRunScript(work);
        Files.writeString(work.resolve("manifest.tsv"), String.join("\n", "# name\tvariant\tstate\tsource\tdetail",
                "bfs\tcdp\tready\tsrc/bfs.cu\t-", "bfs\tflat\tready\tsrc/bfs_flat.cu\t-",
                "bfs\tblock\tready\tsrc/bfs.cu\t-", "bfs\twarp\trefused\t-\tbfs.cu:1:1: error: no [klap-x]", ""));
        Scale.writeSweep(work, List.of(new Scale("bfs", "vertices (-n)", List.of(new Scale.Option("-n", 10)))),
                List.of(1L, 10L, 100L));
        script(dir.resolve("nvcc"), """
                if [ "$1" = --version ]; then echo "Cuda compilation tools, release 13.0, V13.0.88"; exit 0; fi
                while [ $# -gt 0 ]; do [ "$1" = -o ] && out="$2"; shift; done
                b="$FAKE_BEHAVIOURS/$(basename "$out").sh"
                [ -f "$b" ] || { echo "x.cu(1): error: fake compile failure" >&2; exit 1; }
                cp "$b" "$out"
                """);
        // cdp: time = n / 10 ms warm, 10x that first; fails at 100x. It checks its arguments.
        script(behaviours.resolve("bfs.cdp.sh"), """
                [ "$1 $2 $3" = "-r 2 -n" ] || { echo "FAIL bfs: bad arguments $*"; exit 1; }
                n=$4
                [ "$n" = 1000 ] && { echo "FAIL bfs: too big"; exit 1; }
                echo "PASS bfs time_ms=$((n / 10)) launches=$n first_ms=$n warm_ms=$((n / 10)) reps=2"
                """);
        // flat: passes at 1x, times out at 10x: 100x is then skipped
        script(behaviours.resolve("bfs.flat.sh"), """
                [ "$4" = 10 ] || exec sleep 30
                echo "PASS bfs_flat time_ms=0.5 first_ms=2 warm_ms=0.5 reps=2"
                """);
        return work;
    }

    private String runSweep(Path work) throws Exception {
        ProcessBuilder pb = new ProcessBuilder("bash", work.resolve("run.sh").toString(), "--runs", "2", "--reps",
                "2", "--timeout", "1", "--jobs", "2").redirectErrorStream(true);
        pb.environment().put("NVCC", dir.resolve("nvcc").toString());
        pb.environment().put("FAKE_BEHAVIOURS", dir.resolve("behaviours").toString());
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(1, p.waitFor(), "some points failed:\n" + out);
        return out;
    }

    @Test
    void runShRunsTheSweepAndWritesScaleCsv() throws Exception {
        Path work = sweepFolder();
        assertEquals("# name\tfactor\tsize\targs (written by klap regress --scale)\nbfs\t1\t10\t-n 10\n"
                + "bfs\t10\t100\t-n 100\nbfs\t100\t1000\t-n 1000\n", Files.readString(work.resolve("sweep.tsv")));
        String out = runSweep(work);
        assertTrue(!Files.exists(work.resolve("raw.csv")), "a sweep writes scale.csv only");
        assertEquals(ScaleReport.HEADER, Files.readAllLines(work.resolve("scale.csv")).get(0));
        Map<String, ScaleReport.Point> ps = ScaleReport.readPoints(work.resolve("scale.csv")).stream()
                .collect(Collectors.toMap(p -> p.row().variant() + "@" + p.factor(), p -> p));
        assertEquals(12, ps.size(), out);
        ScaleReport.Point cdp10 = ps.get("cdp@10");
        assertEquals(100, cdp10.size());
        assertEquals("-n 100", cdp10.args());
        assertEquals(new RawCsv.Row("bfs", "cdp", "pass", 10.0, 100.0, 10.0, 100L, 2, ""), cdp10.row());
        assertEquals("fail", ps.get("cdp@100").row().status());
        assertEquals("run 1: FAIL bfs: too big", ps.get("cdp@100").row().detail());
        assertEquals("pass", ps.get("flat@1").row().status());
        assertEquals("timeout", ps.get("flat@10").row().status());
        assertEquals("skipped", ps.get("flat@100").row().status());
        assertEquals("not run: timed out at 10x", ps.get("flat@100").row().detail());
        assertEquals("compile-error", ps.get("block@1").row().status());
        assertEquals("refused", ps.get("warp@100").row().status());
        assertTrue(out.contains("bfs/flat x100  SKIPPED: timed out at 10x"), out);
        assertTrue(out.contains("bfs/cdp x10    PASS warm 10 ms, first 100 ms (median of 2), 100 launches"), out);
        assertTrue(Files.exists(work.resolve("logs/bfs.cdp.x10.run2.log")));

        Properties env = new Properties();
        try (var in = Files.newBufferedReader(work.resolve("env.properties"))) {
            env.load(in);
        }
        assertEquals("scale", env.getProperty("mode"));
        assertEquals("1,10,100", env.getProperty("factors"));
    }

    @Test
    void scaleReportFromTheSweep() throws Exception {
        Path work = sweepFolder();
        runSweep(work);
        StringWriter log = new StringWriter();
        int rc = Regress.run(new String[] {"--mode=report", "--raw", work.resolve("scale.csv").toString(),
            "--out-dir", dir.resolve("results").toString(), "--device-name", "Fake GPU"},
                new PrintWriter(log, true), new PrintWriter(log, true));
        assertEquals(0, rc, log.toString());
        String date = Files.readAllLines(work.resolve("env.properties")).get(0).substring("date=".length());
        Path md = dir.resolve("results/" + date + "-fake-gpu-scale.md");
        Path png = dir.resolve("results/" + date + "-fake-gpu-scale-bfs.png");
        assertTrue(Files.exists(md) && Files.exists(png), log.toString());
        byte[] bytes = Files.readAllBytes(png);
        assertTrue(bytes.length > 2000, "the chart is " + bytes.length + " bytes");
        assertArrayEquals(new byte[] {(byte) 0x89, 'P', 'N', 'G'}, Arrays.copyOf(bytes, 4), "not a PNG file");
        String text = Files.readString(md);
        for (String s : List.of("# Scale sweep on Fake GPU", "| factors | 1,10,100 x the default input size |",
                "## bfs: vertices", "| factor | size | arguments | cdp | flat | block | warp |",
                "| 1x | 10 | `-n 10` | 1.000 | 0.500 | COMPILE-ERROR | REFUSED |",
                "| 10x | 100 | `-n 100` | 10.000 | TIMEOUT | COMPILE-ERROR | REFUSED |",
                "| 100x | 1000 | `-n 1000` | FAIL | SKIPPED | COMPILE-ERROR | REFUSED |", "First repetition (ms):",
                "| 10x | 100 | `-n 100` | 100.000 | TIMEOUT |", "Missing points:",
                "- cdp at 100x (`-n 1000`): FAIL: run 1: FAIL bfs: too big",
                "- flat at 10x (`-n 100`): TIMEOUT: run 1: no result after 1 s",
                "- flat at 100x (`-n 1000`): SKIPPED: not run: timed out at 10x",
                "](" + date + "-fake-gpu-scale-bfs.png)")) {
            assertTrue(text.contains(s), "the report lacks '" + s + "':\n" + text);
        }
        List<String> csv = Files.readAllLines(dir.resolve("results/" + date + "-fake-gpu-scale.csv"));
        assertEquals("date,device," + ScaleReport.HEADER, csv.get(0));
        assertEquals(13, csv.size());
    }

    @Test
    void readsScaleCsvAndDrawsMissingPointsAsGaps() throws Exception {
        Path f = dir.resolve("scale.csv");
        Files.writeString(f, ScaleReport.HEADER + "\n"
                + "qt,cdp,1,40000,-n 40000,pass,11.3,35.7,11.2,26972,3,\n"
                + "qt,cdp,10,400000,-n 400000,timeout,,,,,0,run 1: no result after 600 s\n"
                + "qt,kernel,1,40000,-n 40000,pass,1.1,17.5,1.0,26972,3,\n"
                + "qt,kernel,10,400000,-n 400000,pass,9,30,8.5,,3,\n"
                + "sp,cdp,1,10000,\"-v 10000 -m 42000\",crash,,,,,0,\"run 1: killed by signal 11, core\"\n");
        List<ScaleReport.Point> ps = ScaleReport.readPoints(f);
        assertEquals(5, ps.size());
        assertEquals("-v 10000 -m 42000", ps.get(4).args());
        assertEquals(8.5, ScaleReport.time(ps.get(3)), 1e-12, "the warm time is plotted");
        assertNull(ScaleReport.time(ps.get(1)));
        ScaleReport r = new ScaleReport(ps, new Properties(), "scale.csv");
        assertEquals(List.of("qt", "sp"), r.benchmarks());
        assertEquals(2, r.missing().size());
        ScaleReport.Written w = r.write(dir.resolve("out"), "GPU");
        assertEquals(2, w.pngs().size(), "one chart per benchmark, also when no point has a time");
        for (Path p : w.pngs()) {
            assertTrue(Files.size(p) > 1000, p.toString());
        }
        String md = Files.readString(w.markdown());
        assertTrue(md.contains("## sp: variables (-v; clauses -m = 4.2 v)"), md);
        assertTrue(md.contains("- cdp at 1x (`-v 10000 -m 42000`): CRASH: run 1: killed by signal 11, core"), md);
        assertTrue(md.contains("## qt: points (-n)"), md);

        Files.writeString(f, ScaleReport.HEADER + "\nqt,cdp,x,1,-n 1,pass,1,1,1,,1,\n");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> ScaleReport.readPoints(f)).getMessage()
                .contains(":2:"));
        Files.writeString(f, RawCsv.HEADER + "\n");
        assertTrue(!ScaleReport.isScaleCsv(f));
        assertThrows(IllegalArgumentException.class, () -> ScaleReport.readPoints(f));
    }

    @Test
    void prepareScaleWritesTheSweepForTheFourBenchmarks() throws Exception {
        Path bench = Path.of("../testcases/bench").toAbsolutePath().normalize();
        Path work = dir.resolve("sweep");
        StringWriter log = new StringWriter();
        int rc = Regress.run(new String[] {"--mode=prepare", "--scale", "--bench-dir", bench.toString(), "--work-dir",
            work.toString(), "--variants", "cdp,flat"}, new PrintWriter(log, true), new PrintWriter(log, true));
        assertEquals(0, rc, log.toString());
        List<String> sweep = Files.readAllLines(work.resolve("sweep.tsv"));
        assertEquals(1 + 4 * 3, sweep.size(), String.join("\n", sweep));
        assertTrue(sweep.contains("bfs\t100\t1000000\t-n 1000000"), sweep.toString());
        assertTrue(sweep.contains("sp\t10\t100000\t-v 100000 -m 420000"), sweep.toString());
        List<String> manifest = Files.readAllLines(work.resolve("manifest.tsv"));
        assertEquals(1 + 4 * 2, manifest.size(), String.join("\n", manifest));
        assertTrue(manifest.stream().skip(1).allMatch(l -> l.matches("(bfs|bt|qt|sp)\t(cdp|flat)\tready\t.*")),
                String.join("\n", manifest));
        assertTrue(Files.isExecutable(work.resolve("run.sh")));
        assertTrue(Files.readString(work.resolve("run.sh")).contains("sweep.tsv"));
        assertTrue(log.toString().contains("scale sweep: bfs, bt, qt, sp at 1x, 10x, 100x"), log.toString());
        assertTrue(log.toString().contains("regress --mode=report --raw " + work.resolve("scale.csv")), log.toString());

        // --only must name benchmarks with a sweep
        assertEquals(2, Regress.run(new String[] {"--mode=prepare", "--scale", "--bench-dir", bench.toString(),
            "--work-dir", work.toString(), "--only", "bh"}, new PrintWriter(log, true), new PrintWriter(log, true)));
        assertTrue(log.toString().contains("no scale sweep for 'bh'"), log.toString());
        assertEquals(2, Regress.run(new String[] {"--mode=prepare", "--scale", "--scale-factors", "0,10"},
                new PrintWriter(log, true), new PrintWriter(log, true)));
    }
}
