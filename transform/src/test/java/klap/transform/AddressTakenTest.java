package klap.transform;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Set;
import klap.model.CudaUnit;
import org.junit.jupiter.api.Test;

/** {@link AddressTaken}: which device functions a call through a pointer may reach. */
class AddressTakenTest {

    private static final Set<String> ALL = Set.of("f", "g", "h", "k", "m", "q");

    @Test
    void aUseAsAValueTakesTheAddressACallOrALaunchDoesNot() {
        CudaUnit u = AnalysisTest.parse("""
                __device__ int f(int x) { return x; }
                __device__ int g(int x) { return x + 1; }
                __device__ int h(int x) { return x + 2; }
                __device__ int k(int x) { return x + 3; }
                __device__ int m(int x) { return x + 4; }
                __device__ int q(int x) { return x + 5; }
                __device__ int (*table)(int) = f;       // f: taken outside a body
                __device__ int (*pick[2])(int) = { g , h };  // g, h: in an initializer list
                struct S { int k; };                    // k: outside bodies by text, a field of that name counts too (safe)
                __global__ void kern(int* p, S s) {
                  int (*fp)(int) = &m;                  // m: taken in a body
                  p[0] = q(s.k) + fp(1);                // q: only called
                }
                """);
        assertEquals(Set.of("f", "g", "h", "k", "m"), AddressTaken.of(u, ALL));
        assertEquals(Set.of("g"), AddressTaken.of(u, Set.of("g", "q")));
        assertEquals(Set.of(), AddressTaken.of(u, Set.of()));
    }

    @Test
    void textOutsideBodiesCountsBareNamesOnly() {
        // a call or a declaration ('('), a template or a launch ('<'), a member ('.', '->'), a qualified
        // name ('::'), a longer identifier, a comment and a literal are not uses of the address
        String code = "int (*a)(int) = f; x = g (1); y = h <int>; z = o.k; w = p->k2; v = ns::m2; u = qq;\n"
                + "t = { r1,\n\t r2 }; s = 1f; e = r3";
        assertEquals(Set.of("int", "a", "f", "x", "y", "z", "o", "w", "p", "v", "ns", "u", "qq", "t", "r1", "r2", "s", "e", "r3"),
                AddressTaken.valueUses(code));
    }
}
