package klap.aggregation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import klap.model.Diagnostic;
import klap.model.Expr;
import klap.model.FunctionDef;
import klap.transform.Granularity;
import klap.transform.Trees;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link TemplateDeduction}: the template arguments klap writes for a launch that leaves them to
 * deduction are those C++ deduces ([temp.deduct.call]), or none where klap cannot prove them.
 */
class TemplateDeductionTest {

    /** @return what klap deduces for the one launch in {@code parent} of {@code code} */
    private static String deduced(String code) {
        AggregationContext ctx = new AggregationContext(Check.parse(code), new AggregationPass.Options(Granularity.BLOCK, true, null));
        FunctionDef parent = ctx.unit.functions().stream().filter(f -> f.name().equals("parent")).findFirst().orElseThrow();
        java.util.List<Expr.Launch> ls = new java.util.ArrayList<>();
        Trees.walkExprsAndLambdas(parent.body(), e -> {
            if (e instanceof Expr.Launch x) {
                ls.add(x);
            }
        });
        Expr.Launch l = ls.get(0);
        assertEquals(parent, ctx.holder(l));
        return ctx.templateArgs(l);
    }

    /** A child {@code template <...> __global__ void child(PARAMS)} launched from {@code parent(HOLDER)} with {@code ARGS}. */
    @ParameterizedTest(name = "child({0}) <- parent({1}) with ({2}): {3}")
    @CsvSource(delimiter = '|', nullValues = "NONE", textBlock = """
            typename T | T* p                           | int* q                              | q         | <int>
            typename T | T* __restrict__ p              | const float* __restrict__ q         | q         | <const float>
            typename T | const T* p                     | const float* q                      | q         | <float>
            typename T | const T* p                     | float* q                            | q         | <float>
            typename T | T const* p                     | volatile double* const q            | q         | <volatile double>
            typename T | T x                            | const int q                         | q         | <int>
            typename T | T x                            | const float* const q                | q         | <const float*>
            typename T | T x                            | unsigned long long& q               | q         | <unsigned long long>
            typename T | T* p                           | ns::Vec<int, 4>* q                  | q         | <ns::Vec<int, 4>>
            typename T | T* p                           | float** q                           | q         | <float*>
            typename T, class U | T* p, U n             | float* q, int m                     | q, m      | <float, int>
            typename T, class U | T* p, U n             | float* q, int m                     | q, 3      | NONE
            typename T | T* p, T* o                     | float* q, float* r                  | q + 1, r  | <float>
            typename T | T* p, T* o                     | float* q, float* r                  | q + 1, r + 1 | <float>
            typename T | T* p                           | float* q, int m                     | (m + q)   | <float>
            typename T | T* p                           | const float* q, int m               | (q + m) + 1 | <const float>
            typename T | T x                            | const float* const q                | q + 2     | <const float*>
            typename T | T* p                           | float* q                            | q - 1     | NONE
            typename T | T x                            | int q, int m                        | q + m     | NONE
            typename T | T* p                           | rptr q                              | q + 1     | NONE
            typename T | T* p, const T* o               | float* q, float* r                  | q, r      | <float>
            typename T | T* p, T* o                     | float* q, real* r                   | q, r      | NONE
            typename T | T x                            | real q                              | q         | <cuda::std::decay_t<real>>
            typename T | T x                            | const cint q                        | q         | <cuda::std::decay_t<const cint>>
            typename T | T x                            | ns::Vec<int, 4> q                   | q         | <cuda::std::decay_t<ns::Vec<int, 4>>>
            typename T | T x                            | real* q                             | q         | <real*>
            typename T | const T* p                     | const real* q                       | q         | <cuda::std::remove_const_t<cuda::std::remove_pointer_t<cuda::std::decay_t<const real*>>>>
            typename T | volatile T* p                  | real* __restrict__ q                | q         | <cuda::std::remove_volatile_t<cuda::std::remove_pointer_t<cuda::std::decay_t<real*>>>>
            typename T | const volatile T* p            | real* q                             | q         | <cuda::std::remove_cv_t<cuda::std::remove_pointer_t<cuda::std::decay_t<real*>>>>
            typename T | T* p                           | rptr q                              | q         | <cuda::std::remove_pointer_t<cuda::std::decay_t<rptr>>>
            typename T | T* p, T w                      | real* q, real r                     | q, r      | <real>
            typename T | T* p                           | const real* q                       | q         | <const real>
            typename T | T& r                           | int q                               | q         | NONE
            typename T | T& r, T* p                     | int q, int* s                       | q, s      | <int>
            typename T | Box<T> b, T x                  | Box<int> q, long m                  | q, m      | <long>
            typename T | T x, typename Holder<T>::Vec v | float q, float* s                   | q, s      | <float>
            typename T | T x, Box<typename Holder<T>::Vec> v | unsigned q, Box<unsigned*> s  | q, s      | <unsigned>
            typename T | typename Holder<T>::Vec v      | float* s                            | s         | NONE
            typename T | Box<T> b                       | Box<int> q                          | q         | NONE
            typename T | T** p                          | int** q                             | q         | NONE
            typename T | T* p                           | int q[4]                            | q         | NONE
            typename T | T* p                           | int q                               | q         | NONE
            int N      | int* p                         | int* q                              | q         | NONE
            typename T = int | int* p                   | int* q                              | q         | <>
            int N = 4  | int* p                         | int* q                              | q         | <>
            typename T, int N = 2 | T* p                | float* q                            | q         | <float>
            typename T, int N = 2, class U = T | T* p   | float* q                            | q         | <float>
            int M, int N = M * 2 | int* p               | int* q                              | q         | NONE
            typename U = int, typename T | T* p         | float* q                            | q         | NONE
            typename T, typename U = int | T* p, U x    | float* q, double m                  | q, m      | <float, double>
            typename T, typename U = int | T* p, U x    | float* q, double m                  | q, 2      | NONE
            typename T, typename U = int | T* p, Box<U> b | float* q, Box<int> s              | q, s      | NONE
            typename T, int N = 4 | T* p, ns::Vec<T, N> v | float* q, ns::Vec<float, 4> s     | q, s      | NONE
            typename T, int N = 4 | T* p, ns::Vec<int, N> v | float* q, ns::Vec<int, 8> s    | q, s      | NONE
            template <class> class C = Box | int* p     | int* q                              | q         | NONE
            typename... Ts | Ts... p                    | int q                               | q         | NONE
            """)
    void deducesTheArgumentsCppDeduces(String header, String params, String holder, String args, String expected) {
        String code = "typedef float real;\ntypedef const int cint;\ntypedef float* rptr;\nnamespace ns { template <class A, int B> struct Vec { A a[B]; }; }\n"
                + "template <class A> struct Box { A a; };\ntemplate <class A> struct Holder { using Vec = A*; };\n"
                + "template <" + header + "> __global__ void child(" + params + ") {}\n"
                + "__global__ void parent(" + holder + ") { child<<<1, 32>>>(" + args + "); }\n";
        assertEquals(expected, deduced(code), code);
    }

