package klap.transform;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import klap.bridge.CudaParser;
import klap.model.CudaUnit;
import klap.model.Expr;
import klap.model.FunctionDef;
import klap.model.Stmt;
import org.junit.jupiter.api.Test;

/** Uniformity, convergence regions and the edit engine. */
class AnalysisTest {

    static CudaUnit parse(String code) {
        CudaUnit u = CudaParser.parse(Path.of("t.cu"), code, List.of());
        assertFalse(u.hasErrors(), u.diagnostics().toString());
        return u;
    }

    static FunctionDef fn(CudaUnit u, String name) {
        return u.functions().stream().filter(f -> f.name().equals(name)).findFirst().orElseThrow();
    }

    static Stmt launchStmt(FunctionDef f) {
        return Trees.collect(f.body(), Stmt.ExprStmt.class).stream().filter(s -> s.expr() instanceof Expr.Launch)
                .findFirst().orElseThrow();
    }

    @Test
    void uniformAcrossIterationsExcludesWhatTheLoopDefines() {
        CudaUnit u = parse("""
                __global__ void c(int a, int b, int d, int e) {}
                __global__ void k(int n, int m) {
                  int s = n + 1;
                  int t = 0;
                  for (int r = 0; r < 3; ++r) {
                    int q = r * 2;
                    t += 1;
                    for (int j = 0; j < 2; ++j) c<<<1, 1>>>(q, s, t, n * m);
                  }
                  c<<<1, 1>>>(t, s, n, 0);
                }
                """);
        FunctionDef k = fn(u, "k");
        Uniformity uni = new Uniformity(k);
        List<Stmt.ExprStmt> launches = Trees.collect(k.body(), Stmt.ExprStmt.class).stream()
                .filter(x -> x.expr() instanceof Expr.Launch).toList();
        List<Expr> in = ((Expr.Launch) launches.get(0).expr()).args();
        // every argument is uniform in each iteration...
        assertTrue(in.stream().allMatch(uni::isUniform), uni.divergentLocals().toString());
        // ...but q (declared in the loop) and t (assigned in it) differ between iterations; s and n * m do not
        assertFalse(uni.isUniformAcrossIterations(in.get(0), launches.get(0)));
        assertTrue(uni.isUniformAcrossIterations(in.get(1), launches.get(0)));
        assertFalse(uni.isUniformAcrossIterations(in.get(2), launches.get(0)));
        assertTrue(uni.isUniformAcrossIterations(in.get(3), launches.get(0)));
        // after the loop, no loop is around the launch: t is as uniform as it is
        List<Expr> after = ((Expr.Launch) launches.get(1).expr()).args();
        assertTrue(uni.isUniformAcrossIterations(after.get(0), launches.get(1)));
    }

    @Test
    void uniformityFollowsDefinitionsAndControl() {
        CudaUnit u = parse("""
                __global__ void k(int* p, int n) {
                  int a = blockIdx.x * blockDim.x;          // uniform
                  int b = a + threadIdx.x;                  // divergent: threadIdx
                  int c = p[0];                             // divergent: memory load
                  int d = n * 2;                            // uniform
                  if (b < n) d = 3;                         // assigned under divergent control
                  int e = min(a, n);                        // pure call of uniform values
                  int f = 0;
                  for (int i = 0; i < n; i++) f += i;       // uniform loop counter and sum
                  int g; int* q = &g;                       // address taken
                  p[a + b + c + d + e + f + g] = 0;
                }
                """);
        Uniformity uni = new Uniformity(fn(u, "k"));
        assertEquals(java.util.Set.of("b", "c", "d", "g", "q"), uni.divergentLocals());
    }

    @Test
    void deviceFunctionParametersAreNotUniform() {
        CudaUnit u = parse("__device__ int f(int x) { int y = x; return y; }");
        assertTrue(new Uniformity(fn(u, "f")).divergentLocals().contains("y"));
    }

