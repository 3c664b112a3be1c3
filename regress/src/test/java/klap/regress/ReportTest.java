package klap.regress;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import klap.regress.Report.Measure;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The report made from a synthetic raw.csv: warm and first-repetition times kept apart, speedups,
 * the best klap variant, geometric means that count and name the benchmarks left out, the tables
 * and the files; and raw files of the older format with a separate {@code -r 1} file.
 */
class ReportTest {
    // warm times are round, first repetitions much slower and ordered differently
    static final String RAW = """
            name,variant,status,time_ms,first_ms,warm_ms,launches,runs,detail
            bfs,cdp,pass,8.2,20,8,1000,5,
            bfs,flat,pass,2.1,4,2,,5,
            bfs,warp,pass,4.3,40,4,40,5,
            bfs,block,pass,1.1,50,1,5,5,
            qt,cdp,pass,9.1,18,9,,5,
            qt,flat,pass,3.2,6,3,,5,
            qt,warp,fail,,,,,2,"run 3: FAIL qt: leaf 7 has 3 points, expected 4"
            qt,block,pass,1.1,9,1,,5,
            sp,cdp,timeout,,,,,0,run 1: no result after 120 s
            sp,flat,pass,5.1,10,5,,5,
            sp,warp,refused,,,,,0,sp.cu:10:3: error: no convergent region [klap-x]
            sp,block,compile-error,,,,,0,"variants/sp/block/sp.cu(3): error: x, y"
            """;

    static Path write(Path dir) throws Exception {
        Path raw = dir.resolve("raw.csv");
        Files.writeString(raw, RAW);
        Files.writeString(dir.resolve("env.properties"), String.join("\n", "date=2026-11-23",
                "device=NVIDIA H100 80GB HBM3", "driver=570.86.15", "cuda=13.0 (V13.0.88)", "arch=sm_90", "runs=5",
                "reps=11", "timeout_s=120", "host=gpu1", ""));
        return raw;
    }

    @Test
    void warmAndFirstTimesAreKeptApart(@TempDir Path dir) throws Exception {
        Report r = Report.read(write(dir));
        assertEquals(1.0, r.time("bfs", "block", Measure.WARM), 1e-12, "warm_ms, not time_ms");
        assertEquals(50.0, r.time("bfs", "block", Measure.FIRST), 1e-12, "first_ms");
        assertEquals(8.0, r.speedup("bfs", "block", "cdp", Measure.WARM), 1e-12);
        assertEquals(0.4, r.speedup("bfs", "block", "cdp", Measure.FIRST), 1e-12);
        // the fastest klap variant differs between the two
        assertEquals("block", r.bestKlap("bfs", Measure.WARM));
        assertEquals("warp", r.bestKlap("bfs", Measure.FIRST));
        assertNull(r.bestKlap("sp", Measure.WARM), "no klap variant of sp passed");
        assertTrue(!r.warmIncludesFirst(r.row("bfs", "block")));
        assertEquals(List.of("warp", "block"), r.klapVariants());
    }

