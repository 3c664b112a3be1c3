package klap.aggregation;

import static klap.aggregation.Check.inOrder;
import static klap.aggregation.Check.none;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import klap.model.Diagnostic.Severity;
import klap.transform.Granularity;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Review 2026-11-27 (findings 01a, 01b, 02, 02b, 04): a per-thread stream that the program also
 * orders other work with (an event, an asynchronous copy, a launch left as written) must not lose
 * the launch to the block's NULL stream; two streams of one declaration are each a created stream;
 * a launch in an {@code if constexpr} branch of a template must not be instantiated outside the
 * branch (klap::kfinish, or the collective of a region that extends past the branch).
 */
class StreamOrderAndConstexprTest {

    static final String PRODUCE = "__global__ void produce(int* buf) { buf[threadIdx.x] = threadIdx.x + 1; }\n"
            + "__global__ void consume(const int* buf, int* out) { out[threadIdx.x] = buf[threadIdx.x] * 2; }\n";

    /** Finding 02: an event recorded into the per-thread stream orders a consumer after the launch. */
    @ParameterizedTest
    @EnumSource(Granularity.class)
    void aLaunchIntoAPerThreadStreamThatAnEventIsRecordedIntoStaysAsWritten(Granularity g) {
        var r = Check.run(PRODUCE + """
                __global__ void parent(int* buf, int* out) {
                  int t = threadIdx.x;
                  cudaStream_t s1;
                  cudaStream_t s2;
                  cudaEvent_t ev;
                  cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);
                  cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
                  cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
                  produce<<<1, 32, 0, s1>>>(buf + 32 * t);
                  cudaEventRecord(ev, s1);
                  cudaStreamWaitEvent(s2, ev, 0);
                  consume<<<1, 32, 0, s2>>>(buf + 32 * t, out + 32 * t);
                  cudaEventDestroy(ev);
                  cudaStreamDestroy(s1);
                  cudaStreamDestroy(s2);
                }
                """, g);
        assertEquals(0, r.sites(), r.diagnostics().toString());
        inOrder(r.text(), "produce<<<1, 32, 0, s1>>>(buf + 32 * t);", "cudaEventRecord(ev, s1);",
                "consume<<<1, 32, 0, s2>>>(buf + 32 * t, out + 32 * t);");
        assertTrue(r.diagnostics().stream().anyMatch(d -> d.id().equals("stream-ordered-use") && d.line() == 11
                && d.message().contains("'cudaEventRecord' (line 12)")), r.diagnostics().toString());
        assertTrue(r.diagnostics().stream().anyMatch(d -> d.id().equals("stream-ordered-use") && d.line() == 14
                && d.message().contains("'cudaStreamWaitEvent' (line 13)")), r.diagnostics().toString());
        assertFalse(Check.hasDiag(r, Severity.NOTE, "stream-serialized"), r.diagnostics().toString());
    }

    /** Finding 02b: a copy into the stream, or a query of it, also relies on the launch being there. */
    @ParameterizedTest
    @EnumSource(Granularity.class)
    void anAsyncCopyOrQueryOfThePerThreadStreamKeepsTheLaunchAsWritten(Granularity g) {
        for (String use : new String[] {"cudaMemcpyAsync(out + 32 * t, buf + 32 * t, 128, cudaMemcpyDeviceToDevice, s);",
                "if (cudaStreamQuery(s) == cudaSuccess) out[t] = 1;"}) {
            var r = Check.run(PRODUCE + """
                    __global__ void parent(int* buf, int* out) {
                      int t = threadIdx.x;
                      cudaStream_t s;
                      cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
                      produce<<<1, 32, 0, s>>>(buf + 32 * t);
                      %s
                      cudaStreamDestroy(s);
                    }
                    """.formatted(use), g);
            assertEquals(0, r.sites(), use + ": " + r.diagnostics());
            assertTrue(Check.hasDiag(r, Severity.WARNING, "stream-ordered-use"), use + ": " + r.diagnostics());
            inOrder(r.text(), "produce<<<1, 32, 0, s>>>(buf + 32 * t);");
        }
    }

