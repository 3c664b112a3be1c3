package klap.aggregation;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import klap.model.Expr;
import klap.model.FunctionDef;
import klap.model.Param;
import klap.transform.EditSet;
import klap.transform.Mutations;
import klap.transform.Trees;

/**
 * The host side of aggregation: host launches of the unit's kernels prepare the device memory pool
 * before the first aggregated launch, launches of a kernel-granularity parent (KLAP II-B) go to
 * its twin with a fresh state, and attributes set on a kernel also reach its variants and twin.
 * <h2>Input</h2>
 * <pre>
 * cudaFuncSetAttribute(parent, cudaFuncAttributeMaxDynamicSharedMemorySize, 1024);
 * parent&lt;&lt;&lt;g, b&gt;&gt;&gt;(p, cnt, n);
 * </pre>
 * <h2>Output (kernel granularity)</h2>
 * <pre>
 * (cudaFuncSetAttribute(parent_klap_grid, cudaFuncAttributeMaxDynamicSharedMemorySize, 1024),
 *  cudaFuncSetAttribute(parent, cudaFuncAttributeMaxDynamicSharedMemorySize, 1024));
 * (parent_klap_grid&lt;&lt;&lt;g, b, 0, klap::host_prepare(0, klap::host_warps(g, b))&gt;&gt;&gt;(p, cnt, n, klap::host_kstate(1)), klap::host_kstate_done());
 * </pre>
 * The state comes from the stream-ordered allocator and {@code host_kstate_done} frees it in the
 * launch's stream, after the parent grid and all it launched (runtime {@code kernel.cuh}).
 * At warp and block granularity the launch keeps its kernel and gets
 * {@code klap::host_prepare(0, klap::host_warps(g, b))} as its stream (a stream of its own is passed
 * through: {@code klap::host_prepare(s, ...)}), which sizes the pending-launch limit from the
 * launch's warps; {@code klap::host_prepare()} (the fixed size) where {@code g} or {@code b} has a
 * side effect and must not be evaluated twice. A host launch of a kernel that makes no aggregated
 * launch, itself or in a {@code __device__} function it calls, is left as written. A launch
 * inside a lambda is left as written (a warning); a reference to a kernel-granularity parent other
 * than a launch (a function pointer, {@code cudaLaunchKernel}) runs it as written (a note).
 */
final class HostLaunches {
    /** Host calls that set a kernel's attributes; klap applies them to the kernel's variants and twin too. */
    private static final Set<String> ATTRIBUTE_CALLS = Set.of("cudaFuncSetAttribute", "cudaFuncSetCacheConfig",
            "cudaFuncSetSharedMemConfig");

    private final AggregationContext ctx;
    private final SitePlans plans;
    private final ChildVariants variants;
    private final CudaText cuda;

    /** Edits host code after {@code plans} (kernel state) and {@code variants} (attribute copies). */
    HostLaunches(AggregationContext ctx, SitePlans plans, ChildVariants variants, CudaText cuda) {
        this.ctx = ctx;
        this.plans = plans;
        this.variants = variants;
        this.cuda = cuda;
    }

    /**
     * Kernel granularity keeps every kernel's name and signature ({@link GridAggregation#addTwin}): a
     * use of the kernel other than a host launch (a function pointer, {@code cudaLaunchKernel}) runs
     * it as written, not aggregated, which a note says.
     */
    void noteStateReferences() {
        for (FunctionDef f : ctx.unit.functions()) {
            if (f.kind() != FunctionDef.Kind.HOST) {
                continue;
            }
            Trees.walkExprs(f.body(), e -> {
                if (e instanceof Expr.Name n && n.kind() == Expr.NameKind.FUNCTION && ctx.kernel(n.name()) != null
                        && plans.hasKernelState(ctx.kernel(n.name()))) {
                    ctx.note(n.range().offset(), "a launch of '" + n.name() + "' through this reference runs it as "
                            + "written (not aggregated); only its <<<...>>> launches use its kernel-granularity form",
                            "kernel-state-ref");
                }
            });
        }
    }

