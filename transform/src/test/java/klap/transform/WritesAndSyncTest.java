package klap.transform;

import static klap.transform.AnalysisTest.fn;
import static klap.transform.AnalysisTest.launchStmt;
import static klap.transform.AnalysisTest.parse;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Set;
import klap.model.CudaUnit;
import klap.model.FunctionDef;
import org.junit.jupiter.api.Test;

/**
 * Issue 10: every kind of write counts for uniformity ({@link Writes}), and synchronization sites
 * ({@link SyncSites}) stop a guard rewrite that would pair klap's collective with the user's barrier.
 * Each test is the smallest program that showed (or would show) the bug class.
 */
class WritesAndSyncTest {

    private static Set<String> divergent(CudaUnit u, String kernel) {
        return new Uniformity(fn(u, kernel), false, u).divergentLocals();
    }

    @Test
    void referenceOutParametersOfAHelperAreWrites() {
        CudaUnit u = parse("""
                __device__ void row_range(const int* ptr, int r, int& b, int& e) { b = ptr[r]; e = ptr[r + 1]; }
                __device__ int peek(const int& x) { return x; }
                __global__ void k(const int* ptr, int* out) {
                  int b = 0, e = 0, c = 1;
                  row_range(ptr, blockIdx.x, b, e);
                  out[b + e + peek(c)] = 0;
                }
                """);
        Set<String> d = divergent(u, "k");
        assertTrue(d.containsAll(Set.of("b", "e")), d.toString());
        assertFalse(d.contains("c"), "a const reference parameter does not write: " + d);
    }

    /**
     * Review 2026-11-25: a reference parameter spelled through a typedef, a function only declared
     * here whose name looks like a CUDA built-in ({@code cuda_swap}, {@code make_nonempty}), a
     * qualified or static member helper, and {@code asm} written by a macro all write the variable
     * passed. CDT's resolved parameter types decide ({@code Expr.Call.paramModes}); by-value and
     * const-reference parameters still do not write.
     */
    @Test
    void writesThroughTypedefsDeclarationsQualifiedNamesAndAsmMacrosCount() {
        CudaUnit u = parse("""
                typedef int& IntRef;
                using IntAlias = int&;
                __device__ void skip(IntRef t, int n) { while (t < n) ++t; }
                __device__ void cuda_swap(int& a, int& b);
                __device__ void make_nonempty(IntAlias t, int n);
                namespace util { __device__ void bump(int& x) { ++x; } }
                struct Steps { static __device__ void next(int& x) { x += 2; } };
                __device__ int byValue(int v, const int& r) { return v + r; }
                #define ASM_ADD(r, a, b) asm("add.u32 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b))
                __global__ void k(int* out, int n) {
                  int a = 0, b = 1, c = 2, d = 3, e = 4, f = 5, g = 6, h = 7, v = 8;
                  skip(a, n);
                  cuda_swap(b, c);
                  make_nonempty(d, n);
                  util::bump(e);
                  Steps::next(f);
                  unsigned w = 9;
                  ASM_ADD(w, w, 1u);
                  out[byValue(g, h) + a + b + c + d + e + f + (int)w + v] = 0;
                }
                """);
        Set<String> d = divergent(u, "k");
        assertTrue(d.containsAll(Set.of("a", "b", "c", "d", "e", "f", "w")), d.toString());
        assertFalse(d.contains("g") || d.contains("h") || d.contains("v"), "by value and const reference do not write: " + d);
    }

