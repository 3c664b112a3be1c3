package klap.regress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The result line of the benchmark programs (testcases/bench/common/bench_a.cuh and
 * bench_b.cuh), compiled with the real nvcc into a host-only program (no GPU needed): the first
 * repetition and the median of the others are printed apart, after time_ms and launches.
 */
class BenchHeaderTest {
    static final Path BENCH = Path.of("../testcases/bench").toAbsolutePath().normalize();

    @Test
    void passLinesGiveTheFirstRepetitionAndTheWarmMedian(@TempDir Path dir) throws Exception {
        Path src = dir.resolve("t.cu");
        Files.writeString(src, """
                #include "common/bench_a.cuh"
                #include "common/bench_b.cuh"
                int main() {
                    ba::g_name = "ta";
                    ba::report(true, std::vector<float>{9.0f, 2.0f, 4.0f, 3.0f, 1.0f}, nullptr, 42);
                    ba::report(true, std::vector<float>{5.5f}, nullptr);
                    ba::report(true, std::vector<float>{7.0f, 1.0f, 3.0f}, nullptr);
                    bb::g_name = "tb";
                    bb::report(true, std::vector<float>{9.0f, 2.0f, 4.0f, 3.0f, 1.0f}, nullptr);
                    bb::report(true, std::vector<float>{6.0f}, nullptr);
                    return bb::report(false, std::vector<float>{1.0f}, "wrong");
                }
                """, StandardCharsets.UTF_8);
        Path exe = dir.resolve("t");
        Process nvcc = new ProcessBuilder("nvcc", "-std=c++17", "-I", BENCH.toString(), "-o", exe.toString(),
                src.toString()).redirectErrorStream(true).start();
        String log = new String(nvcc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(nvcc.waitFor(300, TimeUnit.SECONDS), "nvcc hung");
        assertEquals(0, nvcc.exitValue(), log);
        Process run = new ProcessBuilder(exe.toString()).redirectErrorStream(true).start();
        List<String> lines = new String(run.getInputStream().readAllBytes(), StandardCharsets.UTF_8).lines().toList();
        assertEquals(1, run.waitFor(), "a failing report exits 1");
        assertEquals(List.of(
                // time_ms: median of all 5 (3); first 9; warm: median of 2 4 3 1 = (2 + 3) / 2
                "PASS ta time_ms=3.000 launches=42 first_ms=9.000 warm_ms=2.500 reps=5",
                "PASS ta time_ms=5.500 first_ms=5.500 reps=1",
                "PASS ta time_ms=3.000 first_ms=7.000 warm_ms=2.000 reps=3",
                "PASS tb time_ms=3.000 first_ms=9.000 warm_ms=2.500 reps=5",
                "PASS tb time_ms=6.000 first_ms=6.000 reps=1",
                "FAIL tb: wrong"), lines);
    }
}
