package klap.aggregation;

import static klap.aggregation.Check.inOrder;
import static klap.aggregation.Check.none;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import klap.model.Diagnostic.Severity;
import klap.transform.Granularity;
import org.junit.jupiter.api.Test;

/** Kernel (grid) granularity: KLAP II-B rebuilt on the CDP2 last-block barrier. */
class KernelGranularityTest {

    @Test
    void parentRecordsWithTheAtomicScanAndItsLastBlockLaunches() {
        var r = Check.run(AggregationPassTest.BFS, Granularity.KERNEL);
        assertFalse(r.hasErrors(), r.diagnostics().toString());
        inOrder(r.text(),
                "__global__ __launch_bounds__(1024) void child_klap_kagg_uuvvu(const klap::ksite* klap_site, int* level, const int* adj, int next);",
                "__global__ __launch_bounds__(1024) void child_klap_kagg_uuvvu(const klap::ksite* klap_site, int* level, const int* adj, int next) {",
                "const klap_args_child* klap_a;", "if (!klap::kchild_enter(klap_site, klap_v, klap_a)) return;",
                "int start = klap_a->start;", "int count = klap_a->count;",
                // the records are copied: the pool memory is released before the body runs
                "klap::kchild_release(klap_site);",
                "const uint3 threadIdx = klap_v.threadIdx;", "blockIdx.x * blockDim.x + threadIdx.x",
                // the parent keeps its name and signature, as written, for code klap does not see ...
                "__global__ __launch_bounds__(1024) void parent_klap_grid(int* level, const int* off, const int* adj, int n, int cur, klap::kstate* klap_ks);",
                "__global__ void parent(int* level, const int* off, const int* adj, int n, int cur) {",
                "child<<<(count + 31) / 32, 32>>>(level, adj, off[v], count, cur + 1);",
                // ... and its twin gets the state parameter; its body runs in a lambda, returns come back to the epilogue
                "__global__ __launch_bounds__(1024) void parent_klap_grid(int* level, const int* off, const int* adj, int n, int cur, klap::kstate* klap_ks)",
                "{ [&]() {",
                "if (v >= n) return;",
                "klap::krecord<klap_args_child>(klap_ks, 0u, dim3((count + 31) / 32), dim3(32), 0u, (cudaStream_t)0, "
                        + "klap_args_child(level, adj, off[v], count, cur + 1), "
                        // the launch as written, for when the pool has no room for the record (issue 11)
                        + "[&](dim3 klap_grid, dim3 klap_block, unsigned klap_smem, cudaStream_t klap_stream, const "
                        + "klap_args_child& klap_a) -> cudaError_t { cudaError_t klap_pre = cudaPeekAtLastError(); "
                        + "child<<<klap_grid, klap_block, klap_smem, klap_stream>>>(klap_a.level, klap_a.adj, klap_a.start, "
                        + "klap_a.count, klap_a.next); return klap::launch_result(klap_pre); });",
                "}(); klap::kfinish(klap_ks, 0u, klap::klaunch_pair<klap_args_child>([&](const klap::ksite* klap_ksite, "
                        + "dim3 klap_grid, dim3 klap_block, "
                        + "unsigned klap_smem, cudaStream_t klap_stream) -> cudaError_t { cudaError_t klap_pre = "
                        + "cudaPeekAtLastError(); child_klap_kagg_uuvvu<<<klap_grid, "
                        + "klap_block, klap_smem, klap_stream>>>(klap_ksite, klap::kfirst_args<klap_args_child>(klap_ksite).level, "
                        + "klap::kfirst_args<klap_args_child>(klap_ksite).adj, klap::kfirst_args<klap_args_child>(klap_ksite).next); "
                        + "cudaError_t klap_e = klap::launch_result(klap_pre); return klap_e; }, "
                        // each record as written, for when the device runtime refuses the aggregated launch
                        + "[&](dim3 klap_grid, dim3 klap_block, unsigned klap_smem, cudaStream_t klap_stream, const "
                        + "klap_args_child& klap_a) -> cudaError_t { cudaError_t klap_pre = cudaPeekAtLastError(); "
                        + "child<<<klap_grid, klap_block, klap_smem, klap_stream>>>(klap_a.level, klap_a.adj, klap_a.start, "
                        + "klap_a.count, klap_a.next); return klap::launch_result(klap_pre); })); }",
                // the twin's record-arena helper (issue 11: large host launches), in the twin's scope
                "static inline unsigned long long parent_klap_grid_karena(unsigned long long klap_threads) { return "
                        + "klap::karena_bytes<klap_args_child>(klap_threads); }",
                "parent_klap_grid<<<10, 256, 0, klap::host_prepare(0, klap::host_warps(10, 256))>>>(0, 0, 0, 2560, 0, "
                        + "klap::host_kstate(1, parent_klap_grid_karena)), klap::host_kstate_done());");
        // no collective, so no divergence elimination is needed at this granularity
        none(r.text(), "if (v >= n) {} else {", "agg_begin", "klap_blk = klap::block_group::hardware()");
    }