    /**
     * An element of a struct's member array is part of the struct's value: {@code s.c[0] = t}
     * makes {@code s} divergent (it was taken for uniform and passed to every child as one scalar).
     * A store through a pointer ({@code s.q->v = t}, {@code f.p[0] = t}) changes no local.
     */
    @Test
    void writesToElementsOfMemberArraysWriteTheStruct() {
        CudaUnit u = parse("""
                struct In { int v; };
                struct S { int c[2]; int m[2][2]; In in[2]; int* p; In* q; };
                __global__ void k(int* out) {
                  S a; a.c[0] = threadIdx.x;
                  S b; b.m[1][0] = threadIdx.x;
                  S c; c.in[1].v = threadIdx.x;
                  S d; int& r = d.c[1]; r = threadIdx.x;
                  S h; (h.c)[1] = threadIdx.x;
                  S e; e.c[0] = 1;
                  S f; f.p = out; f.p[0] = threadIdx.x;
                  S g; g.q = nullptr; g.q->v = threadIdx.x;
                  out[0] = a.c[0] + b.m[0][0] + c.in[0].v + d.c[0] + e.c[0] + f.c[0] + g.c[0] + h.c[0];
                }
                """);
        Set<String> d = divergent(u, "k");
        assertTrue(d.containsAll(Set.of("a", "b", "c", "d", "h")), d.toString());
        assertFalse(d.contains("e"), "a uniform store: " + d);
        assertFalse(d.contains("f"), "a store through a pointer member: " + d);
        assertFalse(d.contains("g"), "a store through a member pointer: " + d);
    }

    /**
     * A store whose target is chosen per thread ({@code (t % 2 ? a : b) = 5}) writes {@code a} in
     * some threads and {@code b} in others: both become divergent, though the value is uniform.
     * So do the lvalues a comma, an assignment or a prefix increment yields, and references bound
     * to a conditional. A choice by a uniform condition keeps both uniform.
     */
    @Test
    void storesThroughConditionalAndOtherCompoundLvaluesWriteEveryCandidate() {
        CudaUnit u = parse("""
                __device__ void put(int& x, int v) { x = v; }
                __global__ void k(int* out, int n) {
                  int t = threadIdx.x;
                  int a = 0, b = 0; (t % 2 ? a : b) = 5;
                  int c = 0, d = 0; ((t > 3) ? c : d)++;
                  int e = 0, f = 0; int& r = t < 8 ? e : f; r = 1;
                  int g = 0, h = 0; put(n > 2 ? g : h, t);
                  int i = 0, j = 0; (i, j) = t;
                  int l = 0; (l = 1) = t;
                  int m = 0, o = 0; (n > 2 ? m : o) = 7;
                  out[a + b + c + d + e + f + g + h + j + l + m + o] = 0;
                }
                """);
        Set<String> d = divergent(u, "k");
        assertTrue(d.containsAll(Set.of("a", "b", "c", "d", "e", "f", "g", "h", "j", "l")), d.toString());
        assertFalse(d.contains("i"), "the left operand of a comma is not stored to: " + d);
        assertFalse(d.contains("m") || d.contains("o"), "a uniform choice of a uniform value: " + d);
    }

    /**
     * An assignment in an arm of {@code ?:} or in the right operand of {@code &&}/{@code ||} runs
     * only in the threads the condition chose (review 2026-11-25: a binary search written
     * {@code c ? (lo = m + 1) : (hi = m)} had its per-thread {@code lo} scalarized).
     */
    @Test
    void assignmentsUnderThreadDependentConditionalOperatorsAreDivergent() {
        CudaUnit u = parse("""
                __global__ void k(const int* off, int* out, int n) {
                  int t = threadIdx.x;
                  int lo = 0, hi = n;
                  int m = (lo + hi) / 2;
                  off[m] <= t ? (lo = m + 1) : (hi = m);
                  int skip = 0; off[t] < 0 ? (skip = 1) : 0;
                  int a = 0; (t > 3) && (a = 1);
                  int b = 0; (t > 3) || (b = 1);
                  int c = 0; n > 2 ? (c = 1) : (c = 2);
                  int d = 0; (n > 2) && (d = 5);
                  int e = 0; t > 2 ? (n > 1 ? (e = 1) : 0) : 0;
                  out[lo + hi + skip + a + b + c + d + e] = 0;
                }
                """);
        Set<String> d = divergent(u, "k");
        assertTrue(d.containsAll(Set.of("lo", "hi", "skip", "a", "b", "e")), d.toString());
        assertFalse(d.contains("c") || d.contains("d"), "a uniform condition chose the assignment: " + d);
    }

