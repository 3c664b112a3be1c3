package klap.regress;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The report made from a synthetic raw.csv: speedups, geometric means, the three files. */
class ReportTest {
    static final String RAW = """
            name,variant,status,time_ms,launches,runs,detail
            bfs,cdp,pass,8,1000,5,
            bfs,flat,pass,2,,5,
            bfs,warp,pass,4,40,5,
            bfs,block,pass,1,5,5,
            qt,cdp,pass,9,,5,
            qt,flat,pass,3,,5,
            qt,warp,fail,,,2,"run 3: FAIL qt: leaf 7 has 3 points, expected 4"
            qt,block,pass,1,,5,
            sp,cdp,timeout,,,0,run 1: no result after 120 s
            sp,flat,pass,5,,5,
            sp,warp,refused,,,0,sp.cu:10:3: error: no convergent region [klap-x]
            sp,block,compile-error,,,0,"variants/sp/block/sp.cu(3): error: x, y"
            """;

    static Path write(Path dir) throws Exception {
        Path raw = dir.resolve("raw.csv");
        Files.writeString(raw, RAW);
        Files.writeString(dir.resolve("env.properties"), String.join("\n", "date=2026-11-23",
                "device=NVIDIA H100 80GB HBM3", "driver=570.86.15", "cuda=13.0 (V13.0.88)", "arch=sm_90", "runs=5",
                "reps=1", "timeout_s=120", "host=gpu1", ""));
        return raw;
    }

    @Test
    void speedupsAndGeometricMeans(@TempDir Path dir) throws Exception {
        Report r = Report.read(write(dir));
        assertEquals(List.of("bfs", "qt", "sp"), r.benchmarks());
        assertEquals(List.of("cdp", "flat", "warp", "block"), r.variants());
        assertEquals(2.0, r.speedup("bfs", "warp", "cdp"), 1e-12);
        assertEquals(8.0, r.speedup("bfs", "block", "cdp"), 1e-12);
        assertNull(r.speedup("qt", "warp", "cdp"), "a failed variant has no speedup");
        assertNull(r.speedup("sp", "flat", "cdp"), "no speedup over a baseline that timed out");
        // block over cdp: 8 (bfs), 9 (qt); sp has no cdp time
        Report.Geomean g = r.geomean("block", "cdp");
        assertEquals(Math.sqrt(72), g.value(), 1e-9);
        assertEquals(2, g.n());
        assertEquals(3, g.of());
        // flat over cdp: 4, 3
        assertEquals(Math.sqrt(12), r.geomean("flat", "cdp").value(), 1e-9);
        // block over flat: 2 (bfs), 3 (qt)
        assertEquals(Math.sqrt(6), r.geomean("block", "flat").value(), 1e-9);
        // warp over flat: 0.5 (bfs) only
        assertEquals(0.5, r.geomean("warp", "flat").value(), 1e-12);
        assertEquals(1, r.geomean("warp", "flat").n());
        assertTrue(Double.isNaN(new Report(List.of(), new java.util.Properties()).geomean("block", "cdp").value()));
    }

    @Test
    void writesCsvMarkdownAndPng(@TempDir Path dir) throws Exception {
        Report r = Report.read(write(dir));
        Report.Written w = r.write(dir.resolve("results"), null);
        assertEquals("2026-11-23-nvidia-h100-80gb-hbm3.md", w.markdown().getFileName().toString());
        assertEquals("2026-11-23-nvidia-h100-80gb-hbm3.csv", w.csv().getFileName().toString());

        String md = Files.readString(w.markdown());
        for (String s : List.of("# CDP benchmarks on NVIDIA H100 80GB HBM3 (2026-11-23)", "| driver | 570.86.15 |",
                "| CUDA (nvcc) | 13.0 (V13.0.88) |", "| date | 2026-11-23 |", "## Time (ms)",
                "| benchmark | cdp | flat | warp | block |", "| bfs | 8.000 | 2.000 | 4.000 | 1.000 |",
                "| qt | 9.000 | 3.000 | FAIL | 1.000 |", "| sp | TIMEOUT | 5.000 | REFUSED | COMPILE-ERROR |",
                "## Speedup over cdp", "| bfs | 4.00x | 2.00x | 8.00x |", "| qt | 3.00x |  | 9.00x |",
                "| **geomean** | **3.46x** (2/3) | **2.00x** (1/3) | **8.49x** (2/3) |", "## Speedup over flat",
                "| benchmark | cdp | warp | block |", "| bfs | 0.25x | 0.50x | 2.00x |",
                "## Device-side launches", "| bfs | 1000 |  | 40 | 5 |", "## Not passing",
                "| qt | warp | FAIL | run 3: FAIL qt: leaf 7 has 3 points, expected 4 |",
                "| sp | warp | REFUSED | sp.cu:10:3: error: no convergent region [klap-x] |",
                "](2026-11-23-nvidia-h100-80gb-hbm3.png)")) {
            assertTrue(md.contains(s), "the report lacks '" + s + "':\n" + md);
        }

        List<String> csv = Files.readAllLines(w.csv());
        assertEquals("date,device,name,variant,status,time_ms,launches,runs,speedup_vs_cdp,speedup_vs_flat,detail",
                csv.get(0));
        assertEquals("2026-11-23,NVIDIA H100 80GB HBM3,bfs,block,pass,1.000,5,5,8.0000,2.0000,", csv.get(4));
        assertEquals(13, csv.size());
        assertTrue(csv.get(12).endsWith(",\"variants/sp/block/sp.cu(3): error: x, y\""), csv.get(12));

        byte[] png = Files.readAllBytes(w.png());
        assertTrue(png.length > 2000, "the chart is " + png.length + " bytes");
        assertArrayEquals(new byte[] {(byte) 0x89, 'P', 'N', 'G'}, Arrays.copyOf(png, 4), "not a PNG file");
    }

    @Test
    void deviceNameOptionWinsAndCompileOnlyResultsStillMakeAChart(@TempDir Path dir) throws Exception {
        Path raw = dir.resolve("raw.csv");
        Files.writeString(raw, "name,variant,status,time_ms,launches,runs,detail\nbfs,cdp,compiled,,,0,\n",
                StandardCharsets.UTF_8);
        Report.Written w = Report.read(raw).write(dir, "My GPU #2");
        assertTrue(w.markdown().getFileName().toString().endsWith("-my-gpu-2.md"), w.markdown().toString());
        assertTrue(Files.size(w.png()) > 1000);
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
    }
}
