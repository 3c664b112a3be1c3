package klap.regress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.RandomAccessFile;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;
import org.apache.commons.io.FileUtils;
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

    /**
     * The clearing of an earlier work folder stops at links (the user's data behind a link into the
     * work folder is kept), and the copy of a benchmark leaves out files over {@link
     * Prepare#MAX_COPY_BYTES} (build outputs) but keeps the rest of its folder tree; a link to a
     * file is copied as the file (as testcases/np/common/bench_b.cuh, whose relative link would
     * dangle in the copy: the CUDA-NP compile tier failed so on 2026-11-28), a link to a folder
     * above it is left out (no endless copy).
     */
    @Test
    void clearingKeepsWhatLinksPointAtAndCopyingSkipsLargeFiles(@TempDir Path dir) throws Exception {
        Path bench = dir.resolve("bench");
        FileUtils.copyDirectory(FIXTURE.toFile(), bench.toFile());
        Files.createDirectories(bench.resolve("tiny/data"));
        Files.writeString(bench.resolve("tiny/data/small.txt"), "input");
        try (RandomAccessFile big = new RandomAccessFile(bench.resolve("tiny/data/big.bin").toFile(), "rw")) {
            big.setLength(Prepare.MAX_COPY_BYTES + 1);
        }
        Files.writeString(dir.resolve("shared.cuh"), "// shared\n");
        Files.createSymbolicLink(bench.resolve("tiny/data/shared.cuh"), Path.of("../../../shared.cuh"));
        Files.createSymbolicLink(bench.resolve("tiny/data/up"), Path.of(".."));
        Path work = dir.resolve("work");
        PrintWriter quiet = new PrintWriter(new StringWriter());
        Prepare.prepare(bench, work, Benchmark.discover(bench), List.of(Variant.CDP), quiet);
        assertEquals("input", Files.readString(work.resolve("src/tiny/data/small.txt")));
        assertFalse(Files.exists(work.resolve("src/tiny/data/big.bin")), "a file over MAX_COPY_BYTES is copied");
        assertFalse(Files.isSymbolicLink(work.resolve("src/tiny/data/shared.cuh")), "a link to a file is copied as a link");
        assertEquals("// shared\n", Files.readString(work.resolve("src/tiny/data/shared.cuh")));
        assertFalse(Files.exists(work.resolve("src/tiny/data/up"), LinkOption.NOFOLLOW_LINKS));

        Path data = dir.resolve("data");
        Files.createDirectories(data);
        Files.writeString(data.resolve("precious.txt"), "keep");
        Files.createSymbolicLink(work.resolve("link"), data);
        Files.createSymbolicLink(work.resolve("src/tiny/link"), data);
        Prepare.prepare(bench, work, Benchmark.discover(bench), List.of(Variant.CDP), quiet);
        assertFalse(Files.exists(work.resolve("link"), LinkOption.NOFOLLOW_LINKS));
        assertFalse(Files.exists(work.resolve("src/tiny/link"), LinkOption.NOFOLLOW_LINKS));
        assertEquals("keep", Files.readString(data.resolve("precious.txt")), "clearing followed a link");
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