    /**
     * An array member that decays to a pointer ({@code fill(s.c, t)}, {@code int* q = s.c}) or
     * that a reference loop variable walks ({@code for (int& x : s.c)}) can be stored through:
     * its struct counts as written. Reading {@code s.c[i]} or {@code sizeof s.c} does not.
     */
    @Test
    void arrayMembersThatDecayOrAreWalkedByReferenceAreWrites() {
        CudaUnit u = parse("""
                struct S { int c[4]; int v; };
                __device__ void fill(int* p, int v) { p[0] = v; }
                __global__ void k(int* out) {
                  int t = threadIdx.x;
                  S a; fill(a.c, t);
                  S b; int* q = b.c; q[1] = t;
                  S c; for (int& x : c.c) x = t;
                  S d; *d.c = t;
                  S e; int r = e.c[1] + (int)sizeof e.c;
                  S f; for (int x : f.c) r += x;
                  out[a.v + b.v + c.v + d.v + e.v + f.v + r] = 0;
                }
                """);
        Set<String> d = divergent(u, "k");
        assertTrue(d.containsAll(Set.of("a", "b", "c", "d")), d.toString());
        assertFalse(d.contains("e") || d.contains("f"), "reads only: " + d);
    }

    /**
     * A class whose constructor takes a non-const reference keeps an alias: {@code Ref r(x);
     * r.set(t);} writes {@code x}, in every initializer form. A constructor taking its argument by
     * value or const reference, a CUDA vector type and {@code auto} copies do not.
     */
    @Test
    void constructorsTakingNonConstReferencesWriteTheirArguments() {
        CudaUnit u = parse("""
                struct Ref { int& v; __device__ Ref(int& x) : v(x) {} __device__ void set(int a) { v = a; } };
                struct Val { int v; __device__ Val(const int& x, int y) : v(x + y) {} };
                struct Agg { int& v; };
                __global__ void k(int* out, int n) {
                  int t = threadIdx.x;
                  int a = 0; Ref ra(a); ra.set(t);
                  int b = 0; Ref rb{b}; rb.set(t);
                  int c = 0; Ref rc = c; rc.set(t);
                  int e = 0; Agg ge{e}; ge.v = t;
                  int f = 0, g = 0; Val vf(f, g);
                  dim3 grid(n);
                  int h = 0; auto ch = h;
                  out[a + b + c + e + f + g + vf.v + grid.x + ch + t] = 0;
                }
                """);
        Set<String> d = divergent(u, "k");
        assertTrue(d.containsAll(Set.of("a", "b", "c", "e")), d.toString());
        assertFalse(d.contains("f") || d.contains("g") || d.contains("n") || d.contains("h"), d.toString());
    }

