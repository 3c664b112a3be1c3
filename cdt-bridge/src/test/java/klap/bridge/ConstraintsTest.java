package klap.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import klap.model.CudaUnit;
import klap.model.Expr;
import org.junit.jupiter.api.Test;

/**
 * C++20 constraints, which CDT does not parse (seventh session of 2026-11-29: a public CDP program's
 * {@code requires} clause was a {@code klap-parse} error on valid CUDA that nvcc 13 builds with
 * {@code -std=c++20}): {@link Prepass} blanks requires-clauses and concept definitions and writes
 * {@code true} over a requires-expression inside an expression, keeping every offset and newline.
 */
class ConstraintsTest {

    private static String prepass(String text) {
        Prepass p = Prepass.run(text);
        String out = new String(p.out);
        assertEquals(text.length(), out.length(), "the pre-pass keeps every offset");
        for (int i = 0; i < text.length(); i++) {
            assertEquals(text.charAt(i) == '\n', out.charAt(i) == '\n', "newlines stay where they are: " + i);
        }
        return out;
    }

    @Test
    void requiresClausesConceptsAndRequiresExpressionsAreBlanked() {
        String src = """
                template <class T>
                concept Small = sizeof(T) <= 8 && requires(T a, T b) {
                    { a + b } -> std::convertible_to<T>;
                };
                template <typename T>
                  requires Small<T> && (std::is_arithmetic_v<T> || std::is_same_v<T, bool>)
                __device__ T add(T a, T b) {
                  if constexpr (requires { a * b; }) return a * b; else return a + b;
                }
                template <typename U> __device__ int get(U u) requires std::integral<U>::value { return (int)u; }
                template <typename T> requires requires (T x) { x + 1; }
                __global__ void child(T* out, T v) { out[threadIdx.x] = v; }
                """;
        String out = prepass(src);
        assertFalse(out.contains("concept") || out.contains("requires") || out.contains("Small"), out);
        assertTrue(out.contains("if constexpr (true "), out);
        assertTrue(out.contains("__device__ int get(U u)") && out.contains("{ return (int)u; }"), out);
        assertTrue(out.contains("template <typename T>") && out.contains("__global__ void child(T* out, T v)"), out);
        // everything outside the constraints is as written
        Prepass p = Prepass.run(src);
        assertEquals(5, p.cpp20.size(), "the concept, three clauses and the expression in if constexpr");
        for (int i = 0; i < src.length(); i++) {
            int k = i;
            if (p.cpp20.stream().noneMatch(r -> r[0] <= k && k < r[1])) {
                assertEquals(src.charAt(i), p.out[i], "only the constraints change: offset " + i);
            }
        }
    }

    @Test
    void aFileWithConstraintsParsesAndItsLaunchIsFound() {
        CudaUnit u = TestSupport.parse("""
                template <typename T> requires (sizeof(T) == 4)
                __global__ void child(T* out, T v) { out[threadIdx.x] = v; }
                template <typename T>
                __device__ T twice(T x) requires (sizeof(T) >= 4) { return 2 * x; }
                __global__ void parent(int* out) {
                  if (threadIdx.x < 4) child<int><<<1, 32>>>(out + 32 * threadIdx.x, twice((int)threadIdx.x));
                }
                """);
        assertFalse(u.hasErrors(), u.diagnostics().toString());
        assertEquals(List.of("child", "twice", "parent"), u.functions().stream().map(f -> f.name()).toList());
        List<Expr> launches = TestSupport.exprs(TestSupport.fn(u, "parent").body()).stream()
                .filter(e -> e instanceof Expr.Launch).toList();
        assertEquals(1, launches.size());
    }

    @Test
    void namesThatOnlyLookLikeConstraintsStay() {
        // C++17 code may name a variable 'requires' or 'concept'; an unconstrained template stays too
        String src = """
                int requires = 3;
                int concept = requires + 1;
                bool f(bool x) { return x && requires; }
                template <typename T> T id(T x) { return x; }
                """;
        assertEquals(src, prepass(src));
        // broken text is left for CDT to report, never a crash of the pre-pass
        for (String broken : List.of("template < int ; concept C = 1;", "x requires (", "[]<typename T", "for (int i = 0;")) {
            assertEquals(broken, prepass(broken));
        }
    }

    @Test
    void aConstrainedTemplateParameterIsReadAsATemplateParameter() {
        // CDT reads 'std::integral T' as a parameter named T (of a type it does not know); the
        // text stays as written, so the output keeps the constraint
        String src = "template <std::integral T> __global__ void child(T* out) { out[threadIdx.x] = 1; }\n";
        assertEquals(src, prepass(src));
        CudaUnit u = TestSupport.parse(src);
        assertFalse(u.hasErrors(), u.diagnostics().toString());
        assertEquals("child", TestSupport.fn(u, "child").name());
    }

    @Test
    void aTemplateLambdaIsReadAsAGenericOne() {
        String src = """
                __global__ void k(int* out, int n) {
                  auto f = []<typename T>(T v) { return v + 1; };
                  auto g = [&]<class T, int N> requires (N > 0) { return N; };
                  bool less = out[0]<n, c = out[1] < n;
                  out[0] = f(n) + g.template operator()<int, 2>() + less + c;
                }
                """;
        String out = prepass(src);
        // the lists and the clause blanked; a comparison after ']' stays
        String blanked = "<typename T>";
        String head = "<class T, int N> requires (N > 0)";
        assertEquals(src.replace(blanked, " ".repeat(blanked.length())).replace(head, " ".repeat(head.length())), out);
    }

    @Test
    void otherCpp20ThatCdtDoesNotParse() {
        String src = """
                struct P { int x; auto operator<=>(const P&) const = default; };
                consteval int sq(int x) { return x * x; }
                constinit __device__ int g_val = 4;
                enum class Color { Red, Green };
                __device__ int pick(Color c) { switch (c) { using enum Color; case Red: return 1; default: return 2; } }
                __global__ void k(int* out, int n) {
                  int arr[3] = {1, 2, 3};
                  for (int k = 0; int a : arr) { k += a; out[k] = a; }
                  for (int i = 0; i < n; ++i) out[i] = n > 2 ? ::sq(i) : i;
                  for (int a : arr) out[a] = (P{a} <=> P{n}) < 0;
                }
                """;
        String out = prepass(src);
        assertTrue(out.contains("auto operator<= (const P&)") && out.contains("constexpr int sq") && out.contains("(P{a} <=  P{n})"), out);
        assertTrue(out.contains(" ".repeat(10) + "__device__ int g_val") && out.contains("{ switch (c) {" + " ".repeat(19) + "case Red"), out);
        assertTrue(out.contains("for (           int a : arr)") && out.contains("for (int i = 0; i < n; ++i) out[i] = n > 2 ? ::sq(i) : i;"), out);
        CudaUnit u = TestSupport.parse(src);
        assertFalse(u.hasErrors(), u.diagnostics().toString());
    }
}
