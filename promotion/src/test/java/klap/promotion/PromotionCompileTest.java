package klap.promotion;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Compile tier of the promotion pass: the bundled chain program ({@code chain_sum.cu}) promoted in
 * every variant (P, PA-2, PO, PAO-128) compiles with {@code nvcc -std=c++17 -rdc=true -arch=sm_90}
 * against the runtime headers, without a warning of nvcc's about the generated code. Outputs go to
 * {@code target/promote-compile/} (run on a GPU separately; each prints PASS or FAIL). Fails, not
 * skips, when nvcc is missing: nvcc is on every build machine here ({@code NVCC} overrides it).
 */
class PromotionCompileTest {
    private static final Path OUT = Path.of("target", "promote-compile");
    private static final Path HEADERS = Path.of("..", "runtime-lib", "src", "main", "resources");

    @Test
    void chainProgramCompilesInEveryVariant() throws Exception {
        Files.createDirectories(OUT);
        String program = PromotionPassTest.chainSumProgram();
        List<Process> procs = new ArrayList<>();
        List<String> names = new ArrayList<>();
        for (PromotionPass.Options o : List.of(new PromotionPass.Options(PromoteMode.P, 1),
                new PromotionPass.Options(PromoteMode.PA, 2), new PromotionPass.Options(PromoteMode.PO, 1),
                new PromotionPass.Options(PromoteMode.PAO, 128))) {
            PromotionPass.Result r = PromotionPass.run(PromotionPassTest.parse(program), o);
            assertEquals(List.of("chainSum"), r.promoted(), o.name() + ": " + r.diagnostics());
            String name = "chain_sum_" + o.name().replace("-", "");
            Path cu = OUT.resolve(name + ".cu");
            Files.writeString(cu, r.text(), StandardCharsets.UTF_8);
            names.add(name);
            procs.add(nvcc(cu, OUT.resolve(name)));
        }
        awaitNvcc(procs, names, true);
    }

    /**
     * Review 2026-11-25: postponed arguments of a class with an explicit constructor or a const
     * member (nvcc: deleted default constructor / assignment) or aligned to 32 bytes ({@code
     * double4_32a}: the link's static_assert) compile, since each travels as its bytes; a block of
     * 16 x 16 guarded by threadIdx.x == 0 && threadIdx.y == 0 checks only blockDim.z.
     */
    @Test
    void reviewProgramsWithClassAndOverAlignedArgumentsCompile() throws Exception {
        Files.createDirectories(OUT);
        List<Process> procs = new ArrayList<>();
        List<String> names = List.of("rv_struct_ctor", "rv_struct_const", "rv_al32", "rv_blk2d");
        for (String name : names) {
            String code = Files.readString(Path.of("src", "test", "resources", "promote", "forms", name + ".cu"));
            // struct_ctor calls a member function, which PA cannot check for blockIdx: P
            PromotionPass.Options o = name.equals("rv_struct_ctor") ? new PromotionPass.Options(PromoteMode.P, 1)
                    : new PromotionPass.Options(PromoteMode.PA, 4);
            PromotionPass.Result r = PromotionPass.run(PromotionPassTest.parse(code), o);
            assertEquals(List.of("K"), r.promoted(), name + ": " + r.diagnostics());
            if (name.equals("rv_blk2d")) {
                assertTrue(r.text().contains("if (blockDim.z != 1u) klap::promote::fail("), r.text());
            }
            Path cu = OUT.resolve(name + ".cu");
            Files.writeString(cu, r.text(), StandardCharsets.UTF_8);
            procs.add(nvcc(cu, OUT.resolve(name)));
        }
        awaitNvcc(procs, names, false);
    }

    /** Waits for each nvcc run; each must succeed (and, if {@code noWarning}, print no warning). */
    private static void awaitNvcc(List<Process> procs, List<String> names, boolean noWarning) throws Exception {
        for (int i = 0; i < procs.size(); i++) {
            Process p = procs.get(i);
            assertTrue(p.waitFor(300, TimeUnit.SECONDS), names.get(i) + ": nvcc timed out");
            String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertEquals(0, p.exitValue(), names.get(i) + ": nvcc failed:\n" + log);
            assertTrue(!noWarning || !log.contains("warning"), names.get(i) + ": nvcc warned:\n" + log);
        }
    }

    private static Process nvcc(Path cu, Path out) throws IOException {
        String env = System.getenv("NVCC");
        String nvcc = env != null && !env.isBlank() ? env : "nvcc";
        return new ProcessBuilder(nvcc, "-std=c++17", "-rdc=true", "-arch=sm_90", "-I", HEADERS.toString(),
                "-o", out.toString(), cu.toString()).redirectErrorStream(true).start();
    }
}
