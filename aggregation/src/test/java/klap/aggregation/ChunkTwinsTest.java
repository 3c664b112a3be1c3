package klap.aggregation;

import static klap.aggregation.Check.inOrder;
import static klap.aggregation.Check.none;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import klap.transform.Granularity;
import org.junit.jupiter.api.Test;

/**
 * Host launches of a warp/block-granularity parent in chunks of blocks ({@link ChunkTwins}, runtime
 * {@code klap/chunk.cuh}; issue 11, "Scale"): the twin and its helper, the launch's rewrite, and the
 * kernels and launches that keep the single launch because the twin could not be proved equivalent.
 */
class ChunkTwinsTest {

    static final String PARENT = """
            __global__ void child(int* p, int t) { p[t * 32 + threadIdx.x] += 1; }
            __device__ int gid() { return blockIdx.x * blockDim.x + threadIdx.x; }
            __global__ void parent(int* p, int n) {
              int t = gid();
              if (t >= n) return;
              if (p[t] % 3 == 0) child<<<1, 32>>>(p, t);
            }
            """;

    /**
     * A parent in a namespace, launched from the host as {@code a::parent}: the launch names the
     * twin's helpers as it names the kernel ({@code a::parent_klap_chunk_need}, and at kernel
     * granularity {@code a::parent_klap_grid_karena}), so they are declared in the namespace, also
     * after a definition {@code a::parent(...) {...}} outside it. klap named the need helper
     * unqualified (nvcc: identifier "parent_klap_chunk_need" is undefined) and defined the helpers
     * of an out-of-line definition at file scope.
     */
    @Test
    void helpersOfANamespaceParentAreDeclaredInItsNamespace() {
        String inside = "namespace a {\n" + PARENT + "}\nvoid run(int* p, int n) { a::parent<<<(n + 255) / 256, 256>>>(p, n); }\n";
        String outside = "namespace a { __global__ void parent(int* p, int n); }\n"
                + PARENT.replace("__global__ void parent(", "__global__ void a::parent(")
                + "void run(int* p, int n) { a::parent<<<(n + 255) / 256, 256>>>(p, n); }\n";
        for (String src : new String[] {inside, outside}) {
            for (Granularity g : Granularity.values()) {
                var r = Check.run(src, g);
                assertFalse(r.hasErrors(), r.diagnostics().toString());
                assertEquals(1, r.sites(), r.diagnostics().toString());
                if (g == Granularity.KERNEL) {
                    inOrder(r.text(), src == inside ? "static inline unsigned long long parent_klap_grid_karena("
                                    : "namespace a { static inline unsigned long long parent_klap_grid_karena(",
                            "klap::host_kstate(1, a::parent_klap_grid_karena)");
                } else {
                    inOrder(r.text(), src == inside ? "static inline klap::chunk_need parent_klap_chunk_need(dim3 klap_block) {"
                                    : "namespace a { static inline klap::chunk_need parent_klap_chunk_need(dim3 klap_block) {",
                            "klap::host_chunked((n + 255) / 256, 256, a::parent_klap_chunk_need,");
                }
            }
        }
        // launched through a using-declaration: klap's names are not brought along, so they are qualified
        String using = inside.replace("void run(int* p, int n) { a::parent<<<", "using a::parent;\n"
                + "void run(int* p, int n) { cudaFuncSetAttribute(parent, cudaFuncAttributePreferredSharedMemoryCarveout, 50); parent<<<");
        for (Granularity g : Granularity.values()) {
            var r = Check.run(using, g);
            assertEquals(1, r.sites(), r.diagnostics().toString());
            if (g == Granularity.KERNEL) {
                inOrder(r.text(), "(cudaFuncSetAttribute(::a::parent_klap_grid, cudaFuncAttributePreferredSharedMemoryCarveout, 50), "
                        + "cudaFuncSetAttribute(parent,", "(::a::parent_klap_grid<<<", "klap::host_kstate(1, ::a::parent_klap_grid_karena)");
            } else {
                inOrder(r.text(), "(cudaFuncSetAttribute(::a::parent_klap_chunk, cudaFuncAttributePreferredSharedMemoryCarveout, 50), "
                        + "cudaFuncSetAttribute(parent,", "klap::host_chunked((n + 255) / 256, 256, ::a::parent_klap_chunk_need,",
                        "if (!klap_c) parent<<<", "else ::a::parent_klap_chunk<<<");
            }
        }
    }

