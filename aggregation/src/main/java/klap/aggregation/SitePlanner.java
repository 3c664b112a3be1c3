package klap.aggregation;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import klap.model.Expr;
import klap.model.FunctionDef;
import klap.model.Param;
import klap.model.SourceRange;
import klap.model.Stmt;
import klap.model.VarDecl;
import klap.transform.Convergence;
import klap.transform.Granularity;
import klap.transform.Trees;
import klap.transform.Uniformity;

/**
 * Decides, for every device-side launch, how it is aggregated (KLAP II-A warp/block, II-B kernel,
 * II-C scalarized arguments), from the facts: {@link Uniformity} (which arguments and streams are
 * uniform across the group or the grid), {@link Convergence} (where the threads of a block meet)
 * and {@link klap.transform.SyncSites} (launching operations, barriers).
 * <h2>Input</h2>
 * <pre>
 * __global__ void parent(float* p, int* cnt, int n) {
 *   int i = blockIdx.x * blockDim.x + threadIdx.x;
 *   ext&lt;&lt;&lt;1, 1&gt;&gt;&gt;(p);                                   // ext is only declared here
 *   if (i &gt;= n) return;
 *   if (cnt[i] &gt; 0) child&lt;&lt;&lt;cnt[i], 32&gt;&gt;&gt;(p + i, n);
 * }
 * </pre>
 * <h2>Output</h2>
 * <pre>
 * child (block):  SitePlan(mask "vu", Deferred(region from the guard to the end of the body))
 * child (kernel): SitePlan(mask "vu", gridWide, ordered)
 * ext:            refused: warning [klap-child-not-defined], left as written
 * </pre>
 * A launch is refused (left as written, with a warning that names the reason) when klap cannot
 * build the child's variant ({@link ChildRefusals}: the child is not defined in this file, it uses
 * cooperative groups that read the hardware block or grid, a template child is launched without
 * explicit template arguments, or arguments are defaulted, ...); likewise a launch inside an
 * expression, a lambda or a {@code __host__ __device__} function. Device {@code cudaDeviceSynchronize}
 * is an error (CDP2).
 *
 * <p>Where no convergent region exists, the launch is aggregated in place among the threads of a
 * warp that arrive together, with a warning at block granularity. Those lanes may be in different
 * iterations of a loop around the launch, so there an argument that reads a variable the loop
 * defines is passed per record, never as a scalar. A stream argument proven uniform
 * ({@code cudaStreamFireAndForget}, {@code cudaStreamTailLaunch}) is kept; a thread-dependent one is
 * replaced by the NULL stream, which keeps every per-thread order of the input (a note). A launch
 * followed in its region by {@code cudaEventRecord} or {@code cudaStreamWaitEvent} goes in place so
 * events keep their meaning; at kernel granularity, any such operation later in the kernel (or in a
 * loop around the launch) makes the launch go in place, aggregated per warp. At kernel granularity a
 * launch in a loop passes every argument per record (rounds are merged), and one into an ordered
 * stream makes every ordered launch of its kernel aggregated per round (a note). Last,
 * {@link #keepLaunchOrder} narrows a deferred launch's region to the end of its own statement, or
 * makes it go in place, where a later launch of the same thread would overtake it.
 */
final class SitePlanner {

    /**
     * Device runtime calls that are ordered with launches in a stream: event records and waits,
     * and the asynchronous copies and sets (a copy after a launch into the NULL stream reads what
     * the child wrote). A launch is never deferred past one of them.
     */
    private static final Set<String> EVENT_CALLS = klap.transform.SyncSites.STREAM_OPERATIONS;

    /** Stream arguments (spaces removed) that are certainly not {@code cudaStreamTailLaunch}. */
    private static final Set<String> NOT_TAIL = Set.of("0", "0u", "NULL", "nullptr", "(cudaStream_t)0",
            "(cudaStream_t)NULL", "(cudaStream_t)nullptr", "cudaStream_t(0)", "cudaStream_t()", "cudaStream_t{}",
            "cudaStreamFireAndForget");

    private final AggregationContext ctx;
    private final MallocAggregation mallocs;
    /** why klap cannot build a launch's aggregated child variant (computed once per child) */
    private final ChildRefusals children;
    private final List<SitePlan> sites = new ArrayList<>();
    private final Set<Expr.Launch> unaggregated = new HashSet<>();
    /** the lines of {@code --leave-launch} that held a launch statement */
    private final Set<Integer> leftOnRequest = new HashSet<>();
    /** for each planned site, the launches (itself included) whose stream reads a variable its stream reads */
    private final Map<Expr.Launch, List<Expr.Launch>> sameStreamLaunches = new java.util.IdentityHashMap<>();
    /** for a planned site whose stream the program relies on ({@link #orderedStreamUse}), how */
    private final Map<Expr.Launch, String> orderedUses = new java.util.IdentityHashMap<>();

    /** @param mallocs receives the device cudaMalloc/cudaFree calls found on the way */
    SitePlanner(AggregationContext ctx, MallocAggregation mallocs) {
        this.ctx = ctx;
        this.mallocs = mallocs;
        this.children = new ChildRefusals(ctx);
    }

    /** Plans every device-side launch (and finds the device cudaMalloc/cudaFree calls) of the unit, in source order. */
    void planFunctions() {
        planEveryFunction();
        for (int line : ctx.opt.leaveLines().stream().sorted().toList()) {
            if (!leftOnRequest.contains(line)) {
                int at = line <= ctx.src.line(ctx.src.text().length()) ? ctx.src.lineStart(line) : 0;
                ctx.warn(at, "--leave-launch=" + line + ": no device-side launch that klap would transform begins on "
                        + "line " + line, "leave-launch-unused");
            }
        }
    }

    private void planEveryFunction() {
        for (FunctionDef f : ctx.unit.functions()) {
            if (f.kind() == FunctionDef.Kind.KERNEL || f.kind() == FunctionDef.Kind.DEVICE) {
                findSites(f);
            } else if (f.kind() == FunctionDef.Kind.HOST_DEVICE) {
                Trees.walkExprsAndLambdas(f.body(), e -> {
                    if (e instanceof Expr.Call c && MallocLifetimes.isCudaFree(c)) {
                        mallocs.freeInHostDeviceFunction(c);
                    }
                });
                Trees.walkExprs(f.body(), e -> {
                    if (e instanceof Expr.Launch l) {
                        unaggregated.add(l);
                        ctx.warn(l.range().offset(), "launch of '" + l.kernelName() + "' in a __host__ __device__ function is "
                                + "not aggregated; move it into a __global__ or __device__ function", "launch-host-device");
                    }
                });
            }
        }
    }

    private void findSites(FunctionDef f) {
        Set<Expr> statementLaunches = new HashSet<>();
        Convergence conv = convergence(f);
        Trees trees = ctx.uni(f).trees();
        Set<Expr> headerLaunches = new HashSet<>();
        Trees.walkStmts(f.body(), s -> {
            if (s instanceof Stmt.ExprStmt es && es.expr() instanceof Expr.Launch l) {
                if (inHeader(trees, es)) {
                    // for (k<<<...>>>(...); ...), if (k<<<...>>>(...); c): klap's statements cannot go there
                    headerLaunches.add(l);
                    return;
                }
                statementLaunches.add(l);
                planSite(f, es, l, conv);
            }
        });
        Trees.walkStmts(f.body(), s -> {
            for (Expr top : Trees.ownExprs(s)) {
                Trees.walk(top, e -> {
                    if (e instanceof Expr.Lambda lam && ctx.syncs.launchingOperations(lam.body()).stream()
                            .anyMatch(x -> x instanceof Expr.Launch)) {
                        ctx.warn(lam.range().offset(), "kernel launch inside a lambda is not aggregated; move it out of the "
                                + "lambda (into the kernel or a __device__ function) to aggregate it", "launch-in-lambda");
                        Trees.walkExprs(lam.body(), x -> {
                            if (x instanceof Expr.Launch ll) {
                                unaggregated.add(ll);
                            }
                        });
                    }
                    if (e instanceof Expr.Launch l && !statementLaunches.contains(l)) {
                        unaggregated.add(l);
                        if (l.inMacro()) {
                            warnInMacro(l);
                        } else if (headerLaunches.contains(l)) {
                            ctx.warn(l.range().offset(), "launch of '" + l.kernelName() + "' in the init-statement of an "
                                    + "if, switch or for is not aggregated; write it as a statement of its own",
                                    "launch-in-expression");
                        } else {
                            ctx.warn(l.range().offset(), "launch of '" + l.kernelName() + "' inside an expression is not "
                                    + "aggregated; write it as a statement of its own", "launch-in-expression");
                        }
                    } else if (e instanceof Expr.Call c && MallocLifetimes.isCudaMalloc(c)) {
                        mallocs.planMalloc(f, s, c, conv); // (also ::cudaMalloc and (cudaMalloc))
                    } else if (e instanceof Expr.Call c && "cudaDeviceSynchronize".equals(c.calleeName())) {
                        ctx.error(c.range().offset(), "device-side cudaDeviceSynchronize() "
                                + "was removed in CUDA 12 (CDP2); a parent can no longer wait for its children. Move the "
                                + "code that needs the children's results into a kernel launched into "
                                + "cudaStreamTailLaunch, or into a later host-launched kernel", "cdp1-sync");
                    }
                });
            }
        });
        // every device cudaFree, lambdas included (review 2026-11-27: one in a lambda freed a share as
        // written), after the cudaMalloc calls (a macro's warning names the first of those)
        Trees.walkExprsAndLambdas(f.body(), e -> {
            if (e instanceof Expr.Call c && MallocLifetimes.isCudaFree(c)) {
                mallocs.planFree(c);
            } else if (e instanceof Expr.Call c && MallocLifetimes.isLibcFree(c)) {
                mallocs.libcFree(c);
            }
        });
    }

    /** @return true if {@code s} is (part of) the init-statement of an if, a switch or a loop */
    private static boolean inHeader(Trees t, Stmt s) {
        Stmt p = t.parent(s);
        if (p instanceof Stmt.Block b && !(t.parent(b) instanceof Stmt.Block) && t.parent(b) != null) {
            Stmt owner = t.parent(b);
            if (owner instanceof Stmt.If i && i.init() == b || owner instanceof Stmt.Switch sw && sw.init() == b
                    || owner instanceof Stmt.Loop lp && lp.init() == b) {
                return true;
            }
        }
        return p instanceof Stmt.If i && i.init() == s || p instanceof Stmt.Switch sw && sw.init() == s
                || p instanceof Stmt.Loop lp && lp.init() == s;
    }