    /**
     * Review 2026-11-29: an overloaded operator is a call. {@code acc << t} with a non-const member
     * {@code operator<<}, and {@code t >> b} with {@code operator>>(int, Acc&)}, wrote the object
     * behind the analysis's back ({@code a.s} was passed as a scalar: every child got one lane's
     * value); {@code a + b} and {@code ~a} whose operators read {@code threadIdx} were taken as uniform
     * because their operands are. A const member operator and by-value or const-reference
     * parameters write nothing; an operator's result is divergent like any non-pure call's.
     */
    @Test
    void overloadedOperatorsWriteTheirReferenceOperandsAndAreNotPure() {
        CudaUnit u = parse("""
                struct Acc {
                  int s;
                  __device__ Acc& operator<<(int v) { s += v; return *this; }
                  __device__ int operator*(int v) const { return s * v; }
                  __device__ int& operator[](int i) { return s; }
                };
                struct V { int x; };
                __device__ void operator>>(int v, Acc& a) { a.s += v; }
                __device__ V operator+(V a, V b) { V r; r.x = a.x + b.x + threadIdx.x; return r; }
                __device__ int operator-(const V& a, const V& b) { return a.x - b.x; }
                __device__ V& operator+=(V& a, int t) { a.x += t + threadIdx.x; return a; }
                __global__ void k(int* out) {
                  int t = 1;
                  Acc a; a.s = 0; a << t;                 // non-const member: writes a
                  Acc b; b.s = 0; t >> b;                 // Acc&: writes b
                  Acc c; c.s = 0; int m = c * t;          // const member: reads c
                  Acc e; e.s = 0; e[0] = 1;               // non-const operator[]: may write e
                  V p; p.x = 1; V q; q.x = 2;
                  V r = p + q;                            // operator+ reads threadIdx: r divergent
                  int d = p - q;                          // const references: p and q stay as they are
                  V w; w.x = 0; w += t;                   // operator+= computes what it stores
                  out[a.s + b.s + c.s + m + e.s + r.x + d + w.x] = 0;
                }
                """);
        Set<String> d = divergent(u, "k");
        assertTrue(d.containsAll(Set.of("a", "b", "e", "r", "d", "w")), d.toString());
        assertFalse(d.contains("c") || d.contains("p") || d.contains("q") || d.contains("t"), d.toString());
    }

    /**
     * Review 2026-11-29: a conversion function is applied without a call that CDT names. {@code int v
     * = l;} and {@code (int)l} with {@code operator int()} adding {@code threadIdx.x} were uniform
     * (every child got one lane's value); a non-const conversion function may change its object.
     * Where the object is used as it is ({@code l.base}, a copy into another {@code Lane}, an argument
     * of a {@code const Lane&} parameter) nothing is converted.
     */
    @Test
    void conversionFunctionsAreCallsTooAndNonConstOnesWriteTheirObject() {
        CudaUnit u = parse("""
                struct Lane { int base; __device__ operator int() const { return base + threadIdx.x; } };
                struct Tick { int n; __device__ operator unsigned() { return ++n; } };
                __device__ int peek(const Lane& l) { return l.base; }
                __global__ void k(int* out) {
                  Lane l; l.base = 5;
                  int v = l;
                  int w = (int)l + 1;
                  int b = l.base;
                  Lane m; m.base = 1; Lane copy = m;     // a copy: no conversion
                  int p = peek(l);
                  Tick t; t.n = 0; unsigned x = t;
                  out[v + w + b + copy.base + p + x + t.n] = 0;
                }
                """);
        Set<String> d = divergent(u, "k");
        assertTrue(d.containsAll(Set.of("v", "w", "t", "x")), d.toString());
        assertFalse(d.contains("l") || d.contains("b"), d + " " + u.implicitCalls());
        long conversions = u.implicitCalls().stream().filter(klap.model.ImplicitCall::isConversion).count();
        assertEquals(3, conversions, "l in 'int v = l', in '(int)l' and t in 'unsigned x = t': " + u.implicitCalls());
    }

    @Test
    void unknownCallsMemberCallsAsmLambdasAndReferencesAreWrites() {
        CudaUnit u = parse("""
                struct Acc { int v; __device__ void add(int x) { v += x; } };
                __global__ void k(int* out, int n) {
                  int a = 0; external_fill(a);            // not defined here: may take int&
                  Acc acc{0}; acc.add(threadIdx.x);       // member call may change the object
                  int r = 0; asm("mov.u32 %0, %%laneid;" : "=r"(r));
                  int l = 0; auto set = [&]() { l = threadIdx.x; }; set();
                  int m = 0; int& alias = m; alias = threadIdx.x;
                  int v = 0; int w = __shfl_sync(0xffffffffu, v, 0); int z = atomicAdd(out, v);
                  n = threadIdx.x;                        // a kernel parameter written per thread
                  out[a + acc.v + r + l + m + w + z + n] = 0;
                }
                __device__ void external_fill(int& x);
                """);
        Set<String> d = divergent(u, "k");
        assertTrue(d.containsAll(Set.of("a", "acc", "r", "l", "m", "n")), d.toString());
        assertFalse(d.contains("v"), "by-value built-ins do not write their arguments: " + d);
    }

