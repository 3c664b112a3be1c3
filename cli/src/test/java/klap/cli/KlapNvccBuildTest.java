package klap.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ResourceAccessMode;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * {@code scripts/klap-nvcc} as a build uses it: real nvcc runs (compile only, no GPU needed) on the
 * bundled test programs, small files with and without device launches, and the example Makefile and
 * CMake projects. The script runs the classes under test ({@code KLAP_CLASSPATH}), not a jar. The
 * methods run two at a time, and beside whichever other class of the module runs then (each in its
 * own temporary directory, writing nothing outside it; junit-platform.properties).
 */
@Execution(ExecutionMode.CONCURRENT)
// klap-nvcc makes its temporary folders in the shared temporary directory: shared among these
// methods, exclusive for KlapNvccArgsTest.temporaryFoldersAreRemovedAfterTheRun, which counts them
@ResourceLock(value = KlapNvccBuildTest.TMP_LOCK, mode = ResourceAccessMode.READ)
class KlapNvccBuildTest {
    /** The JUnit resource lock on klap-nvcc's temporary folders in java.io.tmpdir. */
    static final String TMP_LOCK = "java.io.tmpdir:klap-nvcc";

    static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    static final Path SCRIPT = ROOT.resolve("scripts/klap-nvcc");

    @TempDir
    Path dir;

    record Run(int rc, String out, String err) {}

    /** Runs a command in {@code cwd} with the klap-nvcc class path set, capturing stdout and stderr. */
    static Run exec(Path cwd, Map<String, String> env, List<String> cmd) throws IOException, InterruptedException {
        // not "klap-nvcc-...": KlapNvccArgsTest looks for klap-nvcc's own temporary folders by that
        // prefix while these tests may run beside it (a clean verify of 2026-11-29 saw these files)
        Path o = Files.createTempFile("klapnvcc-exec", ".out");
        Path e = Files.createTempFile("klapnvcc-exec", ".err");
        try {
            ProcessBuilder pb = new ProcessBuilder(cmd).directory(cwd.toFile());
            pb.environment().put("KLAP_CLASSPATH", System.getProperty("java.class.path"));
            pb.environment().remove("KLAP_FLAGS");
            pb.environment().putAll(env);
            pb.redirectOutput(o.toFile()).redirectError(e.toFile()).redirectInput(ProcessBuilder.Redirect.PIPE);
            Process p = pb.start();
            p.getOutputStream().close();
            if (!p.waitFor(5, TimeUnit.MINUTES)) {
                p.destroyForcibly();
                throw new AssertionError("timed out: " + cmd);
            }
            return new Run(p.exitValue(), Files.readString(o, StandardCharsets.UTF_8),
                    Files.readString(e, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(o);
            Files.deleteIfExists(e);
        }
    }

    static Run wrapper(Path cwd, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(SCRIPT.toString()));
        cmd.addAll(List.of(args));
        return exec(cwd, Map.of(), cmd);
    }

    static Run nvcc(Path cwd, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("nvcc"));
        cmd.addAll(List.of(args));
        return exec(cwd, Map.of(), cmd);
    }

    static boolean onPath(String tool) {
        return Stream.of(System.getenv().getOrDefault("PATH", "").split(File.pathSeparator))
                .anyMatch(d -> Files.isExecutable(Path.of(d.isEmpty() ? "." : d, tool)));
    }

    static final String CDP = """
            #include <cstdio>
            __global__ void child(int *x) { x[threadIdx.x] = 1; }
            __global__ void parent(int *x, int n) {
                int i = blockIdx.x * blockDim.x + threadIdx.x;
                if (i < n) {
                    child<<<1, 32>>>(x + i * 32);
                }
            }
            int main() { parent<<<1, 64>>>(nullptr, 0); std::printf("done\\n"); return 0; }
            """;

