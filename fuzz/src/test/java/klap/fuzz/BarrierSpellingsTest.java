package klap.fuzz;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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

    private static final Pattern DIAG = Pattern.compile("^\\S+?(?::(\\d+):\\d+)?: (error|warning|note): .*?(\\[klap-[a-z-]+\\])$",
        Pattern.MULTILINE);

    /** @return klap's diagnostics as "line severity id" (columns move with the spelling), and the summary line's text */
    private String plan(String name, String src, String granularity) throws IOException {
        Path in = dir.resolve(name);
        Files.writeString(in, src);
        Cli.Run r = Cli.klap("--granularity=" + granularity, in.toString(), "-o", dir.resolve(name + ".out.cu").toString());
        assertEquals(0, r.rc(), r.toString());
        StringBuilder sb = new StringBuilder();
        Matcher m = DIAG.matcher(r.err());
        while (m.find()) {
            sb.append(m.group(1)).append(' ').append(m.group(2)).append(' ').append(m.group(3)).append('\n');
        }
        r.err().lines().filter(l -> l.endsWith("[klap-summary]")).forEach(l -> sb.append(l.substring(l.indexOf("note:"))));
        return sb.toString();
    }

    @Test
    void everySpellingIsPlannedAsThePlainBarrier() throws IOException {
        Set<String> spellings = new HashSet<>();
        for (long seed = 55000001; seed <= 55000012; seed++) {
            String src = ProgramGenerator.generate(seed, EnumSet.of(Shape.BARRIER_SPELLINGS)).source();
            String plain = plain(src);
            assertNotEquals(src, plain, "seed " + seed + " spells no barrier otherwise");
            Matcher f = Pattern.compile("barrier-spelling:([a-z-]+)").matcher(src);
            while (f.find()) {
                spellings.add(f.group(1));
            }
            for (String g : List.of("warp", "block", "kernel")) {
                assertEquals(plan("plain.cu", plain, g), plan("spelled.cu", src, g), "seed " + seed + " at " + g);
            }
        }
        // the seeds cover the macro forms the fix is about, and most of the others
        assertTrue(spellings.containsAll(Set.of("asm-macro", "asm-do-macro", "asm-macro-warp")), spellings.toString());
        assertTrue(spellings.size() >= 6, spellings.toString());
    }
}
