package klap.bridge;

import static klap.bridge.TestSupport.*;
import static org.junit.jupiter.api.Assertions.*;

import java.util.List;

import org.junit.jupiter.api.Test;

import klap.model.CudaUnit;
import klap.model.Expr;
import klap.model.FunctionDef;
import klap.model.Stmt;

/** Kernel launches: configuration forms, template and qualified kernels, exact ranges. */
class LaunchTest {

    static final String SRC = """
        namespace ns { __global__ void nk(int *p) { } }
        template <typename T, int K> __global__ void tk(T *a) { a[0] = K; }
        __global__ void k(int *p, int n) { p[0] = n; }
        __global__ void parent(int *d, int n, cudaStream_t s) {
          k<<<1, 32>>>(d, n);
          k<<<(n + 255) / 256, 256, 64>>>(d, n);
          k<<<dim3(2, 2), dim3(16, 16), 0, s>>>(d + 1, n);
          k<<< n , 1 , 0 , cudaStreamFireAndForget >>>( d , n );
          tk<float, 4><<<1, 1>>>((float *)d);
          ns::nk<<<1, 1>>>(d);
          if (n > 0) k<<<1, 1>>>(d, 0);
        }
        """;

    @Test
    void fourConfigurationForms() {
        CudaUnit u = parse(SRC);
        assertFalse(u.hasErrors(), () -> u.diagnostics().toString());
        FunctionDef parent = fn(u, "parent");
        List<Expr.Launch> ls = launches(parent);
        assertEquals(7, ls.size());

        Expr.Launch l0 = ls.get(0);
        assertEquals("k<<<1, 32>>>(d, n)", slice(u, l0.range()));
        assertEquals("k", l0.kernelName());
        assertEquals("k", slice(u, l0.calleeRange()));
        assertNull(l0.templateArgs());
        assertEquals("1", slice(u, l0.grid().range()));
        assertEquals("32", slice(u, l0.block().range()));
        assertNull(l0.sharedMem());
        assertNull(l0.stream());
        assertEquals(2, l0.args().size());
        assertEquals("d, n", slice(u, l0.argsRange()));
        assertEquals("d", slice(u, l0.args().get(0).range()));
        assertInstanceOf(Expr.Name.class, l0.args().get(0));

        Expr.Launch l1 = ls.get(1);
        assertEquals("(n + 255) / 256", slice(u, l1.grid().range()));
        assertEquals("256", slice(u, l1.block().range()));
        assertEquals("64", slice(u, l1.sharedMem().range()));
        assertNull(l1.stream());
        assertInstanceOf(Expr.Binary.class, l1.grid());
        assertEquals("/", ((Expr.Binary) l1.grid()).op());

        Expr.Launch l2 = ls.get(2);
        assertEquals("k<<<dim3(2, 2), dim3(16, 16), 0, s>>>(d + 1, n)", slice(u, l2.range()));
        Expr.Call grid = assertInstanceOf(Expr.Call.class, l2.grid());
        assertEquals("dim3", grid.calleeName());
        assertEquals("dim3(2, 2)", slice(u, grid.range()));
        assertEquals("2, 2", slice(u, grid.argsRange()));
        assertEquals("dim3(16, 16)", slice(u, l2.block().range()));
        assertEquals("0", slice(u, l2.sharedMem().range()));
        assertEquals("s", slice(u, l2.stream().range()));
        assertEquals(Expr.NameKind.PARAM, ((Expr.Name) l2.stream()).kind());
        assertEquals("d + 1", slice(u, l2.args().get(0).range()));

        Expr.Launch l3 = ls.get(3);
        assertEquals("k<<< n , 1 , 0 , cudaStreamFireAndForget >>>( d , n )", slice(u, l3.range()));
        assertEquals("cudaStreamFireAndForget", slice(u, l3.stream().range()));
        assertEquals(" d , n ", slice(u, l3.argsRange()));
    }