    /** The bundled BFS: compiled alone (-c, no -rdc: the wrapper adds it), then linked (-rdc=true added). */
    @Test
    void compilesATestProgramThenLinksIt() throws Exception {
        Path obj = dir.resolve("bfs.o");
        Run c = wrapper(ROOT, "--klap-verbose", "-std=c++17", "-arch=sm_90", "-c", "testcases/src/bfs.cu", "-o",
                obj.toString());
        assertEquals(0, c.rc, c.err);
        assertTrue(c.err.contains("klap-nvcc: klap --granularity=block --no-summary testcases/src/bfs.cu -o "), c.err);
        assertTrue(c.err.matches("(?s).*klap-nvcc: \\S*nvcc -rdc=true -I\\S*klap-nvcc-\\S*/inc -Xcompiler -iquotetestcases/src .*"), c.err);
        assertTrue(Files.size(obj) > 0);
        Path exe = dir.resolve("bfs");
        Run l = wrapper(ROOT, "--klap-verbose", "-arch=sm_90", obj.toString(), "-o", exe.toString());
        assertEquals(0, l.rc, l.err);
        assertTrue(l.err.matches("(?s).*klap-nvcc: \\S*nvcc -rdc=true -arch=sm_90 .*"), l.err);
        assertTrue(Files.isExecutable(exe));
        assertNoTempDirLeft(c.err + l.err);
    }

    /** One command compiles and links a file with device launches; --klap-keep=DIR keeps klap's output. */
    @Test
    void wholeProgramBuildAndKeep() throws Exception {
        Files.createDirectories(dir.resolve("src"));
        Files.writeString(dir.resolve("src/cdp.cu"), CDP);
        Path keep = dir.resolve("kept");
        Run r = wrapper(dir, "--klap-keep=" + keep, "--klap-granularity=warp", "-arch=sm_90", "src/cdp.cu", "-o",
                "cdp");
        assertEquals(0, r.rc, r.err);
        assertTrue(Files.isExecutable(dir.resolve("cdp")));
        Path abs = dir.resolve("src").toAbsolutePath();
        Path kept = keep.resolve(abs.getRoot().relativize(abs).toString()).resolve("cdp.cu");
        String text = Files.readString(kept);
        assertTrue(text.contains("#include \"klap/klap.cuh\" /* added by klap --granularity=warp */"), text);
        assertTrue(text.contains("#line 1 \"src/cdp.cu\""), text);
        assertTrue(Files.isRegularFile(keep.resolve("inc/klap/klap.cuh")));
    }

    /** Issue 12: --klap-promote builds a promoted program; promotion options that do not fit are usage errors. */
    @Test
    void promoteBuildsAndRejectsMixedOptions() throws Exception {
        Files.createDirectories(dir.resolve("src"));
        Files.writeString(dir.resolve("src/chain.cu"), KlapCliTest.CHAIN);
        Path keep = dir.resolve("kept");
        Run r = wrapper(dir, "--klap-keep=" + keep, "--klap-promote=PAO", "--klap-promote-depth=4", "-arch=sm_90",
                "src/chain.cu", "-o", "chain");
        assertEquals(0, r.rc, r.err);
        assertTrue(Files.isExecutable(dir.resolve("chain")));
        Path abs = dir.resolve("src").toAbsolutePath();
        String text = Files.readString(keep.resolve(abs.getRoot().relativize(abs).toString()).resolve("chain.cu"));
        assertTrue(text.contains("/* added by klap --promote=PAO-4 */"), text);
        Run mixed = wrapper(dir, "--klap-promote=PA", "--klap-granularity=warp", "-c", "src/chain.cu");
        assertEquals(2, mixed.rc);
        assertTrue(mixed.err.contains("cannot be combined"), mixed.err);
        Run depth = wrapper(dir, "--klap-promote=P", "--klap-promote-depth=4", "-c", "src/chain.cu");
        assertEquals(2, depth.rc);
        Run bad = wrapper(dir, "--klap-promote=Q", "-c", "src/chain.cu");
        assertEquals(2, bad.rc);
    }

