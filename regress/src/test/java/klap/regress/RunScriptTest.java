package klap.regress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * run.sh, the part that runs on the GPU machine, with a fake nvcc whose "binaries" are shell
 * scripts: how it parses PASS/FAIL lines (old ones with time_ms only, new ones with first_ms and
 * warm_ms), takes the medians over process runs, and reports a FAIL line, a non-zero exit, a
 * missing result line, a crash, a timeout and a compile error while going on.
 */
class RunScriptTest {
    @TempDir
    Path dir;
    Path work;
    Path behaviours;
    Path nvcc;

    @BeforeEach
    void setUp() throws Exception {
        work = dir.resolve("work");
        behaviours = dir.resolve("behaviours");
        Files.createDirectories(work.resolve("src"));
        Files.createDirectories(behaviours);
        Prepare.writeRunScript(work);
        Files.writeString(work.resolve("manifest.tsv"), String.join("\n",
                "# name\tvariant\tstate\tsource\tdetail",
                "a\tcdp\tready\tsrc/a.cu\t-", "a\tflat\tready\tsrc/a_flat.cu\t-", "a\twarp\tready\tsrc/a.cu\t-",
                "a\tblock\tready\tsrc/a.cu\t-",
                "b\tcdp\tready\tsrc/b.cu\t-", "b\tflat\tready\tsrc/b_flat.cu\t-", "b\twarp\tready\tsrc/b.cu\t-",
                "b\tblock\tready\tsrc/b.cu\t-",
                "c\tcdp\tready\tsrc/c.cu\t-", "c\tflat\tmissing\t-\tno c/c_flat.cu",
                "c\twarp\trefused\t-\tc.cu:1:1: error: nope, \"really\" [klap-x]",
                "d\tcdp\tready\tsrc/d.cu\t-", ""));
        nvcc = dir.resolve("nvcc");
        script(nvcc, """
                if [ "$1" = --version ]; then echo "Cuda compilation tools, release 13.0, V13.0.88"; exit 0; fi
                while [ $# -gt 0 ]; do [ "$1" = -o ] && out="$2"; shift; done
                b="$FAKE_BEHAVIOURS/$(basename "$out").sh"
                [ -f "$b" ] || { echo "x.cu(1): error: fake compile failure" >&2; exit 1; }
                cp "$b" "$out"
                """);
        // a/cdp prints 5, 1, 3, 2, 4 ms in successive runs and checks that it got -r 3
        behaviour("a.cdp", """
                [ "$*" = "-r 3" ] || { echo "FAIL a: expected -r 3, got $*"; exit 1; }
                c=$(cat "$FAKE_BEHAVIOURS/count" 2>/dev/null || echo 0); c=$((c + 1)); echo $c > "$FAKE_BEHAVIOURS/count"
                t=(0 5 1 3 2 4); echo "warming up"; echo "PASS a time_ms=${t[$c]}"
                """);
        behaviour("a.flat", "echo 'PASS a time_ms=2.5 launches=7'");
        behaviour("a.warp", "echo 'FAIL a: wrong result at 3'; exit 1");
        behaviour("a.block", "exec sleep 30");
        behaviour("b.cdp", "echo 'PASS b time_ms=1'; kill -SEGV $$");
        behaviour("b.flat", "echo 'cudaErrorIllegalAddress: an illegal memory access was encountered'; exit 3");
        behaviour("b.warp", "echo done");
        behaviour("c.cdp", "echo 'PASS c time_ms=1.25e-1'");
        // d/cdp prints the current format: the first repetition and the warm median apart, varying by run
        behaviour("d.cdp", """
                c=$(cat "$FAKE_BEHAVIOURS/dcount" 2>/dev/null || echo 0); c=$((c + 1)); echo $c > "$FAKE_BEHAVIOURS/dcount"
                t=(0 6 7 8 9 10); f=(0 50 10 30 20 40); w=(0 5 1 3 2 4)
                echo "PASS d time_ms=${t[$c]} launches=12 first_ms=${f[$c]} warm_ms=${w[$c]} reps=3"
                """);
    }

    private void behaviour(String key, String body) throws Exception {
        script(behaviours.resolve(key + ".sh"), body);
    }

    private static void script(Path p, String body) throws Exception {
        Files.writeString(p, "#!/usr/bin/env bash\n" + body + "\n", StandardCharsets.UTF_8);
        assertTrue(p.toFile().setExecutable(true));
    }

    private String runScript(String... args) throws Exception {
        return runScript(1, args);
    }