    @Test
    void templateAndQualifiedKernels() {
        CudaUnit u = parse(SRC);
        List<Expr.Launch> ls = launches(fn(u, "parent"));
        Expr.Launch t = ls.get(4);
        assertEquals("tk", t.kernelName());
        assertEquals("tk<float, 4>", slice(u, t.calleeRange()));
        assertEquals("<float, 4>", t.templateArgs());
        assertEquals("tk<float, 4><<<1, 1>>>((float *)d)", slice(u, t.range()));
        assertEquals("(float *)d", slice(u, t.argsRange()));
        Expr.Cast c = assertInstanceOf(Expr.Cast.class, t.args().get(0));
        assertEquals("float *", c.typeText());

        Expr.Launch q = ls.get(5);
        assertEquals("ns::nk", q.kernelName());
        assertEquals("ns::nk", slice(u, q.calleeRange()));
        assertEquals("ns::nk<<<1, 1>>>(d)", slice(u, q.range()));
    }

    @Test
    void launchIsTheExpressionOfItsStatement() {
        CudaUnit u = parse(SRC);
        FunctionDef parent = fn(u, "parent");
        Stmt.ExprStmt first = assertInstanceOf(Stmt.ExprStmt.class, parent.body().stmts().get(0));
        assertEquals("k<<<1, 32>>>(d, n);", slice(u, first.range()));
        assertInstanceOf(Expr.Launch.class, first.expr());
        Stmt.If iff = assertInstanceOf(Stmt.If.class, parent.body().stmts().get(6));
        Stmt.ExprStmt then = assertInstanceOf(Stmt.ExprStmt.class, iff.then());
        assertEquals("k<<<1, 1>>>(d, 0);", slice(u, then.range()));
        assertInstanceOf(Expr.Launch.class, then.expr());
    }

    /**
     * An object-like macro before {@code <<<} names the kernel it expands to (through a second
     * macro, with namespace and template arguments); the callee range stays the macro's name. A
     * function-like macro, or a name that is no macro, is read as written (2026-11-28).
     */
    @Test
    void kernelNamedByAnObjectLikeMacro() {
        String src = """
            namespace ns { template <int M> __global__ void tk(int *d) { } }
            __global__ void k(int *d) { }
            #define TK ns::tk<3>
            #define K2 TK
            #define PLAIN k
            #define F(x) k
            __global__ void p(int *d) {
              K2<<<1, 1>>>(d);
              PLAIN<<<1, 1>>>(d);
              F(0)<<<1, 1>>>(d);
              k<<<1, 1>>>(d);
            }
            """;
        CudaUnit u = parse(src);
        assertFalse(u.hasErrors(), () -> u.diagnostics().toString());
        List<Expr.Launch> ls = launches(fn(u, "p"));
        assertEquals("ns::tk", ls.get(0).kernelName());
        assertEquals("<3>", ls.get(0).templateArgs());
        assertEquals("ns::tk<3>", ls.get(0).callee());
        assertEquals("K2", slice(u, ls.get(0).calleeRange()));
        assertEquals("k", ls.get(1).kernelName());
        assertNull(ls.get(1).templateArgs());
        assertEquals("PLAIN", slice(u, ls.get(1).calleeRange()));
        assertEquals("F(0)", ls.get(2).kernelName());
        assertEquals("k", ls.get(3).callee());
        assertFalse(ls.stream().anyMatch(Expr.Launch::inMacro));
    }

    @Test
    void undeclaredTemplateKernelWithTypeArguments() {
        String src = """
            #include <vector>
            __global__ void p(int *d) {
              k2<std::vector<int>><<<1, 1>>>(d);
            }
            """;
        CudaUnit u = parse(src);
        Expr.Launch l = launches(fn(u, "p")).get(0);
        assertEquals("k2", l.kernelName());
        assertEquals("<std::vector<int>>", l.templateArgs());
        assertEquals("k2<std::vector<int>><<<1, 1>>>(d)", slice(u, l.range()));
        assertEquals("d", slice(u, l.argsRange()));
    }