    @Test
    void twinRunsTheAggregatedBodyWithTheChunksIndices() {
        String src = PARENT + """
                void run(int* p, int n) {
                  cudaFuncSetAttribute(parent, cudaFuncAttributeMaxDynamicSharedMemorySize, 1024);
                  parent<<<(n + 255) / 256, 256>>>(p, n);
                }
                """;
        for (Granularity g : new Granularity[] {Granularity.WARP, Granularity.BLOCK}) {
            var r = Check.run(src, g);
            assertFalse(r.hasErrors(), r.diagnostics().toString());
            inOrder(r.text(),
                    // prototypes where klap declares the parent's other forms
                    "__global__ __launch_bounds__(1024) void parent_klap_chunk(int* p, int n, klap::chunk klap_chunk);",
                    "static inline klap::chunk_need parent_klap_chunk_need(dim3 klap_block);",
                    // the parent as written for every other launch, aggregated in place, the hardware indices
                    "void parent(int* p, int n) {", "int t = gid();", "klap::agg_begin<klap_args_child>",
                    // the twin: the chunk's original indices shadow the built-ins, and reach gid's clone
                    "void parent_klap_chunk(int* p, int n, klap::chunk klap_chunk) {",
                    "klap::vctx klap_v = klap::chunk_enter(klap_chunk);",
                    "[[maybe_unused]] const uint3 blockIdx = klap_v.blockIdx;", "[[maybe_unused]] const dim3 gridDim = klap_v.gridDim;",
                    "int t = gid(klap_v);", "klap::agg_begin<klap_args_child>", "klap_s0.flush(",
                    // one block's needs: the slots of its site, and its aggregated launches
                    "static inline klap::chunk_need parent_klap_chunk_need(dim3 klap_block) {",
                    "klap::chunk_need{klap_t * (klap::agg_slot_bytes<klap_args_child>()), "
                            + (g == Granularity.BLOCK ? "1ull + 0ull" : "0ull + 1ull") + " * ((klap_t + 31ull) / 32ull)};",
                    // the attribute reaches the twin
                    "cudaFuncSetAttribute(parent_klap_chunk, cudaFuncAttributeMaxDynamicSharedMemorySize, 1024)",
                    "klap::host_chunked((n + 255) / 256, 256, parent_klap_chunk_need, [&](dim3 klap_g, const klap::chunk* klap_c) "
                            + "{ if (!klap_c) parent<<<klap_g, 256, 0, klap::host_prepare(0, klap::host_warps(klap_g, 256))>>>(p, n); "
                            + "else parent_klap_chunk<<<klap_g, 256, 0, klap::host_prepare(0, klap::host_warps(klap_g, 256))>>>(p, n, *klap_c); })");
            // the parent as written keeps the hardware indices
            String original = r.text().substring(r.text().indexOf("void parent(int* p, int n) {"),
                    r.text().indexOf("void parent_klap_chunk(int* p, int n, klap::chunk klap_chunk) {"));
            none(original, "gid(klap_v)", "chunk_enter");
        }
    }

    /** The kernel's own {@code __shared__} variables are the twin's own: it still gets one. */
    @Test
    void aParentsOwnSharedMemoryIsItsTwinsOwn() {
        String src = """
                __global__ void child(int* p) { p[threadIdx.x] = 1; }
                __global__ void parent(int* p) {
                  __shared__ int tile[1024];
                  tile[threadIdx.x] = p[threadIdx.x]; __syncthreads();
                  if (tile[threadIdx.x ^ 1]) child<<<1, 32>>>(p + threadIdx.x);
                }
                void run(int* p, int n) { parent<<<n, 256>>>(p); }
                """;
        var r = Check.run(src, Granularity.BLOCK);
        assertFalse(r.hasErrors(), r.diagnostics().toString());
        inOrder(r.text(), "void parent_klap_chunk(int* p, klap::chunk klap_chunk) {", "__shared__ int tile[1024];",
                "klap::host_chunked(n, 256, parent_klap_chunk_need");
    }

    @Test
    void aKernelNamedThroughAMacroIsLaunchedThroughItAndItsTwinByName() {
        String src = PARENT + """
                #define K parent
                void run(int* p, int n, cudaStream_t s) { K<<<n, 128, 0, s>>>(p, n); }
                """;
        var r = Check.run(src, Granularity.BLOCK);
        assertFalse(r.hasErrors(), r.diagnostics().toString());
        inOrder(r.text(), "klap::host_chunked(n, 128, parent_klap_chunk_need, [&](dim3 klap_g, const klap::chunk* klap_c) { if (!klap_c) "
                + "K<<<klap_g, 128, 0, klap::host_prepare(s, klap::host_warps(klap_g, 128))>>>(p, n); else "
                + "parent_klap_chunk<<<klap_g, 128, 0, klap::host_prepare(s, klap::host_warps(klap_g, 128))>>>(p, n, *klap_c); })");
    }