    @Test
    void blockIndexIsUniformPerBlockButNotPerGrid() {
        String code = """
                __global__ void child(int b) {}
                __global__ void parent() { child<<<1, 1>>>(blockIdx.x); }
                """;
        assertTrue(Check.run(code, Granularity.BLOCK).text().contains("child_klap_agg_u("));
        assertTrue(Check.run(code, Granularity.KERNEL).text().contains("child_klap_kagg_v("));
    }

    @Test
    void orderedLaunchesInLoopsAreAggregatedPerRoundAndUnorderedOnesAcrossRounds() {
        String code = """
                __global__ void child(int* p, int r) { p[r] = r; }
                __global__ void tag(int* p) { p[0] = 1; }
                __global__ void parent(int* p, int rounds) {
                  tag<<<1, 1, 0, cudaStreamFireAndForget>>>(p);
                  child<<<1, 32>>>(p, -1);
                  for (int r = 0; r < rounds; r++) {
                    child<<<1, 32>>>(p, r);
                  }
                }
                int main() { parent<<<1, 1>>>(0, 3); }
                """;
        var r = Check.run(code, Granularity.KERNEL);
        assertFalse(r.hasErrors(), r.diagnostics().toString());
        var d = r.diagnostics().stream().filter(x -> x.id().equals("kernel-per-round")).findFirst().orElseThrow();
        assertEquals(Severity.NOTE, d.severity());
        assertEquals(7, d.line());
        inOrder(r.text(),
                "{ [&]() { unsigned klap_seq = 0;",
                // the fire-and-forget site is plain (slot 0); both ordered sites are numbered per thread
                "klap::krecord<klap_args_tag>(klap_ks, 0u, dim3(1), dim3(1), (unsigned)(0), (cudaStream_t)(cudaStreamFireAndForget)",
                "klap::krecord_seq<klap_args_child>(klap_ks, 1u, 2u, 0u, klap_seq, dim3(1), dim3(32), 0u, (cudaStream_t)0, "
                        + "klap_args_child(p, -1), [&](",
                "for (int r = 0; r < rounds; r++) {",
                "klap::krecord_seq<klap_args_child>(klap_ks, 1u, 2u, 1u, klap_seq, dim3(1), dim3(32), 0u, (cudaStream_t)0, "
                        + "klap_args_child(p, r), [&](",
                "klap::kfinish(klap_ks, 2u, klap::klaunch_pair<", "tag_klap_kagg", "child_klap_kagg", "child_klap_kagg",
                // the arena holds the plain site's records and the first round of each per-round site, in slot order
                "klap::karena_bytes<klap_args_tag, klap_args_child, klap_args_child>(klap_threads)",
                "parent_klap_grid<<<1, 1, 0, klap::host_prepare(0, klap::host_warps(1, 1))>>>(0, 3, "
                        + "klap::host_kstate(1 + KLAP_KERNEL_MAX_ORDERED * 2, parent_klap_grid_karena)), klap::host_kstate_done());");

        var unordered = Check.run(code.replace("child<<<1, 32>>>(p, r)", "child<<<1, 32, 0, cudaStreamFireAndForget>>>(p, r)"),
                Granularity.KERNEL);
        assertFalse(unordered.hasErrors(), unordered.diagnostics().toString());
        inOrder(unordered.text(), "klap::krecord<klap_args_child>(klap_ks, 2u, dim3(1), dim3(32), (unsigned)(0), "
                + "(cudaStream_t)(cudaStreamFireAndForget), klap_args_child(p, r), [&](", "klap::kfinish(klap_ks, 0u,",
                "klap::host_kstate(3, parent_klap_grid_karena)");
    }

