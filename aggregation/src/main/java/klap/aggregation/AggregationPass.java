package klap.aggregation;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import klap.model.CudaUnit;
import klap.model.Diagnostic;
import klap.model.Diagnostic.Severity;
import klap.model.FunctionDef;
import klap.model.Stmt;
import klap.transform.EditSet;
import klap.transform.Granularity;

/**
 * Launch aggregation at warp, block and kernel granularity (KLAP sections II-A, II-B, Fig. 2, Fig. 12) with
 * aggregated device {@code cudaMalloc}/{@code cudaFree} and scalarized uniform arguments (II-C),
 * for the CUDA 12/13 device runtime (CDP2, see shared/design/PLATFORM.md).
 * <h2>Input</h2>
 * <pre>
 * __global__ void child(float* p, int n) { ... blockIdx.x ... helper() ... }
 * __global__ void parent(float* p, int* cnt, int n) {
 *   int i = blockIdx.x * blockDim.x + threadIdx.x;
 *   if (i &gt;= n) return;
 *   if (cnt[i] &gt; 0) child&lt;&lt;&lt;cnt[i], 32&gt;&gt;&gt;(p + i, n);
 * }
 * int main() { ... parent&lt;&lt;&lt;g, b&gt;&gt;&gt;(...); }
 * </pre>
 * <h2>Output (block granularity)</h2>
 * <pre>
 * #include "klap/klap.cuh"
 * struct klap_args_child { ... };                                   // ChildVariants: the record, the variant
 * __global__ void child_klap_agg_vu(const klap::launch_cfg*, unsigned, const klap_args_child*, int n);
 * __global__ void child(float* p, int n) { ...unchanged... }
 * __global__ void child_klap_agg_vu(...) { ...finds its parent's record, original body with original indices... }
 * __global__ void parent(float* p, int* cnt, int n) {             // GroupAggregation: one launch per block
 *   ... { auto klap_s0 = klap::agg_begin&lt;klap_args_child&gt;(...); if (i &gt;= n) {} else {
 *   if (cnt[i] &gt; 0) klap_s0.record(...); } klap_s0.flush(...); }
 * }
 * int main() { ... parent&lt;&lt;&lt;g, b, 0, klap::host_prepare(0, klap::host_warps(g, b))&gt;&gt;&gt;(...); }  // HostLaunches
 * </pre>
 * (Where the parent's indices can be given to a copy of its code, the host launch goes through
 * {@code klap::host_chunked} instead, and {@code parent_klap_chunk} runs a grid too large for klap's
 * pool in chunks of blocks: {@link ChunkTwins}.)
 * <h2>Parts</h2>
 * <pre>
 * SitePlanner        launch site + facts -&gt; SitePlan, or a refusal (left as written, with a warning)
 * ChildRefusals      launch + child kernel -&gt; Refusal (why its aggregated variant cannot be built), or null
 * SitePlans          the final plans and the questions the emitters ask about them
 * ChildVariants      child kernel -&gt; argument record, aggregated variants; clones of index-reading device functions
 * GroupAggregation   warp/block (II-A): agg_begin before a region, record at the site, flush after; or in place
 * GridAggregation    kernel (II-B): krecord at the site, kfinish by the grid's last block, the _klap_grid twin
 * MallocAggregation  device cudaMalloc/cudaFree of a group (II-C)
 * ChunkTwins         warp/block parent -&gt; the _klap_chunk twin for host launches too large for the pool at once
 * HostLaunches       host side: pool preparation, kernel-granularity state, chunked launches, attribute copies
 * CudaText           the generated C++ they share
 * </pre>
 * This class plans, then runs the emitters over the unit's functions in source order. Launches klap
 * cannot aggregate but that stay correct as written are left unchanged with a warning; an input
 * that cannot be compiled for CDP2 (device {@code cudaDeviceSynchronize}) is an error.
 */
public final class AggregationPass {

    /**
     * Options of the pass.
     *
     * @param granularity   warp, block or kernel
     * @param scalarize     pass uniform arguments as scalars (KLAP II-C)
     * @param poolSizeBytes memory pool size in bytes, or null for the runtime's default
     * @param leaveLines    lines (1-based, of the input file) whose device-side launches are left as
     *                      written on request ({@code --leave-launch}: a user's escape hatch, and how a
     *                      GPU session bisects a program's sites without changing its result); never null
     */
    public record Options(Granularity granularity, boolean scalarize, Long poolSizeBytes, Set<Integer> leaveLines) {
        /** Copies {@code leaveLines} (null: none). */
        public Options {
            leaveLines = leaveLines == null ? Set.of() : Set.copyOf(leaveLines);
        }