    private void planSite(FunctionDef f, Stmt.ExprStmt es, Expr.Launch l, Convergence conv) {
        FunctionDef child = ctx.kernel(l.kernelName());
        unaggregated.add(l);
        if (l.inMacro()) {
            warnInMacro(l);
            return;
        }
        int line = ctx.src.line(l.range().offset());
        if (ctx.opt.leaveLines().contains(line)) {
            leftOnRequest.add(line);
            ctx.note(l.range().offset(), "launch of '" + l.kernelName() + "' is left as written, as --leave-launch="
                    + line + " asks", "leave-launch");
            return;
        }
        Refusal refusal = children.refusal(l, child);
        if (refusal != null) {
            ctx.warn(l.range().offset(), refusal.message(), refusal.id());
            return;
        }
        String intoParent = parentMemoryArgument(f, es, l);
        if (intoParent != null) {
            // undefined under CDP too; as written, nvcc still sees the pointer go into the launch's
            // parameter buffer and warns about local memory, which it cannot once klap stores it in a record
            ctx.warn(l.range().offset(), "argument " + intoParent + ", which a child grid must not "
                    + "access (CUDA C++ Programming Guide, dynamic parallelism: shared and local memory); the "
                    + "launch is left as written, not aggregated; pass a pointer to global memory", "child-arg-parent-memory");
            return;
        }
        String mine = klap.transform.Lexical.blankCommentsAndLiterals(ctx.src.slice(f.range())) + "\n"
                + (child == null ? "" : klap.transform.Lexical.blankCommentsAndLiterals(ctx.src.slice(child.range())));
        if (macros == null) {
            macros = new klap.transform.MacroTexts(ctx.src.text());
        }
        java.util.regex.Matcher reserved = KLAP_NAME.matcher(mine + "\n" + macros.used(mine) + "\n" // also through a macro
                + ctx.unit.headerMacroTextIn(f.range()) + (child == null ? "" : "\n" + ctx.unit.headerMacroTextIn(child.range())));
        if (reserved.find()) {
            // klap's own locals (klap_x0, klap_g0, ...) would capture or clash with it (review 2026-12-01: a
            // parameter klap_x0 read klap's local of that name, 0 instead of 42)
            ctx.warn(l.range().offset(), "the kernel or its child names '" + reserved.group() + "'; names starting with "
                    + "klap_ are klap's own, so this launch is left as written, not aggregated", "reserved-name");
            return;
        }
        String exit = asmExits.computeIfAbsent(f, k -> java.util.Optional.ofNullable(asmExit(k))).orElse(null);
        if (exit != null) {
            // a thread that ends with PTX exit never reaches klap's group collectives (agg_begin, the flush's
            // scans and barriers) nor, at kernel granularity, the grid's end (review 2026-12-01: garbage slots
            // at warp and block granularity, no child at all at kernel granularity)
            ctx.warn(l.range().offset(), "the kernel may end threads with an asm exit (" + exit + "); threads that "
                    + "exit never reach the group operations of an aggregated launch, so this launch is left as written, "
                    + "not aggregated", "asm-exit");
            return;
        }
        String recovery = pendingFullRecovery(f, l);
        if (recovery != null) {
            ctx.warn(l.range().offset(), "the kernel reads this launch's error and handles " + recovery + ": it recovers "
                    + "when the device refuses the launch for a full pending-launch buffer, which klap cannot hand to it "
                    + "(the aggregated launch is made elsewhere, and a refused one stops the program with klap's message); "
                    + "the launch is left as written, not aggregated", "launch-error-recovery");
            return;
        }
        boolean gridWide = ctx.opt.granularity() == Granularity.KERNEL && f.kind() == FunctionDef.Kind.KERNEL;
        String inPlace = null;
        String early = gridWide ? returnBeforeBarrier(f) : null;
        String noTwin = gridWide ? twinUnsafe(f) : null;
        String localArg = gridWide ? localInTemplateArgs(f, l) : null;
        if (early != null) {
            // kfinish ends with a block barrier: threads that returned would meet it while the others wait
            // at the kernel's own barrier, pairing the two
            gridWide = false;
            inPlace = early;
        } else if (gridWide && streamOperationInKernel(f)) {
            // the grid's last block would launch it after the event: launch it in place instead
            gridWide = false;
            inPlace = "the kernel makes a stream or event operation, which the grid's last block would not keep in "
                    + "order with it";
        } else if (noTwin != null) {
            gridWide = false;
            inPlace = noTwin;
        } else if (localArg != null) {
            // klap::kfinish, after the body, names the child's variant and record type with the
            // launch's template arguments: a local of the kernel is out of scope there
            gridWide = false;
            inPlace = "its template arguments name '" + localArg + "', declared in the kernel's body, "
                    + "which the grid's end (klap::kfinish, after the body) cannot name";
        } else if (gridWide && rounds.computeIfAbsent(f, k -> java.util.Optional.ofNullable(roundsAcrossBarrier(k))).isPresent()) {
            // per-round numbering keeps each thread's order, not the order a barrier gives the launches of
            // different threads in the block's NULL stream (review 2026-12-01: thread 0's rounds, a
            // __syncthreads(), then thread 1's consumer ran after round 0 only)
            gridWide = false;
            inPlace = rounds.get(f).get();
        } else if (gridWide && constexprBranch(f, es) != null) {
            // klap::kfinish, after the body, would name the child's variant for the template arguments
            // the branch discards (review 2026-11-27: a zero-sized array, endless recursion)
            gridWide = false;
            inPlace = inConstexprBranch(f, es) + ", and the grid's end (klap::kfinish) would instantiate it also for "
                    + "the template arguments that the branch discards";
        }
        if (streamMayVaryIntoTail(f, es, l, gridWide, inPlace != null)) {
            // the aggregated launch would go into one stream for all: the NULL stream, or the first
            // record's; a child that some thread sent to cudaStreamTailLaunch would then start before its
            // parent grid ended
            ctx.warn(l.range().offset(), "the stream of this launch may be cudaStreamTailLaunch for some threads "
                    + "or rounds and another stream for others; one aggregated launch cannot keep both, so it is not "
                    + "aggregated", "stream-may-be-tail");
            return;
        }
        List<Expr.Launch> sameStream = new ArrayList<>();
        String ordered = orderedStreamUse(f, l, sameStream);
        if (ordered != null && mayGoToNullStream(f, es, l, gridWide)) {
            // the aggregated launch would go into the block's NULL stream: what the program orders with
            // this launch through its stream (an event recorded into it, a copy into it, a launch left as
            // written into it) would no longer be ordered with it (review 2026-11-27)
            warnOrderedStreamUse(l, ordered);
            return;
        }
        SitePlan plan = gridWide ? gridPlan(f, es, l, child) : groupPlan(f, es, l, child, conv, inPlace);
        if (plan == null) {
            return;  // left as written (groupPlan said why)
        }
        sameStreamLaunches.put(l, sameStream);
        if (ordered != null) {
            orderedUses.put(l, ordered);
        }
        unaggregated.remove(l);
        sites.add(plan);
    }

    /**
     * @return why kernel {@code f} cannot get a kernel-granularity twin (a copy of its body with a
     *         trailing {@code klap::kstate*} parameter), or null: a parameter pack (a host launch that
     *         deduces it would not compile with the state after it), a {@code static} local (the
     *         copy would have a variable of its own: the original and the twin would no longer share
     *         it; review 2026-11-27), or a signature whose text is not valid where the twin's prototype
     *         goes ({@link AggregationContext#lateSignature}, 2026-11-30; a prototype needs no class complete)
     */
    private String twinUnsafe(FunctionDef f) {
        if (ctx.signatureInMacro(f)) {
            return "a macro writes the kernel's name or parameters, which klap copies to declare its kernel-granularity form";
        }
        FunctionDef.Need late = ctx.lateSignature(f, false);
        if (late != null) {
            return "the kernel's own " + ctx.lateSignatureWhy(f, late) + ", where klap must declare "
                    + "its kernel-granularity form";
        }
        for (Param q : f.params()) {
            if (ctx.slice(q.range()).contains("...")) {
                return "the kernel has a parameter pack, after which its kernel-granularity form cannot take its state";
            }
        }
        return ChildRefusals.staticLocal(f) == null ? null : "the kernel has a static local ('"
                + ChildRefusals.staticLocal(f) + "'), which a copy "
                + "of its body (its kernel-granularity form) would not share with the kernel as written";
    }

    /**
     * Names a kernel body may declare besides its variables: a type alias ({@code using NAME =},
     * {@code typedef ... NAME;}), a class type ({@code struct NAME {}, class NAME :}), an
     * enumeration and its enumerators ({@code enum [class] [NAME] [: type] { A, B = 2 }}).
     */
    private static final Pattern LOCAL_TYPE = Pattern.compile(
            "\\busing\\s+([A-Za-z_]\\w*)\\s*=|\\btypedef\\b[^;{}]*?\\b([A-Za-z_]\\w*)\\s*;"
                    + "|\\b(?:struct|class|union)\\s+([A-Za-z_]\\w*)\\s*[{:]"
                    + "|\\benum\\b(?:\\s+(?:class|struct))?\\s*([A-Za-z_]\\w*)?\\s*(?::[^{;]*)?\\{([^}]*)\\}");
    /** A name in template arguments: not a literal's suffix ({@code 32u}, {@code 0x10}), not after {@code ::} or {@code .}. */
    private static final Pattern ARGUMENT_NAME = Pattern.compile("(?<![\\w.])(?<!::)[A-Za-z_]\\w*");

    /**
     * @return the first name in launch {@code l}'s explicit template arguments ({@code
     *         child<W><<<...>>>}) that {@code f}'s body declares (a local variable, or a local type,
     *         enumeration or enumerator: {@link #LOCAL_TYPE}), or null. Kernel granularity names the
     *         child's variant, its record type and the child as written with those arguments in
     *         {@code klap::kfinish}, after the body, where the local is out of scope (nvcc:
     *         "identifier is undefined"; found by hand, 2026-11-28). Names a macro in the arguments
     *         expands to are not seen (the text is the macro's name).
     */
    private String localInTemplateArgs(FunctionDef f, Expr.Launch l) {
        String targs = ctx.templateArgs(l);
        if (targs == null) {
            return null;
        }
        Set<String> locals = new HashSet<>();
        for (Stmt.Decl d : Trees.collect(f.body(), Stmt.Decl.class)) {
            for (VarDecl v : d.vars()) {
                locals.add(v.name());
            }
        }
        java.util.regex.Matcher a = LOCAL_TYPE.matcher(ctx.blankSlice(f.body().range()));
        while (a.find()) {
            for (int g = 1; g <= 4; g++) {
                if (a.group(g) != null) {
                    locals.add(a.group(g));
                }
            }
            if (a.group(5) != null) {
                for (String e : a.group(5).split(",")) {
                    java.util.regex.Matcher n = ChildRefusals.IDENTIFIER.matcher(e);
                    if (n.find()) {
                        locals.add(n.group());
                    }
                }
            }
        }
        java.util.regex.Matcher m = ARGUMENT_NAME.matcher(klap.transform.Lexical.blankCommentsAndLiterals(targs));
        while (m.find()) {
            if (locals.contains(m.group())) {
                return m.group();
            }
        }
        return null;
    }

    /**
     * @return {@code "'ARG' points into the parent block's shared memory"} (or {@code the parent
     *         thread's local memory}) for the first argument of {@code l} whose value is, as written,
     *         the address of a variable of the launching thread or block: {@code &x}, {@code &a[i]},
     *         {@code &s.m} of a local or parameter {@code x}, {@code s}, or a local or {@code __shared__}
     *         array {@code a} (which decays), also plus or minus an offset, cast or chosen by {@code ?:};
     *         or null. A pointer copied into another
     *         local first is not followed, nor are file-scope {@code __shared__} arrays (the model does
     *         not describe file-scope variables).
     */
    private String parentMemoryArgument(FunctionDef f, Stmt.ExprStmt es, Expr.Launch l) {
        Trees t = ctx.uni(f).trees();
        for (Expr a : l.args()) {
            String where = pointsInto(f, t, es, a);
            if (where != null) {
                return "'" + ctx.slice(a.range()).strip() + "' points into " + where;
            }
        }
        return null;
    }

    /**
     * @return {@code "the parent block's shared memory"} or {@code "the parent thread's local memory"}
     *         if pointer value {@code e} points there, else null
     */
    private String pointsInto(FunctionDef f, Trees t, Stmt at, Expr e) {
        if (e instanceof Expr.Cast c) {
            return pointsInto(f, t, at, c.operand());
        }
        if (e instanceof Expr.Conditional c) {
            String w = pointsInto(f, t, at, c.then());
            return w != null ? w : pointsInto(f, t, at, c.otherwise());
        }
        if (e instanceof Expr.Binary b && (b.op().equals("+") || b.op().equals("-"))) {
            String w = pointsInto(f, t, at, b.lhs());
            return w != null || b.op().equals("-") ? w : pointsInto(f, t, at, b.rhs());
        }
        if (e instanceof Expr.Unary u && u.op().equals("&")) {
            return storageOf(f, t, at, u.operand());
        }
        if (e instanceof Expr.Name n) {
            VarDecl v = visibleLocal(t, at, n);
            return v != null && v.array() ? storageOf(f, t, at, n) : null;
        }
        return null;
    }