    @Test
    void chevronsInCommentsAndStringsAreLeftAlone() {
        String src = """
            __global__ void k(int x) { }
            void h() {
              // k<<<1, 1>>>(0);
              const char *s = "k<<<1,1>>>(0)";
              /* k<<<2, 2>>>(0); */
              k<<<1, 1>>>(1);
              int a = 1 << 3 >> 1;
            }
            """;
        CudaUnit u = parse(src);
        assertFalse(u.hasErrors(), () -> u.diagnostics().toString());
        List<Expr.Launch> ls = launches(fn(u, "h"));
        assertEquals(1, ls.size());
        assertEquals("k<<<1, 1>>>(1)", slice(u, ls.get(0).range()));
    }

    /**
     * The spaced chevrons nvcc 13 accepts (Visual Studio's formatter writes {@code k << <g, b >> >(a)};
     * found in a public BFS program, 2026-11-29): the same launch, with its exact ranges.
     */
    @Test
    void spacedChevronsAreLaunches() {
        String src = """
            __global__ void k(int *p, int n) { p[0] = n; }
            __global__ void parent(int *d, int n) {
              k << <1, 32 >> > (d, n);
              k <<\t<n, 64, 0>>>(d, 1);
              k<< /* c */ <2, 2>> /* d */
                >(d, n >> 1);
              int a = n << 3 >> 1;
            }
            int main() { int *d = 0; parent << <4, 64 >> > (d, 3); return 0; }
            """;
        CudaUnit u = parse(src);
        assertFalse(u.hasErrors(), () -> u.diagnostics().toString());
        List<Expr.Launch> ls = launches(fn(u, "parent"));
        assertEquals(3, ls.size());
        assertEquals("k << <1, 32 >> > (d, n)", slice(u, ls.get(0).range()));
        assertEquals("1", slice(u, ls.get(0).grid().range()));
        assertEquals("32", slice(u, ls.get(0).block().range()));
        assertEquals("d, n", slice(u, ls.get(0).argsRange()));
        assertEquals("n", slice(u, ls.get(1).grid().range()));
        assertEquals("0", slice(u, ls.get(1).sharedMem().range()));
        assertEquals("d, 1", slice(u, ls.get(1).argsRange()));
        assertEquals("2", slice(u, ls.get(2).grid().range()));
        assertEquals("d, n >> 1", slice(u, ls.get(2).argsRange()));
        List<Expr.Launch> host = launches(fn(u, "main"));
        assertEquals(1, host.size());
        assertEquals("parent", host.get(0).kernelName());
        assertEquals("d, 3", slice(u, host.get(0).argsRange()));
        assertTrue(CudaParser.mayHoldLaunch("k << /* x */ <1, 1>>>()") && CudaParser.mayHoldLaunch("k<<<1,1>>>()"));
        assertFalse(CudaParser.mayHoldLaunch("int a = n << 3 >> 1; cout << x;"));
    }

    /** nvcc refuses a newline inside the opener and {@code < <<}: so does klap (a syntax error, not a launch). */
    @Test
    void openerSplitByANewlineIsNoLaunch() {
        String src = """
            __global__ void k(int *p) { }
            __global__ void parent(int *d) {
              k <<
                <1, 1>>>(d);
            }
            """;
        CudaUnit u = parse(src);
        assertTrue(u.hasErrors());
        assertEquals(0, launches(fn(u, "parent")).size());
    }

    @Test
    void extendedLambdaParses() {
        String src = """
            __global__ void k(int *p) {
              auto f = [=] __device__ (int x) { return x + 1; };
              p[0] = f(1);
            }
            """;
        CudaUnit u = parse(src);
        assertFalse(u.hasErrors(), () -> u.diagnostics().toString());
        Stmt.Decl d = assertInstanceOf(Stmt.Decl.class, fn(u, "k").body().stmts().get(0));
        assertEquals("[=] __device__ (int x) { return x + 1; }", slice(u, d.vars().get(0).init().range()));
    }
}