        /** Options that leave no launch as written on request. */
        public Options(Granularity granularity, boolean scalarize, Long poolSizeBytes) {
            this(granularity, scalarize, poolSizeBytes, null);
        }
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

    /** Which body a piece of code is emitted into. */
    private enum Body {
        /** the user's function, edited in place */
        ORIGINAL,
        /** an aggregated child variant or a device-function clone: indices come from {@code klap_v} */
        VARIANT
    }

    private final AggregationContext ctx;
    private final SitePlans plans;
    private final MallocAggregation mallocs;
    private final CudaText cuda;
    private final ChildVariants variants;
    private final GroupAggregation group;
    private final GridAggregation grid;
    private final HostLaunches host;
    private final ChunkTwins chunks;

    private AggregationPass(AggregationContext ctx, SitePlans plans, MallocAggregation mallocs, ChildRefusals refusals) {
        this.ctx = ctx;
        this.plans = plans;
        this.mallocs = mallocs;
        this.cuda = new CudaText(ctx, plans);
        this.variants = new ChildVariants(ctx, plans, cuda);
        this.group = new GroupAggregation(ctx, cuda);
        this.grid = new GridAggregation(ctx, plans, cuda);
        this.chunks = new ChunkTwins(ctx, plans, cuda, refusals, variants);
        this.host = new HostLaunches(ctx, plans, variants, cuda, grid, chunks);
    }

    /**
     * Runs the pass on a parsed unit without parse errors.
     *
     * @return the transformed text and diagnostics; never throws on user input
     */
    public static Result run(CudaUnit unit, Options opt) {
        AggregationContext ctx = new AggregationContext(unit, opt);
        MallocAggregation mallocs = new MallocAggregation(ctx);
        SitePlanner planner = new SitePlanner(ctx, mallocs);
        planner.planFunctions();
        if (ctx.hasErrors()) {
            return new Result(ctx.text, ctx.diags, false, 0, "");
        }
        SitePlans plans = planner.keepLaunchOrder();
        return new AggregationPass(ctx, plans, mallocs, planner.childRefusals()).emit();
    }

    private Result emit() {
        host.noteStateReferences();
        if (!variants.isEmpty() || chunks.any()) {
            variants.findClones();
        }
        if (plans.all().isEmpty() && mallocs.isEmpty()) {
            return new Result(ctx.text, ctx.diags, false, 0, summary());
        }
        EditSet out = new EditSet(ctx.text);
        out.insert(0, cuda.prologue());
        for (FunctionDef f : ctx.unit.functions()) {
            boundInPlace(f, out);
            switch (f.kind()) {
                case KERNEL, DEVICE -> emitOriginal(f, out);
                case HOST -> host.edit(f, out);
                default -> {
                }
            }
            variants.emit(f, out, () -> bodyEdits(f, Body.VARIANT).render(f.body().range().offset(), f.body().range().end()));
            chunks.emit(f, out, () -> withBlockGroup(f, bodyEdits(f, Body.VARIANT))
                    .render(f.body().range().offset(), f.body().range().end()));
        }
        try {
            return new Result(out.render(), ctx.diags, true, plans.all().size(), summary());
        } catch (IllegalStateException e) {
            ctx.error(0, e.getMessage() + "; please report this input", "internal");
            return new Result(ctx.text, ctx.diags, false, 0, summary());
        }
    }

