package klap.fuzz;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Main}'s command line and output layout, and its run.sh driven by a fake nvcc (no GPU
 * needed): two-file builds, the timeout reported as HANG, refused and failed variants, the table.
 */
class MainTest {
    @TempDir
    Path dir;

    private record Out(int rc, String out, String err) {
    }

    private static Out main(String... args) throws IOException {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        ByteArrayOutputStream e = new ByteArrayOutputStream();
        int rc = Main.run(args, new PrintStream(o, true, StandardCharsets.UTF_8), new PrintStream(e, true, StandardCharsets.UTF_8));
        return new Out(rc, o.toString(StandardCharsets.UTF_8), e.toString(StandardCharsets.UTF_8));
    }

    @Test
    void badArgumentsAreUsageErrors() throws IOException {
        assertEquals(2, main().rc());
        Out o = main(dir.toString(), "1", "1", "--shape=nope");
        assertEquals(2, o.rc());
        assertTrue(o.err().contains("unknown shape 'nope'") && o.err().contains("ff-loop"), o.err());
        assertEquals(2, main(dir.toString(), "x").rc());
        assertEquals(2, main(dir.toString(), "--frobnicate").rc());
        assertEquals(2, main(dir.toString(), "--fixtures=" + dir.resolve("none")).rc());
        assertEquals(0, main("--help").rc());
    }

    @Test
    void smallPoolAddsWarpAndBlockVariantsWithA64KPool() throws IOException {
        Out o = main(dir.toString(), "1", "700", "--small-pool");
        assertEquals(0, o.rc(), o.err());
        Path pd = dir.resolve("fz_000700");
        String variants = Files.readString(pd.resolve("variants")).strip();
        assertTrue(variants.startsWith("original warp block kernel warp-pool64k block-pool64k"), variants);
        for (String v : List.of("warp-pool64k", "block-pool64k")) {
            String text = Files.readString(pd.resolve(v + ".cu"));
            assertTrue(text.startsWith("#define KLAP_POOL_SIZE_BYTES 65536ull\n"), v + ": " + text.lines().findFirst());
        }
        for (String v : List.of("warp-pool64k", "block-pool64k")) {
            assertTrue(Files.readString(pd.resolve(v + ".cu")).contains("klap::on_full::launch_as_written"),
                    v + " has no launch-as-written fallback");
        }
        assertTrue(Files.readString(pd.resolve("warp-pool64k.cu")).contains("klap --granularity=warp"));
        assertTrue(Files.readString(pd.resolve("block-pool64k.cu")).contains("klap --granularity=block"));
        assertTrue(Files.readString(dir.resolve("run.sh")).contains("warp-pool64k block-pool64k"));
        // without the option: no such variants, no variants file
        Path plain = dir.resolve("plain");
        assertEquals(0, main(plain.toString(), "1", "700").rc());
        assertTrue(!Files.exists(plain.resolve("fz_000700/variants")) && !Files.exists(plain.resolve("fz_000700/warp-pool64k.cu")));
    }

