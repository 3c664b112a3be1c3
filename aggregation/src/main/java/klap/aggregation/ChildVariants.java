package klap.aggregation;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import klap.model.Expr;
import klap.model.FunctionDef;
import klap.model.Param;
import klap.transform.EditSet;
import klap.transform.Trees;

/**
 * A child kernel's aggregated variants (KLAP II-A warp/block, II-B kernel), with uniform arguments
 * passed as scalars (II-C), and the clones of the device functions they call that read the
 * thread and block indices or declare {@code __shared__} variables ({@link #findClones}). The
 * original kernel is kept unchanged.
 * <h2>Input</h2>
 * <pre>
 * __device__ int helper() { return blockIdx.x; }
 * __global__ void child(float* p, int n) { ... blockIdx.x ... helper() ... }
 * </pre>
 * <h2>Output (a site launching {@code child} with {@code n} uniform, at block granularity)</h2>
 * <pre>
 * __device__ int helper(const klap::vctx&amp; klap_v);
 * __device__ int helper() { return blockIdx.x; }
 * __device__ int helper(const klap::vctx&amp; klap_v) { KLAP_SHADOWS { return blockIdx.x; } }
 * struct klap_args_child { float* p; int n; __device__ klap_args_child(float* klap_p0, int klap_p1) : p(klap_p0), n(klap_p1) {} };
 * __global__ void child_klap_agg_vu(const klap::launch_cfg* klap_cfg, unsigned klap_n, const klap_args_child* klap_args, int n);
 * __global__ void child(float* p, int n) { ...unchanged... }
 * __global__ void child_klap_agg_vu(const klap::launch_cfg* klap_cfg, unsigned klap_n,
 *                                   const klap_args_child* klap_args, int n) {
 *   klap::vctx klap_v; unsigned klap_parent;                   // find the parent slot (scan + search),
 *   if (!klap::child_enter(klap_cfg, klap_n, klap_v, klap_parent)) return;   // mask extra threads
 *   float* p = klap_args[klap_parent].p;                       // load the per-parent argument
 *   klap::child_release(klap_cfg, klap_n);                     // the records are copied: release them
 *   klap::block_group klap_blk = klap::block_group::virtual_block(klap_v); (void)klap_blk;
 *   KLAP_SHADOWS                                               // the original indices, see below
 *   { ... blockIdx.x ... helper(klap_v) ... }                  // original body, as written
 * }
 * </pre>
 * {@code KLAP_SHADOWS} stands for local constants that shadow the built-in variables with the
 * original (virtual) indices: {@code [[maybe_unused]] const uint3 threadIdx = klap_v.threadIdx;}
 * and likewise {@code blockIdx}, {@code blockDim}, {@code gridDim}. The body keeps its text, so
 * indices read through the user's macros ({@code #define TID (blockIdx.x * blockDim.x +
 * threadIdx.x)}) see the original values too; klap's runtime reads the hardware ones as
 * {@code ::threadIdx}.
 * The suffix names which parameters are passed through the records ({@code v}) and which as
 * scalars ({@code u}). The kernel-granularity variant {@code child_klap_kagg_vu(const klap::ksite*
 * klap_site, int n)} finds its record with {@code klap::kchild_enter} and reads scalars from the
 * first record. A variant of a child that is itself a kernel-granularity parent takes a trailing
 * {@code klap::kstate* klap_ks}, and its threads past the original block size finish in
 * {@code kfinish} before they leave. A member function that reads the indices is not cloned (a
 * warning).
 */
final class ChildVariants {
    /** The built-in index variables and their types (CUDA programming guide, "Built-in Variables"), in the order of {@code klap::vctx}. */
    private static final List<String[]> INDEX_BUILTINS = List.of(new String[] {"uint3", "threadIdx"},
            new String[] {"uint3", "blockIdx"}, new String[] {"dim3", "blockDim"}, new String[] {"dim3", "gridDim"});
    private static final Set<String> BUILTINS = INDEX_BUILTINS.stream().map(b -> b[1]).collect(java.util.stream.Collectors.toSet());

    private final AggregationContext ctx;
    private final SitePlans plans;
    private final CudaText cuda;
    /** child kernel -> the keys of its variants ({@code agg_vu}, {@code kagg_v}), in the order sites need them */
    private final Map<FunctionDef, Set<String>> variants = new LinkedHashMap<>();
    private final Set<FunctionDef> clones = new LinkedHashSet<>();
    private final Set<String> cloneNames = new HashSet<>();

