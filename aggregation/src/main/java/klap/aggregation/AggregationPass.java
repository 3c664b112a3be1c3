package klap.aggregation;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import klap.model.CudaUnit;
import klap.model.Diagnostic;
import klap.model.Diagnostic.Severity;
import klap.model.Expr;
import klap.model.FunctionDef;
import klap.model.Param;
import klap.model.SourceFile;
import klap.model.SourceRange;
import klap.model.Stmt;
import klap.transform.Convergence;
import klap.transform.EditSet;
import klap.transform.SyncSites;
import klap.transform.Granularity;
import klap.transform.Trees;
import klap.transform.Uniformity;

/**
 * Launch aggregation at warp, block and kernel granularity (KLAP sections II-A, II-B, Fig. 2, Fig. 12) with
 * aggregated device {@code cudaMalloc}/{@code cudaFree} and scalarized uniform arguments (II-C),
 * for the CUDA 12/13 device runtime (CDP2, see shared/design/PLATFORM.md).
 *
 * <h2>Input</h2>
 * <pre>
 * __global__ void child(float* p, int n) { ... blockIdx.x ... helper() ... }
 * __global__ void parent(float* p, int* cnt, int n) {
 *   int i = blockIdx.x * blockDim.x + threadIdx.x;
 *   if (i &gt;= n) return;
 *   if (cnt[i] &gt; 0) child&lt;&lt;&lt;cnt[i], 32&gt;&gt;&gt;(p + i, n);
 * }
 * </pre>
 * <h2>Output (block granularity)</h2>
 * <pre>
 * #include "klap/klap.cuh"
 * struct klap_args_child { float* p; int n; __device__ klap_args_child(float* a, int b) : p(a), n(b) {} };
 * __global__ void child_klap_agg_vu(const klap::launch_cfg*, unsigned, const klap_args_child*, int n);
 * __global__ void child(float* p, int n) { ...unchanged... }
 * __global__ void child_klap_agg_vu(const klap::launch_cfg* klap_cfg, unsigned klap_n,
 *                                   const klap_args_child* klap_args, int n) {
 *   klap::vctx klap_v; unsigned klap_parent;                   // find the parent slot (scan + search),
 *   if (!klap::child_enter(klap_cfg, klap_n, klap_v, klap_parent)) return;   // mask extra threads
 *   float* p = klap_args[klap_parent].p;                       // load the per-parent argument
 *   { ... klap_v.blockIdx.x ... helper(klap_v) ... }           // original body, original indices
 * }
 * __global__ void parent(float* p, int* cnt, int n) {
 *   klap::block_group klap_blk = klap::block_group::hardware();
 *   int i = ...;
 *   { auto klap_g0 = klap_blk; auto klap_s0 = klap::agg_begin&lt;klap_args_child&gt;(klap_g0);   // slots from the pool
 *   if (i &gt;= n) {} else {                                        // early return made convergent
 *   if (cnt[i] &gt; 0) klap_s0.record(dim3(cnt[i]), dim3(32), 0u, 0, klap_args_child(p + i, n));
 *   } klap_s0.flush(klap_g0, [&amp;](...) { child_klap_agg_vu&lt;&lt;&lt;...&gt;&gt;&gt;(cfg, n, args, mine.n); ... }); }
 * }
 * int main() { ... parent&lt;&lt;&lt;g, b, 0, klap::host_prepare()&gt;&gt;&gt;(...); }
 * </pre>
 * The variant's suffix names which parameters are passed as arrays ({@code v}) and which as
 * scalars ({@code u}, proven uniform across the group by {@link Uniformity}). Where no convergent
 * region exists ({@link Convergence}), the launch is aggregated among the threads of the warp that
 * arrive together ({@code klap::warp_group::active()}), with a warning at block granularity.
 * <h2>Kernel granularity (KLAP II-B, rebuilt for CDP2)</h2>
 * The paper launched the aggregated grid from the host after the parent ended, which excluded
 * device-launched parents and launches in loops. Here the parent's last block launches it:
 * <pre>
 * __global__ void parent(float* p, int* cnt, int n, klap::kstate* klap_ks) { [&amp;]() {
 *   int i = ...; if (i &gt;= n) return;                       // returns reach the epilogue
 *   if (cnt[i] &gt; 0) klap::krecord&lt;klap_args_child&gt;(klap_ks, 0u, dim3(cnt[i]), dim3(32), ...);
 * }(); klap::kfinish(klap_ks, [&amp;](const klap::ksite* s, dim3 g, dim3 b, ...) { child_klap_kagg_vu&lt;&lt;&lt;g, b&gt;&gt;&gt;(s, ...); }); }
 * </pre>
 * {@code krecord} is the paper's out-of-order atomic scan (one 64-bit atomic gives the record's
 * index and block offset; threads that do not launch store nothing); {@code kfinish} makes each
 * block take an acq_rel ticket, and the last one launches one grid per site. The state
 * ({@code klap::kstate}, one per parent-grid instance) is a trailing kernel parameter: host
 * launches pass {@code klap::host_kstate(N)}, and an aggregated child that aggregates its own
 * launches (recursion) gets a fresh one from the pool. Launches in loops: launches into
 * {@code cudaStreamFireAndForget} are aggregated across all rounds (one grid per site); in a
 * kernel with a launch in a loop into an ordered stream, every ordered launch is aggregated per
 * round instead: each thread numbers its ordered launches ({@code klap_seq}), launch j goes to
 * bucket (j, site), and the last block launches the buckets round by round into its NULL stream,
 * so each thread's launches keep their order (at most {@code KLAP_KERNEL_MAX_ORDERED} per thread,
 * else a run-time error suggesting block granularity). Arguments are
 * scalarized when uniform across the grid ({@code blockIdx} is not). Device {@code cudaMalloc}
 * is aggregated per block (II-C).
 *
 * <p>Streams: a stream argument proven uniform (e.g. {@code cudaStreamFireAndForget},
 * {@code cudaStreamTailLaunch}) is kept. A thread-dependent stream (per-thread device streams) is
 * replaced by the NULL stream, which runs the launches of one block in order: every per-thread
 * order of the input is kept (and more is ordered), and the stream may already be destroyed when
 * the region ends. A launch followed in its region by {@code cudaEventRecord} or
 * {@code cudaStreamWaitEvent} is launched in place (not deferred) so events keep their meaning;
 * at kernel granularity, any such operation later in the kernel (or in a loop around the launch)
 * makes the launch go in place, aggregated per warp, with a warning.
 *
 * <p>Launches klap cannot aggregate but that stay correct as written (child defined elsewhere,
 * deduced template arguments, launches nested in expressions) are left unchanged with a warning.
 */