    @Test
    void aThreadDependentBreakMakesTheLoopCounterDivergentAfterTheLoop() {
        CudaUnit u = parse("""
                __global__ void k(const int* p, int* out, int n) {
                  int i = 0;
                  for (i = 0; i < n; ++i) { if (p[threadIdx.x] == i) break; }
                  int j = 0, x = 0;
                  for (j = 0; j < n; ++j) { if (p[threadIdx.x] > j) continue; x = j; }
                  int q = 0;
                  for (q = 0; q < n; ++q) { out[q] = 0; }
                  out[i + x + q] = 1;
                }
                """);
        Set<String> d = divergent(u, "k");
        assertTrue(d.containsAll(Set.of("i", "x")), d.toString());
        assertFalse(d.contains("q"), d.toString());
    }

    @Test
    void aBarrierAfterAGuardedReturnStopsTheGuardRewrite() {
        String code = """
                __global__ void c(int x) {}
                __device__ void meet() { __syncthreads(); }
                __global__ void direct(const int* p, int n) {
                  int i = blockIdx.x * blockDim.x + threadIdx.x;
                  if (i >= n) return;
                  __syncthreads();
                  if (p[i]) c<<<1, 1>>>(i);
                }
                __global__ void called(const int* p, int n) {
                  int i = blockIdx.x * blockDim.x + threadIdx.x;
                  if (i >= n) return;
                  meet();
                  if (p[i]) c<<<1, 1>>>(i);
                }
                __global__ void warp(const int* p, int n) {
                  int i = blockIdx.x * blockDim.x + threadIdx.x;
                  if (i >= n) return;
                  int v = __shfl_sync(0xffffffffu, p[i], 0);
                  if (v) c<<<1, 1>>>(i);
                }
                __global__ void before(const int* p, int n) {
                  int i = blockIdx.x * blockDim.x + threadIdx.x;
                  __syncthreads();
                  if (i >= n) return;
                  if (p[i]) c<<<1, 1>>>(i);
                }
                """;
        CudaUnit u = parse(code);
        SyncSites syncs = new SyncSites(u);
        assertEquals(Set.of("meet", "direct", "called", "warp", "before"), syncs.synchronizingFunctions());
        for (String k : new String[] {"direct", "called", "warp"}) {
            FunctionDef f = fn(u, k);
            var p = new Convergence(u.file(), f, new Uniformity(f, false, u), syncs).place(launchStmt(f));
            var im = assertInstanceOf(Convergence.Placement.Immediate.class, p, k);
            assertTrue(im.reason().contains("synchronizes"), im.reason());
        }
        FunctionDef f = fn(u, "before");
        assertInstanceOf(Convergence.Placement.Deferred.class,
                new Convergence(u.file(), f, new Uniformity(f, false, u), syncs).place(launchStmt(f)),
                "a barrier before the guard is met by every thread: the rewrite is safe");
    }