    /** @return where lvalue {@code e} lives, if it is a variable of the thread or block or a part of one, else null */
    private String storageOf(FunctionDef f, Trees t, Stmt at, Expr e) {
        if (e instanceof Expr.Member m && !m.arrow()) {
            return storageOf(f, t, at, m.owner());
        }
        if (e instanceof Expr.Subscript s) {
            Expr arr = s.array();
            boolean isArray = arr instanceof Expr.Member m ? m.array() && !m.arrow()
                    : arr instanceof Expr.Name n && visibleLocal(t, at, n) != null && visibleLocal(t, at, n).array();
            return isArray ? storageOf(f, t, at, arr) : null;
        }
        if (e instanceof Expr.Name n) {
            if (n.kind() == Expr.NameKind.PARAM) {
                // a parameter lives in the thread's own memory, unless it is a reference
                return paramByValue(f, n.name()) ? "the parent thread's local memory" : null;
            }
            VarDecl v = visibleLocal(t, at, n);
            if (v == null || v.isStatic() || v.reference()) {
                return null;
            }
            return v.shared() ? "the parent block's shared memory" : "the parent thread's local memory";
        }
        return null;
    }

    /** @return true if {@code f} has a parameter {@code name} not declared as a reference */
    private boolean paramByValue(FunctionDef f, String name) {
        return f.params().stream().anyMatch(q -> q.name().equals(name)
                && !ctx.slice(q.range()).contains("&"));
    }

    /** @return the declaration of local {@code n} in scope at {@code at} (the innermost one before it), or null */
    private static VarDecl visibleLocal(Trees t, Stmt at, Expr.Name n) {
        if (n.kind() != Expr.NameKind.LOCAL) {
            return null;
        }
        VarDecl found = null;
        for (Stmt.Decl d : Trees.collect(t.root(), Stmt.Decl.class)) {
            Stmt scope = t.parent(d);
            if (d.range().offset() < at.range().offset() && scope != null && t.isAncestorOrSelf(scope, at)) {
                for (VarDecl v : d.vars()) {
                    if (v.name().equals(n.name())) {
                        found = v;
                    }
                }
            }
        }
        return found;
    }

    /** The warning for a launch written in a macro, which klap leaves as written (it cannot edit the expansion). */
    private void warnInMacro(Expr.Launch l) {
        ctx.warn(l.range().offset(), "launch of '" + l.kernelName() + "' is written in a macro; klap cannot rewrite "
                + "a macro's expansion, so this launch is left as written (not aggregated); write it outside the macro "
                + "to aggregate it", "launch-in-macro");
    }

    /** Kernel granularity (II-B): recorded by every thread of the grid, launched by its last block. */
    private SitePlan gridPlan(FunctionDef f, Stmt.ExprStmt es, Expr.Launch l, FunctionDef child) {
        Uniformity u = ctx.gridUni(f);
        String mask = scalarMask(l, child, u);
        boolean fireAndForget = fireAndForget(l);
        Stmt loop = ctx.uni(f).trees().outermostLoopOrGotoLoop(es); // a loop written with goto too
        if (loop != null || launchedFromKernel(f)) {
            // records of different rounds are merged into one grid: a value uniform across the grid in
            // one round differs between rounds, so no argument may come from a single record. And in the
            // aggregated variant of a kernel that kernels launch (recursion), one hardware grid holds the
            // virtual grids of many parent records: its parameters and blockDim/gridDim differ between them
            mask = "v".repeat(child.params().size());
        }
        if (loop != null && !fireAndForget) {
            String where = loop == f.body() ? "in a loop written with goto" : "in a loop (line "
                    + ctx.src.line(loop.range().offset()) + ")";
            ctx.note(l.range().offset(), "launch of '" + l.kernelName() + "' " + where + " into an ordered stream: aggregated per "
                    + "round (one grid per round), which keeps each thread's launch order; launch into "
                    + "cudaStreamFireAndForget if the rounds' children are independent, to aggregate all rounds at once",
                    "kernel-per-round");
        }
        boolean streamToNull = streamToNull(l, u);
        if (!streamToNull && l.stream() != null && (loop != null || launchedFromKernel(f))
                && !NOT_TAIL.contains(streamText(l.stream())) && !tailLaunchStream(l.stream())) {
            // (cudaStreamTailLaunch is the same for every record: kept, so the aggregated launch still
            // waits for everything the parent grid launched, its fire-and-forget children included)
            // one grid merges the records of several rounds or virtual grids, whose streams may differ:
            // kfinish would launch it into the first record's stream
            streamToNull = true;
            ctx.note(l.stream().range().offset(), "the stream of this launch may differ between the rounds or "
                    + "parent grids that one aggregated launch merges; it goes into the launching block's NULL stream, "
                    + "which keeps each thread's launch order (and orders more)", "stream-serialized");
        }
        return new SitePlan(sites.size(), f, es, l, child, mask, null, streamToNull, true, !fireAndForget, loop != null);
    }

    /**
     * Warp/block granularity (II-A): deferred to the end of a convergent region, or in place.
     *
     * @return the plan, or null (with a warning) if the launch is left as written: in place in a loop
     *         that lanes may skip it in ({@link #laneSkippingLoop})
     */
    private SitePlan groupPlan(FunctionDef f, Stmt.ExprStmt es, Expr.Launch l, FunctionDef child, Convergence conv,
                               String inPlace) {
        Uniformity u = ctx.uni(f);
        Convergence.Placement p = conv.place(es);
        if (inPlace != null && warpSubsetRegion(p) == null) {
            // (a survivor region or a loop run by the lanes that arrive together stays: its collectives are
            // among lanes of a warp fixed before it, whatever kept the launch from the grid-wide path)
            p = new Convergence.Placement.Immediate(inPlace);
        }
        Stmt branch = constexprBranch(f, es);
        if (p instanceof Convergence.Placement.Deferred d && branch != null && !regionInside(f, d.region(), branch)) {
            // the collective around the region would name the child's variant outside the branch, also for
            // the template arguments that the branch discards
            p = new Convergence.Placement.Immediate(inConstexprBranch(f, es) + " and its region extends past the "
                    + "branch, whose end would instantiate it also for the template arguments that the branch discards");
        }
        if (p instanceof Convergence.Placement.Deferred d && eventCallAfter(f, es, d.region())) {
            p = new Convergence.Placement.Immediate("a stream or event operation follows it in the same region, "
                    + "so it cannot be launched later");
        }
        // (after the checks above, which may have put the launch in place after all)
        Convergence.Region subset = warpSubsetRegion(p);
        if (subset != null && ctx.opt.granularity() != Granularity.WARP) {
            String why;
            String among;
            if (subset.survivors()) {
                why = "it is in a loop after the thread-dependent return at line "
                        + ctx.src.line(subset.passed().get(0).range().offset());
                among = "the lanes of each warp that did not return there";
            } else {
                why = "the threads of a block may reach the loop at line " + ctx.src.line(subset.loop().range().offset())
                        + " apart";
                among = "the lanes of a warp that enter that loop together, until the last of them is done with it";
            }
            ctx.warn(l.range().offset(), "launch of '" + l.kernelName() + "' is aggregated per warp, not per "
                    + ctx.opt.granularity().cliName() + ": " + (inPlace != null ? inPlace + "; and " + why : why)
                    + ", so it is aggregated among " + among, "granularity-fallback");
        }
        if (p instanceof Convergence.Placement.Deferred && subset == null && ctx.opt.granularity() == Granularity.BLOCK) {
            String full = ctx.blockScratchDoesNotFit(f);
            if (full != null) {
                p = new Convergence.Placement.Immediate(full);
            }
        }
        boolean immediate = p instanceof Convergence.Placement.Immediate;
        String skipped = immediate ? laneSkippingLoop(f, es) : null;
        if (skipped != null) {
            // in place among the lanes that arrive together, in a loop whose lanes may skip the launch
            // in some iterations: hung on the GPU (2026-11-27, H200; benchmarks/results/2026-11-27-h200)
            warnLoopDivergentSite(l, null, skipped);
            return null;
        }
        // (the lanes that arrive at a loop together may be in different iterations of a loop around it)
        boolean apart = immediate || subset != null && subset.arrived();
        String mask = apart ? inPlaceMask(es, l, child, u) : scalarMask(l, child, u);
        boolean streamToNull = apart ? inPlaceStreamToNull(es, l, u) : streamToNull(l, u);
        if (p instanceof Convergence.Placement.Immediate im && ctx.opt.granularity() != Granularity.WARP) {
            ctx.warn(l.range().offset(), "launch of '" + l.kernelName() + "' is aggregated per warp, not per "
                    + ctx.opt.granularity().cliName() + ": " + im.reason(), "granularity-fallback");
        }
        return new SitePlan(sites.size(), f, es, l, child, mask, p, streamToNull, false, false, false);
    }

    /**
     * Warns that launch {@code l} is left as written by the loop-divergent-site rule: it would be
     * aggregated in place ({@code why}, or null: no region holds it) in a loop where {@code skipped}.
     */
    private void warnLoopDivergentSite(Expr.Launch l, String why, String skipped) {
        warnLoopDivergent(l, (why == null ? "" : " (" + why + ")") + ", in a loop where " + skipped);
    }

    /** The warning of the loop-divergent-site rule for launch {@code l}; {@code where} says where the lanes skip it. */
    private void warnLoopDivergent(Expr.Launch l, String where) {
        ctx.warn(l.range().offset(), "launch of '" + l.kernelName() + "' would be aggregated in place among the "
                + "lanes of a warp that arrive together" + where + ": lanes of one warp can then be in the groups of "
                + "different iterations at once, and such launches hung on the GPU (H200, CUDA 13.0); it is left as "
                + "written, not aggregated", "loop-divergent-site");
    }

    /**
     * Takes planned site {@code i} out of the plans: its launch is left as written after all, and the
     * notes and warnings that planning made for it are withdrawn (the caller says why).
     *
     * @return its launch
     */
    private Expr.Launch leaveAsWritten(int i) {
        Expr.Launch l = sites.remove(i).launch();
        unaggregated.add(l);
        ctx.withdraw(l.range(), Set.of("stream-serialized", "granularity-fallback", "kernel-per-round", "launch-order"));
        return l;
    }

    /**
     * @return the region {@code p} defers to if its group is lanes of one warp fixed before it (a
     *         survivor region, a loop run by the lanes that arrive together:
     *         {@link Convergence.Region#warpSubset}), or null
     */
    private static Convergence.Region warpSubsetRegion(Convergence.Placement p) {
        return p instanceof Convergence.Placement.Deferred d && d.region().warpSubset() ? d.region() : null;
    }

    /**
     * Why the lanes of one warp may reach launch {@code es} in different iterations of a loop around
     * it while an earlier iteration's group is still aggregating: the launch is under an {@code if}
     * or {@code switch} inside the loop, or a jump ({@code continue}, {@code break}, {@code return},
     * {@code goto}) in the loop's body comes before it. (Conservative: also the {@code break} of a
     * {@code case} or of an inner loop before the launch counts, although the lane comes back to the
     * loop's body; random seed 120 has such sites, and which site hung is not known: relax it once
     * a GPU has run {@code benchmarks/results/2026-11-27-h200/probes}.) A launch aggregated in place
     * ({@code klap::warp_group::active()}) in such a loop hung on the GPU (2026-11-27, NVIDIA H200,
     * CUDA 13.0: {@code testcases/src/loops}' {@code loopUniform} and nine random programs, all with
     * such a site; no program without one hung), and so did the same loop in the original program
     * with its launches sent to {@code cudaStreamTailLaunch}. Until the cause is known
     * ({@code benchmarks/results/2026-11-27-h200/probes}), such launches are left as written; so are
     * the launches of a {@code __device__} function called in such a loop
     * ({@link #withdrawHelperSitesInLaneSkippingLoops}).
     *
     * @return the reason (for the warning), or null if the launch is in no loop or no lane can skip it
     */
    private String laneSkippingLoop(FunctionDef f, Stmt es) {
        Trees trees = ctx.uni(f).trees();
        List<Stmt> path = trees.path(es);
        for (int i = 0; i < path.size(); i++) {
            if (!(path.get(i) instanceof Stmt.Loop loop)) {
                continue;
            }
            for (int j = i + 1; j < path.size() - 1; j++) {
                if (path.get(j) instanceof Stmt.If || path.get(j) instanceof Stmt.Switch) {
                    return "it is under the branch at line " + ctx.src.line(path.get(j).range().offset())
                            + " inside the loop at line " + ctx.src.line(loop.range().offset());
                }
            }
            for (Stmt.Jump jump : Trees.collect(loop.body(), Stmt.Jump.class)) {
                if (jump.range().offset() < es.range().offset()) {
                    return "the jump at line " + ctx.src.line(jump.range().offset()) + " inside the loop at line "
                            + ctx.src.line(loop.range().offset()) + " comes before it";
                }
            }
        }
        return null;
    }

