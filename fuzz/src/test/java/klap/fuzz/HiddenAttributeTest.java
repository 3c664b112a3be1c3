package klap.fuzz;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Shape#HIDDEN_ATTRIBUTE}: a child launched by some threads with 64 KiB of dynamic shared
 * memory, whose limit {@code main} raises through a {@code const void*} variable (one file) or in
 * main.cu (two files). klap cannot give the attribute to the child's aggregated forms; the device
 * refuses their launches at run time and the runtime launches the children as written
 * ({@code aggregate.cuh} flush, {@code kernel.cuh} kfinish; {@code test_refused_launch}). So klap
 * must plan the program exactly as the same program without the attribute calls (every launch
 * aggregated), and, in a one-file program, note each call that names no kernel it can resolve.
 */
class HiddenAttributeTest {
    @TempDir
    Path dir;

    /** The attribute call of a one-file program, through its variable. */
    private static final Pattern HIDDEN = Pattern.compile(
            "  \\{\\n    const void\\* fz_hk = \\(const void\\*\\)fz_hac\\d+;\\n    FZ_CHECK\\(cudaFuncSetAttribute\\(fz_hk, "
                    + "cudaFuncAttributeMaxDynamicSharedMemorySize, 64 \\* 1024\\)\\);\\n  \\}\\n");

    @Test
    void aChildWhoseLimitIsRaisedOutOfSightIsPlannedAsAnyOtherAndTheCallIsNoted() throws IOException {
        Set<String> forms = new HashSet<>();
        for (long seed = 62100001; seed <= 62100016; seed++) {
            String src = ProgramGenerator.generate(seed, EnumSet.of(Shape.HIDDEN_ATTRIBUTE)).source();
            Matcher f = Pattern.compile("hidden-attribute(:[a-z:-]+)?(?= |\\n)").matcher(src.lines().filter(
                    l -> l.startsWith("// Features:")).findFirst().orElse("") + "\n");
            while (f.find()) {
                forms.add(f.group(1) == null ? "" : f.group(1));
            }
            long calls = HIDDEN.matcher(src).results().count();  // one per kernel of the shape (1 or 2)
            assertTrue(calls > 0, "seed " + seed + ": no attribute call through a variable:\n" + src);
            String without = HIDDEN.matcher(src).replaceAll("");
            for (String g : List.of("warp", "block", "kernel")) {
                String plan = SamePlan.plan(dir, "hidden.cu", src, g);
                String what = "seed " + seed + " at " + g;
                assertEquals(calls, plan.lines().filter(l -> l.endsWith("note [klap-attribute-unresolved]")).count(),
                        what + ":\n" + plan);
                assertTrue(plan.contains("launch site") && !plan.contains("left as written"), what + ":\n" + plan);
                String others = String.join("\n", plan.lines().filter(l -> !l.contains("attribute-unresolved")).toList());
                assertEquals(String.join("\n", SamePlan.plan(dir, "plain.cu", without, g).lines().toList()), others, what);
            }
        }
        assertTrue(forms.containsAll(Set.of("", ":loop", ":fire-and-forget", ":loop:fire-and-forget")), forms.toString());
    }

    /** In a two-file program the call is in main.cu, which klap never reads: nothing to note. */
    @Test
    void inATwoFileProgramTheCallIsInMainAndNothingIsNoted() throws IOException {
        ProgramGenerator.Program p = ProgramGenerator.generate(62100021, EnumSet.of(Shape.HIDDEN_ATTRIBUTE, Shape.TWO_FILES));
        String main = p.files().get(ProgramGenerator.MAIN_FILE);
        assertTrue(main.contains("FZ_CHECK(cudaFuncSetAttribute(fz_hac0, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024));")
                && main.contains("__global__ void fz_hac0(unsigned* out, unsigned tag, unsigned words);"), main);
        String kernels = p.files().get(ProgramGenerator.KERNELS_FILE);
        assertTrue(!kernels.contains("cudaFuncSetAttribute"), kernels);
        for (String g : List.of("warp", "block", "kernel")) {
            String plan = SamePlan.plan(dir, "kernels.cu", kernels.replace("#include \"" + ProgramGenerator.COMMON_HEADER + "\"",
                    p.files().get(ProgramGenerator.COMMON_HEADER).replace("#pragma once", "")), g);
            assertTrue(!plan.contains("attribute-unresolved") && !plan.contains("left as written"), g + ":\n" + plan);
        }
    }
}