    /**
     * Issue 13: --klap-np builds a CUDA-NP benchmark (tmv, which needs -I testcases/np for its host
     * header: klap gets the -I too) into an executable, without -rdc=true; the kept output has the
     * inter-warp kernel.
     */
    @Test
    void npBuildsACudaNpBenchmark() throws Exception {
        Path keep = dir.resolve("kept");
        Path exe = dir.resolve("tmv");
        Run r = wrapper(ROOT, "--klap-verbose", "--klap-np=inter-warp", "--klap-np-slaves=4", "--klap-keep=" + keep,
                "-std=c++17", "-arch=sm_90", "-I", "testcases/np", "testcases/np/tmv/tmv.cu", "-o", exe.toString());
        assertEquals(0, r.rc, r.err);
        assertTrue(Files.isExecutable(exe));
        assertTrue(r.err.contains("klap-nvcc: klap --np=inter-warp --no-summary testcases/np/tmv/tmv.cu -o "), r.err);
        assertTrue(r.err.contains(" --np-slaves=4 -I testcases/np"), r.err);
        assertFalse(r.err.contains("-rdc=true"), r.err);
        Path abs = ROOT.resolve("testcases/np/tmv");
        String text = Files.readString(keep.resolve(abs.getRoot().relativize(abs).toString()).resolve("tmv.cu"));
        assertTrue(text.contains("tmvKernel_klap_npw") && text.contains("klap::np::InterWarp<4>"), text);
        assertFalse(text.contains("tmvKernel_klap_npi"), text);
        Run mixed = wrapper(ROOT, "--klap-np=all", "--klap-promote=PA", "-c", "testcases/np/tmv/tmv.cu");
        assertEquals(2, mixed.rc);
        assertTrue(mixed.err.contains("--klap-np cannot be combined"), mixed.err);
    }

    /**
     * Issue 10, interfaces kept: at kernel granularity the kernel file is transformed and main.cu
     * (host launch, cudaFuncSetCacheConfig, a function pointer) is compiled untouched; they link
     * (KLAP's SSSP and SP programs failed to link here before).
     */
    @Test
    void kernelGranularityKeepsKernelSignaturesForOtherFiles() throws Exception {
        Files.createDirectories(dir.resolve("src"));
        Files.writeString(dir.resolve("src/k.cuh"), "__global__ void drelax(int* d, int n);\n");
        Files.writeString(dir.resolve("src/kernels.cu"), """
                #include "k.cuh"
                __global__ void relax(int* d, int v) { d[v * 32 + threadIdx.x] += 1; }
                __global__ void drelax(int* d, int n) {
                  int v = blockIdx.x * blockDim.x + threadIdx.x;
                  if (v >= n) return;
                  if (d[v] > 0) relax<<<1, 32>>>(d, v);
                }
                void run_here(int* d, int n) { drelax<<<(n + 127) / 128, 128>>>(d, n); }
                """);
        Files.writeString(dir.resolve("src/main.cu"), """
                #include "k.cuh"
                void run_here(int* d, int n);
                int main() {
                  cudaFuncSetCacheConfig(drelax, cudaFuncCachePreferL1);
                  void (*fp)(int*, int) = drelax;
                  (void)fp;
                  drelax<<<1, 128>>>(nullptr, 0);
                  run_here(nullptr, 0);
                  return 0;
                }
                """);
        Run r = wrapper(dir, "--klap-granularity=kernel", "-arch=sm_90", "src/kernels.cu", "src/main.cu", "-o", "app");
        assertEquals(0, r.rc, r.err);
        assertTrue(Files.isExecutable(dir.resolve("app")));
    }