    /**
     * The scalar mask of a launch aggregated in place among the lanes that arrive together
     * ({@code klap::warp_group::active()}). Those lanes need not be in the same iteration of a loop
     * around the launch (independent thread scheduling, sm_70+: lanes of one warp at the same
     * instruction may come from different iterations), so a value uniform in each iteration may
     * still differ between them: inside a loop, an argument is scalarized only if it is uniform and
     * reads no variable that the outermost loop around the launch defines.
     */
    private String inPlaceMask(Stmt site, Expr.Launch l, FunctionDef child, Uniformity u) {
        StringBuilder mask = new StringBuilder();
        for (Expr a : l.args()) {
            mask.append(ctx.opt.scalarize() && u.isUniformAcrossIterations(a, site) ? 'u' : 'v');
        }
        return withDefaults(mask, child);
    }

    /** {@link #streamToNull} for a launch aggregated in place: a stream that varies between iterations counts as thread-dependent */
    private boolean inPlaceStreamToNull(Stmt site, Expr.Launch l, Uniformity u) {
        return loopVariantStream(site, l, u) || streamToNull(l, u);
    }

    /** @return true (with a note) if the stream is uniform but may differ between iterations of a loop around the launch */
    private boolean loopVariantStream(Stmt site, Expr.Launch l, Uniformity u) {
        if (l.stream() != null && u.isUniform(l.stream()) && !u.isUniformAcrossIterations(l.stream(), site)) {
            ctx.note(l.stream().range().offset(), "the stream of this launch may differ between the loop's iterations, "
                    + "which the lanes aggregated together may be in; the aggregated launch goes into the launching block's "
                    + "NULL stream, which keeps each thread's launch order (and orders more)", "stream-serialized");
            return true;
        }
        return false;
    }

    /** @return the scalar mask of {@code l}: {@code u} for an argument uniform by {@code u} (when scalarizing), else {@code v} */
    private String scalarMask(Expr.Launch l, FunctionDef child, Uniformity u) {
        StringBuilder mask = new StringBuilder();
        for (Expr a : l.args()) {
            mask.append(ctx.opt.scalarize() && u.isUniform(a) ? 'u' : 'v');
        }
        return withDefaults(mask, child);
    }

    /**
     * @return {@code mask} with a {@code v} for each parameter the launch leaves to its default
     *         argument: the record's constructor evaluates the default in the parent thread, as the
     *         launch as written does, and the value travels in the record
     */
    private static String withDefaults(StringBuilder mask, FunctionDef child) {
        while (mask.length() < child.params().size()) {
            mask.append('v');
        }
        return mask.toString();
    }

    /** the file's macros (computed once) */
    private klap.transform.MacroTexts macros;
    /** per kernel: {@link #asmExit} and {@link #roundsAcrossBarrier}, computed once (not once per launch site) */
    private final Map<FunctionDef, java.util.Optional<String>> asmExits = new java.util.HashMap<>();
    private final Map<FunctionDef, java.util.Optional<String>> rounds = new java.util.HashMap<>();

    /** An identifier in klap's own name space. */
    private static final java.util.regex.Pattern KLAP_NAME = java.util.regex.Pattern.compile("\\bklap_\\w*");

    /** @return where {@code f} or a device function it calls has an {@code asm} exit ("'g', line N"), or null */
    private String asmExit(FunctionDef f) {
        String here = exitIn(f);
        if (here != null) {
            return here;
        }
        // a call through a pointer or a functor may reach any function of the file with one; a header's
        // function with one (HeaderFunctions: exiting)
        boolean[] through = {false};
        String[] header = {null};
        for (FunctionDef g : ctx.deviceClosure(f)) {
            Trees.walkExprsAndLambdas(g.body(), e -> {
                if (e instanceof Expr.Call c) {
                    through[0] |= c.calleeName() == null && !(c.callee() instanceof Expr.Lambda)
                            || c.callee() instanceof Expr.Name v && (v.kind() == Expr.NameKind.LOCAL || v.kind() == Expr.NameKind.PARAM
                                    || v.kind() == Expr.NameKind.GLOBAL || v.kind() == Expr.NameKind.UNKNOWN);
                    if (c.calleeName() != null && ctx.unit.headerExitFunctions().contains(AggregationContext.simpleName(c.calleeName()))) {
                        header[0] = c.calleeName();
                    }
                }
            });
        }
        if (header[0] != null) {
            return "it calls '" + header[0] + "', a header function with one";
        }
        if (through[0] || ctx.unit.functions().stream().anyMatch(g -> g.kind().onDevice() && g.memberOf() != null)) {
            for (FunctionDef g : ctx.unit.functions()) {
                String there = g.kind().onDevice() && g.body() != null ? exitIn(g) : null;
                if (there != null) {
                    return there + ", which a call through a pointer or a member function may reach";
                }
            }
        }
        return null;
    }

    /** @return where {@code f} or a function it calls has an {@code asm} exit, lambdas included ("'g', line N"), or null */
    private String exitIn(FunctionDef f) {
        java.util.regex.Pattern exit = java.util.regex.Pattern.compile("\\bexit\\b");
        for (FunctionDef g : ctx.deviceClosure(f)) {
            List<Stmt> roots = new ArrayList<>(List.of(g.body()));
            Trees.walkExprsAndLambdas(g.body(), e -> {
                if (e instanceof Expr.Lambda lam) {
                    roots.add(lam.body());
                }
            });
            for (Stmt root : roots) {
                for (Stmt.Other o : Trees.collect(root, Stmt.Other.class)) {
                    String asm = o.asmText(ctx.src.slice(o.range()));
                    if (asm != null && exit.matcher(asm).find()) {
                        return "'" + g.name() + "', line " + ctx.src.line(o.range().offset());
                    }
                }
            }
        }
        return null;
    }

    /**
     * @return why kernel {@code f}'s launches cannot be numbered per round at kernel granularity: it
     *         launches into an ordered stream in a loop (also one written with goto) and synchronizes
     *         its block, so launches of different threads are ordered by the barrier; or null
     */
    private String roundsAcrossBarrier(FunctionDef f) {
        Trees t = ctx.uni(f).trees();
        List<Expr.Launch> launches = new ArrayList<>();
        Trees.walkExprs(f.body(), e -> {
            if (e instanceof Expr.Launch x) {
                launches.add(x);
            }
        });
        // a barrier that no launch precedes (one that stages shared memory before the loop) orders nothing:
        // look from the first launch on, or from the outermost loop around it, whose barriers run again after it
        int from = f.body().range().end();
        for (Expr.Launch o : launches) {
            Stmt owner = t.owner(o);
            Stmt loop = owner == null ? null : t.outermostLoopOrGotoLoop(owner);
            from = Math.min(from, loop != null ? loop.range().offset() : o.range().offset());
        }
        Integer sync = ctx.syncs.firstSync(f.body(), from, f.body().range().end(), List.of());
        if (sync == null) {
            return null;
        }
        for (Expr.Launch o : launches) {
            Stmt owner = t.owner(o);
            if (owner != null && !fireAndForget(o) && t.outermostLoopOrGotoLoop(owner) != null) {
                return "the kernel launches in a loop (line " + ctx.src.line(o.range().offset()) + ") and synchronizes its "
                        + "block (line " + ctx.src.line(sync) + "): the grid's rounds would keep each thread's launch order "
                        + "but not the order the barrier gives launches of different threads";
            }
        }
        return null;
    }

    /**
     * @return why kernel {@code f} cannot end in klap::kfinish (a thread-dependent return before a
     *         barrier or warp collective of the kernel), or null
     */
    private String returnBeforeBarrier(FunctionDef f) {
        Uniformity u = ctx.uni(f);
        for (Stmt.Jump j : Trees.collect(f.body(), Stmt.Jump.class)) {
            if (j.kind() != Stmt.JumpKind.RETURN) {
                continue;
            }
            boolean divergent = false;
            Stmt outerLoop = null;
            for (Stmt x = u.trees().parent(j); x != null; x = u.trees().parent(x)) {
                divergent |= !u.controlIsUniform(x);
                if (x instanceof Stmt.Loop) {
                    outerLoop = x;
                }
            }
            if (!divergent) {
                continue;
            }
            // a loop written with goto too (review 2026-11-27): a barrier at its top runs again after the return
            Stmt gotoLoop = u.trees().outermostLoopOrGotoLoop(j);
            if (gotoLoop != null && (outerLoop == null || gotoLoop.range().offset() < outerLoop.range().offset())) {
                outerLoop = gotoLoop;
            }
            int from = outerLoop != null ? outerLoop.range().offset() : j.range().offset();
            Integer sync = ctx.syncs.firstSync(f.body(), from, f.body().range().end(), List.of());
            if (sync != null) {
                return "the kernel synchronizes (line " + ctx.src.line(sync) + ") after a thread-dependent return (line "
                        + ctx.src.line(j.range().offset()) + "); the returned threads cannot wait at the end of the grid";
            }
        }
        return null;
    }

    /** The errors a device launch gets when the device runtime's pending-launch buffer is full. */
    private static final Pattern PENDING_FULL = Pattern.compile("\\b(cudaErrorLaunchPendingCountExceeded|cudaErrorLaunchOutOfResources)\\b");
    /** A read of the calling thread's last CUDA error. */
    private static final Pattern ERROR_READ = Pattern.compile("\\b(cudaGetLastError|cudaPeekAtLastError)\\s*\\(");

    /**
     * Launch {@code l}'s error as a program's recovery path (a public row-reordering program,
     * bsa_clustering, 2026-11-29: {@code err = cudaGetLastError(); if (err ==
     * cudaErrorLaunchPendingCountExceeded) hand the work back to the host}). klap's record makes the
     * launch later and elsewhere, and a refused aggregated launch stops the program
     * ({@code klap::check_launch}), so that path could never run.
     *
     * @return {@code 'NAME' (line N)} if {@code f} names a full-buffer error anywhere and reads the last
     *         error after {@code l} (comments and literals skipped); null otherwise
     */
    private String pendingFullRecovery(FunctionDef f, Expr.Launch l) {
        String body = ctx.blankSlice(f.body().range());
        var full = PENDING_FULL.matcher(body);
        int after = l.range().end() - f.body().range().offset();
        if (!full.find() || after < 0 || after > body.length() || !ERROR_READ.matcher(body).region(after, body.length()).find()) {
            return null;
        }
        return "'" + full.group(1) + "' (line " + ctx.src.line(f.body().range().offset() + full.start()) + ")";
    }

    /** @return the stream expression {@code e} without spaces, as {@link #NOT_TAIL} lists them */
    private String streamText(Expr e) {
        return ctx.slice(e.range()).replaceAll("\\s+", "");
    }

    /**
     * @return true if {@code e} (a stream argument of {@code f}) is certainly not
     *         {@code cudaStreamTailLaunch}: one of {@link #NOT_TAIL}, a created local stream or an element
     *         of a local array of created streams ({@link #createdStreamOnly}), or a conditional of such
     */
    private boolean neverTail(FunctionDef f, Expr e) {
        if (e instanceof Expr.Conditional c) {
            return neverTail(f, c.then()) && neverTail(f, c.otherwise());
        }
        return NOT_TAIL.contains(streamText(e))
                || e instanceof Expr.Name n && n.kind() == Expr.NameKind.LOCAL && createdStreamOnly(f, n.name(), false)
                || e instanceof Expr.Subscript sub && sub.array() instanceof Expr.Name n && n.kind() == Expr.NameKind.LOCAL
                        && createdStreamOnly(f, n.name(), true);
    }