    /**
     * 2026-11-28, found by hand-written adversarial programs: a barrier in {@code asm} written through a
     * macro ({@code #define BARRIER() asm volatile("bar.sync 0;")}) was not a synchronization site
     * (the check read the statement's text, {@code BARRIER();}), so a launch after a guarded return and
     * such a barrier was aggregated per block and per grid: the hang of issue 10's case 1. The check
     * now reads the assembly after macro expansion, and knows the other synchronizing PTX.
     */
    @Test
    void synchronizingAsmCountsAlsoThroughAMacro() {
        String code = """
                #define BARRIER() asm volatile("bar.sync 0;" ::: "memory")
                #define BAR2 do { asm volatile("barrier.sync 0;"); } while (0)
                #define LANEID(v) asm("mov.u32 %0, %%laneid;" : "=r"(v))
                __global__ void c(int x) {}
                __device__ void meet() { BARRIER(); }
                __global__ void macro(const int* p, int n) {
                  int i = blockIdx.x * blockDim.x + threadIdx.x;
                  if (i >= n) return;
                  BARRIER();
                  if (p[i]) c<<<1, 1>>>(i);
                }
                __global__ void macro_do(const int* p, int n) {
                  int i = blockIdx.x * blockDim.x + threadIdx.x;
                  if (i >= n) return;
                  BAR2;
                  if (p[i]) c<<<1, 1>>>(i);
                }
                __global__ void called(const int* p, int n) {
                  int i = blockIdx.x * blockDim.x + threadIdx.x;
                  if (i >= n) return;
                  meet();
                  if (p[i]) c<<<1, 1>>>(i);
                }
                __global__ void named(const int* p, int n) {
                  int i = blockIdx.x * blockDim.x + threadIdx.x;
                  if (i >= n) return;
                  asm volatile("\\tbar.sync 1, 64;");
                  if (p[i]) c<<<1, 1>>>(i);
                }
                __global__ void cta(const int* p, int n) {
                  int i = blockIdx.x * blockDim.x + threadIdx.x;
                  if (i >= n) return;
                  __asm__ __volatile__("barrier.cta.sync.aligned 0;");
                  if (p[i]) c<<<1, 1>>>(i);
                }
                __global__ void shfl(const int* p, int n) {
                  int i = blockIdx.x * blockDim.x + threadIdx.x, v = p[i];
                  if (i >= n) return;
                  asm volatile("shfl.sync.idx.b32 %0, %0, 0, 31, -1;" : "+r"(v));
                  if (v) c<<<1, 1>>>(i);
                }
                __global__ void lane(const int* p, int n) {
                  int i = blockIdx.x * blockDim.x + threadIdx.x, v = 0;
                  if (i >= n) return;
                  LANEID(v);
                  if (p[i]) c<<<1, 1>>>(v);
                }
                """;
        CudaUnit u = parse(code);
        SyncSites syncs = new SyncSites(u);
        assertEquals(Set.of("meet", "macro", "macro_do", "called", "named", "cta", "shfl"), syncs.synchronizingFunctions(),
                "an asm without synchronizing PTX (lane) is no synchronization site");
        for (String k : new String[] {"macro", "macro_do", "called", "named", "cta", "shfl"}) {
            FunctionDef f = fn(u, k);
            var p = new Convergence(u.file(), f, new Uniformity(f, false, u), syncs).place(launchStmt(f));
            var im = assertInstanceOf(Convergence.Placement.Immediate.class, p, k);
            assertTrue(im.reason().contains("synchronizes"), im.reason());
        }
    }

