package klap.aggregation;

import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import klap.bridge.CudaParser;
import klap.model.CudaUnit;
import klap.model.Diagnostic;
import klap.transform.Granularity;

/**
 * FileCheck-style helpers (after LLVM FileCheck): the output must contain the given patterns in
 * order; patterns are literal text in which {@code {{regex}}} embeds a regular expression.
 */
final class Check {
    private Check() {
    }

    /** @return {@code code} parsed as {@code test.cu}; fails the test if it does not parse */
    static CudaUnit parse(String code) {
        CudaUnit u = CudaParser.parse(Path.of("test.cu"), code, List.of());
        if (u.hasErrors()) {
            fail("input does not parse: " + u.diagnostics());
        }
        return u;
    }

    /** @return the pass run on {@code code} at granularity {@code g}, scalarizing */
    static AggregationPass.Result run(String code, Granularity g) {
        return AggregationPass.run(parse(code), new AggregationPass.Options(g, true, null));
    }

    /** @return the pass run on {@code code} at granularity {@code g} */
    static AggregationPass.Result run(String code, Granularity g, boolean scalarize) {
        return AggregationPass.run(parse(code), new AggregationPass.Options(g, scalarize, null));
    }

    /** @return the pattern of a check: literal text in which {@code {{regex}}} embeds a regular expression */
    static Pattern compile(String check) {
        StringBuilder re = new StringBuilder();
        int i = 0;
        while (i < check.length()) {
            int open = check.indexOf("{{", i);
            if (open < 0) {
                re.append(Pattern.quote(check.substring(i)));
                break;
            }
            int close = check.indexOf("}}", open);
            re.append(Pattern.quote(check.substring(i, open))).append(check, open + 2, close);
            i = close + 2;
        }
        return Pattern.compile(re.toString().replace("\\Q \\E", "\\s+"), Pattern.DOTALL);
    }

    /** Asserts that every pattern occurs in {@code out}, each after the previous one's match. */
    static void inOrder(String out, String... checks) {
        int pos = 0;
        for (String c : checks) {
            var m = compile(c).matcher(out);
            if (!m.find(pos)) {
                fail("CHECK not found after offset " + pos + ": " + c + "\n--- output ---\n" + out);
            }
            pos = m.end();
        }
    }

    /** Asserts that no pattern occurs in {@code out}. */
    static void none(String out, String... checks) {
        for (String c : checks) {
            if (compile(c).matcher(out).find()) {
                fail("CHECK-NOT found: " + c + "\n--- output ---\n" + out);
            }
        }
    }

    /** @return true if {@code r} has a diagnostic of severity {@code s} and id {@code id} */
    static boolean hasDiag(AggregationPass.Result r, Diagnostic.Severity s, String id) {
        return r.diagnostics().stream().anyMatch(d -> d.severity() == s && d.id().equals(id));
    }

    /** @return how many times {@code what} occurs in {@code text} (not overlapping) */
    static int count(String text, String what) {
        int n = 0;
        for (int at = text.indexOf(what); at >= 0; at = text.indexOf(what, at + what.length())) {
            n++;
        }
        return n;
    }
}
