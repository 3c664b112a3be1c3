package klap.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.ResourceLock;
import org.junit.jupiter.api.io.TempDir;

/**
 * klap-nvcc's reading of nvcc command lines, its rewriting of dependency rules and its own options,
 * in-process and without running nvcc.
 */
class KlapNvccArgsTest {
    @TempDir
    Path dir;

    static NvccCommandLine parse(String... args) throws IOException {
        return NvccCommandLine.parse(List.of(args));
    }

    static List<String> paths(List<NvccCommandLine.Input> ins) {
        return ins.stream().map(NvccCommandLine.Input::path).toList();
    }

    @Test
    void optionValuesAreNeverInputs() throws IOException {
        NvccCommandLine cl = parse("-c", "-o", "x.cu", "-Xcompiler", "-fPIC", "-I", "inc", "-Iinc2", "-DN=3",
                "-arch=sm_90", "-gencode", "arch=compute_90,code=sm_90", "-MT", "t.cu", "-O3", "src/a.cu", "b.cpp",
                "c.o", "libd.a");
        assertEquals(List.of("src/a.cu"), paths(cl.inputs(NvccCommandLine.Kind.CUDA)));
        assertEquals(List.of("b.cpp"), paths(cl.inputs(NvccCommandLine.Kind.HOST_SOURCE)));
        assertEquals(List.of("c.o", "libd.a"), paths(cl.inputs(NvccCommandLine.Kind.OBJECT)));
        assertEquals(List.of("inc", "inc2"), cl.values("--include-path"));
        assertEquals("x.cu", cl.last("--output-file"));
        assertTrue(cl.has("--compile"));
        assertFalse(cl.hasRdcChoice());
        assertTrue(parse("-dc", "a.cu").hasRdcChoice());
        assertTrue(parse("--relocatable-device-code=false", "a.cu").hasRdcChoice());
        assertTrue(parse("-rdc", "true", "a.cu").hasRdcChoice());
        assertEquals(List.of("a.cu"), paths(parse("-rdc", "true", "a.cu").inputs(NvccCommandLine.Kind.CUDA)));
    }

    @Test
    void languageOptionDecidesWhatIsCuda() throws IOException {
        assertEquals(List.of("a.cpp", "b.cu"), paths(parse("-x", "cu", "-c", "a.cpp", "b.cu")
                .inputs(NvccCommandLine.Kind.CUDA)));
        assertTrue(parse("-x", "c++", "-c", "b.cu").inputs(NvccCommandLine.Kind.CUDA).isEmpty());
    }

    @Test
    void linkStepsAndPhases() throws IOException {
        assertTrue(parse("a.o", "b.o", "-o", "prog", "-lcuda").isLinkStep());
        assertTrue(parse("-arch=sm_90", "a.o", "libx.so.1").isLinkStep());
        assertFalse(parse("-dlink", "a.o", "-o", "dl.o").isLinkStep());
        assertFalse(parse("-lib", "a.o", "-o", "liba.a").isLinkStep());
        assertFalse(parse("a.o", "main.cu").isLinkStep());
        assertTrue(parse("-M", "a.cu").preprocessOnly());
        assertTrue(parse("-E", "a.cu").preprocessOnly());
        assertFalse(parse("-MD", "-c", "a.cu").preprocessOnly());
    }

    @Test
    void responseFilesAndOptionsFiles() throws IOException {
        Files.writeString(dir.resolve("r.rsp"), "-c 'my dir/a.cu' -I inc\n");
        Files.writeString(dir.resolve("o.rsp"), "-Iinc2 \"b.cu\"\n");
        NvccCommandLine cl = parse("@" + dir.resolve("r.rsp"), "--options-file", dir.resolve("o.rsp").toString());
        assertEquals(List.of("-c", "my dir/a.cu", "-I", "inc", "--options-file", dir.resolve("o.rsp").toString()), cl.top);
        assertEquals(List.of("-c", "my dir/a.cu", "-I", "inc", "-Iinc2", "b.cu"), cl.flat);
        List<NvccCommandLine.Input> cu = cl.inputs(NvccCommandLine.Kind.CUDA);
        assertEquals(List.of("my dir/a.cu", "b.cu"), paths(cu));
        assertEquals(1, cu.get(0).topIndex());
        assertEquals(-1, cu.get(1).topIndex());
        assertEquals(5, cu.get(1).flatIndex());
        assertEquals(List.of("inc", "inc2"), cl.values("--include-path"));
    }

