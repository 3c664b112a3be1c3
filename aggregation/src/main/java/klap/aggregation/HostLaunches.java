package klap.aggregation;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import klap.model.Expr;
import klap.model.FunctionDef;
import klap.model.Param;
import klap.model.SourceRange;
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
 * side effect and must not be evaluated twice. Where {@link ChunkTwins} gives the kernel a chunk
 * twin and the launch's parts can be evaluated again, the launch becomes
 * {@code klap::host_chunked(g, b, parent_klap_chunk_need, [&](dim3 klap_g, const klap::chunk* klap_c) { ... })},
 * which launches {@code parent} once or, for a grid too large for klap's pool, the twin per chunk of
 * blocks. A dynamic shared memory size other than {@code 0}
 * becomes {@code klap::host_smem(kernel, bytes)}, which raises the kernel's limit where klap's static
 * shared memory left less than the launch asks for (48 KB minus static by default). A host launch of a kernel that makes no aggregated
 * launch, itself or in a {@code __device__} function it calls, is left as written. A launch
 * inside a lambda or written in a macro is left as written (a warning where that loses the kernel-granularity
 * form); a reference to a kernel-granularity parent other
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
    private final GridAggregation grid;
    private final ChunkTwins chunks;

    /**
     * Edits host code after {@code plans} (kernel state), {@code variants} (attribute copies) and
     * {@code grid} (which twins have a record-arena helper) and {@code chunks} (which launches run in chunks).
     */
    HostLaunches(AggregationContext ctx, SitePlans plans, ChildVariants variants, CudaText cuda, GridAggregation grid,
                 ChunkTwins chunks) {
        this.ctx = ctx;
        this.plans = plans;
        this.variants = variants;
        this.cuda = cuda;
        this.grid = grid;
        this.chunks = chunks;
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
            // the kernel named by an attribute call is not launched there: the call reaches the twin too (copyAttributes)
            Set<Expr> attributeTargets = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
            Trees.walkExprs(f.body(), e -> {
                if (e instanceof Expr.Call c && c.calleeName() != null && ATTRIBUTE_CALLS.contains(c.calleeName())
                        && !c.args().isEmpty()) {
                    Trees.walk(c.args().get(0), attributeTargets::add);
                }
            });
            Trees.walkExprs(f.body(), e -> {
                if (e instanceof Expr.Name n && n.kind() == Expr.NameKind.FUNCTION && ctx.kernel(n.name()) != null
                        && !attributeTargets.contains(n) && plans.hasKernelState(ctx.kernel(n.name()))) {
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
            if (e instanceof Expr.Launch l && l.inMacro() && ctx.kernel(l.kernelName()) != null
                    && plans.hasKernelState(ctx.kernel(l.kernelName()))) {
                ctx.warn(l.range().offset(), "host launch of '" + l.kernelName() + "' is written in a macro, which klap "
                        + "cannot rewrite: it runs '" + l.kernelName() + "' as written (not aggregated); write the "
                        + "launch outside the macro to use its kernel-granularity form", "launch-in-macro");
            } else if (e instanceof Expr.Launch l && !l.inMacro() && ctx.kernel(l.kernelName()) != null) {
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
                    + "klap cannot repeat here (a kernel in a namespace or class, whose defaults may name what this "
                    + "scope does not see, or a default that calls a function, which may choose another overload here); "
                    + "it runs '" + k.name()
                    + "' as written, not aggregated: pass every argument to aggregate it", "argument-count");
        }
        boolean twin = plans.hasKernelState(k) && !ctx.ambiguous(k.name()) && defaults != null;
        if (twin) {
            // the twin's klap_ks comes after every parameter, so the omitted defaults are written out before it
            // (a default argument is evaluated at the call, C++ [dcl.fct.default]/9: the same value here);
            // the state is freed in stream order right after the launch (no host synchronization)
            // the record arena's helper is defined after the twin: a launch before it gets no arena
            String arena = grid.hasArenaHelper(k) && l.range().offset() > k.range().end()
                    ? ", " + cuda.renamedAt(l.callee(), k, GridAggregation.arenaName(k), ctx.holder(l)) : "";
            out.insert(l.argsRange().end(), defaults + (l.args().isEmpty() && defaults.isEmpty() ? "" : ", ")
                    + "klap::host_kstate(" + plans.stateSize(k) + arena + ")");
            out.replace(l.calleeRange().offset(), l.calleeRange().end(),
                    "(" + cuda.renamedAt(l.callee(), k, CudaText.twinName(k), ctx.holder(l)));
            out.insert(l.range().end(), ", klap::host_kstate_done())");
        }
        if (!ctx.deviceClosure(k).stream().anyMatch(plans::hasSites)) {
            return; // k makes no aggregated launch: nothing to prepare
        }
        if (!twin && chunks.chunked(l, k)) {
            // a grid too large for klap's pool and budget at once runs in chunks of blocks (ChunkTwins)
            String smem = l.sharedMem() == null ? "0" : fittedSharedMemory(l, k, null);
            String twinSmem = l.sharedMem() == null ? "0" : fittedSharedMemory(l, k, ChunkTwins.twinName(k));
            out.replace(l.range().offset(), l.range().end(), chunks.launch(l, k, smem, twinSmem));
            return;
        }
        String launches = Mutations.sideEffectFree(l.grid(), ctx.unit) && Mutations.sideEffectFree(l.block(), ctx.unit)
                ? ", klap::host_warps(" + cuda.slice(l.grid().range()) + ", " + cuda.slice(l.block().range()) + ")"
                : "";
        String smem = l.sharedMem() == null ? null : fittedSharedMemory(l, k, twin ? CudaText.twinName(k) : null);
        if (smem != null && l.stream() != null) {
            out.replace(l.sharedMem().range().offset(), l.sharedMem().range().end(), smem);
        }
        if (l.stream() != null) {
            out.replace(l.stream().range().offset(), l.stream().range().end(),
                    "klap::host_prepare(" + cuda.slice(l.stream().range()) + launches + ")");
        } else if (l.sharedMem() != null) {
            out.replace(l.sharedMem().range().offset(), l.sharedMem().range().end(),
                    smem + ", klap::host_prepare(" + (launches.isEmpty() ? "" : "0" + launches) + ")");
        } else {
            out.insert(l.block().range().end(), ", 0, klap::host_prepare(" + (launches.isEmpty() ? "" : "0" + launches) + ")");
        }
    }

    /**
     * The dynamic shared memory argument of host launch {@code l} of transformed kernel {@code k}:
     * {@code klap::host_smem(kernel, bytes)} (runtime {@code pool.cuh}), which raises the kernel's
     * {@code cudaFuncAttributeMaxDynamicSharedMemorySize} when {@code bytes} is above it. klap may
     * add static shared memory to {@code k} (a block-granularity parent's scan scratch), which
     * lowers the default limit (48 KB minus the static size, CUDA programming guide, "Shared
     * Memory"): a launch that asked for nearly 48 KB would fail. {@code bytes} is still evaluated
     * once. The argument as written where it is the literal {@code 0}, or where the launched kernel
     * has no name a function pointer can be taken of here (a template whose arguments the launch
     * deduces; a name that more than one kernel has).
     *
     * @param twin the name of {@code k}'s twin the launch goes to (its kernel-granularity or chunk
     *             twin), or null for {@code k} itself
     */
    private String fittedSharedMemory(Expr.Launch l, FunctionDef k, String twin) {
        String bytes = cuda.slice(l.sharedMem().range());
        if (bytes.strip().matches("0+[uUlLzZ]*") || ctx.ambiguous(k.name())
                || (k.templateHeader() != null && l.templateArgs() == null)) {
            return bytes;
        }
        String callee = l.callee();
        String kernel = twin != null ? cuda.renamedAt(callee, k, twin, ctx.holder(l)) : callee;
        return "klap::host_smem(" + kernel + ", " + bytes + ")";
    }

    /**
     * @return the text of the default arguments that host launch {@code l} leaves out, each
     *         preceded by {@code ", "} (or none first if {@code l} passes no argument): empty if it
     *         passes every argument; null if klap knows no default for one of them (from {@code k}'s
     *         definition or a prototype: {@link FunctionDef#defaultArgument}), or
     *         {@code k} is in a namespace or class (its defaults may name what the call's scope does
     *         not see), or a default calls a function (at the launch it may choose another overload
     *         than where the default was written: review 2026-11-30, {@link
     *         klap.transform.TemplateDeduction#callIn})
     */
    private String omittedDefaults(Expr.Launch l, FunctionDef k) {
        StringBuilder sb = new StringBuilder();
        for (int i = l.args().size(); i < k.params().size(); i++) {
            String given = k.defaultArgument(i, ctx.text);
            if (given.isEmpty() || !k.namespace().isEmpty() || k.memberOf() != null
                    || klap.transform.TemplateDeduction.callIn(given) != null) {
                return null;
            }
            String def = given.substring(1).strip();
            sb.append(i == 0 ? "" : ", ").append('(').append(def).append(')');
        }
        return sb.toString();
    }

    /** the calls already rewritten, by start offset: a macro that uses its argument twice holds it twice */
    private final java.util.Set<Integer> copied = new java.util.HashSet<>();

    /**
     * {@code cudaFuncSetAttribute(k, a, v)} on a kernel with aggregated variants (or a
     * kernel-granularity twin) becomes {@code (cudaFuncSetAttribute(k_variant, a, v), ...,
     * cudaFuncSetAttribute(k, a, v))}: the variants run the kernel's code and need its maximum
     * dynamic shared memory, cache configuration and carveout; the value of the expression is still
     * the user's own call's.
     */
    private void copyAttributes(Expr.Call c, EditSet out) {
        int[] at = ownText(c);
        if (at != null && !copied.add(at[0])) {
            return;
        }
        Expr.Name target = attributeTarget(c.args().get(0));
        FunctionDef k;
        if (target != null) {
            k = ctx.kernel(target.name().replaceAll("<.*$", ""));
        } else {
            String first = at != null ? klap.transform.Lexical.blankCommentsAndLiterals(ctx.text.substring(at[2], at[3])).trim()
                    : cuda.slice(c.args().get(0).range()).trim();
            k = ctx.kernels.get(AggregationContext.simpleName(first.replaceAll("<.*$", "").replace("&", "")
                    .replace("(", "").replace(")", "").trim()));
        }
        if (k == null) {
            unresolvedAttribute(c, at);
            return;
        }
        List<String> names = new ArrayList<>();
        for (String key : variants.keys(k)) {
            names.add(CudaText.variantName(k, key));
        }
        if (plans.hasKernelState(k)) {
            names.add(CudaText.twinName(k));
        }
        if (chunks.twinned(k)) {
            names.add(ChunkTwins.twinName(k));
        }
        if (names.isEmpty()) {
            return;
        }
        List<String> firsts = new ArrayList<>();
        for (String n : names) {
            String first = at == null ? null : renamedArgument(at[2], at[3], target, k, n, ctx.holder(c.range()));
            if (first == null) {
                ctx.warn(c.range().offset(), c.calleeName() + "(" + k.name() + ", ...) is written in a macro, or names "
                        + "the kernel through one, in a way klap cannot rewrite (in the macro's body, more than once in "
                        + "one use): it does not reach the aggregated forms of '" + k.name() + "' ("
                        + String.join(", ", names) + "); a launch of them that needs the attribute (dynamic shared memory "
                        + "over 48 KiB) fails. Write the call and the kernel's name outside macros, or the call in a "
                        + "macro's argument", "attribute-in-macro");
                return;
            }
            firsts.add(first);
        }
        String call = ctx.text.substring(at[0], at[1]);
        int argOff = at[2] - at[0];
        int argEnd = at[3] - at[0];
        StringBuilder sb = new StringBuilder("(");
        for (String first : firsts) {
            sb.append(call, 0, argOff).append(first).append(call.substring(argEnd)).append(", ");
        }
        out.replace(at[0], at[1], sb.append(call).append(')').toString());
    }

    /**
     * Attributes that only change how fast a kernel runs, never whether a launch of it is accepted:
     * an attribute call that sets one of them is not reported by {@link #unresolvedAttribute}.
     */
    private static final Set<String> SPEED_ONLY_ATTRIBUTES = Set.of("cudaFuncAttributePreferredSharedMemoryCarveout",
            "cudaFuncAttributeClusterSchedulingPolicyPreference");

    /**
     * A {@code cudaFuncSetAttribute} whose first argument does not name one kernel of the unit (a
     * {@code const void*} variable, a parameter, a table of kernels, a choice between two): if it
     * holds a child's, klap's aggregated forms of that child do not get the attribute, and an
     * aggregated launch that needs it (dynamic shared memory over 48 KiB) is refused by the device
     * runtime; the runtime then launches those children as written (correct, slower: {@code
     * aggregate.cuh} flush, {@code kernel.cuh} kfinish): a note. Nothing is said where the unit has
     * no aggregated child forms, for an attribute that only changes speed ({@link
     * #SPEED_ONLY_ATTRIBUTES}), or for the other attribute calls (cache and shared-memory bank
     * configuration).
     *
     * @param at the call's own text and its first argument's ({@link #ownText}), or null (then the
     *     argument's range)
     */
    private void unresolvedAttribute(Expr.Call c, int[] at) {
        if (!"cudaFuncSetAttribute".equals(c.calleeName()) || c.args().size() < 2
                || SPEED_ONLY_ATTRIBUTES.contains(cuda.slice(c.args().get(1).range()).strip())
                || variants.isEmpty()) {
            return;
        }
        // (a call in a macro's body has no text of its own: the macro's use is not the argument)
        String call = at != null ? "cudaFuncSetAttribute(" + ctx.text.substring(at[2], at[3]).strip() + ", ...)"
                : "cudaFuncSetAttribute (in a macro's body)";
        ctx.note(c.range().offset(), call + " does not name one kernel of this file: if it sets a child kernel's "
                + "attribute, klap's aggregated forms of that child do not get it; an aggregated launch that needs it "
                + "(dynamic shared memory over 48 KiB) is refused by the device and its children run as written "
                + "(correct, slower). Name the kernel in the call (cudaFuncSetAttribute(child, ...)) to keep them "
                + "aggregated", "attribute-unresolved");
    }

    /**
     * @return the kernel that the first argument of an attribute call names, through casts, {@code &}
     *         and macros ({@code (const void*)K} with {@code #define K child}): its one name of a
     *         kernel of the unit; null if it names none, or more than one
     */
    private Expr.Name attributeTarget(Expr arg) {
        List<Expr.Name> found = new ArrayList<>();
        Trees.walk(arg, e -> {
            if (e instanceof Expr.Name n && ctx.kernel(n.name().replaceAll("<.*$", "")) != null) {
                found.add(n);
            }
        });
        return found.size() == 1 ? found.get(0) : null;
    }

    /**
     * @return the text of the attribute call's first argument, {@code [start, end)} in the input,
     *         naming {@code variant} instead of kernel {@code k}: where the argument's text names
     *         {@code k}, that name replaced; where a macro names it ({@code target}'s range is the
     *         macro's, inside the argument), the macro replaced by what it expands to, renamed; null
     *         if neither
     */
    private String renamedArgument(int start, int end, Expr.Name target, FunctionDef k, String variant, FunctionDef where) {
        String arg = ctx.text.substring(start, end);
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?<![A-Za-z0-9_])" + java.util.regex.Pattern.quote(
                k.name()) + "(?![A-Za-z0-9_])").matcher(klap.transform.Lexical.blankCommentsAndLiterals(arg));
        if (m.find()) {
            String before = arg.substring(0, m.start());
            return before + cuda.qualifierAfter(before, k, where) + variant + arg.substring(m.end());
        }
        if (target == null || target.range().length() == 0 || target.range().offset() < start
                || target.range().end() > end) {
            return null;
        }
        String expanded = cuda.renamedAt(target.name(), k, variant, where);
        return expanded.equals(target.name()) ? null : ctx.text.substring(start, target.range().offset()) + expanded
                + ctx.text.substring(target.range().end(), end);
    }

    /**
     * Where attribute call {@code c} is written: {start, end} of the call and {start, end} of its first
     * argument, as offsets into the input. A call written out gives its own ranges. A call written in
     * a macro's argument ({@code CHECK(cudaFuncSetAttribute(k, a, v))}) carries the range of the whole
     * expansion in the model; its text is the one {@code name(...)} in the expansion's source, with
     * parentheses and literals matched. Null if the call is in the macro's body, or the expansion
     * holds it more than once.
     */
    private int[] ownText(Expr.Call c) {
        SourceRange r = c.range();
        SourceRange a0 = c.args().get(0).range();
        if (ctx.slice(r).strip().startsWith(c.calleeName()) && r.contains(a0) && !a0.equals(r)) {
            return new int[] {r.offset(), r.end(), a0.offset(), a0.end()};
        }
        String simple = AggregationContext.simpleName(c.calleeName());
        // the expansion's source, comments and literals blanked: offsets still index the input
        String code = klap.transform.Lexical.blankCommentsAndLiterals(ctx.text.substring(0, r.end()));
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?<![A-Za-z0-9_])" + java.util.regex.Pattern.quote(simple)
                + "\\s*\\(").matcher(code).region(r.offset(), r.end());
        // several calls in one expansion (CALL2(f(a, ...), f(b, ...))): the one whose kernel is this call's
        String kernel = c.args().get(0) instanceof Expr.Name n ? AggregationContext.simpleName(n.name()) : null;
        int[] found = null;
        int count = 0;
        while (m.find()) {
            int open = m.end() - 1;
            int close = -1;
            int comma = -1;
            int depth = 0;
            for (int i = open; i < r.end() && close < 0; i++) {
                char ch = code.charAt(i);
                if (ch == '(' || ch == '[' || ch == '{') {
                    depth++;
                } else if (ch == ')' || ch == ']' || ch == '}') {
                    if (--depth == 0) {
                        close = i;
                    }
                } else if (ch == ',' && depth == 1 && comma < 0) {
                    comma = i;
                }
            }
            if (close < 0 || comma < 0) {
                return null;
            }
            String first = code.substring(open + 1, comma).replaceAll("[\\s()&]", "");
            if (kernel != null && !AggregationContext.simpleName(first.replaceAll("<.*$", "")).equals(kernel)) {
                continue;
            }
            int start = m.start();
            while (start >= 2 && ctx.text.startsWith("::", start - 2)) {
                start -= 2; // ::cudaFuncSetAttribute
            }
            found = new int[] {start, close + 1, open + 1, comma};
            count++;
        }
        return count == 1 ? found : null;
    }
}
