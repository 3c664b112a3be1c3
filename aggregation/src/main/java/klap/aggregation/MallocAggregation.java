package klap.aggregation;

import java.util.ArrayList;
import java.util.List;
import klap.model.Expr;
import klap.model.FunctionDef;
import klap.model.Stmt;
import klap.transform.Convergence;
import klap.transform.EditSet;
import klap.transform.Granularity;
import klap.transform.Trees;

/**
 * Aggregated device memory allocation (KLAP II-C): the device {@code cudaMalloc} calls of a group
 * of threads become one allocation that the group shares, and device {@code cudaFree} releases a
 * share.
 * <h2>Input</h2>
 * <pre>
 * __global__ void parent(float** out, int n) {
 *   float* a; cudaMalloc(&amp;a, 64 * sizeof(float));          // every thread of the block gets here
 *   if (threadIdx.x &lt; n) { float* b; cudaMalloc((void**)&amp;b, n); out[threadIdx.x] = b; cudaFree(b); }
 *   cudaFree(a);
 * }
 * </pre>
 * <h2>Output (block granularity)</h2>
 * <pre>
 *   float* a; klap::group_malloc(klap_blk, (void**)(&amp;a), 64 * sizeof(float));
 *   if (threadIdx.x &lt; n) { float* b; klap::group_malloc(klap::warp_group::active(), (void**)((void**)&amp;b), n); ...
 *     klap::group_free(b); }
 *   klap::group_free(a);
 * </pre>
 * A call that the threads of a kernel reach together ({@link Convergence#reachedTogether}, and not
 * under {@code &&}, {@code ||}, {@code ?:} or a lambda) allocates per block ({@code klap_blk}) at
 * block and kernel granularity and per warp of the block at warp granularity; any other call, and
 * every call in a {@code __device__} function, allocates among the threads of the warp that arrive
 * together, with a warning at block and kernel granularity. A call whose shares the threads of its
 * group may free at different times ({@link MallocLifetimes}) stays as written.
 */
final class MallocAggregation {

    /** One device cudaMalloc call and the group that allocates together. */
    private record MallocSite(FunctionDef fn, Expr.Call call, String group) {
    }

    private final AggregationContext ctx;
    /** whether the threads of a site's group free their shares together */
    private final MallocLifetimes lifetimes;
    /** whether device code of the unit calls cudaMalloc (computed on the first device free()) */
    private Boolean anyDeviceMalloc;
    private final List<MallocSite> mallocs = new ArrayList<>();
    private final List<Expr.Call> frees = new ArrayList<>();
    /**
     * a device cudaFree of the file is written by a macro or is in a {@code __host__ __device__}
     * function, or the file has a device free(): no cudaMalloc is aggregated
     */
    private boolean inMacro;

    /** Starts with no call planned; the planner reports each call it finds. */
    MallocAggregation(AggregationContext ctx) {
        this.ctx = ctx;
        this.lifetimes = new MallocLifetimes(ctx);
    }

