package klap.bridge;

import static klap.bridge.TestSupport.*;
import static org.junit.jupiter.api.Assertions.*;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import klap.model.CudaUnit;
import klap.model.FunctionDef;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link FunctionDef#signatureNeed}: what the text of a definition's signature needs to be valid at an
 * earlier point of the file (where the transforms declare a function's variants).
 */
class SignatureNeedsTest {
    @TempDir
    Path dir;

    /** @return the offset of the first declaration of {@code f} (where aggregation declares its record) */
    private static int firstDecl(FunctionDef f) {
        return f.firstDeclaration().offset();
    }

    @Test
    void aTypedefAfterThePrototype() {
        String src = """
            __global__ void k(float *out, int n);
            typedef float real;
            __global__ void k(real *out, int n) { out[0] = n; }
            """;
        CudaUnit u = parse(src);
        FunctionDef k = fn(u, "k");
        assertEquals("real", k.signatureNeed().name());
        assertEquals(src.indexOf("real;"), k.signatureNeed().offset());
        assertEquals("real", k.signatureUndeclaredAt(firstDecl(k)));
        assertEquals("real", k.signatureUndeclaredAt(src.indexOf("typedef")), "at the typedef itself it is not declared yet");
        assertNull(k.signatureUndeclaredAt(k.range().offset()));
    }

    @Test
    void aUsingAliasAndAConstantInABound() {
        String src = """
            __global__ void k(int *out);
            using idx = int;
            constexpr int kN = 4;
            __global__ void k(idx out[kN]) { out[0] = 1; }
            """;
        FunctionDef k = fn(parse(src), "k");
        assertEquals("kN", k.signatureNeed().name(), "the latest of the two");
        assertEquals("kN", k.signatureUndeclaredAt(firstDecl(k)));
    }

    @Test
    void typesDeclaredBeforeThePrototypeAreVisible() {
        String src = """
            typedef float real;
            struct Node { int x; };
            __global__ void k(real *out, Node n, Node *q);
            void host() { }
            __global__ void k(real *out, Node n, Node *q) { out[0] = n.x; }
            """;
        FunctionDef k = fn(parse(src), "k");
        assertNull(k.signatureUndeclaredAt(firstDecl(k)), () -> String.valueOf(k.signatureNeed()));
    }

    @Test
    void aClassTakenByValueMustBeDefined() {
        String src = """
            struct Node;
            __global__ void k(Node n, int *q);
            struct Node { int x; };
            __global__ void k(Node n, int *q) { q[0] = n.x; }
            """;
        FunctionDef k = fn(parse(src), "k");
        assertEquals("Node", k.signatureUndeclaredAt(firstDecl(k)), "a record member of type Node must be complete");
        assertEquals(src.indexOf("Node {"), k.signatureNeed().offset());
        assertNull(k.lateNeed(firstDecl(k), false), "a prototype needs no complete class");
    }

    @Test
    void oneNeedOfEachKindLatestFirst() {
        String src = """
            struct Pair;
            __global__ void k(float *out, Pair p);
            typedef float real;
            struct Pair { int a; };
            __global__ void k(real *out, Pair p) { out[0] = p.a; }
            """;
        FunctionDef k = fn(parse(src), "k");
        assertEquals(List.of(FunctionDef.NeedKind.CLASS_BY_VALUE, FunctionDef.NeedKind.NAME),
                k.signatureNeeds().stream().map(FunctionDef.Need::kind).toList());
        assertEquals("Pair", k.lateNeed(firstDecl(k), true).name());
        assertEquals("real", k.lateNeed(firstDecl(k), false).name());
        assertNull(k.lateNeed(src.indexOf("struct Pair {"), false));
        assertEquals("Pair", k.lateNeed(src.indexOf("struct Pair {"), true).name());
    }

    @Test
    void aClassThroughAPointerNeedsOnlyItsDeclaration() {
        String src = """
            struct Node;
            __global__ void k(Node *n, const Node &r);
            struct Node { int x; };
            __global__ void k(Node *n, const Node &r) { n->x = r.x; }
            """;
        FunctionDef k = fn(parse(src), "k");
        assertNull(k.signatureUndeclaredAt(firstDecl(k)), () -> String.valueOf(k.signatureNeed()));
    }

    @Test
    void aClassTemplateTakenByValueNeedsTheTemplatesDefinition() {
        String src = """
            template <class T> struct Box;
            __global__ void k(Box<int> b, int *q);
            template <class T> struct Box { T v; };
            __global__ void k(Box<int> b, int *q) { q[0] = b.v; }
            """;
        FunctionDef k = fn(parse(src), "k");
        assertEquals("Box", k.signatureUndeclaredAt(firstDecl(k)));
    }

    @Test
    void aConstantInTheLaunchBounds() {
        String src = """
            constexpr int kEarly = 64;
            __global__ void k(int *out);
            __global__ void e(int *out);
            constexpr int kB = 128;
            __global__ void __launch_bounds__(kB) k(int *out) { out[0] = 1; }
            __global__ void __launch_bounds__(kEarly, 2) e(int *out) { out[0] = 1; }
            """;
        CudaUnit u = parse(src);
        FunctionDef k = fn(u, "k");
        assertEquals("kB", k.signatureUndeclaredAt(firstDecl(k)), "an attribute's arguments are tokens: looked up by name");
        assertEquals(src.indexOf("kB ="), k.signatureNeed().offset());
        FunctionDef e = fn(u, "e");
        assertNull(e.signatureUndeclaredAt(firstDecl(e)), () -> String.valueOf(e.signatureNeeds()));
    }

    @Test
    void aTemplateParameterInTheLaunchBoundsDoesNotCount() {
        String src = """
            template <int B> __global__ void __launch_bounds__(B) child(unsigned *out, int i);
            template <int B> __global__ void __launch_bounds__(B) child(unsigned *out, int i) { out[threadIdx.x] = i; }
            template <int C> __global__ void __launch_bounds__(C, 2) solo(unsigned *out) { out[0] = C; }
            """;
        CudaUnit u = parse(src);
        assertNull(fn(u, "child").signatureNeed(), () -> String.valueOf(fn(u, "child").signatureNeeds()));
        assertNull(fn(u, "solo").signatureNeed(), () -> String.valueOf(fn(u, "solo").signatureNeeds()));
    }

    @Test
    void qualifiedNamesInTheLaunchBounds() {
        String src = """
            namespace cfg { constexpr int kA = 32; }
            struct Cfg;
            __global__ void k(int *out);
            __global__ void c(int *out);
            namespace cfg { constexpr int kB = 64; }
            struct Cfg { static constexpr int kB = 64; };
            __global__ void __launch_bounds__(cfg::kB) k(int *out) { out[0] = 1; }
            __global__ void __launch_bounds__(Cfg::kB) c(int *out) { out[0] = 1; }
            __global__ void __launch_bounds__(cfg::kA) e(int *out) { out[0] = 1; }
            """;
        CudaUnit u = parse(src);
        FunctionDef k = fn(u, "k");
        assertEquals("kB", k.signatureUndeclaredAt(firstDecl(k)), () -> String.valueOf(k.signatureNeeds()));
        FunctionDef c = fn(u, "c");
        assertTrue(c.signatureNeeds().contains(new FunctionDef.Need("Cfg", src.indexOf("Cfg {"), FunctionDef.NeedKind.CLASS_BY_VALUE)),
                () -> "Cfg::kB needs Cfg complete: " + c.signatureNeeds());
        assertNotNull(c.signatureUndeclaredAt(firstDecl(c)));
        assertNull(fn(u, "e").signatureUndeclaredAt(src.indexOf("__global__ void k")), () -> String.valueOf(fn(u, "e").signatureNeeds()));
    }

    @Test
    void aUsingDirectiveOrDeclarationAfterThePrototype() {
        String src = """
            namespace ns { typedef unsigned word_t; typedef float real; }
            namespace ms { typedef int idx_t; }
            using namespace ms;
            __global__ void a(unsigned *out);
            __global__ void b(float *out, int i);
            __global__ void c(unsigned *out);
            using namespace ns;
            using ms::idx_t;
            namespace N = ns;
            __global__ void a(word_t *out) { out[0] = 1; }
            __global__ void b(real *out, idx_t i) { out[0] = i; }
            __global__ void c(N::word_t *out) { out[0] = 1; }
            """;
        CudaUnit u = parse(src);
        FunctionDef a = fn(u, "a");
        assertEquals("word_t", a.signatureUndeclaredAt(firstDecl(a)), "visible from the using-directive only");
        assertEquals(src.indexOf("using namespace ns;"), a.signatureNeed().offset());
        // idx_t was visible from the first using-directive, before the prototypes
        FunctionDef b = fn(u, "b");
        assertEquals("real", b.signatureUndeclaredAt(firstDecl(b)));
        FunctionDef c = fn(u, "c");
        assertEquals("N", c.signatureUndeclaredAt(firstDecl(c)), "a namespace alias is a declaration");
    }

    @Test
    void aNamespaceMemberSeenFromItsOwnNamespaceNeedsNoUsing() {
        String src = """
            namespace ns { typedef float real; __global__ void k(real *out); }
            using namespace ns;
            __global__ void ns::k(real *out) { out[0] = 1; }
            """;
        FunctionDef k = fn(parse(src), "k");
        assertNull(k.signatureUndeclaredAt(firstDecl(k)), () -> String.valueOf(k.signatureNeeds()));
    }

    @Test
    void anElaboratedClassNameDeclaresItself() {
        String src = """
            __global__ void k(struct Node *nodes, int i);
            struct Node { int v; };
            __global__ void k(struct Node *nodes, int i) { nodes[i].v = i; }
            """;
        FunctionDef k = fn(parse(src), "k");
        assertNull(k.signatureUndeclaredAt(firstDecl(k)), () -> String.valueOf(k.signatureNeeds()));
    }

    @Test
    void aMacroDefinedAfterThePrototype() {
        String src = """
            __global__ void k(float *out);
            #define REAL float
            __global__ void k(REAL *out) { out[0] = 1; }
            """;
        FunctionDef k = fn(parse(src), "k");
        assertEquals("REAL", k.signatureUndeclaredAt(firstDecl(k)));
        assertNull(k.signatureUndeclaredAt(k.range().offset()));
    }

    @Test
    void aNestedMacroDefinedAfterThePrototype() {
        String src = """
            #define PTR(t) t *
            __global__ void k(float *out);
            #define REAL float
            __global__ void k(PTR(REAL) out) { out[0] = 1; }
            """;
        FunctionDef k = fn(parse(src), "k");
        assertEquals("REAL", k.signatureUndeclaredAt(firstDecl(k)));
    }

    @Test
    void aHeaderIncludedAfterThePrototypeCountsAtItsInclude() throws Exception {
        Files.writeString(dir.resolve("types.cuh"), "#pragma once\ntypedef float real;\n");
        String src = """
            __global__ void k(float *out);
            #include "types.cuh"
            __global__ void k(real *out) { out[0] = 1; }
            """;
        CudaUnit u = CudaParser.parse(dir.resolve("m.cu"), src, List.of());
        assertFalse(u.hasErrors(), () -> u.diagnostics().toString());
        FunctionDef k = fn(u, "k");
        assertEquals("real", k.signatureUndeclaredAt(firstDecl(k)));
        assertEquals(src.indexOf("#include"), k.signatureNeed().offset());
    }

    @Test
    void aHeaderIncludedFirstIsVisibleEverywhere() throws Exception {
        Files.writeString(dir.resolve("types.cuh"), "#pragma once\ntypedef float real;\nstruct Cell { int v; };\n");
        String src = """
            #include "types.cuh"
            __global__ void k(float *out, Cell c);
            __global__ void k(real *out, Cell c) { out[0] = c.v; }
            """;
        CudaUnit u = CudaParser.parse(dir.resolve("m.cu"), src, List.of());
        FunctionDef k = fn(u, "k");
        assertNull(k.signatureUndeclaredAt(firstDecl(k)), () -> String.valueOf(k.signatureNeed()));
        assertEquals("real", k.signatureUndeclaredAt(0), "before the #include itself");
    }

    @Test
    void theCudaPreludeDoesNotCount() {
        String src = """
            __global__ void node(int *a, cudaStream_t s, dim3 d) { }
            """;
        assertNull(fn(parse(src), "node").signatureNeed(), "cudaStream_t and dim3 come from klap's forced include");
    }

    @Test
    void templateAndFunctionParametersAndTheOwnNameDoNotCount() {
        String src = """
            namespace ns { template <typename T, int N> __global__ void k(T *p, int n, decltype(n) m); }
            template <typename T, int N> __global__ void ns::k(T *p, int n, decltype(n) m) { p[0] = N + m; }
            """;
        FunctionDef k = fn(parse(src), "k");
        assertNull(k.signatureNeed());
    }

    @Test
    void aTemplateDefaultOfTheDefinitionCountsOnlyWithoutAPrototype() {
        String withProto = """
            template <typename T> __global__ void k(T *p);
            constexpr int kS = 2;
            template <typename T = int> __global__ void k(T *p) { p[0] = kS; }
            """;
        assertNull(fn(parse(withProto), "k").signatureNeed(), "klap repeats the prototype's defaults, not the definition's");
        String without = """
            constexpr int kS = 2;
            template <int S = kS> __global__ void k(int *p) { p[0] = S; }
            """;
        assertEquals("kS", fn(parse(without), "k").signatureNeed().name());
    }

    @Test
    void aDefaultArgumentCounts() {
        String src = """
            __device__ int g(int *p, int n);
            constexpr int kN = 4;
            __device__ int g(int *p, int n = kN) { return p[n]; }
            """;
        FunctionDef g = fn(parse(src), "g");
        assertEquals("kN", g.signatureUndeclaredAt(firstDecl(g)));
    }
}
