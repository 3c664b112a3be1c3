package klap.fuzz;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Mutants of the repository's CUDA inputs through the real CLI ({@link Mutate}, {@link Mutator}): every
 * run is accepted, or rejected with a {@code file:line:col: error:} diagnostic; none crashes, hangs,
 * fails silently or touches its input. The seeds are fixed (a regression set); campaigns on fresh
 * seeds run {@code klap.fuzz.Mutate} (fuzz README).
 */
class MutatedInputsTest {
    @TempDir
    Path dir;

    /** The shape fixtures and klap's own test programs: every construct the passes look for. */
    static final List<String> INPUTS = List.of("src/test/resources/shapes", "../testcases/src");

    private record Result(int rc, String out, String report) {
        long count(Mutate.Outcome o) {
            return report.lines().filter(l -> l.split("\t")[2].equals(o.name())).count();
        }
    }

    private Result mutate(int count, long first, boolean statements) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        String[] args = Stream.concat(Stream.of(dir.toString(), Integer.toString(count), Long.toString(first)),
            Stream.concat(statements ? Stream.of("--statements") : Stream.empty(), INPUTS.stream())).toArray(String[]::new);
        int rc = Mutate.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
        String report = Files.readString(dir.resolve("report.tsv"));
        return new Result(rc, out.toString(StandardCharsets.UTF_8) + err.toString(StandardCharsets.UTF_8),
            report.substring(report.indexOf('\n') + 1));
    }

    @Test
    void tokenMutantsAreRejectedWithADiagnosticOrTransformed() throws IOException {
        Result r = mutate(300, 1, false);
        assertEquals(0, r.rc(), r.out());
        assertEquals(300, r.report().lines().count());
        // the mutants reach both sides: a run that only rejected (or only accepted) would test little
        assertTrue(r.count(Mutate.Outcome.ACCEPTED) >= 15, r.out());
        assertTrue(r.count(Mutate.Outcome.REJECTED) >= 150, r.out());
    }

    @Test
    void statementMutantsAreMostlyAcceptedAndKeptForNvcc() throws IOException {
        Result r = mutate(40, 1, true);
        assertEquals(0, r.rc(), r.out());
        assertTrue(r.count(Mutate.Outcome.ACCEPTED) >= 25, r.out());
        try (Stream<Path> s = Files.list(dir)) {
            List<Path> kept = s.filter(p -> p.getFileName().toString().startsWith("mu_")).toList();
            assertTrue(kept.size() >= 10, "kept " + kept);
            for (Path k : kept) {
                assertNotEquals(Files.readString(k.resolve("in.cu")), Files.readString(k.resolve("out.cu")));
                assertTrue(Files.readString(k.resolve("incs")).startsWith("-I "), k.toString());
            }
        }
        assertTrue(Files.isExecutable(dir.resolve("compile.sh")));
    }

    /** The alarm itself: each defect is told from a diagnostic, and bad arguments are a usage error. */
    @Test
    void defectsAreToldFromDiagnostics() throws IOException {
        String diag = "in.cu:3:7: error: syntax error near 'x' [klap-parse]\n";
        assertEquals(Mutate.Outcome.ACCEPTED, Mutate.classify(0, "", true, true));
        assertEquals(Mutate.Outcome.ACCEPTED, Mutate.classify(0, "in.cu:2:1: warning: left as written [klap-x]\n", true, true));
        assertEquals(Mutate.Outcome.REJECTED, Mutate.classify(1, diag, true, false));
        assertEquals(Mutate.Outcome.CRASH, Mutate.classify(1, diag
            + "in.cu:1:1: error: internal parser failure: java.lang.StringIndexOutOfBoundsException: begin 3 [klap-parse]\n",
            true, false));
        assertEquals(Mutate.Outcome.CRASH, Mutate.classify(1, "klap: internal error: java.lang.NullPointerException\n", true, false));
        assertEquals(Mutate.Outcome.SILENT, Mutate.classify(1, "", true, false));
        assertEquals(Mutate.Outcome.SILENT, Mutate.classify(1, "in.cu:3:7: warning: odd [klap-x]\n", true, false));
        assertEquals(Mutate.Outcome.SILENT, Mutate.classify(0, "", true, false));
        assertEquals(Mutate.Outcome.INPUT_MODIFIED, Mutate.classify(0, "", false, true));
        PrintStream quiet = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
        assertEquals(2, Mutate.run(new String[] {dir.toString(), "3"}, quiet, quiet));
        assertEquals(2, Mutate.run(new String[] {dir.toString(), "3", "1", dir.resolve("none").toString()}, quiet, quiet));
        assertEquals(2, Mutate.run(new String[] {dir.toString(), "three", "1", "src/test/resources/shapes"}, quiet, quiet));
    }

    @Test
    void statementEndsSkipCommentsStringsAndDirectives() {
        String src = """
            #define M(x) { x; }
            // a; comment {
            __global__ void k(int* p) {
              const char* s = "a;b{";
              /* c; } */ p[0] = ';';
              for (int i = 0; i < 2; i++) { p[i] = i; }
            }
            """;
        List<Integer> ends = Mutator.statementEnds(src);
        StringBuilder marks = new StringBuilder();
        for (int e : ends) {
            marks.append(src.charAt(e - 1));
        }
        // the body's {, the declaration, the assignment, the for's { and its statement and }; not the
        // body's own } (after it is file scope), nor the for header's ;
        assertEquals("{;;{;}", marks.toString());
    }

    @Test
    void mutantsAreAFunctionOfTheSeed() {
        String src = "__global__ void k(int* p) {\n  p[0] = 1;\n  p[1] = 2;\n  if (p[2]) return;\n}\n";
        for (long seed = 1; seed <= 50; seed++) {
            Mutator.Mutant a = Mutator.tokens(src, new Random(seed));
            assertEquals(a, Mutator.tokens(src, new Random(seed)));
            assertTrue(!a.edits().isEmpty(), a.toString());
            Mutator.Mutant b = Mutator.statements(src, new Random(seed), "s");
            assertEquals(b, Mutator.statements(src, new Random(seed), "s"));
            assertEquals(b.text().equals(src), b.edits().isEmpty(), b.toString());
        }
        assertEquals("int x;", Mutator.statements("int x;", new Random(1), "s").text(), "no body: returned as it is");
    }
}
