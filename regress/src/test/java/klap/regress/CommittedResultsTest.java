package klap.regress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The committed report of the first GPU run (benchmarks/results/2026-11-22-nvidia-h100-80gb-hbm3.md
 * and .csv) is exactly what {@code regress --mode=report} makes from the committed raw files: it
 * was generated, not edited, and it is regenerated when the report's format changes.
 */
class CommittedResultsTest {
    static final Path RESULTS = Path.of("../benchmarks/results").toAbsolutePath().normalize();
    static final Path RAW = RESULTS.resolve("raw/2026-11-22-h100");

    @Test
    void theCommittedReportIsTheToolsOutput(@TempDir Path dir) throws Exception {
        StringWriter log = new StringWriter();
        int rc = Regress.run(new String[] {"--mode=report", "--raw", RAW.resolve("raw_reps11.csv").toString(),
            "--first-raw", RAW.resolve("raw_reps1.csv").toString(), "--out-dir", dir.toString()},
                new PrintWriter(log, true), new PrintWriter(log, true));
        assertEquals(0, rc, log.toString());
        for (String f : new String[] {"2026-11-22-nvidia-h100-80gb-hbm3.md", "2026-11-22-nvidia-h100-80gb-hbm3.csv"}) {
            assertEquals(Files.readString(RESULTS.resolve(f)), Files.readString(dir.resolve(f)),
                    f + " differs from the tool's output: regenerate it (see " + RAW.resolve("README.md") + ")");
        }
        for (String f : new String[] {"2026-11-22-nvidia-h100-80gb-hbm3.png", "2026-11-22-nvidia-h100-80gb-hbm3-first.png"}) {
            assertTrue(Files.size(RESULTS.resolve(f)) > 2000, f);
        }
    }
}