    /** Collects the variants that the plans launch. */
    ChildVariants(AggregationContext ctx, SitePlans plans, CudaText cuda) {
        this.ctx = ctx;
        this.plans = plans;
        this.cuda = cuda;
        for (SitePlan s : plans.all()) {
            variants.computeIfAbsent(s.child(), k -> new LinkedHashSet<>()).add(s.variantKey());
        }
    }

    /** @return true if no child needs a variant */
    boolean isEmpty() {
        return variants.isEmpty();
    }

    /** @return the keys of {@code k}'s variants, empty if it has none */
    Set<String> keys(FunctionDef k) {
        return variants.getOrDefault(k, Set.of());
    }

    /**
     * Device functions whose variants must see the original indices: they read them, directly or
     * through calls ({@link AggregationContext#indexReaders}). Member functions cannot be cloned
     * (their class is not ours to extend): a child that calls one is not aggregated
     * ({@code SitePlanner}, {@code child-member-builtins}). Neither can operator functions: an
     * {@code operator+} with a {@code klap_v} parameter more is ill-formed, and its calls are written
     * without a call to retarget; a child that calls one is not aggregated ({@code ChildRefusals},
     * {@code klap-child-calls-unseen}).
     * <p>
     * Also the device functions that declare a {@code __shared__} variable, or reach one that does
     * ({@link #sharedClones}), so that variants and chunk twins name their own copy of it: nvlink
     * gives such a variable ONE offset in every kernel that reaches it, and where a second kernel
     * (a variant) reaches it together with another function's {@code __shared__} variable, it lays one
     * after the other for every kernel: a kernel that never used the first array then reserved its
     * bytes too (48 KiB more shared memory per block, or "uses too much shared data" at link time:
     * random program 76000027, nvcc 13.0). A clone's variable is the same per-block storage for the
     * variant's blocks as the original's is for the original kernel's (every thread of a block runs
     * one kernel), and the original kernels' layout is left as it was.
     */
    void findClones() {
        Set<String> reading = ctx.indexReaders(BUILTINS);
        Set<String> holding = sharedClones();
        for (FunctionDef f : ctx.unit.functions()) {
            if ((f.kind() == FunctionDef.Kind.DEVICE || f.kind() == FunctionDef.Kind.HOST_DEVICE)
                    && (reading.contains(f.name()) || holding.contains(f.name())) && clonable(f)
                    && ctx.lateSignature(f, false) == null) {
                // (a signature naming what is declared after the clone's prototype: no clone; a child
                // that calls such a reader is not aggregated, ChildRefusals, child-signature-late)
                clones.add(f);
                cloneNames.add(f.name());
            }
        }
    }

    /** @return true if {@code f}'s kind of function can have a clone: not a member or operator function */
    static boolean clonable(FunctionDef f) {
        return f.memberOf() == null && !FunctionDef.isOperatorName(f.name());
    }

    /** {@link #sharedClones}, computed once */
    private Set<String> sharedClones;