    /** B7: an @file that is an option's value (-Xlinker @file) goes to nvcc as written. */
    @Test
    void atFileValuesOfOptionsAreNotExpanded() throws IOException {
        Path rsp = dir.resolve("link.rsp");
        Files.writeString(rsp, "--whole-archive\n");
        NvccCommandLine cl = parse("-Xlinker", "@" + rsp, "--compiler-options", "@" + rsp, "a.o", "-o", "prog");
        assertEquals(List.of("-Xlinker", "@" + rsp, "--compiler-options", "@" + rsp, "a.o", "-o", "prog"), cl.top);
        assertEquals(List.of("@" + rsp, "@" + rsp), cl.values("--linker-options").isEmpty() ? List.of()
                : List.of(cl.last("--linker-options"), cl.last("--compiler-options")));
        assertEquals(List.of("--whole-archive", "a.o"), parse("@" + rsp, "a.o").top);
    }

    @Test
    void dependencyFilesFollowNvccsNaming() throws IOException {
        assertEquals(List.of(Path.of("d/x.d")), parse("-MD", "-c", "s/a.cu", "-o", "d/x.o").dependencyFiles("s/a.cu"));
        assertEquals(List.of(Path.of("a.d")), parse("-MMD", "-c", "s/a.cu").dependencyFiles("s/a.cu"));
        assertEquals(List.of(Path.of("od/a.d")), parse("-MD", "-c", "s/a.cu", "-odir", "od").dependencyFiles("s/a.cu"));
        assertEquals(List.of(Path.of("y.d")), parse("-MD", "-MF", "y.d", "-c", "s/a.cu").dependencyFiles("s/a.cu"));
        assertEquals(List.of(Path.of("z.d")), parse("-M", "s/a.cu", "-o", "z.d").dependencyFiles("s/a.cu"));
        assertTrue(parse("-M", "s/a.cu").dependenciesOnStdout());
        assertFalse(parse("-M", "s/a.cu", "-MF", "q.d").dependenciesOnStdout());
    }

    @Test
    void dependencyRulesNameTheUsersFile() {
        String nvcc = "obj/a.o : /tmp/k/0/a.cu \\\n    /tmp/k/klap/klap.cuh \\\n    src/my\\ hdr.h \\\n"
                + "    /usr/include/stdio.h\n\n/tmp/k/klap/klap.cuh:\n\nsrc/my\\ hdr.h:\n";
        String fixed = DepRules.rewrite(nvcc, Map.of("/tmp/k/0/a.cu", "src/a b.cu"), "/tmp/k/klap/");
        assertEquals("obj/a.o : src/a\\ b.cu \\\n    src/my\\ hdr.h \\\n    /usr/include/stdio.h\n\nsrc/my\\ hdr.h:\n",
                fixed);
        String untouched = "a.o : a.cu \\\n    b.h\n";
        assertEquals(untouched, DepRules.rewrite(untouched, Map.of("/tmp/k/0/a.cu", "a.cu"), "/tmp/k/klap/"));
    }

    /** The original directory is quote-only (-iquote through -Xcompiler); the runtime headers live in $TMP/inc. */
    @Test
    void originalDirectoryIsQuoteOnly() throws IOException {
        NvccCommandLine cl = parse("-c", "src/a.cu", "b.cu", "my dir/c.cu", "src/d.cu");
        assertEquals(List.of("-I/tmp/k/inc", "-Xcompiler", "-iquotesrc", "-Xcompiler", "-iquote.", "-Imy dir"),
                KlapNvcc.includeOptions(Path.of("/tmp/k"), cl.inputs(NvccCommandLine.Kind.CUDA)));
    }