public final class AggregationPass {

    /**
     * Options of the pass.
     *
     * @param granularity   warp, block or kernel
     * @param scalarize     pass uniform arguments as scalars (KLAP II-C)
     * @param poolSizeBytes memory pool size in bytes, or null for the runtime's default
     */
    public record Options(Granularity granularity, boolean scalarize, Long poolSizeBytes) {
    }

    /**
     * What the pass produced.
     *
     * @param text        the transformed translation unit
     * @param diagnostics warnings and errors (errors mean {@code text} must not be used)
     * @param usesRuntime true if the output includes {@code klap/klap.cuh}
     * @param sites       number of device-side launch sites aggregated
     * @param summary     one line for the user: how many launch sites were aggregated at which
     *                    granularity, and how many were left as written (their warnings say why)
     */
    public record Result(String text, List<Diagnostic> diagnostics, boolean usesRuntime, int sites, String summary) {
        /** @return true if a diagnostic is an error */
        public boolean hasErrors() {
            return diagnostics.stream().anyMatch(d -> d.severity() == Severity.ERROR);
        }
    }

    private final AggregationContext ctx;
    private final CudaUnit unit;
    private final SourceFile src;
    private final String text;
    private final Options opt;
    private final List<Diagnostic> diags;
    private final Map<String, FunctionDef> kernels;
    private final SitePlanner planner;
    private SitePlans plans;
    private CudaText cuda;
    private final MallocAggregation mallocs;
    private ChildVariants variants;
    private GroupAggregation group;
    private GridAggregation grid;
    private final SyncSites syncs;