    /**
     * Issue 11: the transformed files of a program share one memory pool. Three transformed files built with
     * the largest pool klap allows (1 GiB) link into one program; with one pool per file they did not (three
     * 1 GiB host shadows pass the 2 GiB the x86-64 small code model reaches, and so did 17 files with the
     * default 128 MiB). The executable holds the pool's host shadow once.
     */
    @Test
    void transformedFilesShareOnePoolAndLink() throws Exception {
        Files.createDirectories(dir.resolve("src"));
        StringBuilder main = new StringBuilder("#include <cstdio>\n");
        for (String f : List.of("a", "b", "c")) {
            Files.writeString(dir.resolve("src/" + f + ".cu"), """
                    __global__ void child_F(int *x) { x[threadIdx.x] += 1; }
                    __global__ void parent_F(int *x, int n) {
                        int i = blockIdx.x * blockDim.x + threadIdx.x;
                        if (i < n) child_F<<<1, 32>>>(x + i * 32);
                    }
                    void run_F(int *x, int n) { parent_F<<<(n + 63) / 64, 64>>>(x, n); }
                    """.replace("F", f));
            main.append("void run_").append(f).append("(int*, int);\n");
        }
        main.append("int main() { run_a(nullptr, 0); run_b(nullptr, 0); run_c(nullptr, 0); "
                + "std::printf(\"done\\n\"); return 0; }\n");
        Files.writeString(dir.resolve("src/main.cu"), main.toString());
        Run r = wrapper(dir, "--klap-pool-size=1G", "-arch=sm_90", "src/a.cu", "src/b.cu", "src/c.cu", "src/main.cu",
                "-o", "app");
        assertEquals(0, r.rc, r.err);
        Path app = dir.resolve("app");
        assertTrue(Files.isExecutable(app));
        assertTrue(Files.size(app) < (64L << 20), "the pool's host shadow is .bss, not file contents: " + Files.size(app));
    }

    /**
     * Includes resolve as nvcc resolves them on the original file: {@code <config.h>} finds the -I
     * directory's header, not the stale copy next to the source (the original directory is quote-only),
     * and {@code "../include/cfg.h"} finds the project's header, not one next to klap-nvcc's work
     * directory under $TMPDIR. One nvcc call (-E).
     */
    @Test
    void includesResolveAsNvccResolvesThem() throws Exception {
        for (String d : List.of("proj/src", "proj/include", "proj/api", "tmp/include")) {
            Files.createDirectories(dir.resolve(d));
        }
        Files.writeString(dir.resolve("proj/src/config.h"), "#define CFG_THREADS 4 /* stale copy */\n");
        Files.writeString(dir.resolve("proj/api/config.h"), "#define CFG_THREADS 32\n");
        Files.writeString(dir.resolve("proj/include/cfg.h"), "#define NT 64\n");
        Files.writeString(dir.resolve("tmp/include/cfg.h"), "#define NT 5 /* someone else's */\n");
        Files.writeString(dir.resolve("proj/src/k.cu"), """
                #include <config.h>
                #include "../include/cfg.h"
                __global__ void child(int *o) { o[threadIdx.x] = 1; }
                __global__ void parent(int *o) { child<<<1, CFG_THREADS>>>(o); }
                int marker_threads = CFG_THREADS;
                int marker_nt = NT;
                """);
        Run r = exec(dir.resolve("proj"), Map.of("TMPDIR", dir.resolve("tmp").toString()),
                List.of(SCRIPT.toString(), "-Iapi", "-E", "src/k.cu"));
        assertEquals(0, r.rc, r.err);
        assertTrue(r.out.contains("marker_threads = 32;"), r.out);
        assertTrue(r.out.contains("marker_nt = 64;"), r.out);
        assertTrue(r.out.contains("child_klap_agg"), "transformed: " + r.out);
    }

    /** -M on a transformed file: the rules name the user's file and headers, not klap-nvcc's copy. */
    @Test
    void dependencyRulesNameTheOriginalFile() throws Exception {
        Run r = wrapper(ROOT, "-M", "-arch=sm_90", "testcases/src/bfs.cu");
        assertEquals(0, r.rc, r.err);
        assertTrue(r.out.startsWith("bfs.o : testcases/src/bfs.cu \\\n"), r.out);
        assertTrue(r.out.contains("testcases/src/common/check.cuh"), r.out);
        assertFalse(r.out.contains("klap-nvcc-"), r.out);
        assertFalse(r.out.contains("klap/klap.cuh"), r.out);
        Path d = dir.resolve("bfs.d");
        Run md = wrapper(ROOT, "-M", "-MT", "obj/bfs.o", "-MF", d.toString(), "testcases/src/bfs.cu");
        assertEquals(0, md.rc, md.err);
        assertTrue(Files.readString(d).startsWith("obj/bfs.o : testcases/src/bfs.cu \\\n"), Files.readString(d));
    }