    /** Each case: a kernel or launch whose twin klap could not prove equivalent keeps its one launch, as before. */
    @Test
    void launchesWithoutAProvableTwinStayOneGrid() {
        String[][] cases = {
            // cooperative groups of the hardware grid would see the chunk's grid
            {"#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n"
                + "__global__ void child(int* p) { p[threadIdx.x] = 1; }\n"
                + "__global__ void parent(int* p) { if (cg::this_grid().thread_rank() % 2) child<<<1, 32>>>(p); }\n"
                + "void run(int* p, int n) { parent<<<n, 256>>>(p); }", "cooperative groups"},
            // a static local would be one per kernel: the twin's would not be the kernel's
            {"__global__ void child(int* p) { p[threadIdx.x] = 1; }\n"
                + "__global__ void parent(int* p) { static __device__ int calls; if (p[threadIdx.x]) child<<<1, 32>>>(p); }\n"
                + "void run(int* p, int n) { parent<<<n, 256>>>(p); }", "static local"},
            // code klap cannot see may read the indices
            {"__global__ void child(int* p) { p[threadIdx.x] = 1; }\n__device__ int where();\n"
                + "__global__ void parent(int* p) { if (where() > 0) child<<<1, 32>>>(p); }\n"
                + "void run(int* p, int n) { parent<<<n, 256>>>(p); }", "unseen callee"},
            // a template parent: its helper could not name the records
            {"__global__ void child(int* p) { p[threadIdx.x] = 1; }\n"
                + "template <int N> __global__ void parent(int* p) { if (p[threadIdx.x] > N) child<<<1, 32>>>(p); }\n"
                + "void run(int* p, int n) { parent<4><<<n, 256>>>(p); }", "template"},
            // an argument with a side effect would be evaluated once per chunk
            {"__global__ void child(int* p) { p[threadIdx.x] = 1; }\n"
                + "__global__ void parent(int* p) { if (p[threadIdx.x]) child<<<1, 32>>>(p); }\n"
                + "void run(int* p, int n) { parent<<<n, 256>>>(p++); }", "side effect"},
            // so would a block size computed by a call
            {"__global__ void child(int* p) { p[threadIdx.x] = 1; }\nint blk();\n"
                + "__global__ void parent(int* p) { if (p[threadIdx.x]) child<<<1, 32>>>(p); }\n"
                + "void run(int* p, int n) { parent<<<n, blk()>>>(p); }", "block call"},
            // an argument left to a default: the twin's parameters have none
            {"__global__ void child(int* p) { p[threadIdx.x] = 1; }\n"
                + "__global__ void parent(int* p, int k = 2) { if (p[threadIdx.x] > k) child<<<1, 32>>>(p); }\n"
                + "void run(int* p, int n) { parent<<<n, 256>>>(p); }", "default argument"},
            // a __shared__ variable of a called function that the twin cannot reach the clone of (a macro
            // calls it) would have two kernels: nvlink then lays it out before other kernels' shared memory
            // (random program 76000027 no longer linked)
            {"__global__ void child(int* p) { p[threadIdx.x] = 1; }\n"
                + "__device__ int stash(int v, int t) { __shared__ int big[8192]; big[t] = v; __syncthreads(); return big[0]; }\n"
                + "#define STASH(v) stash(v, threadIdx.x)\n"
                + "__global__ void parent(int* p) { if (STASH(p[threadIdx.x])) child<<<1, 32>>>(p); }\n"
                + "void run(int* p, int n) { parent<<<n, 256>>>(p); }", "shared in a callee called through a macro"},
            // a member function's __shared__ variable: a member cannot be cloned
            {"__global__ void child(int* p) { p[threadIdx.x] = 1; }\n"
                + "struct Stash { __device__ int put(int v, int t) { __shared__ int big[8192]; big[t] = v; __syncthreads(); "
                + "return big[0]; } };\n"
                + "__global__ void parent(int* p) { Stash s; if (s.put(p[threadIdx.x], threadIdx.x)) child<<<1, 32>>>(p); }\n"
                + "void run(int* p, int n) { parent<<<n, 256>>>(p); }", "shared in a member function"},
            {"__global__ void child(int* p) { p[threadIdx.x] = 1; }\n__shared__ int tile[256];\n"
                + "__global__ void parent(int* p) { tile[threadIdx.x] = p[threadIdx.x]; if (tile[0]) child<<<1, 32>>>(p); }\n"
                + "void run(int* p, int n) { parent<<<n, 256>>>(p); }", "file-scope shared"},
            // capturing a structured binding in host_chunked's lambda is C++20 (nvcc 13 warns in C++17 mode)
            {"#include <utility>\n__global__ void child(int* p) { p[threadIdx.x] = 1; }\n"
                + "__global__ void parent(int* p, int k) { if (p[threadIdx.x] > k) child<<<1, 32>>>(p); }\n"
                + "void run(int* p, std::pair<int, int> nk) { auto [n, k] = nk; parent<<<n, 256>>>(p, k); }", "structured binding"},
            // a grid of one block cannot be cut
            {"__global__ void child(int* p) { p[threadIdx.x] = 1; }\n"
                + "__global__ void parent(int* p) { if (p[threadIdx.x]) child<<<1, 32>>>(p); }\n"
                + "void run(int* p) { parent<<<1, 256>>>(p); }", "one block"},
        };
        for (String[] c : cases) {
            for (Granularity g : new Granularity[] {Granularity.WARP, Granularity.BLOCK}) {
                var r = Check.run(c[0], g);
                assertFalse(r.hasErrors(), c[1] + ": " + r.diagnostics());
                none(r.text(), "klap_chunk", "host_chunked");
                inOrder(r.text(), "void run(", "<<<", "klap::host_prepare(");
            }
        }
    }