    @Test
    void geometricMeansCountAndNameTheFailures(@TempDir Path dir) throws Exception {
        Report r = Report.read(write(dir));
        assertEquals(List.of("bfs", "qt", "sp"), r.benchmarks());
        assertEquals(List.of("cdp", "flat", "warp", "block"), r.variants());
        assertNull(r.speedup("qt", "warp", "cdp"), "a failed variant has no speedup");
        assertNull(r.speedup("sp", "flat", "cdp"), "no speedup over a baseline that timed out");
        // block over cdp: 8 (bfs), 9 (qt); sp has no cdp time
        Report.Geomean g = r.geomean("block", "cdp");
        assertEquals(Math.sqrt(72), g.value(), 1e-9);
        assertEquals(2, g.n());
        assertEquals(3, g.of());
        assertEquals(List.of("sp (cdp TIMEOUT)"), g.notCounted());
        assertEquals("8.49x (2/3)", g.text());
        assertEquals(List.of("qt (FAIL)", "sp (cdp TIMEOUT)"), r.geomean("warp", "cdp").notCounted());
        assertEquals(List.of("qt (FAIL)", "sp (REFUSED)"), r.geomean("warp", "flat", Measure.WARM).notCounted());
        // flat over cdp: 4, 3; block over flat: 2, 3; warp over flat: 0.5 (bfs) only
        assertEquals(Math.sqrt(12), r.geomean("flat", "cdp").value(), 1e-9);
        assertEquals(Math.sqrt(6), r.geomean("block", "flat").value(), 1e-9);
        assertEquals(0.5, r.geomean("warp", "flat").value(), 1e-12);
        assertEquals(1, r.geomean("warp", "flat").n());
        // first repetition: block over cdp 0.4 (bfs), 2 (qt)
        assertEquals(Math.sqrt(0.8), r.geomean("block", "cdp", Measure.FIRST).value(), 1e-9);
        // best klap: warm 8 (bfs, block), 9 (qt, block); first 0.5 (bfs, warp), 2 (qt, block)
        assertEquals(Math.sqrt(72), r.geomean(Report.BEST, "cdp", Measure.WARM).value(), 1e-9);
        assertEquals(1.0, r.geomean(Report.BEST, "cdp", Measure.FIRST).value(), 1e-9);
        Report.Geomean bf = r.geomean(Report.BEST, "flat", Measure.WARM);
        assertEquals(Math.sqrt(6), bf.value(), 1e-9);
        assertEquals(List.of("sp (no klap variant passed)"), bf.notCounted());
        Report.Geomean none = new Report(List.of(), new java.util.Properties()).geomean("block", "cdp");
        assertTrue(Double.isNaN(none.value()));
        assertEquals("- (0/0)", none.text());
    }

    @Test
    void writesTheTablesCsvAndCharts(@TempDir Path dir) throws Exception {
        Report r = Report.read(write(dir));
        Report.Written w = r.write(dir.resolve("results"), null);
        assertEquals("2026-11-23-nvidia-h100-80gb-hbm3.md", w.markdown().getFileName().toString());
        assertEquals("2026-11-23-nvidia-h100-80gb-hbm3.csv", w.csv().getFileName().toString());
        assertEquals("2026-11-23-nvidia-h100-80gb-hbm3-first.png", w.firstPng().getFileName().toString());

        String md = Files.readString(w.markdown());
        for (String s : List.of("# CDP benchmarks on NVIDIA H100 80GB HBM3 (2026-11-23)", "| driver | 570.86.15 |",
                "| CUDA (nvcc) | 13.0 (V13.0.88) |", "| date | 2026-11-23 |",
                "| warm time | median of repetitions 2..11 of a process (`-r 11`), median over 5 process runs |",
                "| first repetition | repetition 1 of a process, median over 5 process runs |",
                "## Warm time (ms)", "| benchmark | cdp | flat | warp | block | best klap |",
                "| bfs | 8.000 | 2.000 | 4.000 | 1.000 | 1.000 (block) |",
                "| qt | 9.000 | 3.000 | FAIL | 1.000 | 1.000 (block) |",
                "| sp | TIMEOUT | 5.000 | REFUSED | COMPILE-ERROR | none passed |",
                "## First repetition (ms)", "| bfs | 20.000 | 4.000 | 40.000 | 50.000 | 40.000 (warp) |",
                "## Speedup over cdp, warm", "| benchmark | flat | warp | block | best klap |",
                "| bfs | 4.00x | 2.00x | 8.00x | 8.00x (block) |", "| qt | 3.00x | FAIL | 9.00x | 9.00x (block) |",
                "| sp | n/a | REFUSED | COMPILE-ERROR | n/a |",
                "| **geomean** | **3.46x** (2/3) | **2.00x** (1/3) | **8.49x** (2/3) | **8.49x** (2/3) |",
                "## Speedup over flat, warm", "| benchmark | cdp | warp | block | best klap |",
                "| bfs | 0.25x | 0.50x | 2.00x | 2.00x (block) |", "| sp | TIMEOUT | REFUSED | COMPILE-ERROR | none passed |",
                "## Speedup over cdp, first repetition", "| bfs | 5.00x | 0.50x | 0.40x | 0.50x (warp) |",
                "## Summary: geometric means of the speedups",
                "| variant | warm over cdp | warm over flat | first repetition over cdp | first repetition over flat |",
                "| block | 8.49x (2/3) | 2.45x (2/3) | 0.89x (2/3) | 0.23x (2/3) |",
                "| **best klap** | 8.49x (2/3) | 2.45x (2/3) | 1.00x (2/3) |",
                "- warp, warm over cdp: qt (FAIL), sp (cdp TIMEOUT)",
                "## Device-side launches", "| bfs | 1000 |  | 40 | 5 |", "## Not passing",
                "| qt | warp | FAIL | run 3: FAIL qt: leaf 7 has 3 points, expected 4 |",
                "| sp | warp | REFUSED | sp.cu:10:3: error: no convergent region [klap-x] |",
                "](2026-11-23-nvidia-h100-80gb-hbm3.png)", "](2026-11-23-nvidia-h100-80gb-hbm3-first.png)")) {
            assertTrue(md.contains(s), "the report lacks '" + s + "':\n" + md);
        }
        assertTrue(!md.contains("\\* median of all"), "no warm time includes the first here:\n" + md);

        List<String> csv = Files.readAllLines(w.csv());
        assertEquals(Report.CSV_HEADER, csv.get(0));
        assertEquals("2026-11-23,NVIDIA H100 80GB HBM3,bfs,block,pass,1.0000,reps-2-to-11,pass,50.0000,5,5,5,"
                + "8.0000,2.0000,0.4000,0.0800,,", csv.get(4));
        assertEquals(13, csv.size());
        assertTrue(csv.get(12).endsWith(",\"variants/sp/block/sp.cu(3): error: x, y\","), csv.get(12));

        for (Path p : List.of(w.png(), w.firstPng())) {
            byte[] png = Files.readAllBytes(p);
            assertTrue(png.length > 2000, p + " is " + png.length + " bytes");
            assertArrayEquals(new byte[] {(byte) 0x89, 'P', 'N', 'G'}, Arrays.copyOf(png, 4), "not a PNG file");
        }
    }