    /**
     * @return the names among {@link AggregationContext#sharedHolders} that variants and twins call
     *         clones of. A variant must reach ONE copy of each {@code __shared__} variable: a clone
     *         and the original both reached from one variant would be two arrays (one written, the
     *         other read). So a holder is cloned only if every path to it can be retargeted: none of
     *         its definitions has a {@code static} local (a clone would have its own) or is a member
     *         or operator function; every call of it names it where it is written (not through a
     *         macro), outside any lambda (retarget does not enter lambda bodies), with all its
     *         arguments (a default from a separate declaration would not reach the clone's); its
     *         address is not taken; and every {@code __device__} function that calls it is cloned too
     *         (to a fixed point; index-reading functions are cloned anyway)
     */
    Set<String> sharedClones() {
        if (sharedClones == null) {
            Set<String> holders = ctx.sharedHolders();
            Set<String> out = new HashSet<>(holders);
            Map<String, Set<String>> callers = new HashMap<>();
            for (FunctionDef f : ctx.unit.functions()) {
                if (f.body() == null) {
                    continue;
                }
                if (holders.contains(f.name()) && (!clonable(f) || ChildRefusals.staticLocal(f) != null
                        || ctx.lateSignature(f, false) != null)) {
                    out.remove(f.name());
                }
                Set<Expr> outside = outsideLambdas(f);
                Trees.walkExprsAndLambdas(f.body(), x -> {
                    String name = x instanceof Expr.Call c ? AggregationContext.calleeSimpleName(c) : null;
                    if (name == null || !holders.contains(name)) {
                        return;
                    }
                    Expr.Call c = (Expr.Call) x;
                    callers.computeIfAbsent(name, k -> new HashSet<>()).add(f.name());
                    List<FunctionDef> defs = ctx.deviceFunctionsNamed(Set.of(name));
                    boolean allArgs = defs.stream().allMatch(d -> c.args().size() >= d.params().size());
                    if (!outside.contains(c) || !writtenOut(ctx, c) || !allArgs) {
                        out.remove(name);
                    }
                });
                for (klap.model.ImplicitCall c : ctx.unit.implicitCallsIn(f.range())) {
                    if (holders.contains(c.name())) {
                        out.remove(c.name());
                    }
                }
            }
            out.removeAll(klap.transform.AddressTaken.of(ctx.unit, holders));
            Set<String> reading = ctx.indexReaders(BUILTINS);
            Set<String> deviceNames = new HashSet<>();
            for (FunctionDef f : ctx.unit.functions()) {
                if (f.kind() == FunctionDef.Kind.DEVICE || f.kind() == FunctionDef.Kind.HOST_DEVICE) {
                    deviceNames.add(f.name());
                }
            }
            boolean changed = true;
            while (changed) {
                changed = false;
                for (String name : List.copyOf(out)) {
                    for (String caller : callers.getOrDefault(name, Set.of())) {
                        // a device function that stays one body (not cloned) would call the original
                        if (deviceNames.contains(caller) && !out.contains(caller) && !reading.contains(caller)) {
                            out.remove(name);
                            changed = true;
                            break;
                        }
                    }
                }
            }
            sharedClones = Set.copyOf(out);
        }
        return sharedClones;
    }

    /**
     * @return the expressions of {@code f}'s body outside every lambda body, by identity (calls
     *         there are retargeted to clones; {@link #retarget} does not enter lambda bodies)
     */
    static Set<Expr> outsideLambdas(FunctionDef f) {
        Set<Expr> outside = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        Trees.walkExprs(f.body(), outside::add);
        return outside;
    }

    /**
     * @return true if call {@code c} names its callee where it is written: the callee's text is
     *         its name, or ends with {@code ::name} ({@code operator+} written without the blank of
     *         its name counts), with or without explicit template arguments ({@code stage<16>});
     *         false for a call that a macro's expansion makes ({@code #define G gid()}) or a member call
     */
    static boolean writtenOut(AggregationContext ctx, Expr.Call c) {
        if (c.calleeName() == null || !(c.callee() instanceof Expr.Name)) {
            return false;
        }
        String text = ctx.slice(c.callee().range()).replaceAll("\\s+", "");
        String bare = AggregationContext.simpleName(c.calleeName()).replaceAll("\\s+", "");
        if (!bare.startsWith("operator") && text.endsWith(">") && text.indexOf('<') > 0) {
            text = text.substring(0, text.indexOf('<')); // explicit template arguments: stage<10240>(...)
        }
        return text.equals(bare) || text.endsWith("::" + bare);
    }

    /** The built-in index variables a variant shadows with the original indices. */
    static Set<String> builtins() {
        return BUILTINS;
    }

    /**
     * Adds the fine edits that make the body of {@code f} run inside a variant or clone: calls of
     * cloned functions pass {@code klap_v} on. (The indices need no edit: the variant or clone
     * declares {@link #shadows} around the body.)
     */
    void retarget(FunctionDef f, EditSet e) {
        Trees.walkExprs(f.body(), x -> {
            if (x instanceof Expr.Call c && c.calleeName() != null && c.callee() instanceof Expr.Name
                    && cloneNames.contains(AggregationContext.simpleName(c.calleeName()))) {
                e.insertFine(c.argsRange().offset(), c.args().isEmpty() ? "klap_v" : "klap_v, ");
            }
        });
    }