    /**
     * A {@code __shared__} variable of a function the parent calls (one that reads no index): the twin
     * calls that function's clone, whose variable is the twin's own, so nvlink lays out the parent's
     * shared memory as before (random program 76000027). The parent as written calls the original.
     */
    @Test
    void twinCallsClonesOfFunctionsWithSharedVariables() {
        String src = """
                __global__ void child(int* p) { p[threadIdx.x] = 1; }
                __device__ int stash(int v, int t) { __shared__ int big[8192]; big[t] = v; __syncthreads(); return big[0]; }
                __device__ int twice(int v, int t) { return 2 * stash(v, t); }
                __global__ void parent(int* p) { if (twice(p[threadIdx.x], threadIdx.x)) child<<<1, 32>>>(p); }
                void run(int* p, int n) { parent<<<n, 256>>>(p); }
                """;
        for (Granularity g : new Granularity[] {Granularity.WARP, Granularity.BLOCK}) {
            var r = Check.run(src, g);
            assertFalse(r.hasErrors(), r.diagnostics().toString());
            inOrder(r.text(), "__device__ int stash(const klap::vctx& klap_v, int v, int t);",
                    "__device__ int stash(const klap::vctx& klap_v, int v, int t) {", "__shared__ int big[8192];",
                    "__device__ int twice(const klap::vctx& klap_v, int v, int t);",
                    "__device__ int twice(const klap::vctx& klap_v, int v, int t) {", "return 2 * stash(klap_v, v, t);",
                    "void parent(int* p) {", "if (twice(p[threadIdx.x], threadIdx.x))",
                    "void parent_klap_chunk(int* p, klap::chunk klap_chunk) {", "if (twice(klap_v, p[threadIdx.x], threadIdx.x))",
                    "klap::host_chunked(");
        }
    }

    /** Kernel granularity: a parent with kernel-granularity state has its own twin and arena (GridAggregation), no chunks. */
    @Test
    void kernelGranularityParentsKeepTheirGridTwin() {
        String src = PARENT + "void run(int* p, int n) { parent<<<(n + 255) / 256, 256>>>(p, n); }\n";
        var r = Check.run(src, Granularity.KERNEL);
        assertFalse(r.hasErrors(), r.diagnostics().toString());
        inOrder(r.text(), "parent_klap_grid<<<(n + 255) / 256, 256");
        none(r.text(), "klap_chunk", "host_chunked");
    }

    /** Sites in a device function the parent calls count in its needs; the per-block count follows the site's group. */
    @Test
    void needsCountEverySiteTheParentReaches() {
        String src = """
                struct Big { int v[64]; };
                __global__ void child(int* p, Big b) { p[threadIdx.x] = b.v[0]; }
                __global__ void other(int* p) { p[threadIdx.x] = 2; }
                __device__ void helper(int* p) { if (p[threadIdx.x] > 1) other<<<1, 32>>>(p); }
                __global__ void parent(int* p) {
                  Big b{};
                  if (p[threadIdx.x] > 0) child<<<1, 32>>>(p, b);
                  helper(p);
                }
                void run(int* p, int n) { parent<<<n, 256>>>(p); }
                """;
        var r = Check.run(src, Granularity.BLOCK);
        assertFalse(r.hasErrors(), r.diagnostics().toString());
        inOrder(r.text(), "parent_klap_chunk_need(dim3 klap_block) {",
                "klap_t * (klap::agg_slot_bytes<klap_args_child>() + klap::agg_slot_bytes<klap_args_other>())");
    }
}