    /** A file without device launches goes to nvcc as written: same command, same preprocessed text. */
    @Test
    void fileWithoutDeviceLaunchesPassesThroughUntouched() throws Exception {
        String host = "__global__ void k(int *x) { x[threadIdx.x] = 2; }\n"
                + "int main() { k<<<1, 32>>>(nullptr); return 0; }\n";
        Files.writeString(dir.resolve("host.cu"), host);
        Run c = wrapper(dir, "--klap-verbose", "-arch=sm_90", "-c", "host.cu", "-o", "host.o");
        assertEquals(0, c.rc, c.err);
        assertTrue(c.err.contains("klap-nvcc: host.cu has no device-side launches: compiled as is"), c.err);
        assertTrue(c.err.matches("(?s).*klap-nvcc: \\S*nvcc -arch=sm_90 -c host.cu -o host.o\n.*"), c.err);
        assertTrue(Files.size(dir.resolve("host.o")) > 0);
        Run viaWrapper = wrapper(dir, "-E", "host.cu");
        Run direct = nvcc(dir, "-E", "host.cu");
        assertEquals(0, viaWrapper.rc, viaWrapper.err);
        assertEquals(direct.out, viaWrapper.out);
        Run off = wrapper(dir, "--klap-off", "--klap-verbose", "-c", "-o", "off.o", "host.cu");
        assertEquals(0, off.rc, off.err);
        assertFalse(off.err.contains("klap-nvcc: klap "), off.err);
    }

    /** An error in user code reads exactly as nvcc's on the original file; the exit status is nvcc's. */
    @Test
    void nvccErrorsPointAtTheUsersFileAndLine() throws Exception {
        Files.createDirectories(dir.resolve("src"));
        Files.writeString(dir.resolve("src/bad.cu"), """
                __global__ void child(int *x) { x[threadIdx.x] = 1; }

                __global__ void parent(int *x, int n) {
                    int i = blockIdx.x * blockDim.x + threadIdx.x;
                    if (i < n) {
                        child<<<1, 32>>>(x + i * 32);
                    }
                    undeclared_thing = 3;
                }
                """);
        Run w = wrapper(dir, "-arch=sm_90", "-c", "src/bad.cu", "-o", "bad.o");
        Run n = nvcc(dir, "-rdc=true", "-arch=sm_90", "-c", "src/bad.cu", "-o", "bad.o");
        assertNotEquals(0, n.rc);
        assertTrue(n.err.contains("src/bad.cu(8): error: identifier \"undeclared_thing\" is undefined"), n.err);
        assertEquals(n.rc, w.rc);
        assertEquals(n.err, w.err);
        assertEquals(n.out, w.out);
    }

    /** klap's own error (CDP1 device-side sync) stops the build before nvcc, with klap's diagnostic. */
    @Test
    void klapErrorsStopTheBuild() throws Exception {
        Files.writeString(dir.resolve("sync.cu"), """
                __global__ void child(int *x) { x[threadIdx.x] = 1; }
                __global__ void parent(int *x) {
                    child<<<1, 32>>>(x);
                    cudaDeviceSynchronize();
                }
                """);
        Run r = wrapper(dir, "-arch=sm_90", "-c", "sync.cu", "-o", "sync.o");
        assertEquals(1, r.rc);
        assertTrue(r.err.startsWith("sync.cu:4:5: error: device-side cudaDeviceSynchronize()"), r.err);
        assertTrue(r.err.contains("[klap-cdp1-sync]"), r.err);
        assertTrue(r.err.contains("klap-nvcc: error: klap cannot transform sync.cu; nvcc was not run"), r.err);
        assertFalse(Files.exists(dir.resolve("sync.o")));
        assertFalse(r.err.contains("Exception"), r.err);
    }