    @Test
    void anArgumentThatALocalMayNameDeducesNothing() {
        assertNull(deduced("""
                template <typename T> __global__ void child(T* p) {}
                __global__ void parent(float* q) { { int* q = 0; child<<<1, 32>>>(q); } }
                """));
    }

    /**
     * Review 2026-11-29: {@code p + o} whose {@code +} is an operator of the program has that operator's
     * result type; klap took it for p's, and with a lambda among the arguments (no static_assert can
     * check those) instantiated the variant for {@code float*} where C++ deduces {@code W}.
     */
    @Test
    void aPlusThatCallsAnOperatorOfTheProgramDeducesNothing() {
        String ops = """
                struct W { float* q; double pad; __device__ operator float*() const { return q; } };
                struct Off { int k; };
                __device__ W operator+(float* p, Off o) { return W{p + o.k, 0.0}; }
                template <typename T> __global__ void child(T x, int n) {}
                """;
        assertEquals(null, deduced(ops + "__global__ void parent(float* p, Off o, int n) { child<<<1, 32>>>(p + o, [&] { return n; }()); }\n"));
        assertEquals(null, deduced(ops + "__global__ void parent(float* p, Off o, int n) { child<<<1, 32>>>(p + o, n); }\n"));
        // the built-in p + i still deduces p's type
        assertEquals("<float*>", deduced(ops + "__global__ void parent(float* p, Off o, int n) { child<<<1, 32>>>(p + n, n); }\n"));
    }

