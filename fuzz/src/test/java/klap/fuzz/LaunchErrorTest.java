package klap.fuzz;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Shape#LAUNCH_ERROR}: a launch whose block some threads make one no device accepts, the
 * program's own {@code cudaGetLastError()} check and a fallback launch when it was refused. Whether
 * a configuration is refused is known only when the program runs, so klap must plan the program
 * exactly as the same program whose launches are all valid (every launch aggregated, the check kept
 * where the program wrote it); the refused thread's error is the runtime's job
 * ({@code klap::raise_config_error}, {@code runtime-lib/src/test/cuda/test_invalid_config.cu}).
 * Until 2026-11-28 the runtime cleared that error (H200: the review reproducer C_launch_err).
 */
class LaunchErrorTest {
    @TempDir
    Path dir;

    /** @return {@code src} with the refused configurations replaced by a valid one */
    static String valid(String src) {
        return src.replace("dim3(1280)", "dim3(16)").replace("dim3(2, 2, 65)", "dim3(2, 2, 4)");
    }

    @Test
    void aLaunchThatMayBeRefusedIsPlannedAsAValidOneAndItsCheckStays() throws IOException {
        Set<String> forms = SamePlan.check(dir, 59100001, 59100012, Shape.LAUNCH_ERROR, LaunchErrorTest::valid,
                "launch-error", (plan, what) -> {
                    assertTrue(plan.contains("launch site") && !plan.contains("left as written")
                            && !plan.contains("not aggregated"), what + ": " + plan);
                    try {
                        String out = Files.readString(dir.resolve("other.cu.out.cu"));
                        String in = Files.readString(dir.resolve("other.cu"));
                        // (at kernel granularity the kernel as written stays beside its twin: twice)
                        long checks = in.lines().filter(l -> l.contains("= cudaGetLastError();")).count();
                        assertTrue(checks > 0 && out.lines().filter(l -> l.contains("= cudaGetLastError();")).count() >= checks,
                                what + ": a check of the program is gone");
                    } catch (IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                });
        Set<String> parts = forms.stream().flatMap(f -> java.util.Arrays.stream(f.split(":"))).collect(Collectors.toSet());
        assertTrue(parts.containsAll(Set.of("wide", "deep", "peek", "loop", "fire-and-forget")), forms.toString());
    }
}