    /** A launch left as written into the same per-thread stream: both stay in that stream. */
    @ParameterizedTest
    @EnumSource(Granularity.class)
    void aLaunchLeftAsWrittenIntoTheSameStreamKeepsTheOtherAsWritten(Granularity g) {
        var r = Check.run(PRODUCE + """
                __global__ void ext(int* p);
                __global__ void parent(int* buf) {
                  cudaStream_t s;
                  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
                  produce<<<1, 32, 0, s>>>(buf + 32 * threadIdx.x);
                  ext<<<1, 32, 0, s>>>(buf + 32 * threadIdx.x);
                  cudaStreamDestroy(s);
                }
                """, g);
        assertEquals(0, r.sites(), r.diagnostics().toString());
        assertTrue(r.diagnostics().stream().anyMatch(d -> d.id().equals("stream-ordered-use")
                && d.message().contains("the launch of 'ext' (line 8) into the same stream is left as written")),
                r.diagnostics().toString());
        inOrder(r.text(), "produce<<<1, 32, 0, s>>>(buf + 32 * threadIdx.x);", "ext<<<1, 32, 0, s>>>(");
    }

    /** Still aggregated: a per-thread stream only created, launched into and destroyed; an event on another stream. */
    @ParameterizedTest
    @EnumSource(Granularity.class)
    void aPerThreadStreamUsedOnlyForLaunchesIsStillAggregated(Granularity g) {
        var r = Check.run(PRODUCE + """
                __global__ void parent(int* buf, int* out) {
                  cudaStream_t s, t; cudaEvent_t ev;
                  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
                  cudaStreamCreateWithFlags(&t, cudaStreamNonBlocking);
                  cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
                  produce<<<1, 32, 0, s>>>(buf + 32 * threadIdx.x);
                  consume<<<1, 32, 0, s>>>(buf + 32 * threadIdx.x, out + 32 * threadIdx.x);
                  cudaEventRecord(ev, t);
                  cudaStreamDestroy(s); cudaStreamDestroy(t);
                }
                """, g);
        assertEquals(2, r.sites(), r.diagnostics().toString());
        assertTrue(Check.hasDiag(r, Severity.NOTE, "stream-serialized"), r.diagnostics().toString());
        assertFalse(Check.hasDiag(r, Severity.WARNING, "stream-ordered-use"), r.diagnostics().toString());
        // finding 04: each of 'cudaStream_t s, t;' is a created stream, never the tail stream
        assertFalse(Check.hasDiag(r, Severity.WARNING, "stream-may-be-tail"), r.diagnostics().toString());
        none(r.text(), "produce<<<1, 32, 0, s>>>");
    }

    /**
     * An element of a local array of created streams is never the tail stream (NPSLab's BFS,
     * {@code s[threadIdx.x % 4]}, 2026-11-29): aggregated like a created stream; an array that leaves the
     * kernel's sight (passed to a function) or gets another stream keeps its launch as written.
     */
    @ParameterizedTest
    @EnumSource(Granularity.class)
    void anElementOfAnArrayOfCreatedStreamsIsACreatedStream(Granularity g) {
        var r = Check.run(PRODUCE + """
                __global__ void parent(int* buf) {
                  cudaStream_t s[4];
                  for (int k = 0; k < 4; ++k) cudaStreamCreateWithFlags(&s[k], cudaStreamNonBlocking);
                  produce<<<1, 32, 0, s[threadIdx.x % 4]>>>(buf + 32 * threadIdx.x);
                  for (int k = 0; k < 4; ++k) cudaStreamDestroy(s[k]);
                }
                """, g);
        assertEquals(1, r.sites(), r.diagnostics().toString());
        assertFalse(Check.hasDiag(r, Severity.WARNING, "stream-may-be-tail"), r.diagnostics().toString());
        assertTrue(Check.hasDiag(r, Severity.NOTE, "stream-serialized"), r.diagnostics().toString());
        if (g != Granularity.KERNEL) {
            none(r.text(), "produce<<<1, 32, 0, s[threadIdx.x % 4]>>>"); // (kernel: 'parent' stays beside its twin)
        }
        for (String other : new String[] {"void setup(cudaStream_t* s);\n", "__device__ cudaStream_t given;\n"}) {
            String use = other.startsWith("void") ? "setup(s);" : "s[1] = given;";
            var q = Check.run(PRODUCE + other + """
                    __global__ void parent(int* buf) {
                      cudaStream_t s[4];
                      for (int k = 0; k < 4; ++k) cudaStreamCreateWithFlags(&s[k], cudaStreamNonBlocking);
                      %s
                      produce<<<1, 32, 0, s[threadIdx.x %% 4]>>>(buf + 32 * threadIdx.x);
                    }
                    """.formatted(use), g);
            assertEquals(0, q.sites(), use + ": " + q.diagnostics());
            assertTrue(Check.hasDiag(q, Severity.WARNING, "stream-may-be-tail"), use + ": " + q.diagnostics());
        }
    }