    /**
     * Review 2026-11-29: {@code child<float><<<...>>>(p, x)} of a child with a second type parameter U
     * that C++ deduces from x was aggregated as {@code child<float>} (U took its default, or the record
     * did not build); it is left as written. A parameter left out that no child parameter names takes
     * its default, as written; {@code child<>} deduces every argument, as a launch without brackets.
     */
    @ParameterizedTest
    @EnumSource(Granularity.class)
    void fewerTemplateArgumentsThanParameters(Granularity g) {
        String launch = "__global__ void parent(float* p, double x, int n) { if (threadIdx.x == 0) LAUNCH; }\n";
        var partial = Check.run("template <typename T, typename U = int> __global__ void child(T* p, U x) { p[0] = (T)(x * 2); }\n"
                + launch.replace("LAUNCH", "child<float><<<1, 32>>>(p, x)"), g);
        assertEquals(0, partial.sites(), partial.diagnostics().toString());
        assertTrue(partial.diagnostics().stream().anyMatch(d -> d.id().equals("template-args")
                && d.message().contains("C++ deduces 'U'")), partial.diagnostics().toString());
        var defaulted = Check.run("template <typename T, int N = 4> __global__ void child(T* p, int n) { p[threadIdx.x] = N; }\n"
                + launch.replace("LAUNCH", "child<float><<<1, 32>>>(p, n)"), g);
        assertEquals(1, defaulted.sites(), defaulted.diagnostics().toString());
        var empty = Check.run("template <typename T> __global__ void child(T* p, int n) { p[threadIdx.x] = T(n); }\n"
                + launch.replace("LAUNCH", "child<><<<1, 32>>>(p, n)"), g);
        assertEquals(1, empty.sites(), empty.diagnostics().toString());
        Check.inOrder(empty.text(), "klap_deduce_child(p, n)), klap_args_child<float>*>::value");
    }

    @Test
    void aLaunchInsideALambdaDeducesNothing() {
        assertNull(deduced("""
                template <typename T> __global__ void child(T* p) {}
                __global__ void parent(float* q) { auto f = [](int* q) { child<<<1, 32>>>(q); }; f(0); }
                """));
    }

    /** The parent's own template parameter may stand for a cv-qualified type: by value, the traits spell it. */
    @Test
    void aTemplateParentsByValueParameterDeducesThroughTheTraits() {
        assertEquals("<cuda::std::decay_t<Type>>", deduced("""
                template <typename T> __global__ void child(float* out, T w) {}
                template <typename Type> __global__ void parent(float* out, Type w) { child<<<1, 32>>>(out, w); }
                """));
    }

    @Test
    void aTemplateParentSpellsItsOwnParameters() {
        assertEquals("<Type>", deduced("""
                template <typename Type> __global__ void child(Type* __restrict__ a, int n) {}
                template <typename Type> __global__ void parent(Type* __restrict__ data, int* n) {
                  if (threadIdx.x == 0) child<<<n[0], 256>>>(data, n[1]);
                }
                """));
    }

    /** End to end: the launch is aggregated with the deduced arguments, at every granularity, without a warning. */
    @ParameterizedTest
    @CsvSource({"WARP", "BLOCK", "KERNEL"})
    void aDeducibleLaunchIsAggregated(Granularity g) {
        AggregationPass.Result r = Check.run("""
                template <typename T> __global__ void child(T* p, int n) { p[threadIdx.x] = T(n); }
                template <typename T> __global__ void parent(T* p, int n) {
                  child<<<1, 32>>>(p, n + (int)threadIdx.x);
                }
                template __global__ void parent<float>(float*, int);
                """, g);
        assertTrue(!Check.hasDiag(r, Diagnostic.Severity.WARNING, "template-args"), r.diagnostics().toString());
        String variant = g == Granularity.KERNEL ? "child_klap_kagg_" : "child_klap_agg_";
        Check.inOrder(r.text(), "template <typename T>\n__device__ klap_args_child<T>* klap_deduce_child(T* klap_d0, int klap_d1);",
                "{ static_assert(cuda::std::is_same<decltype(klap_deduce_child(p, n + (int)threadIdx.x)), klap_args_child<T>*>::value,",
                "klap_args_child<T>", variant + "{{[a-z]+}}<T>");
    }