    /** Adds the edits of host function {@code f}: its launches of the unit's kernels and its attribute calls. */
    void edit(FunctionDef f, EditSet out) {
        Trees.walkExprs(f.body(), e -> {
            if (e instanceof Expr.Lambda lam && ctx.syncs.launchingOperations(lam.body()).stream()
                    .anyMatch(x -> x instanceof Expr.Launch)) {
                ctx.warn(lam.range().offset(), "host launch inside a lambda is left as written: a kernel klap transformed "
                        + "runs there as written at kernel granularity, and at warp and block granularity without "
                        + "klap::host_prepare() (which raises the pending-launch limit); launch it outside the lambda", "launch-in-lambda");
            }
            if (e instanceof Expr.Call c && c.calleeName() != null && ATTRIBUTE_CALLS.contains(c.calleeName())
                    && !c.args().isEmpty()) {
                copyAttributes(c, out);
            }
            if (e instanceof Expr.Launch l && ctx.kernel(l.kernelName()) != null) {
                launch(l, ctx.kernel(l.kernelName()), out);
            }
        });
    }

    /** A host launch of kernel {@code k}: the twin with a fresh state if {@code k} has one, and the pool prepared. */
    private void launch(Expr.Launch l, FunctionDef k, EditSet out) {
        String defaults = omittedDefaults(l, k);
        if (plans.hasKernelState(k) && ctx.ambiguous(k.name())) {
            ctx.warn(l.range().offset(), "more than one kernel is named '" + k.name() + "' (namespaces, overloads); klap does not "
                    + "tell which one this host launch calls, so it runs it as written, not aggregated", "child-ambiguous");
        } else if (plans.hasKernelState(k) && defaults == null) {
            ctx.warn(l.range().offset(), "host launch of '" + k.name() + "' leaves parameters to default arguments that "
                    + "klap cannot repeat here (a default given only by an earlier declaration, or a kernel in a "
                    + "namespace or class, whose defaults may name what this scope does not see); it runs '" + k.name()
                    + "' as written, not aggregated: pass every argument to aggregate it", "argument-count");
        } else if (plans.hasKernelState(k)) {
            // the twin's klap_ks comes after every parameter, so the omitted defaults are written out before it
            // (a default argument is evaluated at the call, C++ [dcl.fct.default]/9: the same value here);
            // the state is freed in stream order right after the launch (no host synchronization)
            out.insert(l.argsRange().end(), defaults + (l.args().isEmpty() && defaults.isEmpty() ? "" : ", ")
                    + "klap::host_kstate(" + plans.stateSize(k) + ")");
            out.replace(l.calleeRange().offset(), l.calleeRange().end(),
                    "(" + CudaText.renamed(cuda.slice(l.calleeRange()), k.name(), CudaText.twinName(k)));
            out.insert(l.range().end(), ", klap::host_kstate_done())");
        }
        if (!ctx.deviceClosure(k).stream().anyMatch(plans::hasSites)) {
            return; // k makes no aggregated launch: nothing to prepare
        }
        String launches = Mutations.sideEffectFree(l.grid()) && Mutations.sideEffectFree(l.block())
                ? ", klap::host_warps(" + cuda.slice(l.grid().range()) + ", " + cuda.slice(l.block().range()) + ")"
                : "";
        if (l.stream() != null) {
            out.replace(l.stream().range().offset(), l.stream().range().end(),
                    "klap::host_prepare(" + cuda.slice(l.stream().range()) + launches + ")");
        } else if (l.sharedMem() != null) {
            out.insert(l.sharedMem().range().end(), ", klap::host_prepare(" + (launches.isEmpty() ? "" : "0" + launches) + ")");
        } else {
            out.insert(l.block().range().end(), ", 0, klap::host_prepare(" + (launches.isEmpty() ? "" : "0" + launches) + ")");
        }
    }

    /**
     * @return the text of the default arguments that host launch {@code l} leaves out, each
     *         preceded by {@code ", "} (or none first if {@code l} passes no argument): empty if it
     *         passes every argument; null if one of them is not given by {@code k}'s definition, or
     *         {@code k} is in a namespace or class (its defaults may name what the call's scope does
     *         not see)
     */
    private String omittedDefaults(Expr.Launch l, FunctionDef k) {
        StringBuilder sb = new StringBuilder();
        for (int i = l.args().size(); i < k.params().size(); i++) {
            Param p = k.params().get(i);
            if (!p.hasDefault() || !k.namespace().isEmpty() || k.memberOf() != null) {
                return null;
            }
            String def = p.defaultArgument(ctx.text).substring(1).strip();
            sb.append(i == 0 ? "" : ", ").append('(').append(def).append(')');
        }
        return sb.toString();
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
        String name = AggregationContext.simpleName(first.replaceAll("<.*$", "").replace("&", "").replace("(", "")
                .replace(")", "").trim());
        FunctionDef k = ctx.kernels.get(name);
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
}