    /**
     * Local constants that shadow the built-in index variables with the original (virtual) ones of
     * {@code klap_v}, for the body of {@code f}'s variant or clone (C++ name lookup finds the
     * innermost declaration; nvcc 13 accepts shadowing the built-ins), e.g.
     * {@code [[maybe_unused]] const uint3 threadIdx = klap_v.threadIdx;}. The body's own text,
     * macros included, then reads the original indices without any edit. A built-in that a
     * parameter of {@code f} already names gets no constant: declaring it again in the function's
     * outermost block would not compile, and the body means the parameter there.
     */
    static String shadows(FunctionDef f) {
        StringBuilder sb = new StringBuilder();
        for (String[] b : INDEX_BUILTINS) {
            if (f.params().stream().noneMatch(p -> p.name().equals(b[1]))) {
                sb.append(sb.length() == 0 ? "" : " ").append("[[maybe_unused]] const ").append(b[0]).append(' ')
                        .append(b[1]).append(" = klap_v.").append(b[1]).append(';');
            }
        }
        return sb.toString();
    }

    /**
     * Adds {@code f}'s argument record, variants and clone, if it has any, around {@code f}.
     *
     * @param variantBody {@code f}'s body as it runs in a variant or clone (asked for only if needed)
     */
    void emit(FunctionDef f, EditSet out, Supplier<String> variantBody) {
        int declStart = cuda.declStartBeforeUses(f);
        int end = f.range().end();
        if (variants.containsKey(f)) {
            // in f's namespace: a launch names the record and the variants as it names f (a::klap_args_child)
            out.insert(declStart, cuda.prototypeWhereDeclared(f, klap.transform.Linkage.cpp(f, cuda.argsStruct(f) + cuda.deductionChecks(f)
                    + variantPrototypes(f))) + cuda.lineDirective(declStart));
            out.insert(end, klap.transform.Linkage.cpp(f, variantDefinitions(f, variantBody.get())) + cuda.lineDirective(end));
        }
        if (clones.contains(f)) {
            out.insert(declStart, clonePrototype(f) + cuda.lineDirective(declStart));
            out.insert(end, cloneDefinition(f, variantBody.get()) + cuda.lineDirective(end));
        }
    }

    /**
     * Declaration text of the variant {@code key} of {@code k}, up to and including the parameter
     * list; {@code definition}: without default template arguments (the prototype has them).
     */
    private String variantHead(FunctionDef k, String key, boolean definition) {
        // the prototype names the variant unqualified (CudaText.prototypeWhereDeclared); a definition
        // a::child(...) {...} outside the namespace defines a::child_klap_agg_...
        String head = cuda.boundedDeclaration(k, definition ? k.nameRange().offset() : cuda.qualifiedNameStart(k)).trim();
        String mask = CudaText.maskOf(key);
        StringBuilder sb = new StringBuilder(definition ? cuda.templateHeaderOfDefinition(k) : cuda.templateHeader(k))
                .append(head).append(' ')
                .append(CudaText.variantName(k, key));
        if (key.startsWith("kagg")) {
            sb.append("(const klap::ksite* klap_site");
        } else {
            sb.append("(const klap::launch_cfg* klap_cfg, unsigned klap_n, const ").append(cuda.selfArgs(k)).append("* klap_args");
        }
        for (int i = 0; i < k.params().size(); i++) {
            if (mask.charAt(i) == 'u') {
                sb.append(", ").append(cuda.paramDecl(k.params().get(i), i));
            }
        }
        if (plans.hasKernelState(k)) {
            sb.append(", klap::kstate* klap_ks");
        }
        return sb.append(')').toString();
    }

    private String variantPrototypes(FunctionDef k) {
        StringBuilder sb = new StringBuilder();
        for (String key : variants.get(k)) {
            sb.append(variantHead(k, key, false)).append(";\n");
        }
        return sb.toString();
    }