    /**
     * Review 2026-11-29 (docs/robustness.md, "Bugs found", item 13): the collectives of the libraries
     * klap reads no header of (cooperative groups, CUB, libcu++ barriers) synchronize, where the unit
     * includes the library; a function of the file with a collective's name is judged by its body, and
     * another library's function of that name ({@code thrust::reduce}) is none.
     */
    @Test
    void libraryCollectivesAreSynchronizationSites() {
        String head = """
                #include <cooperative_groups.h>
                #include <cub/block/block_reduce.cuh>
                #include <cuda/barrier>
                namespace cg = cooperative_groups;
                using BR = cub::BlockReduce<int, 128>;
                __global__ void c(int x) {}
                __device__ int Down(int v) { return v + 1; }
                __device__ int reduce(const int* p, int n) { return p[n]; }
                struct Acc { __device__ int Sum(int v) const { return v; } };
                struct MaxOp { __device__ int operator()(int a, int b) const { return a > b ? a : b; } };
                """;
        java.util.Map<String, String> bodies = new java.util.LinkedHashMap<>();
        bodies.put("shfl", "auto t = cg::tiled_partition<32>(cg::this_thread_block()); if (i >= n) return; int v = t.shfl(i, 0);");
        bodies.put("ballot", "auto t = cg::tiled_partition<32>(cg::this_thread_block()); if (i >= n) return; int v = (int)t.ballot(i & 1);");
        bodies.put("any", "cg::thread_block_tile<32> t = cg::tiled_partition<32>(cg::this_thread_block()); if (i >= n) return; int v = t.any(i > 3);");
        bodies.put("reduce", "auto t = cg::tiled_partition<32>(cg::this_thread_block()); if (i >= n) return; int v = cg::reduce(t, i, cg::plus<int>());");
        bodies.put("scan", "auto t = cg::tiled_partition<32>(cg::this_thread_block()); if (i >= n) return; int v = cooperative_groups::exclusive_scan(t, i);");
        bodies.put("wait", "auto b = cg::this_thread_block(); if (i >= n) return; int v = i; cg::wait(b);");
        bodies.put("wait_prior", "auto b = cg::this_thread_block(); if (i >= n) return; int v = i; cg::wait_prior<1>(b);");
        bodies.put("partition", "auto b = cg::this_thread_block(); if (i >= n) return; auto t = cg::tiled_partition(b, 16); int v = (int)t.thread_rank();");
        bodies.put("cub_temp", "__shared__ BR::TempStorage tmp; if (i >= n) return; int v = BR(tmp).Sum(i, n);");
        bodies.put("cub_var", "__shared__ BR::TempStorage tmp; if (i >= n) return; BR r(tmp); int v = r.Reduce(i, cub::Max());");
        bodies.put("cub_fn", "if (i >= n) return; int v = cub::ShuffleIndex<32>(i, 0, 0xffffffffu);");
        bodies.put("barrier", "__shared__ cuda::barrier<cuda::thread_scope_block>* bar; if (i >= n) return; int v = i; bar->wait(bar->arrive());");
        // the program's reduce and Acc::Sum hide nothing of the library's (CDT resolves no function for those calls)
        bodies.put("cub_member_template", "__shared__ BR::TempStorage tmp; if (i >= n) return; int v; BR(tmp).ExclusiveScan<MaxOp>(i, v, 0, MaxOp());");
        bodies.put("own_down", "if (i >= n) return; int v = Down(i) + Acc().Sum(i) + reduce(p, i);");
        bodies.put("thrust", "if (i >= n) return; int v = thrust::reduce(thrust::seq, p, p + 4);");
        StringBuilder code = new StringBuilder(head);
        // the kernels are named k_<case>: a kernel named shfl would be a function of the unit of that name
        bodies.forEach((k, b) -> code.append("__global__ void k_").append(k)
                .append("(const int* p, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  ").append(b)
                .append("\n  if (p[i]) c<<<1, 1>>>(v);\n}\n"));
        CudaUnit u = parse(code.toString());
        assertEquals(Set.of(klap.model.LibraryCalls.Library.values()), u.libraries());
        SyncSites syncs = new SyncSites(u);
        Set<String> expected = new java.util.HashSet<>();
        bodies.keySet().stream().filter(k -> !k.equals("own_down") && !k.equals("thrust")).forEach(k -> expected.add("k_" + k));
        assertEquals(expected, syncs.synchronizingFunctions(),
                "a function of the file named like a CUB method, and thrust::reduce, are no collectives");
        for (String k : expected) {
            FunctionDef f = fn(u, k);
            var p = new Convergence(u.file(), f, new Uniformity(f, false, u), syncs).place(launchStmt(f));
            var im = assertInstanceOf(Convergence.Placement.Immediate.class, p, k);
            assertTrue(im.reason().contains("synchronizes"), im.reason());
        }
        // a collective's name as a function of the file is judged by that function's body
        CudaUnit own = parse(head + """
                __device__ int shfl(int v, int l) { return v + l; }
                __global__ void k(const int* p, int n) {
                  int i = blockIdx.x * blockDim.x + threadIdx.x;
                  if (i >= n) return;
                  int v = shfl(i, 0);
                  if (p[i]) c<<<1, 1>>>(v);
                }
                """);
        assertEquals(Set.of(), new SyncSites(own).synchronizingFunctions());
        // without the library's include, the same names are unknown calls (an unseen class's Sum, a reduce)
        CudaUnit bare = parse("""
                __global__ void c(int x) {}
                __global__ void k(const int* p, int n) {
                  int i = blockIdx.x * blockDim.x + threadIdx.x;
                  if (i >= n) return;
                  int v = Acc(p).Sum(i) + reduce(i) + (int)t.ballot(i);
                  if (p[i]) c<<<1, 1>>>(v);
                }
                """);
        assertEquals(Set.of(), bare.libraries());
        assertEquals(Set.of(), new SyncSites(bare).synchronizingFunctions());
    }

