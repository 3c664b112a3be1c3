package klap.aggregation;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import klap.model.Expr;
import klap.model.FunctionDef;
import klap.transform.EditSet;
import klap.transform.Granularity;
import klap.transform.Lexical;
import klap.transform.Mutations;
import klap.transform.Trees;

/**
 * Host launches of a warp- or block-granularity parent that may run in chunks of blocks (issue 11,
 * "Scale"; runtime {@code klap/chunk.cuh}): the parent's twin {@code NAME_klap_chunk}, which runs
 * its code with the original block indices of one chunk, the helper that says what one block asks
 * of klap's pool and pending-launch budget, and the rewrite of each host launch that picks the
 * kernel as written or the chunks at run time.
 * <h2>Input (block granularity)</h2>
 * <pre>
 * __global__ void parent(int* out, int n) { int t = blockIdx.x * blockDim.x + threadIdx.x; ... child&lt;&lt;&lt;1, 32&gt;&gt;&gt;(out, t); }
 * int main() { ... parent&lt;&lt;&lt;grid, 256&gt;&gt;&gt;(out, n); }
 * </pre>
 * <h2>Output</h2>
 * <pre>
 * __global__ void parent_klap_chunk(int* out, int n, klap::chunk klap_chunk);
 * static inline klap::chunk_need parent_klap_chunk_need(dim3 klap_block);
 * __global__ void parent(int* out, int n) { ...aggregated in place, as before... }
 * __global__ void parent_klap_chunk(int* out, int n, klap::chunk klap_chunk) {
 *   klap::vctx klap_v = klap::chunk_enter(klap_chunk);
 *   [[maybe_unused]] const uint3 threadIdx = klap_v.threadIdx; ... blockIdx, blockDim, gridDim
 *   { ...the parent's aggregated body, calls of index-reading functions passing klap_v... }
 * }
 * static inline klap::chunk_need parent_klap_chunk_need(dim3 klap_block) { ... }
 * int main() { ... klap::host_chunked(grid, 256, parent_klap_chunk_need, [&amp;](dim3 klap_g, const klap::chunk* klap_c) {
 *   if (!klap_c) parent&lt;&lt;&lt;klap_g, 256, 0, klap::host_prepare(0, klap::host_warps(klap_g, 256))&gt;&gt;&gt;(out, n);
 *   else parent_klap_chunk&lt;&lt;&lt;klap_g, 256, 0, klap::host_prepare(0, klap::host_warps(klap_g, 256))&gt;&gt;&gt;(out, n, *klap_c); }); }
 * </pre>
 * A kernel gets a twin only where the twin's indices are provably the original ones, by the checks
 * an aggregated child variant passes ({@link ChildRefusals#indicesReplaceable}: no cooperative
 * groups of the hardware grid, no code klap cannot see that may read the indices, no static local);
 * where it is not a template, a class member, or one of several kernels of its name; where the
 * helper can name every site's record type; and where the twin cannot move a {@code __shared__}
 * variable into other kernels ({@link #sharesSharedMemory}). A host launch uses it only where the block size, the
 * dynamic shared memory, the stream and every argument have no side effect (each chunk's launch
 * evaluates them again), the launch writes out every argument the twin needs, and none of them names
 * a structured binding (capturing one in the lambda is C++20: nvcc 13 warns in C++17). Otherwise the
 * launch stays as {@link HostLaunches} writes it, as before: one grid, whatever its size.
 */
final class ChunkTwins {
    private final AggregationContext ctx;
    private final SitePlans plans;
    private final CudaText cuda;
    private final ChildRefusals refusals;
    private final ChildVariants variants;
    /** kernel -> whether it can have a twin (computed once) */
    private final Map<FunctionDef, Boolean> possible = new IdentityHashMap<>();
    /** the kernels some host launch of the unit uses the twin of */
    private final Set<FunctionDef> used = java.util.Collections.newSetFromMap(new IdentityHashMap<>());