    @Test
    void versionAndHelp() throws Exception {
        Run v = wrapper(dir, "--version");
        assertEquals(0, v.rc, v.err);
        assertTrue(v.out.startsWith("klap-nvcc "), v.out);
        assertTrue(v.out.contains("real nvcc: "), v.out);
        assertTrue(v.out.contains("Cuda compilation tools"), v.out);
        Run h = wrapper(dir, "--help");
        assertEquals(0, h.rc, h.err);
        assertTrue(h.out.contains("Usage: klap-nvcc"), h.out);
        assertTrue(h.out.contains("KLAP_FLAGS"), h.out);
        // as a compiler launcher, the first argument is the real nvcc
        Run launcher = exec(dir, Map.of(), List.of(SCRIPT.toString(), "--klap-version", "/usr/bin/env"));
        assertEquals(0, launcher.rc, launcher.err);
        Run bad = exec(dir, Map.of("KLAP_FLAGS", "--klap-granularity=grid"), List.of(SCRIPT.toString(), "-c", "x.cu"));
        assertEquals(2, bad.rc);
        assertTrue(bad.err.startsWith("klap-nvcc: error: "), bad.err);
    }

    /** examples/make-project with make NVCC=klap-nvcc (compile and link), dependency files included. */
    @Test
    void makeProjectBuilds() throws Exception {
        assumeTrue(onPath("make"), "make is not installed");
        Path build = dir.resolve("build");
        Run r = exec(ROOT.resolve("examples/make-project"), Map.of(),
                List.of("make", "-j2", "NVCC=" + SCRIPT, "BUILD=" + build));
        assertEquals(0, r.rc, r.out + r.err);
        assertTrue(Files.isExecutable(build.resolve("segments")), r.out);
        String deps = Files.readString(build.resolve("segments.d"));
        assertTrue(deps.startsWith(build.resolve("segments.o") + " : src/segments.cu \\\n"), deps);
        assertTrue(deps.contains("src/segments.h"), deps);
        assertFalse(deps.contains("klap-nvcc-"), deps);
        Run again = exec(ROOT.resolve("examples/make-project"), Map.of(),
                List.of("make", "NVCC=" + SCRIPT, "BUILD=" + build));
        assertEquals(0, again.rc, again.err);
        assertTrue(again.out.contains("Nothing to be done"), again.out);
    }

    /** examples/cmake-project configured with CMAKE_CUDA_COMPILER_LAUNCHER=klap-nvcc (compile and link). */
    @Test
    void cmakeProjectBuilds() throws Exception {
        assumeTrue(onPath("cmake"), "cmake is not installed");
        Path build = dir.resolve("cmake-build");
        Run conf = exec(ROOT, Map.of(), List.of("cmake", "-S", "examples/cmake-project", "-B", build.toString(),
                "-DCMAKE_CUDA_COMPILER_LAUNCHER=" + SCRIPT, "-DCMAKE_CUDA_ARCHITECTURES=90"));
        assertEquals(0, conf.rc, conf.out + conf.err);
        Run b = exec(ROOT, Map.of("KLAP_FLAGS", "--klap-verbose"),
                List.of("cmake", "--build", build.toString(), "-j", "2"));
        assertEquals(0, b.rc, b.out + b.err);
        assertTrue(b.err.contains("klap-nvcc: klap --granularity=block "), b.err);
        assertTrue(Files.isExecutable(build.resolve("segments_demo")), b.out);
        String deps = Files.readString(build.resolve("CMakeFiles/segments.dir/src/segments.cu.o.d"));
        assertTrue(deps.contains("examples/cmake-project/src/segments.cu \\\n"), deps);
        assertFalse(deps.contains("klap-nvcc-"), deps);
    }

    private static void assertNoTempDirLeft(String log) {
        for (String w : log.split("\\s+")) {
            if (w.startsWith("-I") && w.contains("klap-nvcc-")) {
                assertFalse(Files.exists(Path.of(w.substring(2))), "temporary directory left behind: " + w);
            }
        }
    }
}