    /**
     * @return the variable a stream slot names: {@code s} itself for a plain stream ({@code array}
     *         false), the array of {@code s[i]} for an array of streams; null for anything else
     */
    private static Expr.Name streamSlot(Expr e, boolean array) {
        if (array) {
            return e instanceof Expr.Subscript sub && sub.array() instanceof Expr.Name n ? n : null;
        }
        return e instanceof Expr.Name n ? n : null;
    }

    /**
     * @return true if launch {@code l}'s stream may be {@code cudaStreamTailLaunch} and may differ
     *         between the launches one aggregated launch would merge: between threads (not uniform),
     *         between the iterations of a loop around an in-place launch, or, at kernel granularity,
     *         between rounds and between the virtual grids of a kernel that kernels launch. Such a
     *         launch is left as written (review 2026-11-25: {@code c ? cudaStreamTailLaunch :
     *         cudaStreamFireAndForget} became the NULL stream, and the tail child ran too early).
     */
    private boolean streamMayVaryIntoTail(FunctionDef f, Stmt.ExprStmt es, Expr.Launch l, boolean gridWide,
                                          boolean inPlace) {
        if (l.stream() == null || neverTail(f, l.stream())) {
            return false;
        }
        if (tailLaunchStream(l.stream())) {
            return false; // the same for every launch
        }
        Uniformity u = gridWide ? ctx.gridUni(f) : ctx.uni(f);
        if (!u.isUniform(l.stream())) {
            return true;
        }
        if (gridWide) {
            return ctx.uni(f).trees().outermostLoopOrGotoLoop(es) != null || launchedFromKernel(f);
        }
        return inPlace && !u.isUniformAcrossIterations(l.stream(), es);
    }

    private Set<FunctionDef> launchedFromKernels;

    /**
     * @return true if a kernel launches kernel {@code k} (so {@code k} may run as a kernel-granularity
     *         variant); the set of such kernels is found in one walk of the unit
     */
    private boolean launchedFromKernel(FunctionDef k) {
        if (launchedFromKernels == null) {
            launchedFromKernels = new HashSet<>();
            for (FunctionDef g : ctx.unit.functions()) {
                // also from a __device__ function a kernel calls (review 2026-11-27): its aggregated
                // variant then holds many parent grids in one hardware grid
                if (g.kind() != FunctionDef.Kind.HOST) {
                    Trees.walkExprsAndLambdas(g.body(), e -> {
                        if (e instanceof Expr.Launch l && ctx.kernel(l.kernelName()) != null) {
                            launchedFromKernels.add(ctx.kernel(l.kernelName()));
                        }
                    });
                }
            }
        }
        return launchedFromKernels.contains(k);
    }

    /** @return true if {@code stream} is written as {@code cudaStreamTailLaunch} (maybe cast to cudaStream_t) */
    private boolean tailLaunchStream(Expr stream) {
        String t = streamText(stream);
        return t.equals("cudaStreamTailLaunch") || t.equals("(cudaStream_t)cudaStreamTailLaunch")
                || t.equals("(cudaStream_t)(cudaStreamTailLaunch)");
    }

    private boolean fireAndForget(Expr.Launch l) {
        return l.stream() != null && ctx.slice(l.stream().range()).trim().equals("cudaStreamFireAndForget");
    }

    /** @return true if the launch's stream differs between threads (by {@code u}) */
    private static boolean threadDependentStream(Expr.Launch l, Uniformity u) {
        return l.stream() != null && !u.isUniform(l.stream());
    }

    /** @return true (with a note) if the launch's stream differs between threads and becomes the NULL stream */
    private boolean streamToNull(Expr.Launch l, Uniformity u) {
        boolean toNull = threadDependentStream(l, u);
        if (toNull) {
            ctx.note(l.stream().range().offset(), "the stream of this launch differs "
                    + "between threads; the aggregated launch goes into the launching block's NULL stream, which keeps each "
                    + "thread's launch order (and orders more)", "stream-serialized");
        }
        return toNull;
    }

    /** @return true if a stream/event operation is evaluated in {@code region} after {@code site} */
    private boolean eventCallAfter(FunctionDef f, Stmt site, Convergence.Region region) {
        Stmt scope = region.guardBlock() != null ? region.guardBlock() : region.anchor();
        return eventCallIn(f, scope, site.range().offset(), region.end());
    }

    /**
     * @return true if kernel {@code f}, or a {@code __device__} function it calls, makes a
     *         stream/event operation anywhere (kernel granularity defers launches to the end of the
     *         whole grid, into the last block's stream: past every later operation, and out of the
     *         order of every earlier one of the launching block's stream)
     */
    private boolean streamOperationInKernel(FunctionDef f) {
        return ctx.deviceClosure(f).stream()
                .anyMatch(g -> eventCallIn(g, g.body(), g.body().range().offset() - 1, g.body().range().end()));
    }

    /**
     * @return true if {@code scope} (of function {@code f}) makes a stream or event operation
     *         ({@link #EVENT_CALLS}) in ({@code after}, {@code before}): directly, in a lambda, or
     *         through a call of a function of the unit (also a member function, by name) or of a
     *         lambda-valued local of {@code f} that makes one (review 2026-11-27: a
     *         {@code cudaMemcpyAsync} in a {@code __device__} helper called after the launch)
     */
    private boolean eventCallIn(FunctionDef f, Stmt scope, int after, int before) {
        Set<String> ops = streamOpFunctions();
        Set<String> lambdas = new HashSet<>();
        Trees.lambdaLocals(f.body()).forEach((name, ls) -> {
            if (ls.stream().anyMatch(lam -> makesEventCall(lam.body(), ops))) {
                lambdas.add(name);
            }
        });
        boolean[] found = {false};
        Trees.walkExprsAndLambdas(scope, e -> {
            if (e instanceof Expr.Call c && c.range().offset() > after && c.range().offset() < before
                    && (eventCall(c, ops) || c.callee() instanceof Expr.Name n && n.kind() == Expr.NameKind.LOCAL
                            && lambdas.contains(n.name()))) {
                found[0] = true;
            }
        });
        return found[0];
    }

    /** @return true if {@code c} is a stream or event operation or calls a function of {@code ops} */
    private static boolean eventCall(Expr.Call c, Set<String> ops) {
        String callee = AggregationContext.calleeSimpleName(c);
        return c.calleeName() != null && EVENT_CALLS.contains(c.calleeName()) || callee != null && ops.contains(callee);
    }

    private static boolean makesEventCall(Stmt body, Set<String> ops) {
        boolean[] found = {false};
        Trees.walkExprsAndLambdas(body, e -> found[0] |= e instanceof Expr.Call c && eventCall(c, ops));
        return found[0];
    }

    private Set<String> streamOpFunctions;

    /** @return the simple names of the unit's device functions that make a stream or event operation, transitively */
    private Set<String> streamOpFunctions() {
        if (streamOpFunctions == null) {
            streamOpFunctions = new HashSet<>();
            boolean changed = true;
            while (changed) {
                changed = false;
                for (FunctionDef g : ctx.unit.functions()) {
                    if (g.kind() != FunctionDef.Kind.HOST && !streamOpFunctions.contains(g.name())
                            && makesEventCall(g.body(), streamOpFunctions)) {
                        streamOpFunctions.add(g.name());
                        changed = true;
                    }
                }
            }
        }
        return streamOpFunctions;
    }

    /**
     * Launch order per thread (issue 10, "dependent launches of one thread"): a launch that klap
     * defers (to the end of its region, or to the end of the grid at kernel granularity) must not
     * be overtaken by a later launch of the same thread that goes out earlier: a launch made in
     * place, a launch left as written, a launch in a {@code __device__} function called later, or a
     * deferred launch of a region that ends first. A site of the guard region of its kernel's body
     * ({@code if (i >= n) return; produce<<<...>>>(...); for (...) consume<<<...>>>(...);}) is
     * deferred instead only to the end of its own statement, among the lanes of its warp that passed
     * the guards ({@link Convergence#survivorsOnly}), when that statement does not hold the later
     * launch (a note; a warning at block granularity, where it is then aggregated per warp). Any other
     * such site is launched in place instead (aggregated among the threads that arrive together),
     * with a warning. Launches into {@code cudaStreamFireAndForget} are ordered with nothing and are
     * exempt. Repeated until no site changes, since a site made in place or given a narrower region
     * can in turn overtake an earlier deferred one.
     *
     * @return the final plans
     */
    /** @return the child checks the planner used, with what they computed (for {@link ChunkTwins}) */
    ChildRefusals childRefusals() {
        return children;
    }

    SitePlans keepLaunchOrder() {
        withdrawHelperSitesInLaneSkippingLoops();
        revertMixedStreams();
        oneRegionPerAnchor();
        do {
            keepLaunchOrderOnce();
        } while (revertMixedStreams()); // a launch made in place may change its stream; one reverted goes out at once
        Set<FunctionDef> tailFallback = tailFallbackKernels();
        Set<FunctionDef> noted = new HashSet<>();
        for (SitePlan s : sites) {
            if (s.gridWide() && !tailFallback.contains(s.fn()) && noted.add(s.fn())) {
                ctx.note(s.launch().range().offset(), "if klap's pool has no room for the records of kernel '"
                        + s.fn().name() + "', klap reports it and stops the program, also with "
                        + "-DKLAP_KERNEL_TAIL_FALLBACK=1: its launches cannot go out as written instead, because it "
                        + "may make tail launches (a stream argument other than 0 or cudaStreamFireAndForget); raise "
                        + "--pool-size if that happens", "kernel-no-fallback");
            }
        }
        return new SitePlans(sites, unaggregated.size(), tailFallback);
    }

    /**
     * The loop-divergent-site rule ({@link #laneSkippingLoop}) for launches in {@code __device__}
     * functions: such a launch is aggregated in place among the lanes that arrive together, and
     * where the function is called (directly or through other functions of the unit) in a loop whose
     * lanes may skip that call in some iterations, it runs in the shape that hung on the GPU
     * (2026-11-27, H200) as surely as a launch written in that loop. Those launches are left as
     * written too, with the warning {@code [klap-loop-divergent-site]} naming the call. (The
     * function's launches are left as written for all its callers: it is compiled once.)
     */
    private void withdrawHelperSitesInLaneSkippingLoops() {
        Map<FunctionDef, String> reached = new java.util.LinkedHashMap<>();
        for (FunctionDef g : ctx.unit.functions()) {
            if (g.kind() != FunctionDef.Kind.KERNEL && g.kind() != FunctionDef.Kind.DEVICE) {
                continue;
            }
            Trees trees = ctx.uni(g).trees();
            for (Expr op : ctx.syncs.launchingOperations(g.body())) {
                if (!(op instanceof Expr.Call c) || c.calleeName() == null || trees.owner(c) == null) {
                    continue;
                }
                String skipped = laneSkippingLoop(g, trees.owner(c));
                if (skipped == null) {
                    continue;
                }
                String where = "it is in a __device__ function that '" + g.name() + "' calls at line "
                        + ctx.src.line(c.range().offset()) + " (through '" + c.calleeName() + "'), and there " + skipped;
                for (FunctionDef h : ctx.deviceFunctionsNamed(Set.of(AggregationContext.simpleName(c.calleeName())))) {
                    for (FunctionDef x : ctx.deviceClosure(h)) {
                        reached.putIfAbsent(x, where);
                    }
                }
            }
        }
        for (int i = sites.size() - 1; i >= 0; i--) {
            SitePlan s = sites.get(i);
            String where = reached.get(s.fn());
            if (where == null || s.deferred()) {
                continue;
            }
            warnLoopDivergent(leaveAsWritten(i), ", but " + where);
        }
    }

