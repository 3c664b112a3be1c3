package klap.bridge;

import static klap.bridge.TestSupport.*;
import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import klap.model.CudaUnit;
import klap.model.Diagnostic;
import klap.model.Expr;

/** Includes, header macros and the diagnostics of the front end. */
class DiagnosticsAndIncludesTest {

    @TempDir
    Path dir;

    /**
     * A default argument may be given by any one declaration of a function ([dcl.fct.default]/4):
     * the model gives each parameter's, from a prototype in the main file or a header, where the
     * definition gives none (a clone or argument record of klap must repeat it).
     */
    @Test
    void defaultArgumentsOfPrototypesInTheMainFileAndHeaders() throws Exception {
        Files.writeString(dir.resolve("decl.cuh"), "#define SCALE 3\n__device__ int gid(int s, int o = 0);\n");
        String src = """
            #include "decl.cuh"
            __device__ int gid(int s = SCALE, int o);
            __device__ int n0();
            __global__ void k(int *p, int n = 4, int m = n0());
            __device__ int gid(int s, int o) { return s + o; }
            __global__ void k(int *p, int n, int m) { p[0] = n + m + gid(); }
            __device__ int own(int s = 2) { return s; }
            __device__ int none(int s) { return s; }
            template <int S = 2, typename T = float, int R> __device__ T tg(T x, int r = 1);
            template <int S, typename T, int R = 4> __device__ T tg(T x, int r) { return x * S * R + r; }
            """;
        CudaUnit u = CudaParser.parse(dir.resolve("d.cu"), src, List.of());
        assertEquals(List.of("= SCALE", "= 0"), fn(u, "gid").declaredDefaults());
        assertEquals("= SCALE", fn(u, "gid").defaultArgument(0, u.file().text()));
        assertEquals(List.of("", "= 4", "= n0()"), fn(u, "k").declaredDefaults());
        assertEquals(List.of(""), fn(u, "own").declaredDefaults(), "the definition's own default is the parameter's");
        assertEquals("= 2", fn(u, "own").defaultArgument(0, u.file().text()));
        assertEquals(List.of(""), fn(u, "none").declaredDefaults());
        assertEquals("", fn(u, "none").defaultArgument(0, u.file().text()));
        assertEquals(List.of(), fn(u, "none").declaredTemplateDefaults());
        // default template arguments of a prototype ([temp.param]/10), where the definition gives none
        assertEquals(List.of("= 2", "= float", ""), fn(u, "tg").declaredTemplateDefaults());
        assertEquals(List.of("", "= 1"), fn(u, "tg").declaredDefaults());
    }

    @Test
    void quotedHeaderMacroUsedInLaunch() throws Exception {
        Files.createDirectories(dir.resolve("inc"));
        Files.writeString(dir.resolve("inc/config.cuh"), "#pragma once\n#define BLOCK 256\n__global__ void hk(int *p);\n");
        Files.writeString(dir.resolve("local.cuh"), "#define GRID 4\n");
        String src = """
            #include "config.cuh"
            #include "local.cuh"
            #include <cuda_runtime.h>
            #include <cstdio>
            __global__ void k(int *p) { }
            void h(int *d) {
              k<<<GRID, BLOCK>>>(d);
            }
            """;
        Path main = dir.resolve("main.cu");
        CudaUnit u = CudaParser.parse(main, src, List.of(dir.resolve("inc")));
        assertEquals(List.of(), u.diagnostics());
        Expr.Launch l = launches(fn(u, "h")).get(0);
        assertEquals("k<<<GRID, BLOCK>>>(d)", slice(u, l.range()));
        assertEquals("GRID", slice(u, l.grid().range()));
        assertEquals("BLOCK", slice(u, l.block().range()));
        assertEquals(java.util.Set.of("hk"), u.kernelsDeclaredElsewhere());
    }

    @Test
    void missingHeader() {
        String src = "#include <stdio.h>\n\n  #include \"nothere.cuh\"\nvoid f() { }\n";
        CudaUnit u = CudaParser.parse(dir.resolve("m.cu"), src, List.of());
        assertEquals(1, u.diagnostics().size(), () -> u.diagnostics().toString());
        Diagnostic d = u.diagnostics().get(0);
        assertEquals("missing-include", d.id());
        assertEquals(Diagnostic.Severity.ERROR, d.severity());
        assertEquals(3, d.line());
        assertEquals(3, d.column());
        assertEquals("cannot find include file \"nothere.cuh\"", d.message());
        assertEquals(dir.resolve("m.cu").toString(), d.file());
        assertEquals(1, u.functions().size());
    }