    /** Finds the host launches of the unit that will use a twin. */
    ChunkTwins(AggregationContext ctx, SitePlans plans, CudaText cuda, ChildRefusals refusals, ChildVariants variants) {
        this.ctx = ctx;
        this.plans = plans;
        this.cuda = cuda;
        this.refusals = refusals;
        this.variants = variants;
        for (FunctionDef f : ctx.unit.functions()) {
            if (f.kind() == FunctionDef.Kind.HOST) {
                Trees.walkExprs(f.body(), e -> {
                    if (e instanceof Expr.Launch l && !l.inMacro() && ctx.kernel(l.kernelName()) != null
                            && chunked(l, ctx.kernel(l.kernelName()))) {
                        used.add(ctx.kernel(l.kernelName()));
                    }
                });
            }
        }
    }

    /** @return the name of the chunk twin of kernel {@code k}: {@code k_klap_chunk} */
    static String twinName(FunctionDef k) {
        return k.name() + "_klap_chunk";
    }

    /** @return the name of the helper that gives one block's needs: {@code k_klap_chunk_need} */
    static String needName(FunctionDef k) {
        return twinName(k) + "_need";
    }

    /** @return true if some kernel of the unit gets a twin */
    boolean any() {
        return !used.isEmpty();
    }

    /** @return true if kernel {@code k} gets a twin (a host launch of the unit uses it) */
    boolean twinned(FunctionDef k) {
        return used.contains(k);
    }

    /**
     * @return true if host launch {@code l} of kernel {@code k} is rewritten to run in chunks where
     *         its grid is too large ({@link #launch})
     */
    boolean chunked(Expr.Launch l, FunctionDef k) {
        if (!possible.computeIfAbsent(k, this::possible)) {
            return false;
        }
        List<Expr> again = new ArrayList<>(l.args());
        again.add(l.block());
        if (l.sharedMem() != null) {
            again.add(l.sharedMem());
        }
        if (l.stream() != null) {
            again.add(l.stream());
        }
        // capturing a structured binding in the lambda is C++20 (nvcc 13 warns in C++17 mode: #3357-D)
        Set<String> bound = structuredBindings();
        boolean[] binds = {false};
        for (Expr x : again) {
            Trees.walk(x, e -> binds[0] |= e instanceof Expr.Name n && bound.contains(n.name()));
        }
        if (binds[0]) {
            return false;
        }
        // a grid of one block (build<<<1, 32>>>) cannot be cut
        boolean one = cuda.slice(l.grid().range()).strip().matches("(dim3\\s*\\(\\s*)?0*1[uUlL]*(\\s*\\))?");
        return !one && l.args().size() == k.params().size() && again.stream().allMatch(x -> Mutations.sideEffectFree(x, ctx.unit));
    }

    /**
     * @return true if kernel {@code k} can have a twin: a kernel with an aggregated launch (itself or
     *         in a {@code __device__} function it calls) and no kernel-granularity state, not a
     *         template, member or overloaded name, whose indices the twin can replace, and whose
     *         sites' record types the helper, outside any function, can name
     */
    private boolean possible(FunctionDef k) {
        if (k.kind() != FunctionDef.Kind.KERNEL || plans.hasKernelState(k) || k.templateHeader() != null
                || k.memberOf() != null || ctx.ambiguous(k.name()) || sites(k).isEmpty()
                || k.params().stream().anyMatch(p -> ctx.slice(p.range()).contains("..."))) {
            return false;
        }
        for (SitePlan s : sites(k)) {
            if (s.fn().templateHeader() != null || s.fn().memberOf() != null || cuda.templateArgsNameParams(s, s.fn())) {
                return false;
            }
        }
        return !sharesSharedMemory(k) && refusals.indicesReplaceable(k);
    }