    private String runScript(int expectedExit, String... args) throws Exception {
        List<String> cmd = new java.util.ArrayList<>(List.of("bash", work.resolve("run.sh").toString()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("NVCC", nvcc.toString());
        pb.environment().put("FAKE_BEHAVIOURS", behaviours.toString());
        Process p = pb.start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(expectedExit, p.waitFor(), "run.sh's exit status (1 when a variant failed):\n" + out);
        return out;
    }

    private Map<String, RawCsv.Row> rows() throws Exception {
        return RawCsv.read(work.resolve("raw.csv")).stream()
                .collect(Collectors.toMap(r -> r.name() + "/" + r.variant(), r -> r));
    }

    @Test
    void runsEveryVariantAndRecordsWhatHappened() throws Exception {
        String out = runScript("--runs", "5", "--reps", "3", "--timeout", "1", "--jobs", "3");
        Map<String, RawCsv.Row> rows = rows();
        assertEquals(12, rows.size(), out);
        assertEquals(new RawCsv.Row("a", "cdp", "pass", 3.0, null, 5, ""), rows.get("a/cdp"), "median of 5 1 3 2 4");
        assertEquals(new RawCsv.Row("d", "cdp", "pass", 8.0, 30.0, 3.0, 12L, 5, ""), rows.get("d/cdp"),
                "each of time_ms, first_ms and warm_ms is the median over the runs");
        assertEquals(new RawCsv.Row("a", "flat", "pass", 2.5, 7L, 5, ""), rows.get("a/flat"));
        assertEquals(new RawCsv.Row("c", "cdp", "pass", 0.125, null, 5, ""), rows.get("c/cdp"));
        assertEquals("fail", rows.get("a/warp").status());
        assertEquals("run 1: FAIL a: wrong result at 3", rows.get("a/warp").detail());
        assertEquals("timeout", rows.get("a/block").status());
        assertEquals("crash", rows.get("b/cdp").status());
        assertTrue(rows.get("b/cdp").detail().contains("signal 11"), rows.get("b/cdp").detail());
        assertEquals("fail", rows.get("b/flat").status());
        assertTrue(rows.get("b/flat").detail().contains("exit status 3: cudaErrorIllegalAddress"),
                rows.get("b/flat").detail());
        assertEquals("fail", rows.get("b/warp").status());
        assertTrue(rows.get("b/warp").detail().contains("no 'PASS NAME time_ms=...' line"));
        assertEquals("compile-error", rows.get("b/block").status());
        assertEquals("x.cu(1): error: fake compile failure", rows.get("b/block").detail());
        assertEquals(new RawCsv.Row("c", "flat", "missing", null, null, 0, "no c/c_flat.cu"), rows.get("c/flat"));
        assertEquals(new RawCsv.Row("c", "warp", "refused", null, null, 0, "c.cu:1:1: error: nope, \"really\" [klap-x]"),
                rows.get("c/warp"));
        // progress lines, and the order of raw.csv is the manifest's
        assertTrue(out.contains("compile ok") && out.contains("compile failed"), out);
        assertTrue(out.matches("(?s).*\\[ ?\\d+/9\\] a/cdp +PASS 3 ms \\(median of 5\\).*"), out);
        assertTrue(out.contains("d/cdp          PASS warm 3 ms, first 30 ms (median of 5), 12 launches"), out);
        assertTrue(out.contains("a/block        TIMEOUT: run 1: no result after 1 s"), out);
        assertEquals(List.of("a", "a", "a", "a", "b", "b", "b", "b", "c", "c", "c", "d"),
                RawCsv.read(work.resolve("raw.csv")).stream().map(RawCsv.Row::name).toList());

        Properties env = new Properties();
        try (var in = Files.newBufferedReader(work.resolve("env.properties"))) {
            env.load(in);
        }
        assertEquals("13.0 (V13.0.88)", env.getProperty("cuda"));
        assertEquals("run", env.getProperty("mode"));
        assertEquals("5", env.getProperty("runs"));
        assertEquals("3", env.getProperty("reps"));
        assertTrue(env.getProperty("date").matches("\\d{4}-\\d\\d-\\d\\d"));
    }

    @Test
    void medianOfAnEvenNumberOfRunsAveragesTheMiddleTwo() throws Exception {
        runScript("--runs", "4", "--reps", "3", "--timeout", "1", "--jobs", "2");
        assertEquals(2.5, rows().get("a/cdp").timeMs(), 1e-12, "median of 5 1 3 2");
    }

    @Test
    void withOneRepetitionAnOldProgramsTimeIsItsFirstRepetition() throws Exception {
        runScript("--runs", "2", "--reps", "1", "--timeout", "1", "--jobs", "2");
        RawCsv.Row c = rows().get("c/cdp");
        assertEquals(0.125, c.firstMs(), 1e-12);
        assertNull(c.warmMs());
        assertEquals("fail", rows().get("a/cdp").status(), "a/cdp insists on -r 3");
        assertEquals(RawCsv.HEADER, Files.readAllLines(work.resolve("raw.csv")).get(0));
    }

    @Test
    void theDefaultIsElevenRepetitions() throws Exception {
        runScript("--runs", "1", "--timeout", "1", "--jobs", "2");
        Properties env = new Properties();
        try (var in = Files.newBufferedReader(work.resolve("env.properties"))) {
            env.load(in);
        }
        assertEquals("11", env.getProperty("reps"));
    }

    @Test
    void theManifestsEnvColumnIsTheBinarysEnvironment() throws Exception {
        // the CUDA-NP set: one --np=all program run twice, with KLAP_NP=intra-warp and inter-warp; a
        // manifest line without the env column (the older format) runs without it
        Files.writeString(work.resolve("manifest.tsv"), String.join("\n",
                "# name\tvariant\tstate\tsource\tdetail\tenv",
                "e\tbase\tready\tsrc/e.cu\t-\t-", "e\tnpi\tready\tsrc/e.cu\t-",
                "e\tnpalli\tready\tsrc/e.cu\t-\tKLAP_NP=intra-warp",
                "e\tnpallw\tready\tsrc/e.cu\t-\tKLAP_NP=inter-warp X_OTHER=1",
                "e\tnpw\trefused\t-\tlud.cu:4:1: warning: no inter-warp variant [klap-np]\t-", ""));
        for (String v : List.of("base", "npi", "npalli", "npallw")) {
            behaviour("e." + v, "echo \"PASS e time_ms=1 first_ms=2 warm_ms=1 env=${KLAP_NP:-none}${X_OTHER:-}\"");
        }
        String out = runScript(0, "--runs", "1", "--reps", "2", "--timeout", "5", "--jobs", "2");
        Map<String, RawCsv.Row> rows = rows();
        assertEquals(5, rows.size(), out);
        assertEquals("refused", rows.get("e/npw").status());
        for (String v : List.of("base", "npi", "npalli", "npallw")) {
            assertEquals("pass", rows.get("e/" + v).status(), v + ": " + out);
        }
        assertTrue(Files.readString(work.resolve("logs/e.base.run1.log")).contains("env=none"));
        assertTrue(Files.readString(work.resolve("logs/e.npi.run1.log")).contains("env=none"));
        assertTrue(Files.readString(work.resolve("logs/e.npalli.run1.log")).contains("env=intra-warp"));
        assertTrue(Files.readString(work.resolve("logs/e.npallw.run1.log")).contains("env=inter-warp1"));
    }

    @Test
    void compileOnlyRunsNothing() throws Exception {
        String out = runScript("--compile-only", "--jobs", "2");
        Map<String, RawCsv.Row> rows = rows();
        assertEquals("compiled", rows.get("a/block").status());
        assertEquals("compile-error", rows.get("b/block").status());
        assertTrue(!out.contains("running"), out);
        assertTrue(!Files.exists(behaviours.resolve("count")), "a/cdp ran in compile-only mode");
    }

    @Test
    void runOnlyRunsTheBinariesOfAnEarlierCompileWithoutCompilingAgain() throws Exception {
        runScript("--compile-only", "--jobs", "2");
        // from now on nvcc would fail every file and leave a mark: --run-only must not compile (it
        // may ask nvcc --version for env.properties)
        script(nvcc, """
                if [ "$1" = --version ]; then echo "Cuda compilation tools, release 13.0, V13.0.88"; exit 0; fi
                touch "$FAKE_BEHAVIOURS/nvcc-called"; exit 1
                """);
        String out = runScript("--run-only", "--runs", "5", "--reps", "3", "--timeout", "1");
        assertTrue(!Files.exists(behaviours.resolve("nvcc-called")), "--run-only compiled:\n" + out);
        Map<String, RawCsv.Row> rows = rows();
        assertEquals(new RawCsv.Row("a", "cdp", "pass", 3.0, null, 5, ""), rows.get("a/cdp"), out);
        assertEquals("fail", rows.get("a/warp").status());
        assertEquals("compile-error", rows.get("b/block").status(), "what did not compile stays a compile error");
        assertEquals("refused", rows.get("c/warp").status());
        assertTrue(Files.readString(work.resolve("env.properties")).contains("mode=run"));
    }

    @Test
    void runOnlyNeedsAnEarlierCompileAndExcludesCompileOnly() throws Exception {
        assertTrue(runScript(2, "--run-only").contains("run --compile-only first"));
        runScript("--compile-only", "--jobs", "2");
        assertTrue(runScript(2, "--run-only", "--compile-only").contains("exclude each other"));
    }
}
