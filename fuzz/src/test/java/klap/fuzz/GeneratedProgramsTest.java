package klap.fuzz;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import klap.transform.Granularity;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Transforms a few hundred generated CDP programs at every granularity through the real CLI
 * (issue 6, "a generator of random small CDP programs"). Each run must either transform the program
 * (exit 0, the aggregated variant present when the program has device launches) or refuse it with a
 * diagnostic (exit 1, {@code error: ... [klap-...]} on stderr); never crash, never write the input.
 */
class GeneratedProgramsTest {
    /** the name of an aggregated child variant: child_klap_agg_vu (warp, block), child_klap_kagg_vu (kernel) */
    static final java.util.regex.Pattern AGGREGATED = java.util.regex.Pattern.compile("_klap_k?agg\\b|_klap_k?agg_");
    /** number of seeds; override with -Dklap.fuzz.seeds=N */
    static final int SEEDS = Integer.getInteger("klap.fuzz.seeds", 300);

    @TempDir
    Path dir;

    @Test
    void generatorIsDeterministicAndVaried() {
        assertEquals(ProgramGenerator.generate(7).source(), ProgramGenerator.generate(7).source());
        assertNotEquals(ProgramGenerator.generate(7).source(), ProgramGenerator.generate(8).source());
        // over the seeds used below, every feature the generator knows appears
        StringBuilder all = new StringBuilder();
        for (long s = 1; s <= SEEDS; s++) {
            all.append(ProgramGenerator.generate(s).summary()).append(' ');
        }
        for (String f : List.of("if-uniform", "if-divergent", "loop-uniform", "loop-divergent", "guard-return",
                "nested-return", "switch", "continue", "stream:cudaStreamFireAndForget", "stream:0", "+shared",
                "+dynshared", "+sync", "+helper", "+recursive", "launch-in-device-function", "helpers=")) {
            assertTrue(all.indexOf(f) >= 0, "no generated program has " + f);
        }
    }

    @Test
    void everyProgramIsTransformedOrRefusedWithADiagnosticAtEveryGranularity() throws IOException {
        long t0 = System.nanoTime();
        List<String> problems = new ArrayList<>();
        int transformed = 0;
        int refused = 0;
        for (long s = 1; s <= SEEDS; s++) {
            ProgramGenerator.Program p = ProgramGenerator.generate(s);
            Path in = dir.resolve(p.fileName());
            Files.writeString(in, p.source());
            String before = Cli.sha256(in);
            for (Granularity g : Granularity.values()) {
                Cli.Run r = Cli.klap("--granularity=" + g.cliName(), "-q", in.toString());
                String where = p.fileName() + " --granularity=" + g.cliName() + ": ";
                if (r.crashed()) {
                    problems.add(where + "crashed: " + r);
                } else if (r.rc() == 0) {
                    transformed++;
                    if (p.deviceLaunchSites() > 0 && !AGGREGATED.matcher(r.out()).find()) {
                        problems.add(where + "exit 0 but no aggregated variant in the output");
                    }
                } else if (r.rc() == 1) {
                    refused++;
                    if (!r.err().matches("(?s).*: error: .*\\[klap-[a-z0-9-]+\\].*")) {
                        problems.add(where + "exit 1 without an error diagnostic: " + r);
                    }
                } else {
                    problems.add(where + "unexpected exit code: " + r);
                }
            }
            if (!before.equals(Cli.sha256(in))) {
                problems.add(p.fileName() + ": the input file was modified");
            }
        }
        System.out.println("[fuzz] " + SEEDS + " programs x " + Granularity.values().length + " granularities: "
                + transformed + " transformed, " + refused + " refused, " + (System.nanoTime() - t0) / 1_000_000 + " ms");
        assertTrue(problems.isEmpty(), problems.size() + " problems:\n" + String.join("\n", problems));
    }
}