    @Test
    void recursiveParentsGetAFreshStatePerGridInstance() {
        String code = """
                __global__ void build(int* out, int depth);
                __global__ void build(int* out, int depth) {
                  if (threadIdx.x < 4 && depth < 5) build<<<1, blockDim.x>>>(out, depth + 1);
                  out[blockIdx.x] = depth;
                }
                int main() { build<<<1, 32>>>(0, 0); }
                """;
        var r = Check.run(code, Granularity.KERNEL);
        assertFalse(r.hasErrors(), r.diagnostics().toString());
        inOrder(r.text(),
                // the recursive launch's arguments are never scalarized: in the aggregated variant one grid holds
                // the virtual grids of many records, whose 'depth' differ (first GPU run, issue 10)
                "__global__ __launch_bounds__(1024) void build_klap_grid(int* out, int depth, klap::kstate* klap_ks);",
                "__global__ __launch_bounds__(1024) void build_klap_kagg_vv(const klap::ksite* klap_site, klap::kstate* klap_ks);",
                "__global__ void build(int* out, int depth);",   // the user's prototype, unchanged
                "__global__ void build(int* out, int depth) {",
                "__global__ __launch_bounds__(1024) void build_klap_grid(int* out, int depth, klap::kstate* klap_ks)", "{ [&]() {",
                // a site with one record is not launched as written here (klaunch_pair<..., false>): 'build' as
                // written would not aggregate its own launches (2026-11-29)
                "klap::kfinish(klap_ks, 0u, klap::klaunch_pair<klap_args_build, false>(",
                "klap::kstate* klap_cks = klap::kstate_new(1, klap::on_full::launch_as_written, klap_ksite); build_klap_kagg_vv<<<",
                "(klap_ksite, klap_cks); cudaError_t klap_e = "
                        + "klap::launch_result(klap_pre); if (klap_e != cudaSuccess) klap::kstate_discard(klap_cks);",
                "__global__ __launch_bounds__(1024) void build_klap_kagg_vv(const klap::ksite* klap_site, klap::kstate* klap_ks) {",
                "klap::kstate_new(1, klap::on_full::launch_as_written, klap_ksite)", "build_klap_grid<<<1, 32, 0, klap::host_prepare(0, klap::host_warps(1, 32))>>>(0, 0, klap::host_kstate(1, build_klap_grid_karena)), klap::host_kstate_done());");
    }

    /**
     * Issue 11, scale: the record-arena helper is defined after the twin, so a host launch before the
     * kernel's definition gets none (it would not compile); a template kernel gets no helper (a
     * host launch may deduce its template arguments); a kernel in a namespace gets it qualified as
     * the launch names the kernel.
     */
    @Test
    void onlyLaunchesAfterANonTemplateDefinitionGetTheRecordArena() {
        String code = """
                __global__ void child(int* p) { p[0] = 1; }
                __global__ void early(int* p);
                void host(int* p) { early<<<1, 32>>>(p); }
                __global__ void early(int* p) { child<<<1, 1>>>(p); }
                template <class T> __global__ void generic(T* p) { child<<<1, 1>>>(p); }
                namespace ns { __global__ void inner(int* p) { child<<<1, 1>>>(p); } }
                int main() { early<<<1, 32>>>(0); generic<<<1, 32>>>((int*)0); ns::inner<<<1, 32>>>(0); }
                """;
        var r = Check.run(code, Granularity.KERNEL);
        assertFalse(r.hasErrors(), r.diagnostics().toString());
        inOrder(r.text(),
                "void host(int* p) { (early_klap_grid<<<1, 32, 0, klap::host_prepare(0, klap::host_warps(1, 32))>>>(p, klap::host_kstate(1)), klap::host_kstate_done()); }",
                "static inline unsigned long long early_klap_grid_karena(unsigned long long klap_threads)",
                "namespace ns {", "static inline unsigned long long inner_klap_grid_karena(unsigned long long klap_threads)",
                "(early_klap_grid<<<1, 32, 0, klap::host_prepare(0, klap::host_warps(1, 32))>>>(0, klap::host_kstate(1, early_klap_grid_karena)), klap::host_kstate_done());",
                "(generic_klap_grid<<<1, 32, 0, klap::host_prepare(0, klap::host_warps(1, 32))>>>((int*)0, klap::host_kstate(1)), klap::host_kstate_done());",
                "(ns::inner_klap_grid<<<1, 32, 0, klap::host_prepare(0, klap::host_warps(1, 32))>>>(0, klap::host_kstate(1, ns::inner_klap_grid_karena)), klap::host_kstate_done());");
        none(r.text(), "generic_klap_grid_karena");

        // review of 2026-11-29: two helpers of one signature for overloads, and a helper naming a parameter
        var overloads = Check.run("""
                __global__ void child(int* p, int v) { p[threadIdx.x] = v; }
                __global__ void parent(int* p, int n) { if (threadIdx.x < n) child<<<1, 32>>>(p, n); }
                __global__ void parent(float* p, int n) { if (threadIdx.x < n) child<<<1, 32>>>((int*)p, n); }
                int main() { parent<<<1024, 256>>>((int*)0, 1); }
                """, Granularity.KERNEL);
        assertFalse(overloads.hasErrors(), overloads.diagnostics().toString());
        none(overloads.text(), "_karena");
        var namesParam = Check.run("""
                template <class T> __global__ void child(T* p, T v) { p[threadIdx.x] = v; }
                __global__ void parent(float* p, int n) { if (threadIdx.x < n) child<decltype(+*p)><<<1, 32>>>(p, 1.0f); }
                __global__ void other(float* q) { child<float><<<1, 32>>>(q, 2.0f); }
                void go() { parent<<<1024, 256>>>((float*)0, 1); other<<<1, 1>>>((float*)0); }
                """, Granularity.KERNEL);
        assertFalse(namesParam.hasErrors(), namesParam.diagnostics().toString());
        none(namesParam.text(), "parent_klap_grid_karena");
        inOrder(namesParam.text(), "static inline unsigned long long other_klap_grid_karena(unsigned long long klap_threads) "
                + "{ return klap::karena_bytes<klap_args_child<float>>(klap_threads); }", "klap::host_kstate(1)",
                "klap::host_kstate(1, other_klap_grid_karena)");
    }

