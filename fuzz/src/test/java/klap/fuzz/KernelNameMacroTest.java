package klap.fuzz;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Shape#KERNEL_NAME_MACRO}: a launch {@code K<<<...>>>} whose kernel an object-like macro
 * names is the launch of the kernel the macro expands to, so klap must plan the program exactly as
 * the same program with the expansions written out: the same diagnostics (line, severity, id) and
 * summary, at every granularity, with every launch aggregated. Before 2026-11-28 klap took the
 * macro's name for the kernel's and left each such launch ("child kernel 'FZ_KN0_K' is not defined").
 */
class KernelNameMacroTest {
    @TempDir
    Path dir;

    private static final Pattern DEFINE = Pattern.compile("(?m)^#define (FZ_KN\\d+_[A-Z]) (.+)$");

    /** @return {@code src} with every launch through an {@code FZ_KN*} macro written with the kernel it names */
    static String plain(String src) {
        Map<String, String> defs = new LinkedHashMap<>();
        Matcher d = DEFINE.matcher(src);
        while (d.find()) {
            defs.put(d.group(1), d.group(2).strip());
        }
        String out = src;
        for (String name : defs.keySet()) {
            String value = defs.get(name);
            while (defs.containsKey(value)) {
                value = defs.get(value);
            }
            out = out.replace(name + "<<<", value + "<<<").replace(name + " void ", value + " void ");
        }
        return out;
    }

    private static String readOutput(Path p) {
        try {
            return java.nio.file.Files.readString(p);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    void aLaunchThroughAMacroIsPlannedAsTheLaunchWrittenOut() throws IOException {
        Set<String> forms = SamePlan.check(dir, 58000001, 58000010, Shape.KERNEL_NAME_MACRO, KernelNameMacroTest::plain,
                "kernel-name-macro", (plan, what) -> {
                    assertTrue(plan.contains("launch site") && !plan.contains("left as written")
                            && !plan.contains("not aggregated"), what + ": " + plan);
                    // a kernel whose __global__ a macro writes gets klap's launch bounds before its name
                    String out = readOutput(dir.resolve("other.cu.out.cu"));
                    Matcher g = Pattern.compile("(FZ_KN\\d+_G) void (?!__launch_bounds__)(\\w+)\\(").matcher(out);
                    while (g.find()) {
                        assertTrue(out.contains(g.group(1) + " void __launch_bounds__(1024) " + g.group(2) + "_klap_")
                                || out.contains(g.group(1) + " void __launch_bounds__(1024) " + g.group(2) + "("),
                                what + ": " + g.group(2) + " and its forms are not bounded");
                    }
                });
        assertTrue(forms.containsAll(Set.of("plain", "template", "template:chain", "plain:chain", "global-macro")),
                forms.toString());
    }
}