    @Test
    void syntaxErrorLineAndColumn() {
        String src = """
            __global__ void k(int *p) {
              int a = 1;
                int x = ;
              p[0] = a;
            }
            """;
        CudaUnit u = parse(src);
        assertTrue(u.hasErrors());
        Diagnostic d = u.diagnostics().get(0);
        assertEquals("parse", d.id());
        assertEquals(3, d.line());
        assertEquals(5, d.column());
        assertTrue(d.message().startsWith("syntax error"), d.message());
        assertEquals("/virtual/test.cu:3:5: error: " + d.message() + " [klap-parse]", d.format());
        // the rest of the function is still there
        var stmts = fn(u, "k").body().stmts();
        assertEquals(3, stmts.size());
        assertInstanceOf(klap.model.Stmt.Other.class, stmts.get(1));
        assertEquals("int x = ;", slice(u, stmts.get(1).range()));
        assertEquals("p[0] = a;", slice(u, stmts.get(2).range()));
    }

    @Test
    void syntaxErrorInHeaderIsReportedInTheHeader() throws Exception {
        Files.writeString(dir.resolve("bad.cuh"), "// header\nint ok;\nint bad syntax;\n");
        CudaUnit u = CudaParser.parse(dir.resolve("m.cu"), "#include \"bad.cuh\"\nvoid f() { }\n", List.of());
        assertEquals(1, u.diagnostics().size(), () -> u.diagnostics().toString());
        Diagnostic d = u.diagnostics().get(0);
        assertEquals(dir.resolve("bad.cuh").toString(), d.file());
        assertEquals(3, d.line());
        assertEquals(1, d.column());
    }

    @Test
    void headerNamedThroughTheMainFilesDirectoryAsWritten() {
        Path main = Path.of("src", "main.cu");
        Path dirAbs = main.toAbsolutePath().normalize().getParent();
        assertEquals(Path.of("src", "inc", "u.cuh"), CudaParser.shownPath(dirAbs.resolve("inc/u.cuh").toString(), main));
        assertEquals(Path.of("u.cuh"), CudaParser.shownPath(Path.of("u.cuh").toAbsolutePath().toString(), Path.of("m.cu")));
        // outside the main file's directory, or the main file named absolutely: the path as read
        assertEquals(Path.of("/elsewhere/u.cuh"), CudaParser.shownPath("/elsewhere/u.cuh", main));
        assertEquals(dir.resolve("u.cuh"), CudaParser.shownPath(dir.resolve("u.cuh").toString(), dir.resolve("m.cu")));
    }

    /**
     * Device-side launches in an included header stay as written (klap transforms the file it is
     * given): one note per header, at its first such launch, with their number; host launches and
     * launches in a macro's body are not counted, and a header included twice counts once.
     */
    @Test
    void deviceLaunchesInAHeaderGetOneNotePerHeader() throws Exception {
        Files.writeString(dir.resolve("kernels.cuh"), """
            #pragma once
            __global__ void child(int *a, int i) { a[i] = 1; }
            #define LAUNCH_IN_MACRO(a) child<<<1, 1>>>(a, 0)
            __device__ void helper(int *a) { child<<<1, 32>>>(a, 1); }
            __global__ void parent(int *a, int n) {
              if (threadIdx.x < n) child<<<1, 32>>>(a, threadIdx.x);
              helper(a);
            }
            template <typename T> __global__ void tparent(T *a) { child<<<1, 1>>>(a, 2); }
            void host_side(int *a) { parent<<<1, 64>>>(a, 64); }
            """);
        Files.writeString(dir.resolve("host_only.cuh"), "__global__ void hk(int *a) { }\n"
            + "inline void go(int *a) { hk<<<1, 1>>>(a); }\n");
        String src = "#include \"kernels.cuh\"\n#include \"kernels.cuh\"\n#include \"host_only.cuh\"\n"
            + "int main() { int *a = nullptr; parent<<<1, 64>>>(a, 64); }\n";
        CudaUnit u = CudaParser.parse(dir.resolve("main.cu"), src, List.of());
        assertEquals(1, u.diagnostics().size(), () -> u.diagnostics().toString());
        Diagnostic d = u.diagnostics().get(0);
        assertEquals(Diagnostic.Severity.NOTE, d.severity());
        assertEquals("header-launches", d.id());
        assertEquals(dir.resolve("kernels.cuh").toString(), d.file());
        assertEquals(4, d.line(), "the first launch outside a macro: helper's");
        assertEquals(39, d.column());
        assertTrue(d.message().startsWith("3 device-side launch sites in this included file (kernels.cuh, included "
            + "by main.cu) stay as written"), d.message());
        assertTrue(d.message().contains("klap kernels.cuh -o OUT"), d.message());
        assertFalse(u.hasErrors());
    }