    /**
     * Issue 11, exhaustion: a kernel-granularity launch gets its launch as written, which the runtime
     * sends into cudaStreamTailLaunch when the pool has no room, only in kernels that make no
     * launch that may be a tail launch (directly, in a lambda, or in a __device__ function they
     * call): a tail launch of the program must run after every child of its grid.
     */
    @Test
    void launchesFallBackAsWrittenOnlyInKernelsWithoutTailLaunches() {
        String plain = """
                __global__ void child(int* p) { p[0] = 1; }
                __global__ void last(int* p) { p[1] = 2; }
                __global__ void parent(int* p) { child<<<1, 32>>>(p); child<<<1, 32, 0, cudaStreamFireAndForget>>>(p);
                  child<<<1, 32, 0, 0>>>(p); child<<<1, 32, 0, (cudaStream_t) 0>>>(p); }
                int main() { parent<<<1, 1>>>(0); }
                """;
        var r = Check.run(plain, Granularity.KERNEL);
        assertFalse(r.hasErrors(), r.diagnostics().toString());
        assertEquals(4, count(r.text(), "klap::krecord<"));
        assertEquals(4, count(r.text(), "klap::krecord<klap_args_child>(klap_ks, "), r.text());
        assertEquals(4, count(r.text(), "child<<<klap_grid, klap_block, klap_smem, klap_stream>>>(klap_a.p); "
                + "return klap::launch_result(klap_pre); });"), r.text());
        String[] tails = {
            "last<<<1, 1, 0, cudaStreamTailLaunch>>>(p);",                             // the program's own tail launch
            "cudaStream_t s = cudaStreamTailLaunch; last<<<1, 1, 0, s>>>(p);",         // a stream in a variable
            "auto f = [&]() { last<<<1, 1, 0, cudaStreamTailLaunch>>>(p); }; f();",    // in a lambda
            "helper(p);",                                                              // in a device function
        };
        for (String t : tails) {
            String code = plain.replace("__global__ void parent", "__device__ void helper(int* p) { "
                    + "last<<<1, 1, 0, cudaStreamTailLaunch>>>(p); }\n__global__ void parent")
                    .replace("child<<<1, 32, 0, (cudaStream_t) 0>>>(p); }", "child<<<1, 32, 0, (cudaStream_t) 0>>>(p); " + t + " }");
            var k = Check.run(code, Granularity.KERNEL);
            assertFalse(k.hasErrors(), k.diagnostics().toString());
            // (the lambda's launch makes the ordered sites before it go in place; the fire-and-forget one stays)
            int records = 0;
            for (int i = k.text().indexOf("klap::krecord<"); i >= 0; i = k.text().indexOf("klap::krecord<", i + 1)) {
                String call = k.text().substring(i, k.text().indexOf(';', i));
                assertFalse(call.contains("[&]"), t + "\n" + call);
                records++;
            }
            assertTrue(records >= 1, t + "\n" + k.text());
        }
    }

