package klap.bridge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import klap.model.CudaUnit;
import klap.model.ImplicitCall;
import klap.model.ImplicitCall.Origin;
import klap.model.SourceRange;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The calls the main file makes without a call expression (review 2026-11-29): overloaded operators,
 * a functor's operator(), constructors and destructors, each with where its body is and, for a header's,
 * what the very function called does.
 */
class ImplicitCallsTest {

    @TempDir
    Path dir;

    static final String HEADER = """
            #pragma once
            struct HSum { unsigned* s; __device__ HSum& operator+=(unsigned v) { s[threadIdx.x] = v; __syncthreads(); return *this; } };
            struct P3 { float x; };
            __device__ inline P3 operator+(P3 a, P3 b) { return P3{a.x + b.x}; }
            __device__ inline P3& operator+=(P3& a, P3 b) { a.x += b.x; return a; }
            __global__ void hk(int* p);
            struct HLaunch { int* p; __device__ ~HLaunch() { hk<<<1, 1>>>(p); } };
            struct Elsewhere { __device__ Elsewhere(); };
            """;

    static final String MAIN = """
            #include "h.cuh"
            struct Idx { __device__ unsigned operator()() const { return blockIdx.x; } };
            struct W { unsigned v; __device__ W() : v(threadIdx.x) {} __device__ ~W() {} };
            __global__ void k(unsigned* out, unsigned* sh) {
              Idx x; out[x()] = 1;
              W w;
              P3 a{1}, b{2}; P3 c = a + b; c += a;
              HSum h{sh}; h += 3u;
              { HLaunch l{(int*) out}; }
              Elsewhere e;
              dim3 d(1, 2);
            }
            """;

    private CudaUnit parse() throws Exception {
        Files.writeString(dir.resolve("h.cuh"), HEADER);
        Path main = dir.resolve("m.cu");
        Files.writeString(main, MAIN);
        CudaUnit u = CudaParser.parse(main, MAIN, List.of());
        assertFalse(u.hasErrors(), u.diagnostics().toString());
        return u;
    }

    private static String show(ImplicitCall c) {
        return c.name() + "@" + c.origin() + (c.readsIndices() ? "+i" : "") + (c.synchronizes() ? "+s" : "");
    }

    @Test
    void operatorsFunctorsConstructorsAndDestructorsWithWhereTheirBodiesAre() throws Exception {
        CudaUnit u = parse();
        List<String> calls = u.implicitCalls().stream().map(ImplicitCallsTest::show).toList();
        // x() and W w in the main file; the operators of P3 and HSum from the header, by the very function
        // (the two operator += are told apart); HLaunch's destructor launches and Elsewhere's constructor is
        // defined nowhere: klap cannot follow either; the implicit constructors (Idx, P3, dim3's) are not calls
        assertEquals(List.of("operator ()@MAIN", "W@MAIN", "operator +@HEADER", "operator +=@HEADER",
                "operator +=@HEADER+i+s", "~HLaunch@UNSEEN", "Elsewhere@UNSEEN", "~W@MAIN"), calls);
    }

    @Test
    void whereEachCallIs() throws Exception {
        CudaUnit u = parse();
        String text = MAIN;
        ImplicitCall functor = u.implicitCalls().get(0);
        assertEquals(text.indexOf("x()") + 1, functor.offset(), "at the call's parentheses");
        ImplicitCall ctor = u.implicitCalls().get(1);
        assertEquals("w;", text.substring(ctor.offset(), ctor.offset() + 2));
        // the destructor of the block's object runs at the block's closing brace; W's at the body's
        ImplicitCall inner = u.implicitCalls().get(5);
        assertEquals('}', text.charAt(inner.offset()));
        assertTrue(inner.offset() < text.indexOf("Elsewhere e;"));
        ImplicitCall last = u.implicitCalls().get(7);
        assertEquals(text.lastIndexOf('}'), last.offset());
        // implicitCallsIn: by range
        int stmt = text.indexOf("HSum h{sh}; h += 3u;");
        assertEquals(List.of("operator +=@HEADER+i+s"), u.implicitCallsIn(new SourceRange(stmt, 20)).stream()
                .map(ImplicitCallsTest::show).collect(Collectors.toList()));
        assertEquals(Origin.MAIN, u.implicitCalls().get(0).origin());
    }

    /**
     * What the compiler's constructors and destructors run (CDT names none of it): a base's constructor
     * the program wrote, a default member initializer that reads the indices, a member's destructor at
     * the end of the block, a temporary's destructor at the temporary.
     */
    @Test
    void whatTheCompilersConstructorsAndDestructorsRun() throws Exception {
        String main = """
                struct B0 { unsigned v; __device__ B0() : v(threadIdx.x) {} };
                struct DB : B0 { };
                struct M { unsigned a = threadIdx.x; unsigned b = 3; };
                struct Z { unsigned a = 0; };
                struct D { unsigned* o; __device__ ~D() { o[0] = 1; } };
                struct G { D d; };
                __global__ void k(unsigned* out) {
                  DB b; M m; Z z; G g{D{out}};
                }
                """;
        Path f = dir.resolve("parts.cu");
        Files.writeString(f, main);
        CudaUnit u = CudaParser.parse(f, main, List.of());
        assertFalse(u.hasErrors(), u.diagnostics().toString());
        int body = main.indexOf("DB b;");
        int end = main.lastIndexOf('}');
        List<String> calls = u.implicitCalls().stream().filter(c -> c.offset() >= body)
                .map(c -> show(c) + (c.offset() == end ? "@end" : "")).distinct().toList();
        // Z's initializer reads nothing: no record; the temporary D{out} and g's member are destroyed
        assertEquals(List.of("B0@MAIN", "M@INITIALIZER+i", "~D@MAIN", "~D@MAIN@end"), calls);
    }

    /**
     * How each operator takes its operands, in the order the expression writes them (review 2026-11-29:
     * {@code acc << v} through a non-const member wrote {@code acc} without the uniformity analysis
     * knowing): the object of a member first, {@code 'w'} unless the member is const; then each
     * parameter, {@code 'w'} for a non-const reference (through a typedef, or {@code T&} of a template
     * instantiated with a non-const type). A constructor or destructor has none.
     */
    @Test
    void operatorsCarryHowTheyTakeTheirOperands() throws Exception {
        CudaUnit u = parse();
        assertEquals(java.util.Arrays.asList("r", null, "rr", "wr", "wr", null, null, null),
                u.implicitCalls().stream().map(ImplicitCall::operandModes).toList());
        String main = """
                struct Acc { int s; __device__ Acc& operator<<(int v) { s += v; return *this; }
                             __device__ int operator*(const Acc& o) const { return s * o.s; } };
                typedef Acc& AccRef;
                __device__ void operator>>(int v, AccRef a) { a.s += v; }
                template <typename T> __device__ void operator%(T& to, int v) { to.s = v; }
                __global__ void k(int* out) {
                  Acc a; a.s = 0; a << 1; 2 >> a; out[0] = a * a; a % 3;
                }
                """;
        Path f = dir.resolve("modes.cu");
        Files.writeString(f, main);
        CudaUnit m = CudaParser.parse(f, main, List.of());
        assertFalse(m.hasErrors(), m.diagnostics().toString());
        assertEquals(List.of("operator <<:wr", "operator >>:rw", "operator *:rr", "operator %:wr"),
                m.implicitCalls().stream().filter(ImplicitCall::isOperator).map(c -> c.name() + ":" + c.operandModes()).toList());
    }
}
