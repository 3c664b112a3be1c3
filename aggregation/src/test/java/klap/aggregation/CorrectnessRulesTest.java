package klap.aggregation;

import static klap.aggregation.Check.inOrder;
import static klap.aggregation.Check.none;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import klap.model.Diagnostic.Severity;
import klap.transform.Granularity;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The four miscompiles of the first GPU run (issue 10), one smallest program each, at every
 * granularity: the output keeps the launch order, never pairs klap's collective with the user's
 * barrier, never scalarizes a value written through a reference, and every launch stays aggregated
 * (a refusal is narrow: in place, per warp, with a warning).
 */
class CorrectnessRulesTest {

    /** Case 1: threads past n return, the others meet at __syncthreads() before the launch (hung). */
    static final String BARRIER_AFTER_RETURN = """
            __global__ void child(int* a, int i) { a[i * 32 + threadIdx.x] += 1; }
            __global__ void parent(int* a, int n) {
              __shared__ int s[256];
              int i = blockIdx.x * blockDim.x + threadIdx.x;
              if (i >= n) return;
              s[threadIdx.x] = a[i];
              __syncthreads();
              if (s[(threadIdx.x + 1) % 32] > 0) child<<<1, 32>>>(a, i);
            }
            """;

    /** Case 2: a producer, then consumers in a loop of constant trip count, one thread, NULL stream (reordered). */
    static final String DEPENDENT_LAUNCHES = """
            __global__ void produce(int* a, int i) { a[i * 32 + threadIdx.x] = i; }
            __global__ void consume(int* a, int i, int k) { a[i * 32 + threadIdx.x] += k; }
            __global__ void parent(int* a, int n) {
              int i = blockIdx.x * blockDim.x + threadIdx.x;
              if (i >= n) return;
              produce<<<1, 32>>>(a, i);
              for (int k = 0; k < 3; ++k) consume<<<1, 32>>>(a, i, k);
            }
            """;

    /** Case 3: a row range through reference out-parameters (illegal address / wrong sums). */
    static final String REFERENCE_OUT_PARAMS = """
            __global__ void child(const int* col, int b, int* out) { out[b + threadIdx.x] = col[b]; }
            __device__ void row_range(const int* ptr, int r, int& b, int& e) { b = ptr[r]; e = ptr[r + 1]; }
            __global__ void parent(const int* ptr, const int* col, int* out, int n) {
              int r = blockIdx.x * blockDim.x + threadIdx.x;
              if (r >= n) return;
              int b = 0, e = 0;
              row_range(ptr, r, b, e);
              if (e > b) child<<<1, e - b>>>(col, b, out);
            }
            """;

    @ParameterizedTest
    @EnumSource(Granularity.class)
    void aBarrierAfterAGuardedReturnIsNeverPairedWithKlapsCollective(Granularity g) {
        var r = Check.run(BARRIER_AFTER_RETURN, g);
        assertFalse(r.hasErrors(), r.diagnostics().toString());
        assertTrue(r.sites() == 1, "the launch stays aggregated");
        // the guard is not rewritten: the threads that return really leave
        none(r.text(), "if (i >= n) {} else {");
        // kernel granularity too: kfinish's block barrier would meet the returned threads, so in place
        inOrder(r.text(), "__syncthreads();", "klap::warp_group::active(); auto klap_s0 = klap::agg_begin");
        none(r.text(), "klap::kfinish(");
    }

    @ParameterizedTest
    @EnumSource(Granularity.class)
    void aLaunchThatALaterLaunchWouldOvertakeGoesOutInPlace(Granularity g) {
        var r = Check.run(DEPENDENT_LAUNCHES, g);
        assertFalse(r.hasErrors(), r.diagnostics().toString());
        if (g == Granularity.KERNEL) {
            // both are ordered launches of one thread: numbered per thread, launched round by round
            inOrder(r.text(), "klap::krecord_seq<klap_args_produce>(klap_ks, 0u, 2u, 0u, klap_seq,",
                    "klap::krecord_seq<klap_args_consume>(klap_ks, 0u, 2u, 1u, klap_seq,");
        } else {
            assertTrue(Check.hasDiag(r, Severity.WARNING, "launch-order"), r.diagnostics().toString());
            // the producer is launched where it stands, before the consumers' loop
            inOrder(r.text(), "auto klap_s0 = klap::agg_begin<klap_args_produce>(klap_g0); klap_s0.record(",
                    "produce_klap_agg_", "for (int k = 0; k < 3; ++k)", "consume_klap_agg_");
        }
    }

    @ParameterizedTest
    @EnumSource(Granularity.class)
    void valuesWrittenThroughReferenceParametersAreNeverScalarized(Granularity g) {
        var r = Check.run(REFERENCE_OUT_PARAMS, g);
        assertFalse(r.hasErrors(), r.diagnostics().toString());
        String variant = g == Granularity.KERNEL ? "child_klap_kagg_" : "child_klap_agg_";
        // col is uniform, b is per parent thread, out is uniform
        inOrder(r.text(), variant + "uvu(", "int b = ");
    }

    @ParameterizedTest
    @EnumSource(Granularity.class)
    void aFireAndForgetLaunchIsNotHeldBackByLaterLaunches(Granularity g) {
        var r = Check.run(DEPENDENT_LAUNCHES.replace("produce<<<1, 32>>>", "produce<<<1, 32, 0, cudaStreamFireAndForget>>>"),
                g);
        assertFalse(Check.hasDiag(r, Severity.WARNING, "launch-order"), r.diagnostics().toString());
    }
}