    /** One pass of {@link #keepLaunchOrder}: repeated until no site changes. */
    private void keepLaunchOrderOnce() {
        Map<Integer, SitePlan> byOffset = new HashMap<>();
        for (SitePlan s : sites) {
            byOffset.put(s.launch().range().offset(), s);
        }
        boolean changed = true;
        while (changed) {
            changed = false;
            for (int i = 0; i < sites.size(); i++) {
                SitePlan s = sites.get(i);
                if (fireAndForget(s.launch()) || !s.deferred()) {
                    continue;
                }
                Integer later = overtakingLaunch(s, byOffset);
                if (later == null) {
                    continue;
                }
                String overtaken = later > s.launch().range().offset()
                        ? "a later launch of the same thread (line " + ctx.src.line(later) + ") would go out before it"
                        : "an earlier launch of the same thread (line " + ctx.src.line(later) + ") goes out at once "
                        + "into its block's stream, which the grid's last block would not be ordered after";
                SitePlan narrowed = survivorsOnly(s, later);
                if (narrowed != null) {
                    sites.set(i, narrowed);
                    byOffset.put(s.launch().range().offset(), narrowed);
                    noteSurvivorsOnly(narrowed, overtaken);
                    changed = true;
                    continue;
                }
                String reason = overtaken + "; launching it in place keeps their order";
                String skipped = laneSkippingLoop(s.fn(), s.stmt());
                if (skipped != null) {
                    // in place it would be the shape that hung on the H200 (groupPlan): left as written
                    // instead, which goes out at once too and so keeps the order
                    Expr.Launch l = leaveAsWritten(i);
                    byOffset.remove(l.range().offset());
                    warnLoopDivergentSite(l, overtaken, skipped);
                    changed = true;
                    break;
                }
                // aggregated in place among the lanes that arrive together: recompute the mask for them
                Uniformity u = ctx.uni(s.fn());
                boolean toNull = s.gridWide() ? threadDependentStream(s.launch(), u) : s.streamToNull();
                SitePlan inPlace = s.inPlace(reason, inPlaceMask(s.stmt(), s.launch(), s.child(), u),
                        toNull || loopVariantStream(s.stmt(), s.launch(), u));
                sites.set(i, inPlace);
                byOffset.put(s.launch().range().offset(), inPlace);
                ctx.withdraw(s.launch().range(), Set.of("launch-order")); // a survivor region it had been given first
                String how = ctx.opt.granularity() == Granularity.WARP
                        ? "is aggregated in place among the threads of its warp that arrive together, not at the end of its "
                        + "region"
                        : "is aggregated per warp, not per " + ctx.opt.granularity().cliName();
                ctx.warn(s.launch().range().offset(), "launch of '" + s.launch().kernelName() + "' " + how + ": " + reason,
                        "launch-order");
                changed = true;
            }
        }
    }

    /**
     * A deferred site {@code s} of the guard region of its kernel's body (the guards are
     * {@code if (c) return;}) that the launch at offset {@code later} would overtake, deferred instead
     * to the survivor region that ends with its own statement
     * ({@link Convergence#survivorsOnly}): among the lanes of its warp that passed the guards, so that
     * it goes out before that launch. Null if there is none or {@code later} lies inside it too.
     */
    private SitePlan survivorsOnly(SitePlan s, int later) {
        if (s.gridWide() || s.region() == null || later < s.launch().range().offset()) {
            return null;
        }
        Convergence.Placement.Deferred d = convergence(s.fn()).survivorsOnly(s.stmt(), s.region());
        return d == null || later < d.region().end() ? null : s.withPlacement(d);
    }

    /** Says where {@link #survivorsOnly} put {@code s} and why ({@code overtaken}): a warning where it is no longer block-wide. */
    private void noteSurvivorsOnly(SitePlan s, String overtaken) {
        String what = "launch of '" + s.launch().kernelName() + "' is aggregated among the lanes of its warp that passed "
                + "the kernel's thread-dependent return at line " + ctx.src.line(s.region().passed().get(0).range().offset())
                + ", in a region that ends with " + (s.region().anchor() == s.stmt() ? "the launch" : "the statement at line "
                + ctx.src.line(s.region().start())) + ", not at the end of the kernel: " + overtaken
                + "; launching it first keeps their order";
        if (ctx.opt.granularity() == Granularity.WARP) {
            ctx.note(s.launch().range().offset(), what, "launch-order");
        } else {
            ctx.warn(s.launch().range().offset(), what + " (aggregated per warp, not per " + ctx.opt.granularity().cliName()
                    + ")", "launch-order");
        }
    }

    private final Map<FunctionDef, Convergence> convergences = new java.util.IdentityHashMap<>();

    /** @return the convergence facts of {@code f}, computed once */
    private Convergence convergence(FunctionDef f) {
        return convergences.computeIfAbsent(f, x -> new Convergence(ctx.src, x, ctx.uni(x), ctx.syncs));
    }

    /**
     * The kernels whose launches at kernel granularity may go out as written, into
     * {@code cudaStreamTailLaunch}, when klap's pool has no room for their records (issue 11,
     * "falls back to a correct path where one exists"; kernel.cuh {@code krecord}): those that make
     * no launch that may itself be a tail launch, directly or through the {@code __device__}
     * functions of the unit they call. A tail launch of the program runs after every child of its
     * grid, also children launched after it; a fallback tail launch made after it would run after
     * it instead. A launch whose stream is not one of {@link #NOT_TAIL} (a variable, a macro)
     * counts as a possible tail launch, so those kernels trap on exhaustion, as before.
     */
    private Set<FunctionDef> tailFallbackKernels() {
        Set<FunctionDef> out = new HashSet<>();
        for (FunctionDef f : ctx.unit.functions()) {
            if (f.kind() == FunctionDef.Kind.KERNEL && !mayTailLaunch(f)) {
                out.add(f);
            }
        }
        return out;
    }

    /**
     * @return true if {@code k} or a device function of the unit it calls has a launch that may be a
     *         tail launch, or calls a {@code __device__} function of another file (which may make one)
     */
    private boolean mayTailLaunch(FunctionDef k) {
        for (FunctionDef f : ctx.deviceClosure(k)) {
            boolean[] found = {false};
            Trees.walkExprsAndLambdas(f.body(), e -> found[0] |= e instanceof Expr.Call c && c.calleeName() != null
                    && ctx.unit.deviceFunctionsWithoutBody().contains(AggregationContext.simpleName(c.calleeName()))
                    || e instanceof Expr.Launch l && l.stream() != null
                    && !neverTail(f, l.stream()));
            if (found[0]) {
                return true;
            }
        }
        return false;
    }

    /** Device runtime calls that create a stream into their first argument, {@code &s}. */
    private static final Set<String> STREAM_CREATE = Set.of("cudaStreamCreate", "cudaStreamCreateWithFlags",
            "cudaStreamCreateWithPriority");

    /** Device runtime calls that take a stream by value, so cannot change the variable. */
    private static final Set<String> STREAM_BY_VALUE = Set.of("cudaStreamDestroy", "cudaStreamWaitEvent",
            "cudaEventRecord", "cudaEventRecordWithFlags", "cudaStreamQuery", "cudaStreamGetPriority",
            "cudaStreamGetFlags", "cudaMemcpyAsync", "cudaMemsetAsync", "cudaMemset2DAsync", "cudaMemset3DAsync",
            "cudaMemcpy2DAsync", "cudaMemcpy3DAsync");

    /**
     * @return true if every variable named {@code name} in {@code f} (lambdas included) is a plain
     *         local {@code cudaStream_t} (no reference, array, {@code static} or {@code __shared__};
     *         initialized, if at all, by one of {@link #NOT_TAIL}) that is only ever created by
     *         {@code cudaStreamCreate*(&s, ...)}, assigned one of {@link #NOT_TAIL}, used as a launch's
     *         stream or passed by value to a stream call of {@link #STREAM_BY_VALUE}. Such a stream is
     *         never {@code cudaStreamTailLaunch} (CUDA programming guide, "Streams and Events" of
     *         the device runtime: a created stream is a new stream of the grid). A parameter, a global,
     *         any other use ({@code &s} passed elsewhere, {@code s = t}) counts as a possible tail
     *         launch. With {@code array}, the same of a local array {@code cudaStream_t s[N]} (without an
     *         initializer) whose elements are used only so: {@code cudaStreamCreate*(&s[i], ...)},
     *         {@code s[i]} as a launch's stream or a stream call's argument, {@code s[i] = } one of
     *         {@link #NOT_TAIL} (NPSLab's BFS with {@code s[threadIdx.x % 4]}, 2026-11-29).
     */
    private boolean createdStreamOnly(FunctionDef f, String name, boolean array) {
        if (f.params().stream().anyMatch(p -> name.equals(p.name()))) {
            return false;
        }
        List<Stmt> bodies = new ArrayList<>();
        bodies.add(f.body());
        boolean[] lambdaParam = {false};
        Pattern word = Pattern.compile("\\b" + Pattern.quote(name) + "\\b");
        Trees.walkExprsAndLambdas(f.body(), e -> {
            if (e instanceof Expr.Lambda lam) {
                bodies.add(lam.body());
                lambdaParam[0] |= word.matcher(ctx.slice(new SourceRange(lam.range().offset(),
                        lam.body().range().offset() - lam.range().offset()))).find();
            }
        });
        if (lambdaParam[0]) {
            return false; // a lambda's parameter or capture of that name: its value comes from elsewhere
        }
        boolean[] ok = {true};
        int[] decls = {0};
        for (Stmt b : bodies) {
            Trees.walkStmts(b, st -> {
                if (st instanceof Stmt.Decl d) {
                    for (VarDecl v : d.vars()) {
                        if (!v.name().equals(name)) {
                            continue;
                        }
                        decls[0]++;
                        // cudaStream_t s1, s2;: the type is written before the first declarator, and each later
                        // one follows a comma with nothing of its own before its name (no *, &, ( )
                        VarDecl first = d.vars().get(0);
                        String type = ctx.slice(new SourceRange(d.range().offset(),
                                first.nameRange().offset() - d.range().offset())).replaceAll("\\s+", "");
                        int at = d.vars().indexOf(v);
                        if (at > 0) {
                            VarDecl prev = d.vars().get(at - 1);
                            String between = ctx.slice(new SourceRange(prev.nameRange().end(),
                                    v.nameRange().offset() - prev.nameRange().end()));
                            ok[0] &= between.contains(",") && between.substring(between.lastIndexOf(',') + 1).isBlank();
                        }
                        ok[0] &= type.equals("cudaStream_t") && !v.reference() && v.array() == array
                                && !v.isStatic() && !v.shared() && (v.init() == null
                                        || !array && NOT_TAIL.contains(streamText(v.init())));
                    }
                }
            });
        }
        if (decls[0] == 0 || !ok[0]) {
            return false;
        }
        Set<Expr> allowed = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        List<Expr.Name> uses = new ArrayList<>();
        Trees.walkExprsAndLambdas(f.body(), e -> {
            if (e instanceof Expr.Name n && n.name().equals(name) && n.kind() != Expr.NameKind.FUNCTION) {
                uses.add(n);
            } else if (e instanceof Expr.Launch l && l.stream() != null && streamSlot(l.stream(), array) != null) {
                allowed.add(streamSlot(l.stream(), array));
            } else if (e instanceof Expr.Call c && c.calleeName() != null) {
                String callee = AggregationContext.simpleName(c.calleeName());
                if (STREAM_CREATE.contains(callee) && !c.args().isEmpty()
                        && c.args().get(0) instanceof Expr.Unary u && u.op().equals("&")
                        && streamSlot(u.operand(), array) != null) {
                    allowed.add(streamSlot(u.operand(), array));
                } else if (STREAM_BY_VALUE.contains(callee)) {
                    for (Expr a : c.args()) {
                        if (streamSlot(a, array) != null) {
                            allowed.add(streamSlot(a, array));
                        }
                    }
                }
            } else if (e instanceof Expr.Binary b && b.op().equals("=") && streamSlot(b.lhs(), array) != null
                    && NOT_TAIL.contains(streamText(b.rhs()))) {
                allowed.add(streamSlot(b.lhs(), array));
            }
        });
        return uses.stream().allMatch(allowed::contains);
    }