    /**
     * Review 2026-11-29: CUB's device-wide algorithms launch their kernels when device code of a
     * relocatable build calls them, so such a call is a launching operation (also in a helper); a
     * block-level {@code Sum} or one without CUB included is none.
     */
    @Test
    void cubDeviceWideAlgorithmsLaunch() {
        CudaUnit u = parse("""
                #include <cub/cub.cuh>
                __global__ void c(int* a) {}
                __device__ void total(void* t, size_t b, int* a, int* o) { cub::DeviceReduce::Sum(t, b, a, o, 32); }
                struct DeviceOps { static __device__ void twice(int* a) { a[0] *= 2; } };
                __global__ void k(int* a, int* o, void* t, size_t b) {
                  c<<<1, 32>>>(a);
                  cub::DeviceScan::ExclusiveSum(t, b, a, o, 32);
                  total(t, b, a, o);
                  int s = Acc(a).Sum(1);
                  DeviceOps::twice(a);
                }
                """);
        SyncSites s = new SyncSites(u);
        assertTrue(s.launches("total"));
        assertEquals(3, s.launchingOperations(fn(u, "k").body()).size(),
                "the launch, DeviceScan and total; the program's DeviceOps::twice is no CUB algorithm");
        CudaUnit bare = parse("""
                __global__ void c(int* a) {}
                __global__ void k(int* a, int* o, void* t, size_t b) {
                  c<<<1, 32>>>(a);
                  cub::DeviceScan::ExclusiveSum(t, b, a, o, 32);
                }
                """);
        assertEquals(1, new SyncSites(bare).launchingOperations(fn(bare, "k").body()).size(), "no CUB included");
    }

    @Test
    void launchingOperationsIncludeHelpersThatLaunch() {
        CudaUnit u = parse("""
                __global__ void c(int x) {}
                __device__ void helper(int x) { c<<<1, 1>>>(x); }
                __device__ void indirect(int x) { helper(x); }
                __global__ void k(int n) { c<<<1, 1>>>(n); indirect(n); int y = n + 1; }
                """);
        SyncSites s = new SyncSites(u);
        assertTrue(s.launches("indirect"));
        assertEquals(2, s.launchingOperations(fn(u, "k").body()).size());
    }

    /**
     * Review 2026-11-27: a write through a structured binding by reference ({@code auto& [lo, hi] = r})
     * or through a by-reference init-capture ({@code [&b = base]}) writes {@code r} or {@code base};
     * a structured binding by value copies.
     */
    @Test
    void writesThroughStructuredBindingsAndInitCapturesCount() {
        CudaUnit u = parse("""
                __global__ void k(int* out, int2 r, int2 s) {
                  auto& [lo, hi] = r;
                  lo += threadIdx.x;
                  auto [a, b] = s;
                  a += threadIdx.x;
                  int base = 0, other = 0;
                  auto bump = [&bb = base](int d) { bb += d; };
                  bump(threadIdx.x);
                  auto peek = [o = other](int d) { return o + d; };
                  out[r.x + s.x + base + peek(1)] = 0;
                }
                """);
        Set<String> d = divergent(u, "k");
        assertTrue(d.containsAll(Set.of("r", "base", "lo", "a")), d.toString());
        assertFalse(d.contains("s"), "a binding by value copies s: " + d);
        assertFalse(d.contains("other"), "a capture by value writes nothing: " + d);
    }
}