    private AggregationPass(CudaUnit unit, Options opt) {
        this.ctx = new AggregationContext(unit, opt);
        this.unit = ctx.unit;
        this.src = ctx.src;
        this.text = ctx.text;
        this.opt = ctx.opt;
        this.diags = ctx.diags;
        this.kernels = ctx.kernels;
        this.syncs = ctx.syncs;
        this.mallocs = new MallocAggregation(ctx);
        this.planner = new SitePlanner(ctx, mallocs);
    }

    /**
     * Runs the pass on a parsed unit without parse errors.
     *
     * @return the transformed text and diagnostics; never throws on user input
     */
    public static Result run(CudaUnit unit, Options opt) {
        return new AggregationPass(unit, opt).run();
    }

    private Result run() {
        planner.planFunctions();
        if (ctx.hasErrors()) {
            return new Result(text, diags, false, 0, "");
        }
        plans = planner.keepLaunchOrder();
        cuda = new CudaText(ctx, plans);
        variants = new ChildVariants(ctx, plans, cuda);
        group = new GroupAggregation(ctx, cuda);
        grid = new GridAggregation(ctx, plans, cuda);
        checkKernelStateUses();
        if (diags.stream().anyMatch(d -> d.severity() == Severity.ERROR)) {
            return new Result(text, diags, false, 0, summary());
        }
        if (!variants.isEmpty()) {
            variants.findClones();
        }
        boolean usesRuntime = !plans.all().isEmpty() || !mallocs.isEmpty();
        if (!usesRuntime) {
            return new Result(text, diags, false, 0, summary());
        }
        EditSet out = new EditSet(text);
        StringBuilder head = new StringBuilder();
        if (opt.poolSizeBytes() != null) {
            head.append("#define KLAP_POOL_SIZE_BYTES ").append(opt.poolSizeBytes()).append("ull\n");
        }
        head.append("#include \"klap/klap.cuh\" /* added by klap --granularity=")
                .append(opt.granularity().cliName()).append(" */\n").append(cuda.lineDirective(0));
        out.insert(0, head.toString());
        for (FunctionDef f : unit.functions()) {
            switch (f.kind()) {
                case KERNEL, DEVICE -> emitOriginal(f, out);
                case HOST -> emitHostLaunches(f, out);
                default -> {
                }
            }
            variants.emit(f, out, () -> bodyEdits(f, Body.VARIANT).render(f.body().range().offset(), f.body().range().end()));
        }
        try {
            return new Result(out.render(), diags, true, plans.all().size(), summary());
        } catch (IllegalStateException e) {
            diags.add(Diagnostic.at(Severity.ERROR, src, 0, e.getMessage() + "; please report this input", "internal"));
            return new Result(text, diags, false, 0, summary());
        }
    }

    /** @return e.g. "5 device launch sites: 3 aggregated per block, 1 per warp in place, 1 left as written" */
    private String summary() {
        List<SitePlan> sites = plans.all();
        long grid = sites.stream().filter(x -> x.gridWide()).count();
        long group = sites.stream().filter(x -> !x.gridWide() && x.placement() instanceof Convergence.Placement.Deferred).count();
        long inPlace = sites.size() - grid - group;
        int total = sites.size() + plans.unaggregated();
        if (total == 0) {
            return "";
        }
        List<String> parts = new ArrayList<>();
        if (grid > 0) {
            parts.add(grid + " aggregated per grid");
        }
        if (group > 0) {
            parts.add(group + " aggregated per " + (opt.granularity() == Granularity.WARP ? "warp" : "block"));
        }
        if (inPlace > 0) {
            parts.add(inPlace + " aggregated in place among the threads of a warp that arrive together");
        }
        if (plans.unaggregated() > 0) {
            parts.add(plans.unaggregated() + " left as written (see the warnings)");
        }
        return total + " device launch site" + (total == 1 ? "" : "s") + ": " + String.join(", ", parts);
    }