    /**
     * The emitter wraps each region's anchor once. Two deferred sites whose regions start at the same
     * statement but end differently (review 2026-11-27: {@code if (c) { leaf<<<...>>>(...); return; }
     * split<<<...>>>(...);}, the first launch in the if alone, the second in the guard's region to the
     * end of the block) would be emitted into one region that does not hold the second: its record
     * named a variable out of scope (nvcc error). The sites of a narrower region go in place instead
     * (aggregated among the threads that arrive together), with a warning.
     */
    private void oneRegionPerAnchor() {
        Map<Stmt, Convergence.Region> widest = new java.util.IdentityHashMap<>();
        for (SitePlan s : sites) {
            if (s.region() != null) {
                widest.merge(s.region().anchor(), s.region(), (a, b) -> b.end() > a.end() ? b : a);
            }
        }
        for (int i = 0; i < sites.size(); i++) {
            SitePlan s = sites.get(i);
            Convergence.Region w = s.region() == null ? null : widest.get(s.region().anchor());
            if (w == null || w.end() == s.region().end() && w.guardBlock() == s.region().guardBlock()) {
                continue;
            }
            Uniformity u = ctx.uni(s.fn());
            String reason = "another launch (line " + ctx.src.line(w.end()) + ") is deferred to a longer region that "
                    + "starts at the same statement";
            sites.set(i, s.inPlace(reason, inPlaceMask(s.stmt(), s.launch(), s.child(), u),
                    s.streamToNull() || loopVariantStream(s.stmt(), s.launch(), u)));
            if (ctx.opt.granularity() != Granularity.WARP) { // at warp granularity both are per warp
                ctx.warn(s.launch().range().offset(), "launch of '" + s.launch().kernelName() + "' is aggregated per "
                        + "warp, not per " + ctx.opt.granularity().cliName() + ": " + reason, "granularity-fallback");
            }
        }
    }

    /**
     * @return the offset of a launching operation of {@code s}'s thread that would go out before
     *         {@code s} although it runs after it, or null if none
     */
    private Integer overtakingLaunch(SitePlan s, Map<Integer, SitePlan> byOffset) {
        FunctionDef f = s.fn();
        // kernel granularity: also an EARLIER launch that goes out at once, from the launching block
        // into its stream, while s goes out from the grid's last block into another block's stream
        int after = s.gridWide() ? f.body().range().offset() : s.stmt().range().end();
        int before = s.gridWide() ? f.body().range().end() : s.region().end();
        Stmt outerLoop = s.gridWide() ? ctx.uni(f).trees().outermostLoopOrGotoLoop(s.stmt()) : null;
        for (Expr op : ctx.syncs.launchingOperations(f.body())) {
            int off = op.range().offset();
            boolean inRange = off >= after && off < before
                    || outerLoop != null && outerLoop.range().contains(off);
            if (!inRange || off == s.launch().range().offset()) {
                continue;
            }
            if (op instanceof Expr.Launch l) {
                if (fireAndForget(l)) {
                    continue;
                }
                SitePlan o = byOffset.get(off);
                if (o != null && s.gridWide() && o.gridWide()) {
                    continue; // both launched by the last block, in an order that keeps each thread's (kfinish)
                }
                if (o != null && !s.gridWide() && o.region() != null && o.region().anchor() == s.region().anchor()) {
                    continue; // flushed at the same region end, after s (source order)
                }
            }
            if (s.gridWide() ? exclusiveBranches(f, s.stmt(), op, f.body().range().offset(), f.body().range().end())
                    : exclusiveBranches(f, s.stmt(), op, s.region().start(), s.region().end())) {
                continue;
            }
            return off;
        }
        return null;
    }

    /**
     * @return true if no thread runs both statement {@code a} and launching operation {@code op}
     *         between entering the region {@code [from, to)} and its end, where klap launches what
     *         {@code a} recorded. With {@code p} the innermost statement that holds both:
     *         <ul>
     *         <li>they are in the two branches of {@code p}, an {@code if}/{@code else};</li>
     *         <li>or in two statements of {@code p}, a block (the cases of a {@code switch}), with a
     *         statement from the first of the two up to the second that always ends in a
     *         {@code break}, {@code continue} or {@code return}: no fall-through from one to the
     *         other (a label is reached only by a {@code goto} or the {@code switch});</li>
     *         <li>or the thread of the earlier one returns before it leaves its statement of
     *         {@code p} ({@code if (c) { a<<<...>>>(); return; } b<<<...>>>();}, {@link #returnsWithin});</li>
     *         </ul>
     *         and every loop around {@code p} holds the whole region (each pass through the region
     *         goes through its end before the loop comes back). Without a loop, a thread reaches a
     *         statement earlier in the text only by a {@code goto}: a {@code goto} in the function,
     *         an operation in a lambda (which may be called elsewhere) or in a declaration's
     *         constructor never counts as exclusive. Public CDP code (review 2026-11-29): a launch in
     *         the {@code if} branch was made in place because of launches left as written in the
     *         {@code else} branch.
     */
    private boolean exclusiveBranches(FunctionDef f, Stmt a, Expr op, int from, int to) {
        Trees t = ctx.uni(f).trees();
        Stmt b = op instanceof Expr.Lambda ? null : t.owner(op);
        if (b == null || convergence(f).usesGoto()) {
            return false;
        }
        Stmt p = t.parent(a);
        while (p != null && !t.isAncestorOrSelf(p, b)) {
            p = t.parent(p);
        }
        if (p == null || p == b) {
            return false;
        }
        Stmt belowA = childOnPath(t, p, a);
        Stmt belowB = childOnPath(t, p, b);
        boolean apart = false;
        if (p instanceof Stmt.If i) {
            apart = i.then() != null && i.otherwise() != null && (belowA == i.then() && belowB == i.otherwise()
                    || belowA == i.otherwise() && belowB == i.then());
        } else if (p instanceof Stmt.Block blk) {
            int x = blk.stmts().indexOf(belowA);
            int y = blk.stmts().indexOf(belowB);
            for (int k = Math.min(x, y); k >= 0 && k < Math.max(x, y); k++) {
                apart |= endsIn(blk.stmts().get(k), LEAVING);
            }
        }
        boolean aFirst = a.range().offset() < op.range().offset();
        apart |= returnsWithin(t, aFirst ? a : b, aFirst ? belowA : belowB);
        if (!apart) {
            return false;
        }
        for (Stmt.Loop l = t.enclosingLoop(p); l != null; l = t.enclosingLoop(l)) {
            if (l.range().offset() > from || l.range().end() < to) {
                return false;  // the loop lies inside the region: a later pass takes the other branch before the end
            }
        }
        return true;
    }

    /** @return the child of {@code p} that holds {@code s} (an ancestor of {@code s} or {@code s} itself) */
    private static Stmt childOnPath(Trees t, Stmt p, Stmt s) {
        Stmt x = s;
        while (t.parent(x) != p) {
            x = t.parent(x);
        }
        return x;
    }

