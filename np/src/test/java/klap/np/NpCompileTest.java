package klap.np;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Compile tier of the CUDA-NP pass: every program of {@link NpPassTest} that klap transforms
 * compiles with {@code nvcc -std=c++17 -arch=sm_90 -c} against {@code klap/np.cuh}, intra-warp
 * (S = 8, and S = 2 and 32), the main shapes also inter-warp (S = 4 and 3) and with both variants
 * ({@code --np=all}), without a warning of nvcc's about the
 * generated code (nvcc's 20199-D for the pragmas of the kept original kernel excepted). Outputs go
 * to {@code target/np-compile/}. Fails, not skips, when nvcc is missing ({@code NVCC} overrides it).
 */
class NpCompileTest {
    private static final Path OUT = Path.of("target", "np-compile");
    private static final Path HEADERS = Path.of("..", "runtime-lib", "src", "main", "resources");

    private record Job(String name, String program, NpMode mode, int slaves) {
    }

    @Test
    void transformedProgramsCompile() throws Exception {
        Files.createDirectories(OUT);
        Map<String, String> all = new LinkedHashMap<>();
        all.put("sum", NpPassTest.SUM);
        all.put("scan", NpPassTest.SCAN);
        all.put("inferred", NpPassTest.REDUCTIONS_ARE_INFERRED_WITHOUT_CLAUSES);
        all.put("registers", NpPassTest.ARRAYS_SPLIT_OVER_REGISTERS_WHEN_EVERY_ACCESS_IS_THE_LOOP_VARIABLE);
        all.put("two_d", NpPassTest.TWO_DIMENSIONAL_BLOCKS_ARE_REMAPPED_TO_ONE_DIMENSION);
        all.put("divergent", NpPassTest.DIVERGENT_LOOPS_HAVE_NO_INTER_WARP_VARIANT);
        all.put("early_return", NpPassTest.EARLY_RETURN_OF_SOME_THREADS_BLOCKS_INTER_WARP);
        all.put("load_after_store", NpPassTest.INTER_WARP_REFUSES_A_LOAD_AFTER_A_MASTER_ONLY_STORE);
        all.put("template", NpPassTest.TEMPLATE_KERNELS);
        all.put("template_prototype", NpPassTest.TEMPLATE_PROTOTYPE_DEFAULTS);
        all.put("template_shared", NpPassTest.TEMPLATE_SHARED_ARRAY);
        all.put("template_using", NpPassTest.USING_DECLARATION);
        all.put("template_pack", NpPassTest.TEMPLATE_PACK);
        all.put("prototype", NpPassTest.A_KERNEL_DECLARED_BEFORE_ITS_LAUNCH_GETS_A_PROTOTYPE);
        all.put("user_shared", NpPassTest.USER_DYNAMIC_SHARED_MEMORY_COMES_FIRST);
        all.put("broadcast", NpPassTest.BROADCAST);
        List<Job> jobs = new ArrayList<>();
        all.forEach((n, p) -> jobs.add(new Job(n, p, NpMode.INTRA_WARP, 8)));
        jobs.add(new Job("sum", all.get("sum"), NpMode.INTRA_WARP, 2));
        jobs.add(new Job("scan", all.get("scan"), NpMode.INTRA_WARP, 32));
        jobs.add(new Job("scan", all.get("scan"), NpMode.INTER_WARP, 3));
        for (String n : List.of("sum", "registers", "two_d", "user_shared")) {
            jobs.add(new Job(n, all.get(n), NpMode.INTER_WARP, 4));
        }
        jobs.add(new Job("broadcast_inter", NpPassTest.BROADCAST_INTER, NpMode.INTER_WARP, 4));
        for (String n : List.of("scan", "template", "template_shared")) {
            jobs.add(new Job(n, all.get(n), NpMode.ALL, 8));
        }
        ExecutorService pool = Executors.newFixedThreadPool(Math.max(2, Runtime.getRuntime().availableProcessors()));
        try {
            List<Future<String>> results = new ArrayList<>();
            for (Job j : jobs) {
                NpPass.Result r = NpPass.run(NpPassTest.parse(j.program()), new NpPass.Options(j.mode(), j.slaves(),
                        NpPass.DEFAULT_SHARED_BUDGET));
                assertEquals(List.of("k"), r.transformed(), j + ": " + r.diagnostics());
                String name = j.name() + "_" + j.mode().cliName() + "_" + j.slaves();
                Path cu = OUT.resolve(name + ".cu");
                Files.writeString(cu, r.text(), StandardCharsets.UTF_8);
                results.add(pool.submit(() -> nvcc(name, cu)));
            }
            for (Future<String> f : results) {
                String problem = f.get(600, TimeUnit.SECONDS);
                assertTrue(problem == null, problem);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /** @return null if nvcc compiled {@code cu} without a warning on the generated code, else the log */
    private static String nvcc(String name, Path cu) throws Exception {
        String env = System.getenv("NVCC");
        String nvcc = env != null && !env.isBlank() ? env : "nvcc";
        Process p = new ProcessBuilder(nvcc, "-std=c++17", "-arch=sm_90", "-c", "-I", HEADERS.toString(),
                "-o", OUT.resolve(name + ".o").toString(), cu.toString()).redirectErrorStream(true).start();
        String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(600, TimeUnit.SECONDS)) {
            return name + ": nvcc timed out";
        }
        if (p.exitValue() != 0) {
            return name + ": nvcc failed:\n" + log;
        }
        String other = log.lines().filter(l -> l.contains("warning") && !l.contains("20199") && !l.startsWith("Remark"))
                .findFirst().orElse(null);
        return other == null ? null : name + ": nvcc warned:\n" + log;
    }
}