    private static int count(String text, String what) {
        int n = 0;
        for (int i = text.indexOf(what); i >= 0; i = text.indexOf(what, i + 1)) {
            n++;
        }
        return n;
    }

    /** Issue 10: a kernel that code klap does not see refers to keeps its name and signature. */
    @Test
    void launchesOfAStatefulKernelThatStayAsWrittenUseTheUnchangedKernel() {
        String code = """
                __global__ void child(int* p) { p[0] = 1; }
                __global__ void parent(int* p) { child<<<1, 1>>>(p); }
                __host__ __device__ void both(int* p) { parent<<<1, 1>>>(p); }
                void attrs() { cudaFuncSetCacheConfig(parent, cudaFuncCachePreferL1); void (*fp)(int*) = parent; }
                """;
        var r = Check.run(code, Granularity.KERNEL);
        assertFalse(r.hasErrors(), r.diagnostics().toString());
        inOrder(r.text(), "__global__ void parent(int* p) { child<<<1, 1>>>(p); }",
                "__global__ __launch_bounds__(1024) void parent_klap_grid(int* p, klap::kstate* klap_ks)",
                "parent<<<1, 1>>>(p);",
                "(cudaFuncSetCacheConfig(parent_klap_grid, cudaFuncCachePreferL1), cudaFuncSetCacheConfig(parent, "
                        + "cudaFuncCachePreferL1));",
                "void (*fp)(int*) = parent;");
        assertTrue(Check.hasDiag(r, Severity.NOTE, "kernel-state-ref"), r.diagnostics().toString());
    }

    /** Issue 10: records of different rounds are merged into one grid, so nothing is read from record 0. */
    @Test
    void argumentsOfLaunchesInLoopsAreNeverScalarizedAtKernelGranularity() {
        String code = """
                __global__ void child(int* out, int k) { out[k * 32 + threadIdx.x] = k; }
                __global__ void parent(int* out, int rounds) {
                  for (int k = 0; k < rounds; ++k) child<<<1, 32, 0, cudaStreamFireAndForget>>>(out, k);
                }
                """;
        var r = Check.run(code, Granularity.KERNEL);
        assertFalse(r.hasErrors(), r.diagnostics().toString());
        inOrder(r.text(), "child_klap_kagg_vv(", "int k = klap_a->k;");
        none(r.text(), "kfirst_args");
    }

    @Test
    void aLaunchFollowedByAnEventOperationIsMadeInPlace() {
        String code = """
                __global__ void child(int* p) { p[threadIdx.x] = 1; }
                __global__ void parent(int* p, cudaEvent_t e) {
                  child<<<1, 32>>>(p);
                  cudaEventRecord(e, 0);
                }
                """;
        var r = Check.run(code, Granularity.KERNEL);
        assertTrue(Check.hasDiag(r, Severity.WARNING, "granularity-fallback"), r.diagnostics().toString());
        inOrder(r.text(), "klap::warp_group::active()", "child_klap_agg_u<<<", "cudaEventRecord(e, 0);");
        none(r.text(), "klap::krecord", "klap::kfinish");
    }

    @Test
    void deviceMallocInAKernelGranularityParentIsAggregatedPerBlock() {
        String code = """
                __global__ void child(float* p) { p[threadIdx.x] = 0; }
                __global__ void parent(int n) {
                  float* buf;
                  cudaMalloc(&buf, n * sizeof(float));
                  child<<<1, n>>>(buf);
                }
                """;
        var r = Check.run(code, Granularity.KERNEL);
        assertFalse(r.hasErrors(), r.diagnostics().toString());
        inOrder(r.text(), "klap::block_group klap_blk = klap::block_group::hardware();",
                "klap::group_malloc(klap_blk, (void**)(&buf), n * sizeof(float));", "klap::krecord<klap_args_child>(");
    }
}