    /**
     * A kernel that reads a launch's error to recover from a full pending-launch buffer (bsa_clustering,
     * 2026-11-29) keeps that launch as written: klap could not hand the error to it. A plain error check
     * after the launch, or the error named only before the launch, leaves the launch aggregated.
     */
    @ParameterizedTest
    @EnumSource(Granularity.class)
    void aLaunchWhoseFullBufferErrorTheKernelHandlesStaysAsWritten(Granularity g) {
        String child = "__global__ void child(int* p) { p[blockIdx.x * blockDim.x + threadIdx.x] = 1; }\n";
        var r = Check.run(child + """
                __global__ void parent(int* p, int* retry) {
                  child<<<1, 32, 0, cudaStreamFireAndForget>>>(p + 32 * (blockIdx.x * blockDim.x + threadIdx.x));
                  cudaError_t err = cudaGetLastError();
                  if (err == cudaErrorLaunchPendingCountExceeded) atomicAdd(retry, 1);
                }
                """, g);
        assertEquals(0, r.sites(), r.diagnostics().toString());
        assertTrue(r.diagnostics().stream().anyMatch(d -> d.id().equals("launch-error-recovery") && d.line() == 3
                && d.message().contains("'cudaErrorLaunchPendingCountExceeded' (line 5)")), r.diagnostics().toString());
        inOrder(r.text(), "child<<<1, 32, 0, cudaStreamFireAndForget>>>(p + 32 * (blockIdx.x * blockDim.x + threadIdx.x));",
                "cudaError_t err = cudaGetLastError();");
        for (String body : new String[] {
                "  child<<<1, 32>>>(p + 32 * threadIdx.x);\n  if (cudaGetLastError() != cudaSuccess) atomicAdd(retry, 1);\n",
                "  if (cudaPeekAtLastError() == cudaErrorLaunchOutOfResources) return;\n  child<<<1, 32>>>(p + 32 * threadIdx.x);\n",
                "  child<<<1, 32>>>(p + 32 * threadIdx.x); // cudaErrorLaunchPendingCountExceeded: cudaGetLastError()\n"}) {
            var q = Check.run(child + "__global__ void parent(int* p, int* retry) {\n" + body + "}\n", g);
            assertEquals(1, q.sites(), body + q.diagnostics());
            assertFalse(Check.hasDiag(q, Severity.WARNING, "launch-error-recovery"), body + q.diagnostics());
        }
    }

    /** Finding 04: two streams declared together are each a created stream (no stream-may-be-tail warning). */
    @ParameterizedTest
    @EnumSource(Granularity.class)
    void twoStreamsOfOneDeclarationAreEachACreatedStream(Granularity g) {
        var r = Check.run(PRODUCE + """
                __global__ void parent(int* buf, int* out) {
                  int t = threadIdx.x;
                  cudaStream_t s1, s2; cudaEvent_t ev;
                  cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);
                  cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
                  cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
                  produce<<<1, 32, 0, s1>>>(buf + 32 * t);
                  cudaEventRecord(ev, s1);
                  cudaStreamWaitEvent(s2, ev, 0);
                  consume<<<1, 32, 0, s2>>>(buf + 32 * t, out + 32 * t);
                  cudaEventDestroy(ev); cudaStreamDestroy(s1); cudaStreamDestroy(s2);
                }
                """, g);
        assertFalse(Check.hasDiag(r, Severity.WARNING, "stream-may-be-tail"), r.diagnostics().toString());
        assertEquals(2, r.diagnostics().stream().filter(d -> d.id().equals("stream-ordered-use")).count(),
                r.diagnostics().toString());
    }