    // ------------------------------------------------------------------ analysis

    /**
     * Kernel granularity keeps every kernel's name and signature (see {@link #emitOriginal}): a use
     * of the kernel other than a host launch (a function pointer, {@code cudaLaunchKernel}) runs it
     * as written, not aggregated, which a note says.
     */
    private void checkKernelStateUses() {
        for (FunctionDef f : unit.functions()) {
            if (f.kind() != FunctionDef.Kind.HOST) {
                continue;
            }
            Trees.walkExprs(f.body(), e -> {
                if (e instanceof Expr.Name n && n.kind() == Expr.NameKind.FUNCTION && kernels.containsKey(simpleName(n.name()))
                        && plans.hasKernelState(kernels.get(simpleName(n.name())))) {
                    diags.add(Diagnostic.at(Severity.NOTE, src, n.range().offset(), "a launch of '" + n.name()
                            + "' through this reference runs it as written (not aggregated); only its <<<...>>> launches "
                            + "use its kernel-granularity form", "kernel-state-ref"));
                }
            });
        }
    }

    // ------------------------------------------------------------------ emission

    /** Which body a piece of code is emitted into. */
    private enum Body {
        /** the user's function, edited in place */
        ORIGINAL,
        /** an aggregated child variant or a device-function clone: indices come from {@code klap_v} */
        VARIANT
    }

    /**
     * Edits the body of {@code f} in place, or, for a kernel that gets kernel-granularity state,
     * leaves {@code f} as written and adds its twin ({@link GridAggregation#addTwin}).
     */
    private void emitOriginal(FunctionDef f, EditSet out) {
        EditSet body = bodyEdits(f, Body.ORIGINAL);
        if (body.isEmpty()) {
            return;
        }
        if (needsBlockGroup(f)) {
            body.insert(f.body().range().offset() + 1, " klap::block_group klap_blk = klap::block_group::hardware();");
        }
        if (plans.hasKernelState(f)) {
            grid.addTwin(f, body, out);
            return;
        }
        out.addAll(body);
    }

    /** @return true if kernel {@code f} uses its hardware block group {@code klap_blk} (a region or a block's cudaMalloc) */
    private boolean needsBlockGroup(FunctionDef f) {
        return f.kind() == FunctionDef.Kind.KERNEL && (plans.hasRegion(f) || mallocs.usesBlockGroup(f));
    }

    /**
     * All edits inside {@code f}'s body for {@code body}: each launch site goes to the emitter of its
     * plan (grid-wide, deferred to a region, in place), then the cudaMalloc/cudaFree calls.
     */
    private EditSet bodyEdits(FunctionDef f, Body body) {
        EditSet e = new EditSet(text);
        if (body == Body.VARIANT) {
            variants.retarget(f, e);
        }
        EditSet fine = e.fineOnly();
        grid.wrap(f, e);
        Map<Stmt, List<SitePlan>> regions = new LinkedHashMap<>();
        for (SitePlan s : plans.all()) {
            if (s.fn() != f) {
                continue;
            }
            if (s.gridWide()) {
                grid.record(s, e, fine);
            } else if (s.region() != null) {
                regions.computeIfAbsent(s.region().anchor(), k -> new ArrayList<>()).add(s);
            } else {
                group.inPlace(s, e, fine);
            }
        }
        for (List<SitePlan> sites : regions.values()) {
            group.region(sites, e, fine);
        }
        mallocs.edit(f, e, fine);
        return e;
    }