    @Test
    void wordsSplitLikeAShell() {
        assertEquals(List.of("-I", "my dir", "a b", "c d", "e'f"), Words.split("-I 'my dir'  \"a b\"\nc\\ d \"e'f\""));
        assertEquals(List.of(), Words.split("  "));
        assertEquals("nvcc 'a b.cu' -DX=1 ''", Words.join(List.of("nvcc", "a b.cu", "-DX=1", "")));
    }

    record Run(int rc, String out, String err) {}

    static Run run(Map<String, String> env, String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int rc = KlapNvcc.run(args, env, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Run(rc, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void klapOptionErrorsExit2WithAOneLineDiagnostic() {
        Run r = run(Map.of(), "--klap-granularity=grid", "-c", "a.cu");
        assertEquals(2, r.rc);
        assertTrue(r.err.startsWith("klap-nvcc: error: --klap-granularity=warp|block|kernel expected"), r.err);
        assertEquals(2, run(Map.of(), "--klap-pool-size=lots", "-c", "a.cu").rc);
        assertEquals(2, run(Map.of(), "--klap-frobnicate", "-c", "a.cu").rc);
        Run env = run(Map.of("KLAP_FLAGS", "--klap-keep -O3"), "-c", "a.cu");
        assertEquals(2, env.rc);
        assertTrue(env.err.contains("KLAP_FLAGS: '-O3' is not a klap-nvcc option"), env.err);
        assertFalse(env.err.contains("Exception"), env.err);
    }

    /** A kernel with one CUDA-NP loop (issue 13). */
    static final String NP = """
            __global__ void rowsum(const float *a, float *y, int n) {
                const int t = blockIdx.x * blockDim.x + threadIdx.x;
                float s = 0.0f;
            #pragma np parallel for reduction(+:s) copyin(t)
                for (int i = 0; i < n; i++) s += a[t * n + i];
                y[t] = s;
            }
            int main() { rowsum<<<2, 32>>>(nullptr, nullptr, 0); return 0; }
            """;

    /** --klap-np and its options follow klap's rules for --np; each misuse is a usage error naming the rule. */
    @Test
    void npOptionsAreCheckedLikeKlaps() {
        Map<String, String> noNvcc = Map.of("PATH", dir.toString());
        record Bad(String why, List<String> args) {}
        for (Bad b : List.of(
                new Bad("--klap-np=intra-warp|inter-warp|all expected, got '--klap-np=warp'", List.of("--klap-np=warp")),
                new Bad("--klap-np=intra-warp|inter-warp|all expected", List.of("--klap-np")),
                new Bad("--klap-np cannot be combined with --klap-promote, --klap-granularity",
                        List.of("--klap-np=all", "--klap-granularity=warp")),
                new Bad("--klap-np cannot be combined", List.of("--klap-np=intra-warp", "--klap-promote=P")),
                new Bad("--klap-np cannot be combined", List.of("--klap-np=inter-warp", "--klap-pool-size=1M")),
                new Bad("--klap-np cannot be combined", List.of("--klap-no-scalarize", "--klap-np=inter-warp")),
                new Bad("--klap-np-slaves and --klap-np-shared-budget apply to --klap-np", List.of("--klap-np-slaves=4")),
                new Bad("--klap-np-slaves and --klap-np-shared-budget apply to --klap-np",
                        List.of("--klap-granularity=warp", "--klap-np-shared-budget=100K")),
                new Bad("--klap-np-slaves=6: --klap-np=intra-warp builds the intra-warp variant, which needs a power of two",
                        List.of("--klap-np=intra-warp", "--klap-np-slaves=6")),
                new Bad("--klap-np-slaves=6: --klap-np=all builds the intra-warp variant",
                        List.of("--klap-np=all", "--klap-np-slaves=6")),
                new Bad("--klap-np-slaves must be between 2 and 32", List.of("--klap-np=inter-warp", "--klap-np-slaves=64")),
                new Bad("--klap-np-slaves must be between 2 and 32", List.of("--klap-np=inter-warp", "--klap-np-slaves=1")),
                new Bad("--klap-np-slaves=S expected", List.of("--klap-np=inter-warp", "--klap-np-slaves=eight")),
                new Bad("--klap-np-shared-budget: expected a budget such as 48K, got 'lots'",
                        List.of("--klap-np=all", "--klap-np-shared-budget=lots")),
                new Bad("--klap-np-shared-budget: expected a budget such as 48K between 0 and 1048576 bytes",
                        List.of("--klap-np=all", "--klap-np-shared-budget=2048K")))) {
            List<String> args = new java.util.ArrayList<>(b.args);
            args.addAll(List.of("-c", "a.cu"));
            Run r = run(noNvcc, args.toArray(String[]::new));
            assertEquals(2, r.rc, b.args + ": " + r.err);
            assertTrue(r.err.startsWith("klap-nvcc: error: " + b.why), b.args + ": " + r.err);
        }
        // the command line's mode replaces KLAP_FLAGS' (C3); valid combinations get as far as nvcc
        Run mixed = run(Map.of("PATH", dir.toString(), "KLAP_FLAGS", "--klap-granularity=kernel"), "--klap-np=all",
                "-c", "a.cu");
        assertEquals(2, mixed.rc);
        assertTrue(mixed.err.contains("cannot find the real nvcc"), mixed.err);
        for (List<String> ok : List.of(List.of("--klap-np=inter-warp", "--klap-np-slaves=6"),
                List.of("--klap-np=all", "--klap-np-slaves=16", "--klap-np-shared-budget=100K"),
                List.of("--klap-np=intra-warp", "--klap-promote-depth=4"))) {
            List<String> args = new java.util.ArrayList<>(ok);
            args.addAll(List.of("-c", "a.cu"));
            Run r = run(noNvcc, args.toArray(String[]::new));
            if (ok.contains("--klap-promote-depth=4")) {
                assertTrue(r.err.contains("--klap-promote-depth applies to --klap-promote=PA"), r.err);
            } else {
                assertTrue(r.err.contains("cannot find the real nvcc"), ok + ": " + r.err);
            }
        }
    }

    /** klap-nvcc passes --klap-np* to klap as --np*, and adds no -rdc=true (CUDA-NP launches nothing). */
    @Test
    void npOptionsReachKlapAndNvccGetsNoRdc() throws IOException {
        Path fake = succeedingNvcc();
        Path src = dir.resolve("rowsum.cu");
        Files.writeString(src, NP);
        Path keep = dir.resolve("kept");
        Run r = run(Map.of("KLAP_NVCC", fake.toString(), "KLAP_FLAGS", "--klap-np-slaves=4"), "--klap-verbose",
                "--klap-np=all", "--klap-np-shared-budget=100K", "--klap-keep=" + keep, "-arch=sm_90", "-c",
                src.toString(), "-o", dir.resolve("rowsum.o").toString());
        assertEquals(0, r.rc, r.err);
        assertTrue(r.err.contains("klap-nvcc: klap --np=all --no-summary " + src), r.err);
        assertTrue(r.err.contains("--np-slaves=4 --np-shared-budget=102400"), r.err);
        String nvccLine = r.err.lines().filter(l -> l.startsWith("klap-nvcc: " + fake)).findFirst().orElse("");
        assertTrue(nvccLine.contains(" -arch=sm_90 -c "), r.err);
        assertFalse(nvccLine.contains("-rdc"), "CUDA-NP needs no -rdc=true: " + nvccLine);
        Path abs = dir.toAbsolutePath();
        String text = Files.readString(keep.resolve(abs.getRoot().relativize(abs).toString()).resolve("rowsum.cu"));
        assertTrue(text.contains("rowsum_klap_npi") && text.contains("rowsum_klap_npw"), text);
        assertTrue(text.contains("klap::np::IntraWarp<4>"), text);
        assertTrue(Files.isRegularFile(keep.resolve("inc/klap/np.cuh")));
        // a link step in CUDA-NP mode gets no -rdc=true either
        Run link = run(Map.of("KLAP_NVCC", fake.toString()), "--klap-verbose", "--klap-np=all", "a.o", "-o", "prog");
        assertEquals(0, link.rc, link.err);
        assertFalse(link.err.contains("-rdc"), link.err);
    }

    /**
     * klap-nvcc's temporary folders (the transformed copies, and with {@code --klap-keep} the staging
     * folder of the runtime headers) are gone after the run, whether nvcc succeeded or failed; the
     * kept folder stays.
     */
    @Test
    @ResourceLock(KlapNvccBuildTest.TMP_LOCK)  // KlapNvccBuildTest's runs of klap-nvcc would show here
    void temporaryFoldersAreRemovedAfterTheRun() throws IOException {
        Path src = dir.resolve("cdp.cu");
        Files.writeString(src, CDP);
        Path failing = dir.resolve("failing-nvcc");
        Files.writeString(failing, "#!/bin/sh\nexit 3\n");
        assertTrue(failing.toFile().setExecutable(true));
        Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
        Set<Path> before = klapNvccTemps(tmp);
        Path keep = dir.resolve("kept");
        for (List<String> extra : List.of(List.<String>of(), List.of("--klap-keep=" + keep))) {
            for (Path nvcc : List.of(succeedingNvcc(), failing)) {
                List<String> args = new java.util.ArrayList<>(extra);
                args.addAll(List.of("-arch=sm_90", "-c", src.toString(), "-o", dir.resolve("cdp.o").toString()));
                Run r = run(Map.of("KLAP_NVCC", nvcc.toString()), args.toArray(String[]::new));
                assertEquals(nvcc.equals(failing) ? 3 : 0, r.rc, r.err);
                Set<Path> left = klapNvccTemps(tmp);
                left.removeAll(before);
                assertEquals(Set.of(), left, extra + " " + nvcc.getFileName() + ": temporary folders left");
            }
        }
        assertTrue(Files.isRegularFile(keep.resolve("inc/klap/klap.cuh")), "the kept folder was removed");
    }

    private static Set<Path> klapNvccTemps(Path tmp) throws IOException {
        try (Stream<Path> s = Files.list(tmp)) {
            return s.filter(p -> p.getFileName().toString().startsWith("klap-nvcc-"))
                    .collect(Collectors.toCollection(HashSet::new));
        }
    }

    /** A CDP file: parent launches child from the device. */
    static final String CDP = """
            __global__ void child(int *x) { x[threadIdx.x] = 1; }
            __global__ void parent(int *x) { child<<<1, 32>>>(x); }
            """;

    /** A stand-in nvcc in the test directory that accepts everything and does nothing (exit status 0). */
    Path succeedingNvcc() throws IOException {
        Path fake = dir.resolve("nvcc");
        Files.writeString(fake, "#!/bin/sh\nexit 0\n");
        assertTrue(fake.toFile().setExecutable(true));
        return fake;
    }

    /** A fake nvcc that writes a dependency file naming its .cu input (to -MF) and fails. */
    Path failingNvccWritingDeps() throws IOException {
        Path fake = dir.resolve("nvcc");
        Files.writeString(fake, """
                #!/bin/sh
                prev=""
                for a; do
                  case "$a" in *.cu) cu="$a";; esac
                  if [ "$prev" = "-MF" ]; then mf="$a"; fi
                  prev="$a"
                done
                printf 'a.o : %s \\\n    %s\n' "$cu" "${cu%/*/*}/inc/klap/klap.cuh" > "$mf"
                echo "nvcc failed" >&2
                exit 3
                """);
        assertTrue(fake.toFile().setExecutable(true));
        return fake;
    }

    /** B1: a failed compile still leaves a .d that names the user's file, so make recovers once it is fixed. */
    @Test
    void dependencyFilesAreRewrittenWhenNvccFails() throws IOException {
        Path fake = failingNvccWritingDeps();
        Path src = dir.resolve("a.cu");
        Files.writeString(src, CDP);
        Path d = dir.resolve("a.d");
        Run r = run(Map.of("KLAP_NVCC", fake.toString()), "-MD", "-MF", d.toString(), "-c", src.toString(), "-o",
                dir.resolve("a.o").toString());
        assertEquals(3, r.rc, r.err);
        assertTrue(r.err.contains("nvcc failed"), r.err);
        assertEquals("a.o : " + src + "\n", Files.readString(d));
    }

    /** B6: -D, -U (in command-line order, comma lists) and -include reach klap's preprocessing. */
    @Test
    void macrosAndPreIncludesReachKlap() throws IOException {
        assertEquals(List.of("-D", "B=2", "-D", "F(x)=x", "-D", "C", "-U", "A"),
                parse("-DA", "-UA", "-UB", "--define-macro=B=2", "-D", "F(x)=x", "-DC,A", "-UA").macroArgumentsForKlap());
        Path fake = succeedingNvcc();
        Files.writeString(dir.resolve("pre.h"), "#define FROM_PRE 2\n");
        Path src = dir.resolve("m.cu");
        Files.writeString(src, """
                #ifndef NEEDED
                #error NEEDED must be defined
                #endif
                #ifdef GONE
                #error GONE must not be defined
                #endif
                __global__ void child(int *o) { o[threadIdx.x] = 1; }
                __global__ void parent(int *o) {
                #if defined(USE_CDP) && FROM_PRE == 2
                  child<<<1, 32>>>(o);
                #endif
                }
                """);
        Path keep = dir.resolve("kept");
        Run r = run(Map.of("KLAP_NVCC", fake.toString()), "--klap-keep=" + keep, "-DNEEDED,GONE=1", "-UGONE",
                "-include", dir.resolve("pre.h").toString(), "--define-macro", "USE_CDP", "-c", src.toString());
        assertEquals(0, r.rc, r.err);
        Path abs = dir.toAbsolutePath();
        String text = Files.readString(keep.resolve(abs.getRoot().relativize(abs).toString()).resolve("m.cu"));
        assertTrue(text.contains("child_klap_agg"), "the launch under #ifdef USE_CDP is transformed: " + text);
    }

    /** B5/C2: which klap failures are parse-level (the file is compiled as written) and which stay errors. */
    @Test
    void parseLevelFailuresAreRecognised() {
        assertEquals("a.cu:15:3: syntax error near 'P' [klap-parse]", KlapNvcc.parseLevelOnly(
                "a.cu:3:1: warning: something [klap-child-not-defined]\na.cu:15:3: error: syntax error near 'P' [klap-parse]\n"
                + "a.cu:18:3: error: syntax error near 'auto' [klap-parse]\n"));
        assertEquals("a.cu:1:1: the file is not valid UTF-8 text; is it a CUDA source file? [klap-encoding]",
                KlapNvcc.parseLevelOnly("a.cu:1:1: error: the file is not valid UTF-8 text; is it a CUDA source file? "
                        + "[klap-encoding]\n"));
        assertEquals(null, KlapNvcc.parseLevelOnly("a.cu:15:3: error: syntax error near 'P' [klap-parse]\n"
                + "a.cu:4:5: error: device-side cudaDeviceSynchronize() ... [klap-cdp1-sync]\n"));
        assertEquals(null, KlapNvcc.parseLevelOnly("klap: internal error: java.lang.NullPointerException\n"));
    }

    /**
     * A file klap cannot parse (a C++20 template lambda) goes to nvcc as written, with a warning; a
     * UTF-8 byte order mark does not stop klap. nvcc is a fake that succeeds.
     */
    @Test
    void unparsableFilesAreCompiledAsWritten() throws IOException {
        Path fake = succeedingNvcc();
        Path src = dir.resolve("modern.cu");
        // C++23 deducing this, which klap's parser does not read (a template lambda was the example until
        // the front end learned it, 2026-11-29)
        Files.writeString(src, CDP + "struct S { int v; int get(this const S& self) { return self.v; } };\n");
        Run r = run(Map.of("KLAP_NVCC", fake.toString()), "--klap-verbose", "-c", src.toString());
        assertEquals(0, r.rc, r.err);
        assertTrue(r.err.contains("klap-nvcc: warning: " + src + " is compiled without klap (as written): klap "
                + "cannot parse it: " + src + ":3:"), r.err);
        assertTrue(r.err.contains("klap-nvcc: " + fake + " -c " + src + "\n"), "the original goes to nvcc: " + r.err);
        Run werror = run(Map.of("KLAP_NVCC", fake.toString()), "--klap-Werror", "-c", src.toString());
        assertEquals(1, werror.rc, werror.err);
        Path bom = dir.resolve("bom.cu");
        Files.writeString(bom, "\uFEFF" + CDP);
        Path keep = dir.resolve("kept");
        Run b = run(Map.of("KLAP_NVCC", fake.toString()), "--klap-keep=" + keep, "-c", bom.toString());
        assertEquals(0, b.rc, b.err);
        assertFalse(b.err.contains("warning"), b.err);
        Path abs = dir.toAbsolutePath();
        String text = Files.readString(keep.resolve(abs.getRoot().relativize(abs).toString()).resolve("bom.cu"));
        assertTrue(text.startsWith("\uFEFF#include \"klap/klap.cuh\"") && text.contains("child_klap_agg"), text);
    }

    /** C3: a mode on the command line replaces KLAP_FLAGS' mode; --klap-on undoes KLAP_FLAGS=--klap-off. */
    @Test
    void commandLineModeReplacesKlapFlagsMode() throws IOException {
        Path fake = succeedingNvcc();
        Path src = dir.resolve("a.cu");
        Files.writeString(src, CDP);
        Run warp = run(Map.of("KLAP_NVCC", fake.toString(), "KLAP_FLAGS", "--klap-np=all --klap-np-slaves=4"),
                "--klap-verbose", "--klap-granularity=warp", "-c", src.toString());
        assertEquals(0, warp.rc, warp.err);
        assertTrue(warp.err.contains("klap-nvcc: klap --granularity=warp "), warp.err);
        assertFalse(warp.err.contains("--np"), warp.err);
        Run promote = run(Map.of("KLAP_NVCC", fake.toString(), "KLAP_FLAGS",
                "--klap-granularity=kernel --klap-pool-size=1M"), "--klap-verbose", "--klap-promote=P", "-c",
                src.toString());
        assertEquals(0, promote.rc, promote.err);
        assertTrue(promote.err.contains("klap-nvcc: klap --promote=P "), promote.err);
        Run kept = run(Map.of("KLAP_NVCC", fake.toString(), "KLAP_FLAGS", "--klap-granularity=kernel --klap-pool-size=1M"),
                "--klap-verbose", "-c", src.toString());
        assertTrue(kept.err.contains("klap-nvcc: klap --granularity=kernel ") && kept.err.contains("--pool-size 1048576"),
                kept.err);
        Run on = run(Map.of("KLAP_NVCC", fake.toString(), "KLAP_FLAGS", "--klap-off"), "--klap-verbose", "--klap-on",
                "-c", src.toString());
        assertTrue(on.err.contains("klap-nvcc: klap --granularity=block "), on.err);
        Run off = run(Map.of("KLAP_NVCC", fake.toString(), "KLAP_FLAGS", "--klap-off"), "--klap-verbose",
                "--klap-granularity=warp", "-c", src.toString());
        assertFalse(off.err.contains("klap-nvcc: klap "), "KLAP_FLAGS=--klap-off still switches klap off: " + off.err);
    }

    /** B3: klap's output needs C++17; under -std=c++14 the file is compiled as written, with a warning. */
    @Test
    void olderStandardsCompileTheOriginal() throws IOException {
        Path fake = succeedingNvcc();
        Path src = dir.resolve("a.cu");
        Files.writeString(src, CDP);
        Run r = run(Map.of("KLAP_NVCC", fake.toString()), "--klap-verbose", "-std=c++14", "-rdc=true", "-c",
                src.toString());
        assertEquals(0, r.rc, r.err);
        assertTrue(r.err.contains("klap-nvcc: warning: " + src + " is compiled without klap (as written): klap's output "
                + "needs C++17 and the command asks for -std=c++14"), r.err);
        assertTrue(r.err.contains("klap-nvcc: " + fake + " -std=c++14 -rdc=true -c " + src + "\n"), r.err);
        Run r17 = run(Map.of("KLAP_NVCC", fake.toString()), "-std", "c++17", "-c", src.toString());
        assertFalse(r17.err.contains("warning"), r17.err);
    }

    /** B8: a launcher between klap-nvcc and nvcc (ccache) runs first; klap-nvcc's options go after nvcc. */
    @Test
    void launcherBeforeNvccKeepsItsPlace() throws IOException {
        Path fake = succeedingNvcc();
        Path cache = dir.resolve("ccache");
        Files.writeString(cache, "#!/bin/sh\necho \"cached: $*\" >&2\nexec \"$@\"\n");
        assertTrue(cache.toFile().setExecutable(true));
        Path src = dir.resolve("a.cu");
        Files.writeString(src, CDP);
        Run r = run(Map.of(), cache.toString(), fake.toString(), "--klap-verbose", "-c", src.toString());
        assertEquals(0, r.rc, r.err);
        assertTrue(r.err.contains("klap-nvcc: " + cache + " " + fake + " -rdc=true -I"), r.err);
        assertTrue(r.err.contains("cached: " + fake + " -rdc=true"), r.err);
    }

    /** D3: -x cu on a .cuh file: nvcc compiles it as CUDA, klap does not transform it; --klap-verbose says so. */
    @Test
    void cudaHeadersUnderDashXAreNoted() throws IOException {
        Path fake = succeedingNvcc();
        Path src = dir.resolve("k.cuh");
        Files.writeString(src, CDP);
        Run r = run(Map.of("KLAP_NVCC", fake.toString()), "--klap-verbose", "-x", "cu", "-c", src.toString());
        assertEquals(0, r.rc, r.err);
        assertTrue(r.err.contains("klap-nvcc: note: " + src + " is compiled as CUDA (-x cu) but not transformed"), r.err);
    }

    @Test
    void missingNvccIsReported() {
        Run r = run(Map.of("PATH", dir.toString()), "-c", "a.cu");
        assertEquals(2, r.rc);
        assertTrue(r.err.contains("klap-nvcc: error: cannot find the real nvcc"), r.err);
    }

    @Test
    void helpNeedsNoNvcc() {
        Run r = run(Map.of("PATH", dir.toString()), "--help");
        assertEquals(0, r.rc);
        assertTrue(r.out.contains("--klap-granularity=warp|block|kernel"), r.out);
        assertTrue(r.out.contains("--klap-np=intra-warp|inter-warp|all") && r.out.contains("--klap-np-slaves=S")
                && r.out.contains("--klap-np-shared-budget=BYTES"), r.out);
        assertTrue(r.out.contains("CMAKE_CUDA_COMPILER_LAUNCHER"), r.out);
    }
}