    /** A launch that leaves a default argument out is checked with the parameters it passes. */
    @Test
    void theCheckOfALaunchWithADefaultArgumentTakesTheParametersItPasses() {
        AggregationPass.Result r = Check.run("""
                template <typename T> __global__ void child(T* p, int n = 4) { p[threadIdx.x] = T(n); }
                __global__ void parent(float* p) { child<<<1, 32>>>(p); }
                """, Granularity.BLOCK);
        Check.inOrder(r.text(), "__device__ klap_args_child<T>* klap_deduce_child_1(T* klap_d0);",
                "static_assert(cuda::std::is_same<decltype(klap_deduce_child_1(p)), klap_args_child<float>*>::value");
    }

    /**
     * Template parameters that no child parameter names take their defaults, from the header or from a
     * prototype ([temp.param]/10), also non-type ones: the launch is aggregated with the deduced prefix
     * written, the check returns that prefix, and the first declaration of the variant, record and
     * check repeats the defaults (until 2026-11-30 such a launch was left as written).
     */
    @ParameterizedTest
    @EnumSource(Granularity.class)
    void parametersNoChildParameterNamesTakeTheirDefaults(Granularity g) {
        AggregationPass.Result r = Check.run("""
                template <typename T, int N = 2, class U = T> __global__ void child(T* p, int n);
                template <typename T, int N, class U> __global__ void child(T* p, int n) { p[threadIdx.x] = U(N * n); }
                template <int S = 4> __global__ void tile(int* p) { p[threadIdx.x] = S; }
                __global__ void parent(float* p, int* q, int n) { child<<<1, 32>>>(p, n); tile<<<1, 32>>>(q + 32 * threadIdx.x); }
                """, g);
        assertEquals(2, r.sites(), r.diagnostics().toString());
        Check.inOrder(r.text(), "template <typename T, int N = 2, class U = T>\n__device__ klap_args_child<T, N, U>* klap_deduce_child(T* klap_d0, int klap_d1);",
                "template <int S = 4>\n__device__ klap_args_tile<S>* klap_deduce_tile(int* klap_d0);",
                "klap_deduce_child(p, n)), klap_args_child<float>*>::value", "klap_args_child<float>",
                "klap_deduce_tile(q + 32 * threadIdx.x)), klap_args_tile<>*>::value", "klap_args_tile<>");
    }

    /**
     * Defaults klap may not take in place of the compiler (review 2026-11-30): a parameter whose type a
     * macro of the file writes may name the template parameter (C++ deduces it; klap saw no name), a
     * default that only a later declaration gives may name what is declared after klap's declarations
     * (or, from a prototype that names the parameters otherwise, a parameter by another name), and one
     * holding {@code __LINE__} or {@code __COUNTER__} changes where klap repeats it. Each such launch is
     * left as written with the warning; C++20's {@code auto} parameter is a template parameter that the
     * header does not show.
     */
    @ParameterizedTest
    @ValueSource(strings = {
        "#define ELEM U\ntemplate <typename U = int> __global__ void child(ELEM v, float* out) { out[threadIdx.x] = v; }\n"
            + "__global__ void parent(float v, float* out) { child<<<1, 4>>>(v, out); }",
        "template <typename T, int L = __LINE__> __global__ void child(T* out) { out[threadIdx.x] = L; }\n"
            + "__global__ void parent(float* out) { child<<<1, 4>>>(out); }",
        "template <typename T, int S> __global__ void child(T* out);\nconstexpr int kS = 3;\n"
            + "template <typename T, int S = kS> __global__ void child(T* out) { out[threadIdx.x] = S; }\n"
            + "__global__ void parent(float* out) { child<<<1, 4>>>(out); }",
        "template <typename X, int K = sizeof(X)> __global__ void child(X* out);\n"
            + "template <typename T, int K> __global__ void child(T* out) { out[threadIdx.x] = K; }\n"
            + "__global__ void parent(double* out) { child<double><<<1, 4>>>(out); }",
        "template <typename U = int> __global__ void child(float* out, auto v) { out[threadIdx.x] = v; }\n"
            + "__global__ void parent(float* out, float v) { child<<<1, 4>>>(out, v); }"})
    void defaultsKlapCannotRepeatLeaveTheLaunchAsWritten(String code) {
        for (Granularity g : Granularity.values()) {
            AggregationPass.Result r = Check.run(code, g);
            assertEquals(0, r.sites(), g + ": " + r.text());
            assertTrue(Check.hasDiag(r, Diagnostic.Severity.WARNING, "template-args"), r.diagnostics().toString());
        }
    }