    /** @return e.g. "5 device launch sites: 3 aggregated per block, 1 per warp in place, 1 left as written" */
    private String summary() {
        List<SitePlan> sites = plans.all();
        long gridWide = sites.stream().filter(SitePlan::gridWide).count();
        long survivors = sites.stream().filter(x -> !x.gridWide() && x.region() != null && x.region().survivors()).count();
        long arrived = sites.stream().filter(x -> !x.gridWide() && x.region() != null && x.region().arrived()).count();
        long deferred = sites.stream().filter(x -> !x.gridWide() && x.region() != null).count() - survivors - arrived;
        long inPlace = sites.size() - gridWide - deferred - survivors - arrived;
        int total = sites.size() + plans.unaggregated();
        if (total == 0) {
            return "";
        }
        List<String> parts = new ArrayList<>();
        if (gridWide > 0) {
            parts.add(gridWide + " aggregated per grid");
        }
        if (deferred > 0) {
            parts.add(deferred + " aggregated per " + (ctx.opt.granularity() == Granularity.WARP ? "warp" : "block"));
        }
        if (survivors > 0) {
            parts.add(survivors + " aggregated per warp among the threads that passed the kernel's early returns");
        }
        if (arrived > 0) {
            parts.add(arrived + " aggregated per warp among the threads that enter the loop around it together");
        }
        if (inPlace > 0) {
            parts.add(inPlace + " aggregated in place among the threads of a warp that arrive together");
        }
        if (plans.unaggregated() > 0) {
            parts.add(plans.unaggregated() + " left as written (see the warnings)");
        }
        return total + " device launch site" + (total == 1 ? "" : "s") + ": " + String.join(", ", parts);
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
        withBlockGroup(f, body);
        if (plans.hasKernelState(f)) {
            grid.addTwin(f, body, out);
            mallocs.editFrees(f, out);
            return;
        }
        out.addAll(body);
    }

    /**
     * A kernel whose own code klap changes in place (a parent at warp or block granularity, or one
     * that calls a {@code __device__} function with an aggregated launch or {@code cudaMalloc}) gets
     * {@link CudaText#LAUNCH_BOUNDS} where the program gave none: klap's code raises its registers,
     * and without bounds a block size the original ran with could fail to launch. A kernel with
     * kernel-granularity state stays as written (its twin gets the bounds).
     */
    private void boundInPlace(FunctionDef f, EditSet out) {
        if (f.kind() != FunctionDef.Kind.KERNEL || plans.hasKernelState(f)) {
            return;
        }
        boolean changed = ctx.deviceClosure(f).stream().anyMatch(x -> plans.hasSites(x) || mallocs.edits(x));
        int at = changed ? cuda.launchBoundsOffset(f) : -1;
        if (at >= 0) {
            out.insert(at, CudaText.boundsAt(f, at));
        }
    }

    /**
     * @return {@code body}, with the declaration of {@code klap_blk} at the start of {@code f}'s body
     *         where {@link #needsBlockGroup} (the kernel as edited in place, or its chunk twin)
     */
    private EditSet withBlockGroup(FunctionDef f, EditSet body) {
        if (needsBlockGroup(f)) {
            body.insert(f.body().range().offset() + 1, CudaText.hardwareBlockGroup());
        }
        return body;
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
        EditSet e = new EditSet(ctx.text);
        if (body == Body.VARIANT) {
            variants.retarget(f, e);
        }
        EditSet fine = e.fineOnly();
        grid.wrap(f, e);
        Map<Stmt, List<SitePlan>> regions = new LinkedHashMap<>();
        for (SitePlan s : plans.of(f)) {
            if (s.gridWide()) {
                grid.record(s, e, fine);
            } else if (s.region() != null) {
                regions.computeIfAbsent(s.region().anchor(), k -> new ArrayList<>()).add(s);
            } else {
                group.inPlace(s, e, fine);
            }
        }
        // the survivor mask first: its declaration goes before a region that starts at the first guard
        // (`if (c) { child<<<...>>>(...); return; }` is both), so that regions after it still see it
        group.survivorMask(plans.of(f), e);
        List<List<SitePlan>> groups = List.copyOf(regions.values());
        // a region before every region around it, and in source order otherwise (by end offset, then size):
        // where an inner region (with its convergent loop's closing text) ends at the same offset as an
        // outer one (`}}`), the insertions at that offset then nest; adjacent regions keep end-before-begin
        List<List<SitePlan>> innerFirst = groups.stream().sorted(java.util.Comparator
                .<List<SitePlan>>comparingInt(g -> g.get(0).region().end())
                .thenComparingInt(g -> g.get(0).region().end() - g.get(0).region().start())).toList();
        for (List<SitePlan> sites : innerFirst) {
            group.region(sites, groups, e, fine);
            group.convergentLoop(sites, groups, e);
        }
        mallocs.edit(f, e, fine);
        return e;
    }
}