    /** Host calls that set a kernel's attributes; klap applies them to the kernel's variants and twin too. */
    private static final Set<String> ATTRIBUTE_CALLS = Set.of("cudaFuncSetAttribute", "cudaFuncSetCacheConfig",
            "cudaFuncSetSharedMemConfig");

    private void emitHostLaunches(FunctionDef f, EditSet out) {
        Trees.walkExprs(f.body(), e -> {
            if (e instanceof Expr.Lambda lam && syncs.launchingOperations(lam.body()).stream()
                    .anyMatch(x -> x instanceof Expr.Launch)) {
                warn(lam.range().offset(), "host launch inside a lambda is left as written: a kernel klap transformed "
                        + "runs there as written at kernel granularity, and needs klap::host_prepare() before its first "
                        + "launch at warp and block granularity; launch it outside the lambda", "launch-in-lambda");
            }
            if (e instanceof Expr.Call c && c.calleeName() != null && ATTRIBUTE_CALLS.contains(c.calleeName())
                    && !c.args().isEmpty()) {
                copyAttributes(c, out);
            }
            if (e instanceof Expr.Launch l && kernels.containsKey(simpleName(l.kernelName()))) {
                FunctionDef k = kernels.get(simpleName(l.kernelName()));
                if (plans.hasKernelState(k)) {
                    out.insert(l.argsRange().end(), (l.args().isEmpty() ? "" : ", ") + "klap::host_kstate("
                            + plans.stateSize(k) + ")");
                    out.replace(l.calleeRange().offset(), l.calleeRange().end(),
                            CudaText.renamed(cuda.slice(l.calleeRange()), k.name(), CudaText.twinName(k)));
                }
                if (l.stream() != null) {
                    out.replace(l.stream().range().offset(), l.stream().range().end(),
                            "klap::host_prepare(" + cuda.slice(l.stream().range()) + ")");
                } else if (l.sharedMem() != null) {
                    out.insert(l.sharedMem().range().end(), ", klap::host_prepare()");
                } else {
                    out.insert(l.block().range().end(), ", 0, klap::host_prepare()");
                }
            }
        });
    }

    /**
     * {@code cudaFuncSetAttribute(k, a, v)} on a kernel with aggregated variants (or a
     * kernel-granularity twin) becomes {@code (cudaFuncSetAttribute(k_variant, a, v), ...,
     * cudaFuncSetAttribute(k, a, v))}: the variants run the kernel's code and need its maximum
     * dynamic shared memory, cache configuration and carveout; the value of the expression is still
     * the user's own call's.
     */
    private void copyAttributes(Expr.Call c, EditSet out) {
        String first = cuda.slice(c.args().get(0).range()).trim();
        String name = simpleName(first.replaceAll("<.*$", "").replace("&", "").replace("(", "").replace(")", "").trim());
        FunctionDef k = kernels.get(name);
        if (k == null) {
            return;
        }
        List<String> names = new ArrayList<>();
        for (String key : variants.keys(k)) {
            names.add(CudaText.variantName(k, key));
        }
        if (plans.hasKernelState(k)) {
            names.add(CudaText.twinName(k));
        }
        if (names.isEmpty()) {
            return;
        }
        String call = cuda.slice(c.range());
        int argOff = c.args().get(0).range().offset() - c.range().offset();
        int argEnd = c.args().get(0).range().end() - c.range().offset();
        StringBuilder sb = new StringBuilder("(");
        for (String n : names) {
            sb.append(call, 0, argOff).append(CudaText.renamed(first, k.name(), n)).append(call.substring(argEnd)).append(", ");
        }
        out.replace(c.range().offset(), c.range().end(), sb.append(call).append(')').toString());
    }

    private static String simpleName(String qualified) {
        int q = qualified.lastIndexOf("::");
        return q < 0 ? qualified : qualified.substring(q + 2);
    }

    private void warn(int offset, String msg, String id) {
        ctx.warn(offset, msg, id);
    }

    private void error(int offset, String msg, String id) {
        ctx.error(offset, msg, id);
    }
}
