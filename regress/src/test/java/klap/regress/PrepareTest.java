package klap.regress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Prepare over the fixture set in src/test/resources/fixture-bench (tiny: a working CDP program;
 * broken: nvcc rejects it and its flat version is missing; cdp1: klap refuses it), and compile
 * mode end to end on part of it with the real nvcc.
 */
class PrepareTest {
    static final Path FIXTURE = Path.of("src/test/resources/fixture-bench").toAbsolutePath();

    @Test
    void recordsReadyMissingAndRefusedVariants(@TempDir Path dir) throws Exception {
        Path work = dir.resolve("work");
        StringWriter progress = new StringWriter();
        List<Prepare.Entry> es = Prepare.prepare(FIXTURE, work, Benchmark.discover(FIXTURE), Variant.all(),
                new PrintWriter(progress, true));
        assertEquals(3 * Variant.all().size(), es.size());
        Prepare.Entry tinyBlock = es.stream().filter(e -> e.bench().equals("tiny") && e.variant().equals("block"))
                .findFirst().orElseThrow();
        assertEquals("ready", tinyBlock.state());
        assertEquals("variants/tiny/block/tiny.cu", tinyBlock.source());
        assertTrue(Files.exists(work.resolve("variants/tiny/block/klap/klap.cuh")), "runtime headers next to the output");
        assertTrue(Files.exists(work.resolve("src/common/result.cuh")));
        assertTrue(Files.exists(work.resolve("src/tiny/tiny_flat.cu")));
        assertTrue(Files.isExecutable(work.resolve("run.sh")));
        Prepare.Entry missing = es.stream().filter(e -> e.bench().equals("broken") && e.variant().equals("flat"))
                .findFirst().orElseThrow();
        assertEquals("missing", missing.state());
        for (Prepare.Entry e : es) {
            if (e.bench().equals("cdp1") && e.variant().matches("warp|block")) {
                assertEquals("refused", e.state(), e.toString());
                assertTrue(e.detail().startsWith("cdp1/cdp1.cu:9:3: error: device-side cudaDeviceSynchronize()"),
                        e.detail());
            }
        }
        assertTrue(progress.toString().contains("tiny/block     transform ok"), progress.toString());
        assertTrue(Files.readString(work.resolve("manifest.tsv"))
                .contains("broken\tflat\tmissing\t-\tno broken/broken_flat.cu\t-\n"));

        // a second prepare replaces the first; a foreign folder is never cleared
        Prepare.prepare(FIXTURE, work, Benchmark.discover(FIXTURE), List.of(Variant.CDP), new PrintWriter(progress));
        assertTrue(!Files.exists(work.resolve("variants")));
        Path foreign = dir.resolve("foreign");
        Files.createDirectories(foreign);
        Files.writeString(foreign.resolve("precious.txt"), "keep");
        assertThrows(IOException.class, () -> Prepare.prepare(FIXTURE, foreign, Benchmark.discover(FIXTURE),
                List.of(Variant.CDP), new PrintWriter(progress)));
        assertTrue(Files.exists(foreign.resolve("precious.txt")));
    }

    @Test
    void compileModeCompilesWithTheRealNvccAndReportsFailures(@TempDir Path dir) {
        StringWriter out = new StringWriter();
        int rc = Regress.run(new String[] {"--mode=compile", "--bench-dir", FIXTURE.toString(), "--work-dir",
            dir.toString(), "--only", "tiny,broken", "--variants", "cdp,flat,block"},
                new PrintWriter(out, true), new PrintWriter(out, true));
        String log = out.toString();
        assertEquals(1, rc, "broken must fail the run:\n" + log);
        assertTrue(log.contains("tiny/block     compile ok"), log);
        assertTrue(log.contains("tiny/flat      compile ok"), log);
        assertTrue(log.contains("broken/cdp     compile failed"), log);
        assertTrue(log.contains("regress: 6 variants, 3 compiled, 0 refused by klap, 3 failed"), log);
        assertTrue(log.contains("FAILED broken/flat: missing no broken/broken_flat.cu"), log);
    }

    @Test
    void usageErrors() {
        StringWriter out = new StringWriter();
        PrintWriter w = new PrintWriter(out, true);
        assertEquals(2, Regress.run(new String[] {"--bench-dir", FIXTURE.toString(), "--variants", "grid"}, w, w));
        assertEquals(2, Regress.run(new String[] {"--bench-dir", FIXTURE.toString(), "--only", "nope"}, w, w));
        assertEquals(2, Regress.run(new String[] {"--mode=report"}, w, w));
        assertEquals(2, Regress.run(new String[] {"--mode=fly"}, w, w));
        assertTrue(out.toString().contains("unknown variant 'grid'"), out.toString());
        assertTrue(out.toString().contains("no benchmark 'nope'"), out.toString());
    }
}
