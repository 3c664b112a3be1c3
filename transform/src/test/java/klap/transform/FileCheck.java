package klap.transform;

import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import klap.bridge.CudaParser;
import klap.model.CudaUnit;

/**
 * FileCheck-style assertions for the tests of the passes (after LLVM FileCheck), shared through
 * this module's test jar: the output must contain the given patterns in order. A pattern is
 * literal text in which a space matches any white space (also none) and {@code {{regex}}} embeds
 * a regular expression. (The aggregation tests keep their own, stricter {@code Check}: there a
 * space needs at least one white-space character.)
 */
public final class FileCheck {
    private FileCheck() {
    }

    /** @return {@code code} parsed as {@code test.cu}; fails the test if it does not parse */
    public static CudaUnit parse(String code) {
        CudaUnit u = CudaParser.parse(Path.of("test.cu"), code, List.of());
        if (u.hasErrors()) {
            fail("input does not parse: " + u.diagnostics());
        }
        return u;
    }

    /** @return the regular expression of a check */
    public static Pattern pattern(String check) {
        StringBuilder re = new StringBuilder();
        int i = 0;
        while (i < check.length()) {
            int open = check.indexOf("{{", i);
            int end = open < 0 ? check.length() : open;
            for (String word : check.substring(i, end).split(" ", -1)) {
                re.append(word.isEmpty() ? "" : Pattern.quote(word)).append("\\s*");
            }
            if (open < 0) {
                break;
            }
            int close = check.indexOf("}}", open);
            re.append(check, open + 2, close);
            i = close + 2;
        }
        return Pattern.compile(re.toString(), Pattern.DOTALL);
    }

    /** Asserts that every pattern occurs in {@code out}, each after the previous one's match. */
    public static void inOrder(String out, String... checks) {
        int pos = 0;
        for (String c : checks) {
            var m = pattern(c).matcher(out);
            if (!m.find(pos)) {
                fail("CHECK not found after offset " + pos + ": " + c + "\n--- output ---\n" + out);
            }
            pos = m.end();
        }
    }
}
