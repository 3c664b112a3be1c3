package klap.fuzz;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Metamorphic checks of the fuzz shapes that write one construct another way (a barrier spelled
 * through a macro, a kernel named by one): klap must plan the program exactly as the program with
 * the construct written plainly.
 */
final class SamePlan {
    private SamePlan() {}

    private static final Pattern DIAG = Pattern.compile("^\\S+?(?::(\\d+):\\d+)?: (error|warning|note): .*?(\\[klap-[a-z-]+\\])$",
        Pattern.MULTILINE);

    /**
     * @return klap's diagnostics for {@code src} (written to {@code dir/name}) as "line severity id"
     *         (columns move with the spelling), and the summary line's text
     */
    static String plan(Path dir, String name, String src, String granularity) throws IOException {
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

    /**
     * For each seed of {@code [first, last]}, the program of {@code shape} alone and {@code
     * plain} of it must differ and be planned alike at warp, block and kernel granularity; {@code
     * check} also gets each plan (and "seed S at G").
     *
     * @return the values of the program's {@code feature:} entries ({@code feature:VALUE} in its
     *         Features line), over all seeds
     */
    static Set<String> check(Path dir, long first, long last, Shape shape, UnaryOperator<String> plain, String feature,
            BiConsumer<String, String> check) throws IOException {
        Set<String> seen = new HashSet<>();
        for (long seed = first; seed <= last; seed++) {
            String src = ProgramGenerator.generate(seed, EnumSet.of(shape)).source();
            String written = plain.apply(src);
            assertNotEquals(src, written, "seed " + seed + " writes nothing another way");
            Matcher f = Pattern.compile(Pattern.quote(feature) + ":([a-z:-]+)").matcher(src);
            while (f.find()) {
                seen.add(f.group(1));
            }
            for (String g : List.of("warp", "block", "kernel")) {
                String other = plan(dir, "other.cu", src, g);
                assertEquals(plan(dir, "plain.cu", written, g), other, "seed " + seed + " at " + g);
                check.accept(other, "seed " + seed + " at " + g);
            }
        }
        return seen;
    }
}