    /**
     * @return true if a twin could change how nvlink lays out {@code __shared__} variables: the unit
     *         declares one at file scope, or in a function that variants and twins do not call a
     *         clone of ({@link ChildVariants#sharedClones}: a member function, one with a static local,
     *         one called through a macro, a lambda or a pointer, ...), or a project header defines a
     *         synchronizing {@code __device__} function (which may hold one). nvlink gives such a variable one
     *         offset in every kernel that reaches it, and once one kernel reaches two variables that
     *         other kernels share, it lays them one after the other, in every kernel that reaches
     *         either: random program 76000027 (a 48 KiB array in a helper of one parent) then failed
     *         to link with "uses too much shared data" for seven kernels that never use it (nvcc
     *         13.0); a twin reaching klap's scan scratch with the parent, next to a helper's 40 KiB
     *         array that a child and its variant share, added the 40 KiB to the parent and to a kernel
     *         klap never touched (review of 2026-11-30). Checked for the whole unit, not the parent's
     *         calls alone: the array that moves may be any kernel's.
     */
    private boolean sharesSharedMemory(FunctionDef k) {
        if (fileScopeShared == null) {
            String code = Lexical.blankCommentsAndLiterals(ctx.text);
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("\\b__shared__\\b").matcher(code);
            fileScopeShared = false;
            while (m.find() && !fileScopeShared) {
                int at = m.start();
                fileScopeShared = ctx.unit.functions().stream().noneMatch(f -> f.body() != null && f.body().range().contains(at));
            }
        }
        // a project header's synchronizing function (headerSyncFunctions) may hold a __shared__
        // array klap cannot clone either: a twin there moved it into two other kernels (review)
        return fileScopeShared || !variants.sharedClones().containsAll(ctx.sharedHolders())
                || !ctx.unit.headerSyncFunctions().isEmpty();
    }

    /** the names the unit declares by structured bindings ({@code auto [a, b] = ...}), computed once */
    private Set<String> structuredBindings;

    private Set<String> structuredBindings() {
        if (structuredBindings == null) {
            structuredBindings = new java.util.HashSet<>();
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("\\bauto\\s*(?:&&|&)?\\s*\\[([^\\]\\[]*)\\]")
                    .matcher(Lexical.blankCommentsAndLiterals(ctx.text));
            while (m.find()) {
                ChildRefusals.IDENTIFIER.matcher(m.group(1)).results().forEach(r -> structuredBindings.add(r.group()));
            }
        }
        return structuredBindings;
    }

    /** whether the unit declares a {@code __shared__} variable outside every function body (computed once) */
    private Boolean fileScopeShared;

    /** @return the aggregated sites that one thread of {@code k} may reach: its own and its device functions' */
    private List<SitePlan> sites(FunctionDef k) {
        return ctx.deviceClosure(k).stream().flatMap(g -> plans.of(g).stream()).toList();
    }

    /**
     * Adds the twin of kernel {@code f}, if a host launch uses it: its prototype and its helper's where
     * klap declares {@code f}'s other forms, its definition and its helper's right after {@code f}.
     *
     * @param body {@code f}'s body as the twin runs it: aggregated, with calls of index-reading
     *             functions passing {@code klap_v} ({@link ChildVariants#retarget})
     */
    void emit(FunctionDef f, EditSet out, Supplier<String> body) {
        if (!twinned(f)) {
            return;
        }
        int declStart = cuda.declStartBeforeUses(f);
        out.insert(declStart, cuda.prototypeWhereDeclared(f, klap.transform.Linkage.cpp(f, head(f, false) + ";\n" + needHead(f) + ";\n"))
                + cuda.lineDirective(declStart));
        out.insert(f.range().end(), klap.transform.Linkage.cpp(f, "\n/* klap: '" + f.name() + "' for host launches whose grid asks klap's "
                + "pool or pending-launch budget for more than they hold at once: run in chunks of blocks, with the original "
                + "indices (klap/chunk.cuh); '" + f.name() + "' itself stays for the other launches */\n"
                + head(f, true) + " {\n  klap::vctx klap_v = klap::chunk_enter(klap_chunk);\n  "
                + ChildVariants.shadows(f) + "\n" + cuda.lineDirective(f.body().range().offset()) + body.get() + "\n}\n"
                + cuda.inDefinitionNamespace(f, needDefinition(f))) + cuda.lineDirective(f.range().end()));
    }