    /**
     * klap's declarations go before the child's first declaration, so they repeat that declaration's
     * header, not a default that the definition gives after it ({@code S = kS}, with {@code kS}
     * declared between them: "identifier kS is undefined" until review 2026-11-30); a launch that
     * writes every argument needs none. A {@code >} in parentheses does not end the header.
     */
    @Test
    void klapsDeclarationsRepeatTheFirstDeclarationsHeader() {
        AggregationPass.Result r = Check.run("""
                template <int S> __global__ void child(float* out);
                constexpr int kS = 3;
                template <int S = kS> __global__ void child(float* out) { out[threadIdx.x] = S; }
                template <typename T, bool B = (3 > 2)> __global__ void c1(T* out) { out[threadIdx.x] = B; }
                __global__ void parent(float* out) { child<3><<<1, 4>>>(out); c1<<<1, 4>>>(out); }
                """, Granularity.BLOCK);
        assertEquals(2, r.sites(), r.diagnostics().toString());
        Check.none(r.text().substring(0, r.text().indexOf("constexpr int kS")), "kS");
        Check.inOrder(r.text(), "template <int S>\nstruct klap_args_child", "template <typename T, bool B = (3 > 2)>\nstruct klap_args_c1",
                "klap_deduce_c1(out)), klap_args_c1<float>*>::value");
    }

    /**
     * A prototype that names the parameters otherwise still gives the defaults that name none of them:
     * klap repeats them with the definition's names (a default naming one, {@code L = sizeof(X)}, is
     * not repeated, and a launch that needs it keeps the warning).
     */
    @Test
    void aRenamingPrototypesPlainDefaultsAreRepeated() {
        AggregationPass.Result r = Check.run("""
                template <typename X, int K = 3, int L = sizeof(X)> __global__ void child(X* out);
                template <typename T, int N, int M> __global__ void child(T* out) { out[threadIdx.x] = N + M; }
                __global__ void parent(float* out) { child<float, 1, 2><<<1, 4>>>(out); child<<<1, 4>>>(out + 4); }
                """, Granularity.BLOCK);
        assertEquals(1, r.sites(), r.diagnostics().toString());
        // the record, a class template, keeps trailing defaults only ([temp.param]/11); a function
        // template's declaration keeps them all (before 2026-11-30 a kernel's non-trailing default made a
        // record nvcc rejected: "default argument not at end of parameter list")
        Check.inOrder(r.text(), "template <typename T, int N, int M>\nstruct klap_args_child",
                "template <typename T, int N = 3, int M>\n__global__ __launch_bounds__(1024) void child_klap_agg_u(");
        AggregationPass.Result lead = Check.run("""
                template <int N = 3, typename T> __global__ void child(T* out) { out[threadIdx.x] = N; }
                __global__ void parent(float* out) { child<4, float><<<1, 4>>>(out); }
                """, Granularity.BLOCK);
        assertEquals(1, lead.sites(), lead.diagnostics().toString());
        Check.inOrder(lead.text(), "template <int N, typename T>\nstruct klap_args_child");
    }

    /** Arguments written out need no check. */
    @Test
    void writtenArgumentsAreNotChecked() {
        AggregationPass.Result r = Check.run("""
                template <typename T> __global__ void child(T* p) { p[threadIdx.x] = T(1); }
                __global__ void parent(float* p) { child<float><<<1, 32>>>(p); }
                """, Granularity.KERNEL);
        Check.none(r.text(), "klap_deduce", "static_assert");
    }
}
