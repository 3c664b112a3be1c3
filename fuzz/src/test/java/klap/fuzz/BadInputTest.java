package klap.fuzz;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Bad input of every kind through the real CLI (issue 6): a diagnostic and a non-zero exit, never a
 * stack trace; the input never modified; no output and no temporary file left when klap fails; an
 * existing output file left as it was when klap fails. Documented in docs/robustness.md.
 */
class BadInputTest {
    @TempDir
    Path dir;

    /** Runs klap on {@code bytes} written to {@code name}, checks the invariants, returns the run. */
    private Cli.Run run(String name, byte[] bytes) throws IOException {
        Path in = dir.resolve(name);
        Files.write(in, bytes);
        Path outDir = dir.resolve("out");
        Path out = outDir.resolve(name + ".klap.cu");
        Files.deleteIfExists(out);
        Cli.Run r = Cli.klap(in.toString(), "-o", out.toString());
        assertFalse(r.crashed(), r.toString());
        assertEquals(Cli.sha256Of(bytes), Cli.sha256(in), "the input was modified");
        Cli.assertNoTempFiles(outDir);
        Cli.assertNoTempFiles(dir);
        assertEquals(r.rc() == 0, Files.exists(out), "output must exist exactly when klap succeeds: " + r);
        return r;
    }

    private Cli.Run run(String name, String text) throws IOException {
        return run(name, text.getBytes(StandardCharsets.UTF_8));
    }

    private void assertError(Cli.Run r, String name, String lineCol, String id) {
        assertEquals(1, r.rc(), r.toString());
        String prefix = dir.resolve(name) + (lineCol.isEmpty() ? "" : ":" + lineCol) + ": error: ";
        assertTrue(r.err().lines().anyMatch(l -> l.startsWith(prefix) && l.endsWith("[klap-" + id + "]")),
                "expected '" + prefix + "... [klap-" + id + "]' in:\n" + r.err());
    }

    static final String GOOD = """
            __global__ void child(int* p) { p[threadIdx.x] = 1; }
            __global__ void parent(int* p) { child<<<1, 32>>>(p + 32 * threadIdx.x); }
            """;

    @Test
    void syntaxError() throws IOException {
        Cli.Run r = run("syntax.cu", """
                __global__ void child(int* p) { p[threadIdx.x] = 1 }
                __global__ void parent(int* p) { child<<<1, 32>>>(p + threadIdx.x); }
                """);
        assertError(r, "syntax.cu", "1:50", "parse");
    }

    @Test
    void unbalancedBraces() throws IOException {
        assertError(run("unbalanced.cu", GOOD + "__global__ void k(int* p) {\n  p[0] = 1;\n"), "unbalanced.cu", "4:3", "parse");
    }

    /** Found by mutating the shape fixtures: `<<<` with nothing before it crashed the launch-site reader. */
    @Test
    void launchWithoutAKernel() throws IOException {
        String text = "__global__ void child(int* p) { p[threadIdx.x] = 1; }\n"
                + "__global__ void parent(int* p) {<<<1, 32>>>(p);}\n"
                + "__global__ void parent2(int* p) {\n  if (p) \\\n<<<1, 32>>>(p);\n}\n";
        Cli.Run r = run("nokernel.cu", text);
        assertError(r, "nokernel.cu", "2:33", "parse");
        assertError(r, "nokernel.cu", "5:1", "parse");
    }

    @Test
    void missingQuoteInclude() throws IOException {
        assertError(run("missing_inc.cu", "#include \"nothere.cuh\"\n" + GOOD), "missing_inc.cu", "1:1", "missing-include");
    }

    /** System headers are not read (klap knows the CUDA declarations it needs): a missing one is nvcc's business. */
    @Test
    void missingAngleIncludeIsNotAnError() throws IOException {
        Cli.Run r = run("angle.cu", "#include <nothere.h>\n" + GOOD);
        assertEquals(0, r.rc(), r.toString());
    }