    /** The twin's declaration: {@code f}'s head (with klap's launch bounds), name and parameters plus the chunk. */
    private String head(FunctionDef f, boolean definition) {
        StringBuilder sb = new StringBuilder(definition ? cuda.templateHeaderOfDefinition(f) : cuda.templateHeader(f))
                .append(cuda.boundedDeclaration(f, definition ? f.nameRange().offset() : cuda.qualifiedNameStart(f))).append(twinName(f))
                .append(ctx.text, f.nameRange().end(), f.paramsRange().offset());
        List<String> ps = new ArrayList<>(cuda.paramDecls(f));
        ps.add("klap::chunk klap_chunk");
        return sb.append(String.join(", ", ps)).append(cuda.afterParams(f).trim()).toString();
    }

    private static String needHead(FunctionDef f) {
        return "static inline klap::chunk_need " + needName(f) + "(dim3 klap_block)";
    }

    /**
     * The helper: per block of {@code klap_block} threads, the pool bytes of every site's slots
     * ({@code klap::agg_slot_bytes} per thread and site) and the aggregated launches it may have
     * pending (one per site at block granularity where the site's group is the block, else one per
     * warp). A site in a loop or in a function called more than once counts once: its later rounds
     * wait for pool room as before (pool.cuh).
     */
    private String needDefinition(FunctionDef f) {
        List<String> bytes = new ArrayList<>();
        int perBlock = 0;
        int perWarp = 0;
        for (SitePlan s : sites(f)) {
            bytes.add("klap::agg_slot_bytes<" + cuda.argsType(s) + ">()");
            if (ctx.opt.granularity() == Granularity.BLOCK && s.region() != null && !s.region().warpSubset()) {
                perBlock++;
            } else {
                perWarp++;
            }
        }
        return needHead(f) + " {\n  const unsigned long long klap_t = static_cast<unsigned long long>(klap_block.x) * "
                + "klap_block.y * klap_block.z;\n  return klap::chunk_need{klap_t * (" + String.join(" + ", bytes)
                + "), " + perBlock + "ull + " + perWarp + "ull * ((klap_t + 31ull) / 32ull)};\n}\n";
    }

    /**
     * The text that replaces host launch {@code l} of {@code k} ({@link #chunked} must hold):
     * {@code klap::host_chunked(grid, block, k_klap_chunk_need, [&](dim3 klap_g, const klap::chunk*
     * klap_c) { if (!klap_c) asWritten; else twin; })}, both launches with the stream
     * {@code klap::host_prepare(s, klap::host_warps(klap_g, block))}.
     *
     * @param smem      the dynamic shared memory argument for the kernel as written and for the
     *                  twin ({@link HostLaunches}: {@code klap::host_smem(kernel, bytes)} or the text)
     * @param twinSmem  the same for the twin
     */
    String launch(Expr.Launch l, FunctionDef k, String smem, String twinSmem) {
        String block = cuda.slice(l.block().range());
        String stream = l.stream() == null ? "0" : cuda.slice(l.stream().range());
        String prepare = ", klap::host_prepare(" + stream + ", klap::host_warps(klap_g, " + block + "))>>>(";
        String args = cuda.slice(l.argsRange());
        FunctionDef at = ctx.holder(l);
        return "klap::host_chunked(" + cuda.slice(l.grid().range()) + ", " + block + ", " + cuda.renamedAt(l.callee(), k, needName(k), at)
                + ", [&](dim3 klap_g, const klap::chunk* klap_c) { if (!klap_c) " + cuda.slice(l.calleeRange())
                + "<<<klap_g, " + block + ", " + smem + prepare + args + "); else "
                + cuda.renamedAt(l.callee(), k, twinName(k), at) + "<<<klap_g, " + block + ", " + twinSmem + prepare
                + args + (l.args().isEmpty() ? "" : ", ") + "*klap_c); })";
    }
}