    @Test
    void earlyReturnGuardBecomesTheRegion() {
        CudaUnit u = parse("""
                __global__ void c(int x) {}
                __global__ void k(int n) {
                  int i = threadIdx.x;
                  if (i >= n) return;
                  if (i % 2) c<<<1, 1>>>(i);
                }
                """);
        FunctionDef k = fn(u, "k");
        Convergence conv = new Convergence(u.file(), k, new Uniformity(k));
        var p = assertInstanceOf(Convergence.Placement.Deferred.class, conv.place(launchStmt(k)));
        assertEquals("if (i >= n) return;", u.file().slice(p.region().anchor().range()));
        assertEquals(1, p.region().guards().size());
        assertEquals(k.body().range().end() - 1, p.region().end());
    }

    @Test
    void divergentIfAroundTheLaunchIsTheRegion() {
        CudaUnit u = parse("""
                __global__ void c(int x) {}
                __global__ void k(int n) {
                  if (n > 2) { if (threadIdx.x < n) { int z = 1; c<<<1, 1>>>(z); } }
                }
                """);
        FunctionDef k = fn(u, "k");
        var p = assertInstanceOf(Convergence.Placement.Deferred.class,
                new Convergence(u.file(), k, new Uniformity(k)).place(launchStmt(k)));
        assertTrue(u.file().slice(p.region().anchor().range()).startsWith("if (threadIdx.x < n)"));
        assertNull(p.region().guardBlock());
    }

    @Test
    void divergentLoopMakesItImmediateAndAReturnInsideTheRegionIsAnExit() {
        CudaUnit u = parse("""
                __global__ void c(int x) {}
                __global__ void k1(int n) { if (threadIdx.x < n) { c<<<1, 1>>>(1); if (n) return; } }
                __global__ void k2(int* n) { for (int i = 0; i < n[threadIdx.x]; i++) c<<<1, 1>>>(i); }
                __global__ void k3(int n) { for (int i = 0; i < n; i++) { if (threadIdx.x == i) break; c<<<1, 1>>>(i); } }
                __global__ void k4(int n) { for (int i = 0; i < n; i++) { if (threadIdx.x == i) continue; c<<<1, 1>>>(i); } }
                """);
        // a return inside the region after the launch is an exit of the region: it is made to pass
        // through the region's end (the flush), so the launch recorded before it is not lost
        FunctionDef k1 = fn(u, "k1");
        var d = assertInstanceOf(Convergence.Placement.Deferred.class,
                new Convergence(u.file(), k1, new Uniformity(k1)).place(launchStmt(k1)));
        assertEquals(1, d.region().exits().size());
        assertEquals("return;", u.file().slice(d.region().exits().get(0).range()));
        for (String name : List.of("k2", "k3")) {
            FunctionDef k = fn(u, name);
            assertInstanceOf(Convergence.Placement.Immediate.class,
                    new Convergence(u.file(), k, new Uniformity(k)).place(launchStmt(k)), name);
        }
        // a continue guard in a uniform loop's body is rewritten like an early return
        FunctionDef k4 = fn(u, "k4");
        var p = assertInstanceOf(Convergence.Placement.Deferred.class,
                new Convergence(u.file(), k4, new Uniformity(k4)).place(launchStmt(k4)));
        assertEquals("if (threadIdx.x == i) continue;", u.file().slice(p.region().anchor().range()));
    }

    @Test
    void editSetOrdersInsertionsAndRejectsOverlaps() {
        String t = "abcdef";
        EditSet e = new EditSet(t).insert(2, "[").replace(2, 4, "XY").insert(4, "]").insert(2, "<");
        assertEquals("ab[<XY]ef", e.render());
        EditSet f = new EditSet(t).replaceFine(3, 4, "D");
        String slice = f.render(2, 5);
        assertEquals("cDe", slice);
        f.replace(2, 5, "(" + slice + ")");
        assertEquals("ab(cDe)f", f.render());
        EditSet bad = new EditSet(t).replace(1, 4, "x").replace(3, 5, "y");
        assertThrows(IllegalStateException.class, bad::render);
    }
}
