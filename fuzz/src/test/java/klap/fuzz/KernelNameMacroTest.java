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
            out = out.replace(name + "<<<", value + "<<<");
        }
        return out;
    }

    @Test
    void aLaunchThroughAMacroIsPlannedAsTheLaunchWrittenOut() throws IOException {
        Set<String> forms = SamePlan.check(dir, 58000001, 58000010, Shape.KERNEL_NAME_MACRO, KernelNameMacroTest::plain,
                "kernel-name-macro", (plan, what) -> assertTrue(plan.contains("launch site")
                        && !plan.contains("left as written") && !plan.contains("not aggregated"), what + ": " + plan));
        assertTrue(forms.containsAll(Set.of("plain", "template", "template:chain", "plain:chain")), forms.toString());
    }
}
