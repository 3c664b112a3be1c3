package klap.fuzz;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Shape#BARRIER_SPELLINGS}: a barrier spelled through a macro around {@code asm}, through
 * cooperative groups or another intrinsic means what {@code __syncthreads()} ({@code __syncwarp()})
 * means, so klap must plan the program exactly as the same program with the plain barrier: the same
 * diagnostics (line, severity, id) and the same summary, at every granularity. Before 2026-11-28 the
 * {@code asm} macro forms were no synchronization site and their launches were aggregated per block
 * and per grid after a guarded return (issue 10's hang).
 */
class BarrierSpellingsTest {
    @TempDir
    Path dir;

    static final List<ProgramGenerator.BarrierSpelling> SPELLINGS = Stream.concat(
        ProgramGenerator.BLOCK_BARRIERS.stream(), ProgramGenerator.WARP_BARRIERS.stream()).toList();

    /** @return {@code src} with every spelled barrier replaced by the plain one it means ({@code #define} lines kept) */
    static String plain(String src) {
        return src.lines().map(l -> {
            if (l.startsWith("#define")) {
                return l;
            }
            for (ProgramGenerator.BarrierSpelling sp : SPELLINGS) {
                l = l.replace(sp.text(), sp.plain());
            }
            return l;
        }).collect(Collectors.joining("\n", "", "\n"));
    }

    @Test
    void everySpellingIsPlannedAsThePlainBarrier() throws IOException {
        Set<String> spellings = SamePlan.check(dir, 55000001, 55000012, Shape.BARRIER_SPELLINGS,
                BarrierSpellingsTest::plain, "barrier-spelling", (plan, what) -> { });
        // the seeds cover the macro forms the fix is about, and most of the others
        assertTrue(spellings.containsAll(Set.of("asm-macro", "asm-do-macro", "asm-macro-warp")), spellings.toString());
        assertTrue(spellings.size() >= 6, spellings.toString());
    }
}