    /** Plans the device {@code cudaMalloc} call {@code c} of statement {@code owner} in {@code f}. */
    void planMalloc(FunctionDef f, Stmt owner, Expr.Call c, Convergence conv) {
        for (FunctionDef g : ctx.unit.functions()) {
            if (g.name().equals("cudaMalloc") || g.name().equals("cudaFree")) {
                // review 2026-12-01: the file's own cudaMalloc(int**, size_t), called as (cudaMalloc)(...) or
                // ::cudaMalloc(...), became klap::group_malloc and was never called
                aggregateNone(c, "the file defines a function named " + g.name() + ", which a device call of that name "
                        + "may call instead of CUDA's", "malloc-own-allocator");
                return;
            }
        }
        if (!writtenAsIs(c, "cudaMalloc")) {
            ctx.warn(c.range().offset(), "device cudaMalloc written by a macro is not aggregated: klap cannot rewrite a "
                    + "macro's expansion, so each thread makes this call as written (klap::group_free frees its pointer "
                    + "as a plain one)", "malloc-in-macro");
            return;
        }
        if (c.args().size() != 2) {
            ctx.warn(c.range().offset(), "cudaMalloc with " + c.args().size() + " arguments is not aggregated", "malloc-args");
            return;
        }
        String escape = escapesToUnseenCode(f, c);
        if (escape != null) {
            ctx.warn(c.range().offset(), "device cudaMalloc is not aggregated: the pointer is passed to " + escape
                    + ", whose code klap does not see and which may cudaFree it (a share of an aggregated allocation "
                    + "must be freed with klap::group_free)", "malloc-escapes");
            return;
        }
        boolean together = f.kind() == FunctionDef.Kind.KERNEL && conv.reachedTogether(owner)
                && !MallocLifetimes.conditionallyEvaluated(owner, c);
        String apart = lifetimes.freedApart(new MallocLifetimes.Site(f, owner, c, together), conv);
        if (apart != null) {
            ctx.warn(c.range().offset(), "device cudaMalloc is not aggregated: " + apart + "; an aggregated allocation goes "
                    + "back to the heap only when every thread of its group has freed its share, so a share kept longer "
                    + "would keep the memory of the whole group (cudaMalloc could then fail where the program as written "
                    + "succeeds)", "malloc-lifetime");
            return;
        }
        String group;
        String full = together && ctx.opt.granularity() != Granularity.WARP ? ctx.blockScratchDoesNotFit(f) : null;
        if (full != null) {
            group = "klap::warp_group::of(klap_blk)";
            ctx.warn(c.range().offset(), "device cudaMalloc is aggregated per warp, not per "
                    + ctx.opt.granularity().cliName() + ": " + full, "granularity-fallback");
        } else if (together) {
            group = ctx.opt.granularity() != Granularity.WARP ? "klap_blk" : "klap::warp_group::of(klap_blk)";
        } else {
            group = "klap::warp_group::active()";
            if (ctx.opt.granularity() != Granularity.WARP) {
                ctx.warn(c.range().offset(), "device cudaMalloc is under thread-dependent control flow; it is aggregated per "
                        + "warp, not per block", "granularity-fallback");
            }
        }
        mallocs.add(new MallocSite(f, c, group));
    }

    /** Records a device {@code cudaFree} call: it becomes {@code klap::group_free} if any cudaMalloc is aggregated. */
    void planFree(Expr.Call c) {
        if (writtenAsIs(c, "cudaFree")) {
            frees.add(c);
        } else {
            aggregateNone(c, "device cudaFree written by a macro: klap cannot rewrite it to klap::group_free, and a cudaFree "
                    + "left as written must never free a share of an aggregated allocation", "malloc-in-macro");
        }
    }

    /**
     * @return true if the call {@code c} of {@code name} is written as such in the file (also
     *         {@code ::name} and {@code (name)}: the text at the callee, without white space,
     *         parentheses and {@code ::}); false if a macro writes it: its nodes carry the range of
     *         the macro's use, so klap cannot rewrite it
     */
    private boolean writtenAsIs(Expr.Call c, String name) {
        return ctx.src.slice(c.callee().range()).replaceAll("[\\s()]", "").replaceFirst("^::", "").equals(name);
    }

    /**
     * A device {@code free(p)} (review 2026-12-01): device {@code cudaMalloc} memory may be given
     * back with {@code free}, which klap does not rewrite, and a share of an aggregated allocation
     * must never reach it; so no device cudaMalloc of the file is aggregated.
     */
    void libcFree(Expr.Call c) {
        if (anyDeviceMalloc == null) {
            boolean[] any = {false};
            for (FunctionDef f : ctx.unit.functions()) {
                if (f.kind().onDevice()) {
                    Trees.walkExprsAndLambdas(f.body(), e -> any[0] |= e instanceof Expr.Call m && MallocLifetimes.isCudaMalloc(m));
                }
            }
            anyDeviceMalloc = any[0];
        }
        if (!anyDeviceMalloc) {
            return; // (device malloc and free alone: nothing klap aggregates, nothing to say)
        }
        aggregateNone(c, "device free() in this file, which klap does not rewrite and which must never free a share of "
                + "an aggregated allocation (device cudaMalloc memory may be given back with free)", "malloc-libc-free");
    }

    /**
     * A {@code cudaFree} in a {@code __host__ __device__} function (review 2026-11-27): its device
     * side would free a share of an aggregated allocation as written, and {@code klap::group_free}
     * does not exist on the host side; so no device cudaMalloc of the file is aggregated.
     */
    void freeInHostDeviceFunction(Expr.Call c) {
        aggregateNone(c, "cudaFree in a __host__ __device__ function, which klap cannot rewrite for the device only",
                "malloc-host-device-free");
    }