    @Test
    void theNpSetIsReportedOverBase(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("raw.csv"), """
                name,variant,status,time_ms,first_ms,warm_ms,launches,runs,detail
                tmv,base,pass,8.2,20,8,,5,
                tmv,npi,pass,2.1,10,2,,5,
                tmv,npw,pass,4.3,10,4,,5,
                tmv,npalli,pass,2.2,10,2.5,,5,
                tmv,npallw,pass,4.4,10,4,,5,
                lud,base,pass,9.1,18,9,,5,
                lud,npi,pass,3.2,6,3,,5,
                lud,npw,refused,,,,,0,"lud/lud.cu:41:17: warning: kernel 'lud_perimeter': no inter-warp variant [klap-np]"
                lud,npalli,pass,3.3,6,3,,5,
                lud,npallw,refused,,,,,0,"lud/lud.cu:41:17: warning: no inter-warp variant [klap-np]"
                """);
        Files.writeString(dir.resolve("env.properties"), "date=2026-11-24\ndevice=NVIDIA H100\nruns=5\nreps=11\n");
        Report r = Report.read(dir.resolve("raw.csv"));
        assertTrue(r.isNp());
        assertEquals(List.of("base"), r.baselines());
        assertEquals(List.of("npi", "npw", "npalli", "npallw"), r.klapVariants());
        assertEquals(4.0, r.speedup("tmv", "npi", "base"), 1e-12);
        assertEquals(Math.sqrt(12), r.geomean("npi", "base").value(), 1e-9);
        assertEquals(List.of("lud (REFUSED)"), r.geomean("npw", "base").notCounted());
        Report.Written w = r.write(dir.resolve("results"), null);
        String md = Files.readString(w.markdown());
        for (String s : List.of("# CUDA-NP benchmarks on NVIDIA H100 (2026-11-24)", Report.NP_PAPER,
                "| benchmark | base | npi | npw | npalli | npallw | best klap |",
                "## Speedup over base, warm", "| benchmark | npi | npw | npalli | npallw | best klap |",
                "| tmv | 4.00x | 2.00x | 3.20x | 2.00x | 4.00x (npi) |", "| lud | 3.00x | REFUSED | 3.00x | REFUSED | 3.00x (npi) |",
                "| **geomean** | **3.46x** (2/2) | **2.00x** (1/2) |", "| variant | warm over base | first repetition over base |",
                "| npw | 2.00x (1/2) | 2.00x (1/2) |", "- npw, warm over base: lud (REFUSED)",
                "| lud | npw | REFUSED | lud/lud.cu:41:17: warning: kernel 'lud_perimeter': no inter-warp variant [klap-np] |",
                "![warm speedup over base](", "kept the original kernel")) {
            assertTrue(md.contains(s), "the report lacks '" + s + "':\n" + md);
        }
        assertTrue(!md.contains("over cdp") && !md.contains("over flat"), md);
        List<String> csv = Files.readAllLines(w.csv());
        assertEquals("date,device,name,variant,status,warm_ms,warm_of,first_status,first_ms,launches,runs,first_runs,"
                + "warm_speedup_vs_base,first_speedup_vs_base,detail,first_detail", csv.get(0));
        assertEquals("2026-11-24,NVIDIA H100,tmv,npi,pass,2.0000,reps-2-to-11,pass,10.0000,,5,5,4.0000,2.0000,,",
                csv.get(2));
        assertTrue(Files.size(w.png()) > 2000);
        // the CDP sets keep their header
        assertEquals(Report.CSV_HEADER, Report.read(write(Files.createDirectories(dir.resolve("cdp")))).csvHeader());
    }

    @Test
    void olderRawFilesWithASeparateSingleRepetitionRun(@TempDir Path dir) throws Exception {
        // the layout of the first GPU run: raw_reps11.csv + env.properties (reps=11), raw_reps1.csv (-r 1)
        Files.writeString(dir.resolve("raw_reps11.csv"), """
                name,variant,status,time_ms,launches,runs,detail
                bfs,cdp,pass,4.644,10000,3,
                bfs,flat,pass,1.783,,3,
                bfs,block,pass,0.478,10000,3,
                gc,cdp,pass,28.261,,3,
                gc,flat,pass,3.708,,3,
                gc,block,fail,,,1,"run 2: FAIL gc: x"
                """);
        Files.writeString(dir.resolve("raw_reps1.csv"), """
                name,variant,status,time_ms,launches,runs,detail
                bfs,cdp,pass,9.9,10000,5,
                bfs,flat,pass,1.93,,5,
                bfs,block,pass,10.121,10000,5,
                gc,cdp,pass,259.594,,5,
                gc,flat,pass,225.58,,5,
                gc,block,pass,246.116,,5,
                """);
        Files.writeString(dir.resolve("env.properties"), "date=2026-11-22\ndevice=NVIDIA H100 80GB HBM3\nruns=3\n"
                + "reps=11\ndriver=580.159.04\ncuda=13.0 (V13.0.88)\n");
        Report r = Report.read(dir.resolve("raw_reps11.csv"), dir.resolve("raw_reps1.csv"));
        assertEquals(0.478, r.time("bfs", "block", Measure.WARM), 1e-12);
        assertTrue(r.warmIncludesFirst(r.row("bfs", "block")), "v1 time_ms of -r 11 includes the first repetition");
        assertEquals(10.121, r.time("bfs", "block", Measure.FIRST), 1e-12);
        assertNull(r.time("gc", "block", Measure.WARM));
        assertEquals(246.116, r.time("gc", "block", Measure.FIRST), 1e-12, "passed in the -r 1 run");
        assertEquals(1, r.geomean("block", "cdp", Measure.WARM).n());
        assertEquals(2, r.geomean("block", "cdp", Measure.FIRST).n());

        String md = r.markdown("NVIDIA H100 80GB HBM3", "x.png", "y.png");
        for (String s : List.of("from `raw_reps11.csv` and `raw_reps1.csv`", "**the first included**",
                "| bfs | 4.644* | 1.783* | 0.478* | 0.478 (block) |", "\\* median of all 11 repetitions",
                "time_ms of `raw_reps1.csv`, a run with `-r 1` (each process times one repetition), median over 5 process runs", "| gc | 259.594 | 225.580 | 246.116 | 246.116 (block) |",
                "In `raw_reps11.csv`:", "| gc | block | FAIL | run 2: FAIL gc: x |", "In `raw_reps1.csv`: every variant passed.")) {
            assertTrue(md.contains(s), "the report lacks '" + s + "':\n" + md);
        }
        String csv = r.csv("H100");
        assertTrue(csv.contains("H100,bfs,block,pass,0.4780,all-reps,pass,10.1210,10000,3,5,"), csv);
        assertTrue(csv.contains("H100,gc,block,fail,,,pass,246.1160,,1,5,"), csv);

        // a --first-raw file whose own env.properties says it was not a -r 1 run is refused
        Path other = Files.createDirectories(dir.resolve("other"));
        Files.copy(dir.resolve("raw_reps1.csv"), other.resolve("raw.csv"));
        Files.writeString(other.resolve("env.properties"), "reps=11\n");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Report.read(dir.resolve("raw_reps11.csv"), other.resolve("raw.csv")));
        assertTrue(e.getMessage().contains("reps=11"), e.getMessage());
    }

    @Test
    void singleRepetitionRunsHaveNoWarmTime(@TempDir Path dir) throws Exception {
        Path raw = dir.resolve("raw.csv");
        Files.writeString(raw, RawCsv.HEADER + "\nbfs,cdp,pass,9,9,,10,5,\nbfs,block,pass,3,3,,10,5,\n");
        Files.writeString(dir.resolve("env.properties"), "reps=1\nruns=5\n");
        Report r = Report.read(raw);
        assertNull(r.time("bfs", "block", Measure.WARM));
        assertEquals(3.0, r.speedup("bfs", "block", "cdp", Measure.FIRST), 1e-12);
        String md = r.markdown("GPU", "x.png");
        assertTrue(!md.contains("## Warm time") && md.contains("## First repetition (ms)"), md);
        assertTrue(md.contains("| warm time | not measured"), md);
    }

    @Test
    void deviceNameOptionWinsAndCompileOnlyResultsStillMakeAChart(@TempDir Path dir) throws Exception {
        Path raw = dir.resolve("raw.csv");
        Files.writeString(raw, RawCsv.HEADER + "\nbfs,cdp,compiled,,,,,0,\n", StandardCharsets.UTF_8);
        Report.Written w = Report.read(raw).write(dir, "My GPU #2");
        assertTrue(w.markdown().getFileName().toString().endsWith("-my-gpu-2.md"), w.markdown().toString());
        assertTrue(Files.size(w.png()) > 1000);
        assertNull(w.firstPng());
        assertTrue(Files.readString(w.markdown()).contains("| driver | unknown |"));
    }

    @Test
    void slugs() {
        assertEquals("nvidia-h100-80gb-hbm3", Report.slug("NVIDIA H100 80GB HBM3"));
        assertEquals("nvidia-h200", Report.slug("  NVIDIA_H200 "));
        assertEquals("unknown-device", Report.slug("  "));
    }

    @Test
    void reportModeFromTheCommandLine(@TempDir Path dir) throws Exception {
        Path raw = write(dir);
        java.io.StringWriter out = new java.io.StringWriter();
        int rc = Regress.run(new String[] {"--mode=report", "--raw", raw.toString(), "--out-dir",
            dir.resolve("r").toString()}, new java.io.PrintWriter(out, true), new java.io.PrintWriter(out, true));
        assertEquals(0, rc, out.toString());
        assertTrue(Files.exists(dir.resolve("r/2026-11-23-nvidia-h100-80gb-hbm3.png")));
        assertTrue(Files.exists(dir.resolve("r/2026-11-23-nvidia-h100-80gb-hbm3-first.png")));
        rc = Regress.run(new String[] {"--mode=report", "--raw", dir.resolve("nope.csv").toString()},
                new java.io.PrintWriter(out, true), new java.io.PrintWriter(out, true));
        assertEquals(1, rc, out.toString());
    }
}