    /**
     * kernel-pool64k: a program whose kernels make no tail launch gets it (every record call has its
     * launch as written), also one whose stream the kernel creates; one with a stream parameter does
     * not (klap notes that its kernel cannot fall back, so the variant would stop with the
     * documented exhaustion error).
     */
    @Test
    void smallPoolAddsTheKernelVariantOnlyWhereKernelGranularityCanFallBack() throws IOException {
        Path fx = dir.resolve("fixtures");
        Files.createDirectories(fx);
        String prog = """
                #include <cstdio>
                __global__ void child(int* p, int i) { p[i] = i; }
                __global__ void parent(int* p) { child<<<1, 1STREAM>>>(p, threadIdx.x); }
                int main() { int* p; cudaMalloc(&p, 256); parent<<<1, 32>>>(p); cudaDeviceSynchronize(); printf("PASS\\n"); }
                """;
        Files.writeString(fx.resolve("plain.cu"), prog.replace("STREAM", ", 0, 0"));
        // a stream the kernel creates is never cudaStreamTailLaunch; a stream parameter may be
        Files.writeString(fx.resolve("created.cu"), prog.replace("STREAM", ", 0, s").replace("{ child", "{ cudaStream_t s; "
                + "cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking); child"));
        Files.writeString(fx.resolve("named.cu"), prog.replace("STREAM", ", 0, s").replace("int* p)", "int* p, cudaStream_t s)")
                .replace("parent<<<1, 32>>>(p)", "parent<<<1, 32>>>(p, 0)"));
        Out o = main(dir.toString(), "--fixtures=" + fx, "--small-pool");
        assertEquals(0, o.rc(), o.err());
        assertEquals("original warp block kernel warp-pool64k block-pool64k kernel-pool64k",
                Files.readString(dir.resolve("fx_plain/variants")).strip());
        String kernel = Files.readString(dir.resolve("fx_plain/kernel-pool64k.cu"));
        assertTrue(kernel.startsWith("#define KLAP_POOL_SIZE_BYTES 65536ull\n#define KLAP_KERNEL_TAIL_FALLBACK 1\n"),
                kernel.lines().limit(2).toList().toString());
        assertTrue(kernel.contains("klap_args_child(p, threadIdx.x), [&](dim3 klap_grid"), kernel);
        assertEquals("original warp block kernel warp-pool64k block-pool64k kernel-pool64k",
                Files.readString(dir.resolve("fx_created/variants")).strip());
        assertEquals("original warp block kernel warp-pool64k block-pool64k",
                Files.readString(dir.resolve("fx_named/variants")).strip());
        assertFalse(Files.exists(dir.resolve("fx_named/kernel-pool64k.cu")));
        assertTrue(Files.exists(dir.resolve("fx_named/kernel.cu")));
    }

    @Test
    void writesTwoFileProgramsAndTheirVariants() throws IOException {
        Out o = main(dir.toString(), "2", "500", "--shape=two-files,dependent");
        assertEquals(0, o.rc(), o.err());
        for (String p : List.of("fz_000500", "fz_000501")) {
            Path pd = dir.resolve(p);
            for (String f : List.of("kernels.cu", "main.cu", "fz_common.cuh", "warp.cu", "block.cu", "kernel.cu", "klap/klap.cuh")) {
                assertTrue(Files.exists(pd.resolve(f)), p + "/" + f + " missing");
            }
            assertEquals("dependent two-files", Files.readString(pd.resolve("shapes")).strip());
            assertTrue(Files.readString(pd.resolve("warp.cu")).contains("#include \"fz_common.cuh\""));
            assertTrue(!Files.exists(pd.resolve("original.cu")));
        }
        assertTrue(Files.isExecutable(dir.resolve("run.sh")) || Files.exists(dir.resolve("run.sh")));
    }

    @Test
    void writesCudaNpProgramsAndTheirVariants() throws IOException {
        assertEquals(2, main(dir.toString(), "1", "1", "--np", "--chains").rc());
        Out o = main(dir.toString(), "2", "13000001", "--np");
        assertEquals(0, o.rc(), o.err());
        for (long seed = 13000001; seed < 13000003; seed++) {
            NpGenerator.Program p = NpGenerator.generate(seed);
            Path pd = dir.resolve(p.dirName());
            assertEquals(p.text(), Files.readString(pd.resolve("original.cu")));
            assertEquals(Main.NP_VARIANTS, Files.readString(pd.resolve("variants")).strip());
            assertEquals(p.shapesLine(), Files.readString(pd.resolve("shapes")).strip());
            for (String m : Main.NP_MODES) {
                boolean cu = Files.exists(pd.resolve(m + ".cu"));
                assertTrue(cu != Files.exists(pd.resolve(m + ".refused")), p.dirName() + ": " + m);
                if (p.transformable() && !m.equals("inter-warp")) {
                    assertTrue(cu, p.dirName() + ": " + m);
                    assertTrue(Files.readString(pd.resolve(m + ".cu")).contains("np_k_klap_np"), m);
                }
            }
            assertTrue(Files.exists(pd.resolve("klap/np.cuh")) || !p.transformable(), p.dirName() + ": no klap/np.cuh");
        }
        assertTrue(Files.exists(dir.resolve("run.sh")));
    }

    @Test
    void writesTheFixtures() throws IOException {
        Out o = main(dir.toString(), "--fixtures=" + ShapeFixturesTest.FIXTURES);
        assertEquals(0, o.rc(), o.err());
        assertTrue(o.out().contains("wrote 0 programs and " + (Shape.values().length - 1) + " fixtures"), o.out());
        assertTrue(Files.exists(dir.resolve("fx_ref_out/original.cu")));
        assertTrue(Files.exists(dir.resolve("fx_ref_out/kernel.cu")));
        assertTrue(Files.exists(dir.resolve("fx_two_files/main.cu")));
        assertTrue(Files.exists(dir.resolve("fx_two_files/two_files.cuh")));
        assertTrue(Files.exists(dir.resolve("fx_two_files/block.cu")));
    }