    /** Findings 01a/01b: klap's code for a launch in an if constexpr branch stays in the branch. */
    @ParameterizedTest
    @EnumSource(Granularity.class)
    void aLaunchInAnIfConstexprBranchIsNotInstantiatedOutsideIt(Granularity g) {
        var r = Check.run("""
                template <int N> __global__ void fill(int* p) { int a[N]; a[0] = 1; p[threadIdx.x] = a[N - 1]; }
                template <int N>
                __global__ void parent(int* p) {
                  if constexpr (N > 0) fill<N><<<1, 32>>>(p + 32 * threadIdx.x);
                  else p[threadIdx.x] = -1;
                }
                template <int D>
                __global__ void tree(int* cnt, int n) {
                  if (threadIdx.x >= n) return;
                  if constexpr (D > 0) { if (threadIdx.x < 2) tree<D - 1><<<1, 4>>>(cnt, n); }
                  atomicAdd(cnt + D, 1);
                }
                """, g);
        assertEquals(2, r.sites(), r.diagnostics().toString());
        none(r.text(), "klap::kfinish(");
        // every variant named in the parents is named inside the branch: nothing follows the branch but
        // the else, the atomicAdd and the closing braces
        inOrder(r.text(), "if constexpr (N > 0) {", "fill_klap_agg{{[_uv]*}}<N><<<", "else p[threadIdx.x] = -1;");
        inOrder(r.text(), "if constexpr (D > 0) {", "tree_klap_agg{{[_uv]*}}<D - 1><<<", "atomicAdd(cnt + D, 1);");
        // no region's collective closes after a branch (block: the guard's region to the end of the body)
        none(r.text(), "} klap_s{{[0-9]+}}.flush(");
        if (g == Granularity.KERNEL) {
            assertTrue(r.diagnostics().stream().anyMatch(d -> d.id().equals("granularity-fallback")
                    && d.message().contains("'if constexpr' branch (line 4)")), r.diagnostics().toString());
        }
        if (g == Granularity.BLOCK) {
            // the region of the guard would extend past the branch
            assertTrue(r.diagnostics().stream().anyMatch(d -> d.id().equals("granularity-fallback")
                    && d.message().contains("'if constexpr' branch (line 10) and its region extends past")),
                    r.diagnostics().toString());
        }
    }

    /**
     * Found by the read-through of 2026-11-27 (fifth session): a survivor region (a uniform loop after
     * a guarded return) whose branch holds an {@code if constexpr} with the launch: the region would
     * extend past the constexpr branch, so the launch goes in place; klap crashed
     * (ClassCastException) because it still took the placement for a survivor region.
     */
    @ParameterizedTest
    @EnumSource(Granularity.class)
    void aSurvivorRegionAroundAnIfConstexprBranchGoesInPlace(Granularity g) {
        var r = Check.run("""
                template <int N> __global__ void fill(int* a, int r) { a[r * 32 + threadIdx.x] += N; }
                template <int N>
                __global__ void parent(int* a, const unsigned* fl, int n, int k) {
                  int i = blockIdx.x * blockDim.x + threadIdx.x;
                  if (i >= n) return;
                  for (int r = 0; r < k; ++r) {
                    if ((fl[i] >> r) & 1u) { if constexpr (N > 0) fill<N><<<1, 4>>>(a, r); }
                  }
                }
                template __global__ void parent<2>(int*, const unsigned*, int, int);
                """, g);
        assertFalse(r.hasErrors(), r.diagnostics().toString());
        if (g != Granularity.KERNEL) {
            none(r.text(), "klap_live");
        }
    }
}