    /**
     * @return true if a thread that runs statement {@code s} returns before it leaves {@code top} (an
     *         ancestor of {@code s} or {@code s} itself): in a block between them, a statement after the
     *         one that holds {@code s} ends in a {@code return}, and no {@code break} or
     *         {@code continue} (which could leave for a statement outside that block) comes before it
     */
    private static boolean returnsWithin(Trees t, Stmt s, Stmt top) {
        if (breaksOrContinues(s)) {
            return false;  // the rest of s may leave it for a statement the scan below does not see
        }
        for (Stmt x = s; x != top; x = t.parent(x)) {
            if (t.parent(x) instanceof Stmt.Block blk) {
                for (Stmt next : blk.stmts().subList(blk.stmts().indexOf(x) + 1, blk.stmts().size())) {
                    if (breaksOrContinues(next)) {
                        return false;
                    }
                    if (endsIn(next, Set.of(Stmt.JumpKind.RETURN))) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    /** @return true if {@code s} holds a {@code break} or {@code continue} */
    private static boolean breaksOrContinues(Stmt s) {
        return Trees.collect(s, Stmt.Jump.class).stream().anyMatch(j -> j.kind() == Stmt.JumpKind.BREAK
                || j.kind() == Stmt.JumpKind.CONTINUE);
    }

    /** The jumps after which a thread does not fall through to the next statement of its block. */
    private static final Set<Stmt.JumpKind> LEAVING = Set.of(Stmt.JumpKind.BREAK, Stmt.JumpKind.CONTINUE,
            Stmt.JumpKind.RETURN);

    /** @return true if every pass through {@code s} that reaches its end takes a jump of {@code kinds}: one, or a block that ends in one */
    private static boolean endsIn(Stmt s, Set<Stmt.JumpKind> kinds) {
        if (s instanceof Stmt.Jump j) {
            return kinds.contains(j.kind());
        }
        return s instanceof Stmt.Block b && !b.stmts().isEmpty() && endsIn(b.stmts().get(b.stmts().size() - 1), kinds);
    }

    // ---- if constexpr (review 2026-11-27) ----

    private static final Pattern CONSTEXPR_IF = Pattern.compile("if\\s*constexpr\\b");

    /** @return true if {@code i} is written {@code if constexpr} (the model does not record it: read from the text) */
    private boolean isConstexpr(Stmt.If i) {
        return CONSTEXPR_IF.matcher(klap.transform.Lexical.blankCommentsAndLiterals(ctx.slice(i.range()))).lookingAt();
    }

    /**
     * @return the innermost branch (the then or else statement) of an {@code if constexpr} of {@code f}
     *         that holds {@code s}, or null. A template instantiation that discards the branch does not
     *         instantiate what is in it; klap's code for the site must then stay in the branch too.
     */
    private Stmt constexprBranch(FunctionDef f, Stmt s) {
        Trees t = ctx.uni(f).trees();
        Stmt below = s;
        for (Stmt p = t.parent(s); p != null; below = p, p = t.parent(p)) {
            if (p instanceof Stmt.If i && (i.then() == below || i.otherwise() == below) && isConstexpr(i)) {
                return below;
            }
        }
        return null;
    }

    /** @return "it is in an 'if constexpr' branch (line N)" for {@code s}, which {@link #constexprBranch} holds */
    private String inConstexprBranch(FunctionDef f, Stmt s) {
        Stmt.If i = (Stmt.If) ctx.uni(f).trees().parent(constexprBranch(f, s));
        return "it is in an 'if constexpr' branch (line " + ctx.src.line(i.range().offset()) + ")";
    }

    /** @return true if region {@code r} (its collective included) lies inside statement {@code branch} */
    private boolean regionInside(FunctionDef f, Convergence.Region r, Stmt branch) {
        Trees t = ctx.uni(f).trees();
        return t.isAncestorOrSelf(branch, r.anchor()) && (r.guardBlock() == null || t.isAncestorOrSelf(branch, r.guardBlock()));
    }

    // ---- streams whose order the program relies on (review 2026-11-27) ----

    /**
     * @return true if the aggregated form of launch {@code l} may go into the block's NULL stream
     *         instead of its own (an over-approximation of what {@link #groupPlan}, {@link #gridPlan}
     *         and the later in-place fallbacks decide): its stream is not a constant and differs
     *         between threads, between iterations of a loop around it, or, grid-wide, between the
     *         blocks, rounds or parent grids that one aggregated launch merges
     */
    private boolean mayGoToNullStream(FunctionDef f, Stmt.ExprStmt es, Expr.Launch l, boolean gridWide) {
        Expr st = l.stream();
        if (st == null || NOT_TAIL.contains(streamText(st)) || tailLaunchStream(st)) {
            return false;
        }
        Uniformity u = ctx.uni(f);
        if (!u.isUniform(st) || !u.isUniformAcrossIterations(st, es)) {
            return true;
        }
        return gridWide && (!ctx.gridUni(f).isUniform(st) || u.trees().outermostLoopOrGotoLoop(es) != null
                || launchedFromKernel(f));
    }

    /** Where a variable that holds a launch's stream is read, found by {@link #orderedStreamUse}. */
    private final class StreamUses {
        /** the variables followed, per function (a parameter of a __device__ function leads to its callers) */
        final Map<FunctionDef, Set<String>> names = new java.util.LinkedHashMap<>();
        /** the global variables followed (in every function of the unit) */
        final Set<String> globals = new HashSet<>();
        /** the call arguments that pass a followed variable to the parameter followed in the callee */
        final Set<Expr> passed = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        final Set<Expr.Launch> launches = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        /** the first use whose order with the launch depends on its stream, as a phrase, or null */
        String found;
        FunctionDef fn;

        boolean ours(Expr.Name n) {
            return n.kind() == Expr.NameKind.GLOBAL ? globals.contains(n.name())
                    : (n.kind() == Expr.NameKind.LOCAL || n.kind() == Expr.NameKind.PARAM)
                    && names.getOrDefault(fn, Set.of()).contains(n.name());
        }

        void report(Expr at, String what) {
            if (found == null) {
                found = what + " (line " + ctx.src.line(at.range().offset()) + ")";
            }
        }

        /** @return true if {@code e} reads a followed variable */
        boolean mentions(Expr e) {
            boolean[] r = {false};
            Trees.walk(e, x -> r[0] |= x instanceof Expr.Name n && ours(n));
            return r[0];
        }

        /** an expression evaluated for its value: a followed variable read here is a use that may depend on the order */
        void value(Expr e, String call) {
            if (e == null || passed.contains(e)) {
                return;
            }
            if (e instanceof Expr.Name n) {
                if (ours(n)) {
                    report(n, call != null ? "it is passed to '" + call + "'" : "it is read as '" + n.name() + "'");
                }
                return;
            }
            if (e instanceof Expr.Lambda lam) {
                body(lam.body());
                return;
            }
            if (e instanceof Expr.Launch l) {
                for (Expr c : l.children()) {
                    if (c == l.stream()) {
                        if (mentions(c)) {
                            launches.add(l);
                        }
                        stream(c);
                    } else {
                        value(c, null);
                    }
                }
                return;
            }
            if (e instanceof Expr.Call c && c.calleeName() != null) {
                String callee = AggregationContext.simpleName(c.calleeName());
                if (STREAM_CREATE.contains(callee) && !c.args().isEmpty() && c.args().get(0) instanceof Expr.Unary a
                        && a.op().equals("&")) {
                    target(a.operand());
                    c.args().stream().skip(1).forEach(x -> value(x, callee));
                    return;
                }
                if (callee.equals("cudaStreamDestroy") && c.args().size() == 1) {
                    target(c.args().get(0));
                    return;
                }
                value(c.callee(), null);
                c.args().forEach(x -> value(x, callee));
                return;
            }
            if (e instanceof Expr.Binary b && b.op().equals("=") && mentions(b.lhs())) {
                target(b.lhs());
                alias(b.rhs());
                return;
            }
            for (Expr c : e.children()) {
                value(c, e instanceof Expr.Call cc ? AggregationContext.calleeSimpleName(cc) : call);
            }
        }

        /** a launch's stream: the variable it names is the launch's own use */
        void stream(Expr e) {
            if (e instanceof Expr.Conditional c) {
                value(c.cond(), null);
                stream(c.then());
                stream(c.otherwise());
            } else {
                target(e);
            }
        }

        /** an lvalue named as a whole (created, destroyed, assigned, launched into): only its subscripts are read */
        void target(Expr e) {
            if (e instanceof Expr.Name) {
                return;
            }
            if (e instanceof Expr.Subscript sub) {
                target(sub.array());
                value(sub.index(), null);
            } else if (e instanceof Expr.Member m && !m.arrow()) {
                target(m.owner());
            } else if (e instanceof Expr.Cast c) {
                target(c.operand());
            } else if (e instanceof Expr.Unary u && (u.op().equals("()") || u.op().equals("*"))) {
                target(u.operand());
            } else {
                value(e, null);
            }
        }

        /**
         * The value a followed variable is assigned or initialized with, or a launch's stream: the
         * variables it is read from ({@code s}, {@code a} of {@code a[i]}, both of {@code c ? s : t},
         * not {@code i} or {@code c}) are followed too.
         */
        void alias(Expr e) {
            Expr x = e;
            while (true) {
                if (x instanceof Expr.Subscript sub) {
                    x = sub.array();
                } else if (x instanceof Expr.Member m && !m.arrow()) {
                    x = m.owner();
                } else if (x instanceof Expr.Cast c) {
                    x = c.operand();
                } else if (x instanceof Expr.Unary u && (u.op().equals("()") || u.op().equals("*"))) {
                    x = u.operand();
                } else {
                    break;
                }
            }
            if (x instanceof Expr.Conditional c) {
                value(c.cond(), null);
                alias(c.then());
                alias(c.otherwise());
                return;
            }
            if (x instanceof Expr.Name n && !ours(n)) {
                if (n.kind() == Expr.NameKind.GLOBAL) {
                    globals.add(n.name());
                } else if (n.kind() == Expr.NameKind.LOCAL || n.kind() == Expr.NameKind.PARAM) {
                    names.computeIfAbsent(fn, k -> new HashSet<>()).add(n.name());
                }
            }
            stream(e);
        }

        void body(Stmt b) {
            Trees.walkStmts(b, st -> {
                if (st instanceof Stmt.Decl d) {
                    for (VarDecl v : d.vars()) {
                        if (v.init() != null && names.getOrDefault(fn, Set.of()).contains(v.name())) {
                            alias(v.init());
                        } else {
                            value(v.init(), null);
                        }
                    }
                } else {
                    for (Expr e : Trees.ownExprs(st)) {
                        value(e, null);
                    }
                }
            });
        }
    }

    /**
     * @return a phrase saying how the program relies on launch {@code l} being in its stream, or null:
     *         a variable the stream is read from (a local, a parameter, a global, an element of one) is
     *         used otherwise than created ({@code cudaStreamCreate*(&s, ...)}), destroyed
     *         ({@code cudaStreamDestroy(s)}), assigned, or launched into: passed to
     *         {@code cudaEventRecord}, {@code cudaStreamWaitEvent}, {@code cudaMemcpyAsync},
     *         {@code cudaStreamQuery}, a function, copied. A parameter of a {@code __device__} function is
     *         followed into its callers (the argument passed to it). A stream klap cannot follow (read from
     *         a call) counts as used. Fills {@code sameStream} with the launches into the same stream,
     *         {@code l} included, whose plans {@link #revertMixedStreams} compares.
     */
    private String orderedStreamUse(FunctionDef f, Expr.Launch l, List<Expr.Launch> sameStream) {
        if (l.stream() == null || NOT_TAIL.contains(streamText(l.stream())) || tailLaunchStream(l.stream())) {
            return null;
        }
        boolean[] call = {false};
        Trees.walk(l.stream(), e -> call[0] |= e instanceof Expr.Call || e instanceof Expr.Other
                || e instanceof Expr.Member m && m.arrow());
        if (call[0]) {
            return "its stream is read through a call or a pointer, whose other uses klap cannot follow";
        }
        StreamUses u = new StreamUses();
        u.fn = f;
        u.alias(l.stream());
        u.names.computeIfAbsent(f, k -> new HashSet<>());
        Map<FunctionDef, Integer> seen = new HashMap<>();
        int globalsSeen = -1;
        boolean again = true;
        while (again && u.found == null) {
            again = false;
            for (FunctionDef g : List.copyOf(u.names.keySet())) {
                int size = u.names.get(g).size();
                if (seen.getOrDefault(g, -1) == size) {
                    continue;
                }
                seen.put(g, size);
                again = true;
                u.fn = g;
                u.body(g.body());
                // a parameter of a __device__ function: the callers' arguments are followed in the callers
                for (int k = 0; k < g.params().size(); k++) {
                    if (g.kind() == FunctionDef.Kind.KERNEL || !u.names.get(g).contains(g.params().get(k).name())) {
                        continue;
                    }
                    for (FunctionDef h : ctx.unit.functions()) {
                        if (h.kind() == FunctionDef.Kind.HOST) {
                            continue;
                        }
                        int index = k;
                        FunctionDef callee = g;
                        Trees.walkExprsAndLambdas(h.body(), e -> {
                            if (e instanceof Expr.Call c && g.name().equals(AggregationContext.calleeSimpleName(c))
                                    && c.args().size() > index) {
                                Expr a = c.args().get(index);
                                u.passed.add(a);
                                u.fn = h;
                                u.alias(a);
                                u.fn = callee;
                            }
                        });
                    }
                }
            }
            if (!u.globals.isEmpty() && u.globals.size() != globalsSeen) {
                globalsSeen = u.globals.size();
                again = true;
                for (FunctionDef g : ctx.unit.functions()) {
                    if (g.kind() != FunctionDef.Kind.HOST) {
                        u.names.computeIfAbsent(g, k -> new HashSet<>());
                        seen.remove(g);
                    }
                }
            }
        }
        sameStream.addAll(u.launches);
        if (u.found == null) {
            for (Expr.Launch o : u.launches) {
                if (o != l && (o.inMacro() || !hasLaunchSite(o) || children.refusal(o, ctx.kernel(o.kernelName())) != null)) {
                    // no site can be planned for it: it goes out as written, into the stream
                    u.found = "the launch of '" + o.kernelName() + "' (line " + ctx.src.line(o.range().offset())
                            + ") into the same stream is left as written";
                    break;
                }
            }
        }
        return u.found;
    }

    /** the launch statements of the unit's kernels and {@code __device__} functions (collected once) */
    private Set<Expr> launchStatements;

    /** @return true if {@code l} is a launch statement of a kernel or {@code __device__} function (a launch site) */
    private boolean hasLaunchSite(Expr.Launch l) {
        if (launchStatements == null) {
            launchStatements = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
            for (FunctionDef g : ctx.unit.functions()) {
                if (g.kind() == FunctionDef.Kind.KERNEL || g.kind() == FunctionDef.Kind.DEVICE) {
                    for (Stmt.ExprStmt es : Trees.collect(g.body(), Stmt.ExprStmt.class)) {
                        launchStatements.add(es.expr());
                    }
                }
            }
        }
        return launchStatements.contains(l);
    }

    /**
     * A site whose aggregated launch goes into the block's NULL stream is left as written after all
     * when another launch into the same stream keeps that stream: left as written, or aggregated
     * with its own stream (review 2026-11-27: their order would be lost). Its notes and warnings
     * from planning are withdrawn, and a warning says why.
     *
     * @return true if a site was left as written
     */
    private boolean revertMixedStreams() {
        boolean any = false;
        boolean changed = true;
        while (changed) {
            changed = false;
            for (int i = 0; i < sites.size(); i++) {
                SitePlan s = sites.get(i);
                if (!s.streamToNull()) {
                    continue;
                }
                Expr.Launch other = null;
                for (Expr.Launch o : sameStreamLaunches.getOrDefault(s.launch(), List.of())) {
                    SitePlan op = o == s.launch() ? s : siteOf(o);
                    if (op == null || !op.streamToNull()) {
                        other = o;
                        break;
                    }
                }
                String why = orderedUses.get(s.launch());
                if (other == null && why == null) {
                    continue;
                }
                if (why == null) {
                    why = "the launch of '" + other.kernelName() + "' (line " + ctx.src.line(other.range().offset())
                            + ") into the same stream " + (unaggregated.contains(other) ? "is left as written"
                            : "keeps that stream");
                }
                warnOrderedStreamUse(leaveAsWritten(i), why);
                changed = any = true;
                break;
            }
        }
        return any;
    }

    /** Warns that launch {@code l} is left as written: {@code why} says how the program relies on its stream. */
    private void warnOrderedStreamUse(Expr.Launch l, String why) {
        ctx.warn(l.range().offset(), "the stream of this launch differs between threads (or rounds), so its "
                + "aggregated launch would go into the launching block's NULL stream; but " + why
                + ", which would then no longer be ordered with this launch; the launch is left as written, "
                + "not aggregated", "stream-ordered-use");
    }

    private SitePlan siteOf(Expr.Launch l) {
        for (SitePlan s : sites) {
            if (s.launch() == l) {
                return s;
            }
        }
        return null;
    }
}