    /** A fake nvcc: the binary runs the shell command on the first source's {@code // FAKE:} line. */
    private static final String FAKE_NVCC = """
            #!/usr/bin/env bash
            out=""; srcs=()
            while [ $# -gt 0 ]; do case "$1" in -o) out="$2"; shift 2;; *.cu) srcs+=("$1"); shift;; *) shift;; esac; done
            cmd="$(grep -m1 '^// FAKE: ' "${srcs[0]}" | sed 's#^// FAKE: ##')"
            if [ "$cmd" = "nvcc-error" ]; then echo "${srcs[0]}(1): error: fake"; exit 1; fi
            { echo '#!/usr/bin/env bash'; echo "# built from: ${srcs[*]}"; echo "$cmd"; } > "$out"; chmod +x "$out"
            """;

    @Test
    void runScriptBuildsRunsTimesOutAndSummarises() throws Exception {
        Assumptions.assumeTrue(Files.isExecutable(Path.of("/bin/bash")) || Files.isExecutable(Path.of("/usr/bin/bash")), "no bash");
        Path bin = Files.createDirectories(dir.resolve("bin"));
        Files.writeString(bin.resolve("nvcc"), FAKE_NVCC);
        Files.setPosixFilePermissions(bin.resolve("nvcc"), PosixFilePermissions.fromString("rwxr-xr-x"));
        Path out = Files.createDirectories(dir.resolve("out"));
        String ok = "// FAKE: echo RESULT 0000abcd; echo PASS\n";
        Path a = Files.createDirectories(out.resolve("fz_000001"));
        Files.writeString(a.resolve("shapes"), "random\n");
        Files.writeString(a.resolve("original.cu"), ok);
        Files.writeString(a.resolve("warp.cu"), ok);
        Files.writeString(a.resolve("block.cu"), "// FAKE: echo RESULT 0000ffff; echo FAIL wrong; exit 1\n");
        Files.writeString(a.resolve("kernel.refused"), "exit 1\nx.cu:1:1: error: no [klap-test]\n");
        Path b = Files.createDirectories(out.resolve("fz_000002"));
        Files.writeString(b.resolve("shapes"), "random two-files\n");
        Files.writeString(b.resolve("kernels.cu"), ok);
        Files.writeString(b.resolve("main.cu"), "// the host code\n");
        Files.writeString(b.resolve("warp.cu"), "// FAKE: sleep 60\n");
        Files.writeString(b.resolve("block.cu"), "// FAKE: nvcc-error\n");
        Files.writeString(b.resolve("kernel.cu"), ok);
        Path c = Files.createDirectories(out.resolve("fx_tiny"));
        Files.writeString(c.resolve("shapes"), "fixture:tiny\n");
        for (String v : List.of("original", "warp", "block", "kernel")) {
            Files.writeString(c.resolve(v + ".cu"), ok);
        }
        Path d = Files.createDirectories(out.resolve("fp_000003"));  // a chain program: its own variants
        Files.writeString(d.resolve("shapes"), "chain\n");
        Files.writeString(d.resolve("variants"), "original p po\n");
        Files.writeString(d.resolve("original.cu"), ok);
        Files.writeString(d.resolve("p.cu"), ok);
        Files.writeString(d.resolve("po.refused"), "exit 0\nno kernel promoted\n");
        // a CUDA-NP program: all.cu is built once and run with KLAP_NP=original, intra-warp, inter-warp
        Path e = Files.createDirectories(out.resolve("np_000004"));
        Files.writeString(e.resolve("shapes"), "np\n");
        Files.writeString(e.resolve("variants"), Main.NP_VARIANTS + "\n");
        Files.writeString(e.resolve("original.cu"), ok);
        Files.writeString(e.resolve("intra-warp.cu"), ok);
        Files.writeString(e.resolve("inter-warp.refused"), "exit 0\nno inter-warp variant\n");
        Files.writeString(e.resolve("all.cu"), "// FAKE: echo RESULT 0000abcd; echo \"PASS KLAP_NP=$KLAP_NP\"; "
                + "[ \"$KLAP_NP\" != inter-warp ]\n");
        Files.writeString(out.resolve("run.sh"), Main.runScript());
        ProcessBuilder pb = new ProcessBuilder("bash", "run.sh", "--timeout", "2", "--jobs=3").directory(out.toFile())
                .redirectErrorStream(true);
        pb.environment().put("PATH", bin + ":" + System.getenv("PATH"));
        long t0 = System.nanoTime();
        Process p = pb.start();
        String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "run.sh did not finish");
        assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(40), "the timeout did not stop the hanging binary");
        assertEquals(1, p.exitValue(), log);
        assertTrue(log.contains("FAIL fz_000001 [random] original=ok warp=ok block=FAIL kernel=refused"), log);
        assertTrue(log.contains("FAIL fz_000002 [random two-files] original=ok warp=HANG block=NVCC-FAILED kernel=ok"), log);
        assertTrue(log.contains("PASS fx_tiny [fixture:tiny] original=ok warp=ok block=ok kernel=ok"), log);
        assertTrue(Files.readString(b.resolve("kernel.bin")).contains("# built from: fz_000002/kernel.cu fz_000002/main.cu"));
        assertTrue(Files.readString(b.resolve("original.bin")).contains("# built from: fz_000002/kernels.cu fz_000002/main.cu"));
        assertTrue(log.contains("PASS fp_000003 [chain] original=ok p=ok po=refused"), log);
        assertTrue(log.contains("FAIL np_000004 [np] original=ok intra-warp=ok inter-warp=refused all@original=ok "
                + "all@intra-warp=ok all@inter-warp=FAIL"), log);
        assertTrue(Files.readString(e.resolve("all@intra-warp.out")).contains("PASS KLAP_NP=intra-warp"));
        assertTrue(Files.readString(e.resolve("all@original.out")).contains("PASS KLAP_NP=original"));
        // the per-variant table comes last: the aggregation variants (small-pool ones included), then the
        // promotion ones, then CUDA-NP
        List<String> lines = log.strip().lines().toList();
        int head = lines.size() - 1;
        while (!lines.get(head).startsWith("variant ")) {
            head--;
        }
        List<String> table = lines.subList(head, lines.size());
        assertEquals(17, table.size(), log);
        assertTrue(table.get(12).matches("intra-warp +1 +0 +0 +0 +0 +0"), log);
        assertTrue(table.get(13).matches("inter-warp +0 +0 +0 +0 +1 +0"), log);
        assertTrue(table.get(14).matches("all@original +1 +0 +0 +0 +0 +0"), log);
        assertTrue(table.get(16).matches("all@inter-warp +0 +1 +0 +0 +0 +0"), log);
        assertTrue(table.get(0).matches("variant +ok +FAIL +HANG +NVCC-FAILED +refused +missing"), log);
        assertTrue(table.get(1).matches("original +5 +0 +0 +0 +0 +0"), log);
        assertTrue(table.get(5).matches("warp-pool64k +0 +0 +0 +0 +0 +0"), log);
        assertTrue(table.get(6).matches("block-pool64k +0 +0 +0 +0 +0 +0"), log);
        assertTrue(table.get(7).matches("kernel-pool64k +0 +0 +0 +0 +0 +0"), log);
        assertTrue(table.get(8).matches("p +1 +0 +0 +0 +0 +0"), log);
        assertTrue(table.get(10).matches("po +0 +0 +0 +0 +1 +0"), log);
        assertTrue(table.get(2).matches("warp +2 +0 +1 +0 +0 +0"), log);
        assertTrue(table.get(3).matches("block +1 +1 +0 +1 +0 +0"), log);
        assertTrue(table.get(4).matches("kernel +2 +0 +0 +0 +1 +0"), log);
        String tsv = Files.readString(out.resolve("results.tsv"));
        assertTrue(tsv.contains("fz_000002\trandom two-files\twarp\tHANG\t"), tsv);
        assertTrue(tsv.contains("fz_000001\trandom\tblock\tFAIL\t0000ffff\t"), tsv);
        // a single program, named on the command line
        pb.command("bash", "run.sh", "fx_tiny/");
        Process q = pb.start();
        String one = new String(q.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(q.waitFor(60, TimeUnit.SECONDS));
        assertEquals(0, q.exitValue(), one);
        assertTrue(one.contains("SUMMARY programs=1 passed=1 failed=0"), one);
    }
}