    /** Aggregates no device cudaMalloc of the file, with one warning {@code id} ({@code why}) for the file. */
    private void aggregateNone(Expr.Call c, String why, String id) {
        if (!inMacro) {
            ctx.warn(c.range().offset(), why + ", so no device cudaMalloc of this file is aggregated (each thread "
                    + "allocates as written)", id);
        }
        inMacro = true;
    }

    /** @return true if no cudaMalloc call is aggregated */
    boolean isEmpty() {
        return inMacro || mallocs.isEmpty();
    }

    /** @return true if {@code f} has an aggregated cudaMalloc (klap's group code in its body) */
    boolean edits(FunctionDef f) {
        return !inMacro && mallocs.stream().anyMatch(m -> m.fn == f);
    }

    /** @return true if an aggregated cudaMalloc of {@code f} allocates per block (uses {@code klap_blk}) */
    boolean usesBlockGroup(FunctionDef f) {
        return !inMacro && mallocs.stream().anyMatch(m -> m.fn == f && m.group.contains("klap_blk"));
    }

    /** Adds the edits of {@code f}'s cudaMalloc and cudaFree calls to {@code e}; arguments are sliced through {@code fine}. */
    void edit(FunctionDef f, EditSet e, EditSet fine) {
        if (inMacro) {
            return;
        }
        for (MallocSite m : mallocs) {
            if (m.fn != f) {
                continue;
            }
            Expr.Call c = m.call;
            e.replace(c.range().offset(), c.range().end(), "klap::group_malloc(" + m.group + ", (void**)("
                    + CudaText.slice(fine, c.args().get(0)) + "), " + CudaText.slice(fine, c.args().get(1)) + ")");
        }
        editFrees(f, e);
    }

    /**
     * Adds the edits of {@code f}'s cudaFree calls (lambdas included) to {@code e}: each becomes
     * {@code klap::group_free}, which frees a share of an aggregated allocation and cudaFree's any
     * other pointer. Also for the kernel that kernel granularity keeps as written beside its twin:
     * code klap does not see may launch it with a pointer from an aggregated cudaMalloc.
     */
    void editFrees(FunctionDef f, EditSet e) {
        if (inMacro || mallocs.isEmpty()) {
            return;
        }
        for (Expr.Call c : frees) {
            if (f.range().contains(c.range())) {
                e.replace(c.callee().range().offset(), c.callee().range().end(), "klap::group_free");
            }
        }
    }

    /**
     * @return what code klap does not see receives the pointer that cudaMalloc call {@code c} of
     *         {@code f} writes ({@code cudaMalloc(&p, ...)}, casts allowed): a launch of a kernel not
     *         defined in this file, or a call of a {@code __device__} function defined in another file,
     *         with an argument that names {@code p}; null if none, or if {@code c} writes no plain
     *         variable. Such code would free a share of an aggregated allocation with cudaFree (review
     *         2026-11-25). A pointer stored to memory and freed by another file's kernel is not seen.
     */
    private String escapesToUnseenCode(FunctionDef f, Expr.Call c) {
        Expr target = c.args().get(0);
        while (target instanceof Expr.Cast cast) {
            target = cast.operand();
        }
        if (!(target instanceof Expr.Unary u && u.op().equals("&") && u.operand() instanceof Expr.Name v)) {
            return null;
        }
        String[] found = {null};
        Trees.walkExprsAndLambdas(f.body(), e -> {
            if (found[0] != null) {
                return;
            }
            List<Expr> args = null;
            String who = null;
            if (e instanceof Expr.Launch l && ctx.kernel(l.kernelName()) == null) {
                args = l.args();
                who = "kernel '" + l.kernelName() + "' (not defined in this file)";
            } else if (e instanceof Expr.Call call && call.calleeName() != null
                    && ctx.unit.deviceFunctionsWithoutBody().contains(AggregationContext.simpleName(call.calleeName()))) {
                args = call.args();
                who = "'" + call.calleeName() + "' (defined in another file)";
            }
            if (args != null) {
                for (Expr a : args) {
                    boolean[] names = {false};
                    Trees.walk(a, x -> names[0] |= x instanceof Expr.Name n && n.name().equals(v.name()));
                    if (names[0]) {
                        found[0] = who;
                        return;
                    }
                }
            }
        });
        return found[0];
    }
}