    private String variantDefinitions(FunctionDef k, String body) {
        StringBuilder sb = new StringBuilder();
        for (String key : variants.get(k)) {
            String mask = CudaText.maskOf(key);
            boolean gridWide = key.startsWith("kagg");
            sb.append("\n/* klap: aggregated variant of '").append(k.name()).append("' (KLAP ")
                    .append(gridWide ? "II-B): one grid for the children of a whole parent grid"
                            : "II-A): one grid for the children of a whole warp or block")
                    .append("; parameters ").append(mask).append(" (u = scalar, v = per-parent record) */\n");
            sb.append(variantHead(k, key, true)).append(" {\n");
            // threads past the original block size exit; kfinish's block barrier does not wait for them
            String leave = "return;";
            if (gridWide) {
                sb.append("  klap::vctx klap_v; const ").append(cuda.selfArgs(k)).append("* klap_a;\n");
                sb.append("  if (!klap::kchild_enter(klap_site, klap_v, klap_a)) ").append(leave).append("\n");
            } else {
                sb.append("  klap::vctx klap_v; unsigned klap_parent;\n");
                sb.append("  if (!klap::child_enter(klap_cfg, klap_n, klap_v, klap_parent)) ").append(leave).append("\n");
            }
            for (int i = 0; i < k.params().size(); i++) {
                Param p = k.params().get(i);
                if (mask.charAt(i) == 'v' && !p.name().isEmpty()) {
                    sb.append("  ").append(cuda.paramDecl(p, i)).append(gridWide ? " = klap_a->" : " = klap_args[klap_parent].")
                            .append(p.name()).append(";\n");
                }
            }
            // the per-parent arguments are copied: the pool memory behind them is released here (issue 11)
            sb.append(gridWide ? "  klap::kchild_release(klap_site);\n" : "  klap::child_release(klap_cfg, klap_n);\n");
            sb.append("  klap::block_group klap_blk = klap::block_group::virtual_block(klap_v); (void)klap_blk;\n");
            sb.append("  ").append(shadows(k)).append('\n');
            sb.append(cuda.lineDirective(k.body().range().offset())).append(body).append("\n}\n");
        }
        return sb.toString();
    }

    /**
     * @return {@code static } for the clone of a function with {@code __shared__} variables (unless
     *         its declaration already has a storage class): a clone that no variant calls (an
     *         overload of the same name, a call inside a lambda) is then dropped by the compiler; an
     *         external one would still have its variables laid out by nvlink, in other kernels too
     */
    private String cloneLinkage(FunctionDef f) {
        String head = withoutCLinkage(cuda.declaration(f, f.paramsRange().offset()));
        return ctx.sharedHolders().contains(f.name()) && !head.matches("(?s).*\\b(static|extern)\\b.*") ? "static " : "";
    }

    /** {@code extern "C"} written in a declaration's text */
    private static final java.util.regex.Pattern C_LINKAGE = java.util.regex.Pattern.compile("\\bextern\\s*\"C\"\\s*");

    /** @return {@code head} without an {@code extern "C"} it writes */
    private static String withoutCLinkage(String head) {
        return C_LINKAGE.matcher(head).replaceAll("");
    }

    private String clonePrototype(FunctionDef f) {
        String linkage = cloneLinkage(f);
        String head = withoutCLinkage(cuda.declaration(f, cuda.qualifiedNameStart(f)))
                + ctx.text.substring(f.nameRange().offset(), f.paramsRange().offset());
        StringBuilder sb = new StringBuilder(cuda.templateHeader(f)).append(linkage)
                .append(linkage.isEmpty() ? head : head.stripLeading()).append("const klap::vctx& klap_v");
        List<String> decls = cuda.paramDecls(f);
        for (int i = 0; i < decls.size(); i++) {
            // the clone's first declaration: it takes the defaults a prototype gives (the definition's
            // own stay on the definition, which copies its parameter list)
            String given = f.params().get(i).hasDefault() ? "" : f.declaredDefaults().get(i);
            sb.append(", ").append(decls.get(i)).append(given.isEmpty() ? "" : " " + given);
        }
        return cuda.prototypeWhereDeclared(f, klap.transform.Linkage.cpp(f, sb.append(cuda.afterParams(f).trim()).append(";\n").toString()));
    }

    private String cloneDefinition(FunctionDef f, String body) {
        String params = cuda.slice(f.paramsRange()).trim();
        boolean none = params.isEmpty() || params.equals("void");
        return "\n/* klap: '" + f.name() + "' as called from aggregated children, with the original indices */\n"
                + klap.transform.Linkage.cpp(f, cuda.templateHeaderOfDefinition(f) + cloneLinkage(f)
                + withoutCLinkage(cuda.declaration(f, f.paramsRange().offset())).trim()
                + "const klap::vctx& klap_v" + (none ? "" : ", " + params)
                + cuda.afterParams(f).trim() + " { " + shadows(f) + "\n"
                + cuda.lineDirective(f.body().range().offset()) + body + "\n}\n");
    }
}