    @Test
    void notUtf8() throws IOException {
        byte[] latin1 = "__global__ void k(int* p) { p[0] = 1; } // caf\u00e9\n".getBytes(StandardCharsets.ISO_8859_1);
        assertError(run("latin1.cu", latin1), "latin1.cu", "1:1", "encoding");
    }

    @Test
    void pngFile() throws IOException {
        byte[] png = {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R', 0, 0, 1, 0};
        assertError(run("image.cu", png), "image.cu", "1:1", "encoding");
    }

    @Test
    void pythonSource() throws IOException {
        assertError(run("script.cu", "def f(x):\n    return x + 1\nprint(f(2))\n"), "script.cu", "1:1", "parse");
    }

    @Test
    void nulBytes() throws IOException {
        assertError(run("nul.cu", GOOD + "\0\0\0\n"), "nul.cu", "3:1", "parse");
    }

    @Test
    void emptyAndBlankFiles() throws IOException {
        assertError(run("empty.cu", new byte[0]), "empty.cu", "1:1", "empty");
        assertError(run("blank.cu", "  \n\n\t\n"), "blank.cu", "1:1", "empty");
    }

    /** A file without kernels is valid CUDA: copied unchanged. */
    @Test
    void commentOnlyFileIsCopied() throws IOException {
        Cli.Run r = run("comment.cu", "// nothing here\n");
        assertEquals(0, r.rc(), r.toString());
        assertEquals("// nothing here\n", Files.readString(dir.resolve("out/comment.cu.klap.cu")));
    }

    @Test
    void missingFileAndDirectory() throws IOException {
        Cli.Run r = Cli.klap(dir.resolve("nope.cu").toString());
        assertEquals(1, r.rc(), r.toString());
        assertTrue(r.err().contains("nope.cu: error: no such file [klap-io]"), r.err());
        Path d = Files.createDirectories(dir.resolve("adir.cu"));
        Cli.Run r2 = Cli.klap(d.toString());
        assertEquals(1, r2.rc(), r2.toString());
        assertTrue(r2.err().contains("[klap-io]"), r2.err());
    }

    @Test
    void outputIsTheInput() throws IOException {
        Path in = dir.resolve("same.cu");
        Files.writeString(in, GOOD);
        Cli.Run r = Cli.klap(in.toString(), "-o", in.toString());
        assertEquals(2, r.rc(), r.toString());
        assertTrue(r.err().contains("[klap-io]"), r.err());
        assertEquals(GOOD, Files.readString(in));
    }

    @Test
    void outputCannotBeWritten() throws IOException {
        Path in = dir.resolve("good.cu");
        Files.writeString(in, GOOD);
        Path aFile = Files.writeString(dir.resolve("plainfile"), "x");
        Cli.Run r = Cli.klap(in.toString(), "-o", aFile.resolve("out.cu").toString());
        assertEquals(1, r.rc(), r.toString());
        assertTrue(r.err().contains(": error: cannot write: ") && r.err().contains("[klap-io]"), r.err());
        assertFalse(r.crashed(), r.toString());
    }

    /** A failed run leaves an existing output file as it was (nothing is written before success). */
    @Test
    void failedRunKeepsAnExistingOutput() throws IOException {
        Path in = dir.resolve("bad.cu");
        Files.writeString(in, "__global__ void k( {\n");
        Path out = Files.writeString(dir.resolve("bad.klap.cu"), "previous output\n");
        Cli.Run r = Cli.klap(in.toString(), "-o", out.toString());
        assertEquals(1, r.rc(), r.toString());
        assertEquals("previous output\n", Files.readString(out));
        Cli.assertNoTempFiles(dir);
    }

    /** 20,000 nested parentheses or 5,000 nested ifs: if a stack overflows, klap says the input nests too deeply. */
    @Test
    void deeplyNestedInput() throws IOException {
        String parens = "(".repeat(20000) + "1" + ")".repeat(20000);
        Cli.Run r = run("deep.cu", "__global__ void child(int* p) { p[threadIdx.x] = " + parens + "; }\n"
                + "__global__ void parent(int* p) { child<<<1, 32>>>(p + threadIdx.x); }\n");
        assertNotEquals(2, r.rc());
        if (r.rc() == 1) {
            assertTrue(r.err().contains("[klap-nesting]"), "deep nesting says so: " + r);
        }
        String ifs = "if (threadIdx.x > 1) {\n".repeat(5000) + "child<<<1, 32>>>(p + threadIdx.x);\n" + "}\n".repeat(5000);
        Cli.Run r2 = run("deepif.cu", GOOD + "__global__ void parent2(int* p) {\n" + ifs + "}\n");
        assertNotEquals(2, r2.rc());
        if (r2.rc() == 1) {
            assertTrue(r2.err().contains("[klap-nesting]"), "deep nesting says so: " + r2);
        }
        System.out.println("[robustness] 20000 nested parentheses: exit " + r.rc() + "; 5000 nested ifs: exit " + r2.rc()
                + (r2.rc() == 1 ? " (" + r2.err().lines().findFirst().orElse("") + ")" : ""));
    }

    /** One 2.6 MB line. */
    @Test
    void veryLongLine() throws IOException {
        Cli.Run r = run("longline.cu", "__global__ void child(int* p) { p[threadIdx.x] = 1; }\n"
                + "__global__ void parent(int* p) { " + "p[0] += 1; ".repeat(240_000) + "child<<<1, 32>>>(p + threadIdx.x); }\n");
        assertEquals(0, r.rc(), r.toString());
    }

    /**
     * A large generated file, like bench's LargeInput: transformed, time and heap printed. 25 000
     * lines (50 000 until 2026-11-30: the CI's 30 minutes; klap's speed on large inputs is measured by
     * the bench module's JMH benchmark, not here).
     */
    @Test
    void enormousFile() throws IOException {
        String src = Large.program(25_000);
        long lines = src.lines().count();
        Runtime rt = Runtime.getRuntime();
        System.gc();
        long heapBefore = rt.totalMemory() - rt.freeMemory();
        long t0 = System.nanoTime();
        Cli.Run r = run("enormous.cu", src);
        long ms = (System.nanoTime() - t0) / 1_000_000;
        long heapAfter = rt.totalMemory() - rt.freeMemory();
        assertEquals(0, r.rc(), r.toString());
        assertTrue(GeneratedProgramsTest.AGGREGATED.matcher(Files.readString(dir.resolve("out/enormous.cu.klap.cu"))).find());
        System.out.printf("[robustness] enormous file: %d lines, %.1f MB, transformed in %d ms (in-process, warm JVM, "
                + "max heap %d MB, heap in use after %d MB, before %d MB)%n", lines, src.length() / 1e6, ms,
                rt.maxMemory() >> 20, heapAfter >> 20, heapBefore >> 20);
    }

    /**
     * The same file with a 32 MB heap, as a separate JVM: klap must fail with its {@code [klap-memory]}
     * diagnostic (no Java stack trace), leave the input alone and write nothing.
     */
    @Test
    void outOfMemoryInASmallHeap() throws IOException, InterruptedException {
        Path in = dir.resolve("oom.cu");
        Files.writeString(in, Large.program(20_000));
        String before = Cli.sha256(in);
        Path out = dir.resolve("oom-out/oom.klap.cu");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(List.of(java, "-Xmx32m", "-cp", System.getProperty("java.class.path"),
                "klap.cli.Klap", in.toString(), "-o", out.toString()));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(5, TimeUnit.MINUTES));
        assertEquals(1, p.exitValue(), log);
        assertTrue(log.contains(in + ": error: out of memory while transforming this file") && log.contains("[klap-memory]"), log);
        assertFalse(log.contains("\tat ") || log.contains("Exception in thread"), log);
        assertEquals(before, Cli.sha256(in));
        assertFalse(Files.exists(out), "no output after a failure");
        Cli.assertNoTempFiles(out.getParent());
        System.out.println("[robustness] -Xmx32m on a " + Files.size(in) / 1000 + " kB file: exit " + p.exitValue()
                + ", first line: " + log.lines().findFirst().orElse(""));
    }
}