    @Test
    void launchInsideMacroBodyIsALaunchLeftToThePasses() {
        String src = """
            #define LAUNCH(p) k<<<1, 1>>>(p)
            __global__ void k(int *p) { }
            void h(int *d) {
              int x = 0;
                LAUNCH(d);
            }
            """;
        CudaUnit u = parse(src);
        assertEquals(List.of(), u.diagnostics());
        List<Expr.Launch> ls = launches(fn(u, "h"));
        assertEquals(1, ls.size());
        Expr.Launch l = ls.get(0);
        assertTrue(l.inMacro());
        assertEquals("k", l.kernelName());
        assertEquals("LAUNCH(d)", slice(u, l.range()), "the launch's range is the expansion");
        assertEquals(0, l.calleeRange().length());
        assertEquals(0, l.argsRange().length());
        assertEquals(1, l.args().size());
        assertInstanceOf(Expr.Name.class, l.args().get(0));
        assertEquals("d", ((Expr.Name) l.args().get(0)).name());
    }

    @Test
    void launchInsideMacroArgumentIsALaunchLeftToThePasses() {
        String src = """
            #define CHECK(x) do { if ((x) != cudaSuccess) return; } while (0)
            template <int N> __global__ void k(int *p) { }
            void h(int *d) {
              CHECK((k<4><<<1, 1>>>(d), cudaGetLastError()));
              k<4><<<1, 1>>>(d);
            }
            """;
        CudaUnit u = parse(src);
        assertEquals(List.of(), u.diagnostics());
        List<Expr.Launch> ls = launches(fn(u, "h"));
        assertEquals(2, ls.size());
        assertTrue(ls.get(0).inMacro());
        assertEquals("k", ls.get(0).kernelName());
        assertEquals("<4>", ls.get(0).templateArgs());
        assertEquals(4, u.file().line(ls.get(0).range().offset()));
        assertFalse(ls.get(1).inMacro(), "a launch written out beside it is an ordinary launch");
        assertEquals("k<4><<<1, 1>>>(d)", slice(u, ls.get(1).range()));
    }

    @Test
    void launchInMacroWithoutAKernelNameIsAnError() {
        String src = """
            #define LAUNCH(f, p) (f)<<<1, 1>>>(p)
            __global__ void k(int *p) { }
            void h(int *d) {
              LAUNCH(k, d);
            }
            """;
        CudaUnit u = parse(src);
        assertEquals(1, u.diagnostics().size(), () -> u.diagnostics().toString());
        Diagnostic d = u.diagnostics().get(0);
        assertEquals("launch-in-macro", d.id());
        assertEquals(Diagnostic.Severity.ERROR, d.severity());
        assertEquals(4, d.line());
        assertEquals(3, d.column());
    }

    @Test
    void unusedLaunchMacroIsNoError() {
        CudaUnit u = parse("#define LAUNCH(p) k<<<1, 1>>>(p)\n__global__ void k(int *p) { }\n");
        assertEquals(List.of(), u.diagnostics());
    }

    @Test
    void garbageNeverThrows() {
        CudaUnit u = parse("}}} <<< >>> template < ( \" unterminated\n#if\n");
        assertTrue(u.hasErrors());
        assertNotNull(u.functions());
    }

    @Test
    void quotedToolkitHeadersAreNotReported() {
        CudaUnit u = parse("#include \"cuda_runtime.h\"\n#include \"stdio.h\"\nvoid f() { printf(\"x\"); }\n");
        assertEquals(List.of(), u.diagnostics());
    }
}
