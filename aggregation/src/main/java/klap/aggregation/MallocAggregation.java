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
 * together, with a warning at block and kernel granularity.
 */
final class MallocAggregation {

    /**
     * One device cudaMalloc call, the statement that evaluates it, and the group that allocates
     * together ({@code together}: the threads of the kernel reach it together, so the group is a
     * whole warp or block).
     */
    private record MallocSite(FunctionDef fn, Stmt owner, Expr.Call call, String group, boolean together) {
    }

    private final AggregationContext ctx;
    private final List<MallocSite> mallocs = new ArrayList<>();
    private final List<Expr.Call> frees = new ArrayList<>();
    /**
     * a device cudaMalloc or cudaFree of the file is written by a macro, or a cudaFree is in a
     * {@code __host__ __device__} function: none is aggregated
     */
    private boolean inMacro;

    /** Starts with no call planned; the planner reports each call it finds. */
    MallocAggregation(AggregationContext ctx) {
        this.ctx = ctx;
    }

    /** Plans the device {@code cudaMalloc} call {@code c} of statement {@code owner} in {@code f}. */
    void planMalloc(FunctionDef f, Stmt owner, Expr.Call c, Convergence conv) {
        if (writtenByMacro(c, "cudaMalloc")) {
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
                && !conditionallyEvaluated(owner, c);
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
        mallocs.add(new MallocSite(f, owner, c, group, together));
    }

    /** Records a device {@code cudaFree} call: it becomes {@code klap::group_free} if any cudaMalloc is aggregated. */
    void planFree(Expr.Call c) {
        if (!writtenByMacro(c, "cudaFree")) {
            frees.add(c);
        }
    }

    /**
     * @return true (with a warning, once per file) if the call {@code c} of {@code name} is written by
     *         a macro: its nodes carry the range of the macro's use, so klap cannot rewrite it. Then no
     *         device cudaMalloc of the file is aggregated: a cudaFree left as written must never free
     *         a share of an aggregated allocation, and a cudaMalloc left as written is a plain one.
     */
    private boolean writtenByMacro(Expr.Call c, String name) {
        if (ctx.src.startsWithWord(c.callee().range(), name)) {
            return false;
        }
        aggregateNone(c, "device " + name + " written by a macro: klap cannot rewrite it", "malloc-in-macro");
        return true;
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
     * Leaves as written each aggregated device {@code cudaMalloc} of {@code f} whose shares the
     * threads of its group may free at different times (the GPU review reproducer
     * {@code C_malloc_pin}, H200 2026-11-28: thread 0 of each block kept its 8 KiB of every round
     * and the others freed theirs at once, so each round's 2 MiB block-wide allocation stayed in the
     * device heap, and 11 to 286 later {@code cudaMalloc} calls failed where the program as written
     * had no failure). An aggregated allocation goes back to the heap only when the last share of it
     * is freed ({@code klap::group_free}, KLAP II-C), so a share kept longer than its siblings keeps
     * the memory of the whole group. A site stays aggregated when one of these holds:
     * <ul>
     * <li>its pointer lives in one local variable {@code v} ({@code cudaMalloc(&v, n)}, casts
     * allowed) that nothing else writes and whose value is never copied (it is only dereferenced,
     * indexed, compared, offset for such uses, handed to a kernel launch, or freed), and every
     * {@code cudaFree(v)} of the function either follows the cudaMalloc's statement in the same
     * block with no {@code return}, {@code goto}, {@code break} or {@code continue} that leaves in
     * between (one in the then-branch of {@code if (cudaMalloc(&v, n) != cudaSuccess)} is allowed:
     * a thread whose request failed holds no share), or, for a site the kernel's threads reach
     * together, is itself reached together ({@link Convergence#reachedTogether}); a free inside a
     * lambda, or under {@code &&}, {@code ||} or {@code ?:}, never counts as freed together;</li>
     * <li>or nothing that may free its pointer runs in this code: neither {@code f}, nor a function
     * {@code f} calls, nor (for a {@code __device__} function) a caller of {@code f} that may see the
     * pointer calls {@code cudaFree} (the pointer is freed by another kernel, or never: KLAP II-C's
     * assumption that the threads of a group free together is then kept, as in bt).</li>
     * </ul>
     * Input: {@code f} after its cudaMalloc and cudaFree calls were planned. Output: the sites that
     * fail both are dropped from the plan (the call stays {@code cudaMalloc}, a plain allocation that
     * {@code klap::group_free} frees as such) with warning {@code malloc-lifetime}.
     */
    void checkLifetimes(FunctionDef f, Trees trees, Convergence conv) {
        List<MallocSite> mine = mallocs.stream().filter(m -> m.fn == f).toList();
        if (inMacro || mine.isEmpty()) {
            return;
        }
        List<Expr.Call> ownFrees = freesIn(f.body());
        for (MallocSite m : mine) {
            String v = targetVariable(m.call);
            List<FreePoint> points = v == null ? List.of() : freePoints(f, v, ownFrees, trees);
            if (points.stream().anyMatch(pt -> pt.stmt != null && followsInTheSameBlock(m, v, pt, trees))) {
                // every thread that got a share frees it there (any other free of it would be a double free)
                continue;
            }
            String untracked = v == null ? "its pointer is written to memory" : untracked(f, v);
            String why;
            if (untracked == null) {
                why = freedApart(f, m, v, points, trees, conv);
            } else {
                why = freeWhereThePointerMayGo(f, ownFrees);
                if (why != null) {
                    why = untracked + ", and " + why;
                }
            }
            if (why != null) {
                mallocs.remove(m);
                ctx.withdraw(m.call.range(), java.util.Set.of("granularity-fallback"));
                ctx.warn(m.call.range().offset(), "device cudaMalloc is not aggregated: " + why + "; an aggregated "
                        + "allocation goes back to the heap only when every thread of its group has freed its share, so "
                        + "a share kept longer would keep the memory of the whole group (cudaMalloc could then fail "
                        + "where the program as written succeeds)", "malloc-lifetime");
            }
        }
    }

    /**
     * Where a {@code cudaFree(v)} runs: the call and the statement that evaluates it, or, for one in
     * the body of a lambda local, each call of that local ({@code done();}); {@code stmt} is null
     * where klap cannot tell (a lambda that is not only called, a call inside another lambda).
     */
    private record FreePoint(Stmt stmt, Expr call, int offset) {
    }

    /** @return where the {@code cudaFree(v)} calls of {@code f} run */
    private List<FreePoint> freePoints(FunctionDef f, String v, List<Expr.Call> ownFrees, Trees trees) {
        List<FreePoint> out = new ArrayList<>();
        java.util.Map<String, List<Expr.Lambda>> locals = Trees.lambdaLocals(f.body());
        for (Expr.Call c : ownFrees) {
            if (c.args().isEmpty() || !(uncast(c.args().get(0)) instanceof Expr.Name n && n.name().equals(v))) {
                continue;
            }
            Stmt owner = trees.owner(c);
            if (owner != null) {
                out.add(new FreePoint(owner, c, c.range().offset()));
                continue;
            }
            // in a lambda: the calls of the local it initializes, if that local is only called
            String local = null;
            for (var e : locals.entrySet()) {
                for (Expr.Lambda lam : e.getValue()) {
                    if (lam.range().contains(c.range()) && (local == null || local.equals(e.getKey()))) {
                        local = e.getKey();
                    }
                }
            }
            List<FreePoint> calls = local == null || locals.get(local).size() != 1 ? null : callsOf(f, local, trees);
            if (calls == null || calls.isEmpty()) {
                out.add(new FreePoint(null, c, c.range().offset()));
            } else {
                calls.forEach(pt -> out.add(new FreePoint(pt.stmt, pt.call, c.range().offset())));
            }
        }
        return out;
    }

    /**
     * @return the calls {@code local(...)} of {@code f} with their statements, or null if
     *         {@code local} is also used otherwise (copied, passed, called inside a lambda)
     */
    private static List<FreePoint> callsOf(FunctionDef f, String local, Trees trees) {
        List<FreePoint> out = new ArrayList<>();
        java.util.Set<Expr> callees = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        boolean[] other = {false};
        Trees.walkExprsAndLambdas(f.body(), e -> {
            if (e instanceof Expr.Call c && c.callee() instanceof Expr.Name n && n.name().equals(local)) {
                callees.add(n);
                Stmt owner = trees.owner(c);
                if (owner == null) {
                    other[0] = true;
                } else {
                    out.add(new FreePoint(owner, c, c.range().offset()));
                }
            }
        });
        Trees.walkExprsAndLambdas(f.body(), e -> {
            if (e instanceof Expr.Name n && n.name().equals(local) && !callees.contains(n)) {
                other[0] = true;
            }
        });
        return other[0] ? null : out;
    }

    /** @return the device cudaFree calls in {@code s}, lambda bodies included */
    private static List<Expr.Call> freesIn(Stmt s) {
        List<Expr.Call> l = new ArrayList<>();
        Trees.walkExprsAndLambdas(s, e -> {
            if (e instanceof Expr.Call c && "cudaFree".equals(c.calleeName())) {
                l.add(c);
            }
        });
        return l;
    }

    /**
     * @return why a {@code cudaFree} of {@code f}, of a function it calls or (for a {@code __device__}
     *         function) of a function that calls it may free the site's pointer, or null if none of
     *         them calls cudaFree
     */
    private String freeWhereThePointerMayGo(FunctionDef f, List<Expr.Call> ownFrees) {
        if (!ownFrees.isEmpty()) {
            return "'" + f.name() + "' calls cudaFree (line " + ctx.src.line(ownFrees.get(0).range().offset()) + ")";
        }
        for (FunctionDef g : ctx.deviceClosure(f)) {
            if (g != f && !freesIn(g.body()).isEmpty()) {
                return "'" + g.name() + "', which '" + f.name() + "' calls, calls cudaFree";
            }
        }
        if (f.kind() == FunctionDef.Kind.DEVICE) {
            for (FunctionDef caller : ctx.unit.functions()) {
                if (caller != f && (caller.kind() == FunctionDef.Kind.KERNEL || caller.kind() == FunctionDef.Kind.DEVICE)
                        && ctx.deviceClosure(caller).contains(f)) {
                    for (FunctionDef g : ctx.deviceClosure(caller)) {
                        if (g != f && !freesIn(g.body()).isEmpty()) {
                            return "'" + g.name() + "', which may receive it from '" + f.name() + "', calls cudaFree";
                        }
                    }
                }
            }
        }
        return null;
    }

    /**
     * @return why a {@code cudaFree(v)} of {@code f} (at {@code points}) may free the shares of site
     *         {@code m} at different times in the threads of its group, or null if every one frees
     *         them together; {@code v} is never copied, so only these frees can free a share
     */
    private String freedApart(FunctionDef f, MallocSite m, String v, List<FreePoint> points, Trees trees,
                              Convergence conv) {
        for (FreePoint pt : points) {
            String where = "'cudaFree(" + v + ")' at line " + ctx.src.line(pt.offset);
            if (pt.stmt == null) {
                return where + " is in a lambda that klap cannot follow to its calls";
            }
            if (conditionallyEvaluated(pt.stmt, pt.call)) {
                return where + " is under &&, || or ?:";
            }
            if (m.together && f.kind() == FunctionDef.Kind.KERNEL && conv.reachedTogether(pt.stmt)) {
                continue;
            }
            if (!followsInTheSameBlock(m, v, pt, trees)) {
                return where + " is not reached by every thread that reaches the cudaMalloc, after it";
            }
        }
        return null;
    }

    /**
     * @return true if free point {@code pt} follows the site's statement in the same block, nothing
     *         between them writes {@code v} again ({@code cudaMalloc(&v, ...)}), and no jump between
     *         them (the site's statement included, except in the then-branch of a test of the call's
     *         failure) can take a thread past it; the free itself is not under {@code &&}, {@code ||}
     *         or {@code ?:}
     */
    private boolean followsInTheSameBlock(MallocSite m, String v, FreePoint pt, Trees trees) {
        Stmt mo = m.owner;
        Stmt fo = pt.stmt;
        if (mo instanceof Stmt.Loop || !(trees.parent(mo) instanceof Stmt.Block b) || trees.parent(fo) != b
                || conditionallyEvaluated(fo, pt.call)) {
            return false;
        }
        int from = b.stmts().indexOf(mo);
        int to = b.stmts().indexOf(fo);
        if (from < 0 || to <= from) {
            return false;
        }
        for (int i = from; i < to; i++) {
            Stmt s = b.stmts().get(i);
            Stmt excused = s == mo && mo instanceof Stmt.If check && failureTest(check.cond(), m.call) ? check.then() : null;
            for (Stmt.Jump j : Trees.collect(s, Stmt.Jump.class)) {
                if (excused != null && trees.isAncestorOrSelf(excused, j)) {
                    continue;
                }
                Stmt target = j.kind() == Stmt.JumpKind.BREAK || j.kind() == Stmt.JumpKind.CONTINUE ? trees.jumpTarget(j) : null;
                if (target == null || !trees.isAncestorOrSelf(s, target) || target == s) {
                    return false;
                }
            }
            boolean[] again = {false};
            Trees.walkExprsAndLambdas(s, e -> again[0] |= e instanceof Expr.Call c && c != m.call
                    && "cudaMalloc".equals(c.calleeName()) && v.equals(targetVariable(c)));
            if (again[0]) {
                return false;
            }
        }
        return true;
    }

    /** @return true if {@code cond} is true exactly when {@code call} failed: {@code call}, {@code call != cudaSuccess} */
    private static boolean failureTest(Expr cond, Expr.Call call) {
        Expr e = uncast(cond);
        if (e == call) {
            return true;
        }
        return e instanceof Expr.Binary b && b.op().equals("!=")
                && (uncast(b.lhs()) == call && isSuccess(b.rhs()) || uncast(b.rhs()) == call && isSuccess(b.lhs()));
    }

    private static boolean isSuccess(Expr e) {
        return uncast(e) instanceof Expr.Name n && (n.name().equals("cudaSuccess") || n.name().equals("::cudaSuccess"));
    }

    private static Expr uncast(Expr e) {
        while (e instanceof Expr.Cast c) {
            e = c.operand();
        }
        return e;
    }

    /** @return the variable {@code v} of {@code cudaMalloc(&v, n)} (casts allowed), or null */
    private static String targetVariable(Expr.Call c) {
        return uncast(c.args().get(0)) instanceof Expr.Unary u && u.op().equals("&") && uncast(u.operand()) instanceof Expr.Name n
                ? n.name() : null;
    }

    /**
     * @return null if {@code v} is a local variable of {@code f} (not a parameter, not static, not a
     *         reference or an array) that only device {@code cudaMalloc(&v, ...)} writes and whose
     *         value is never copied ({@link UseScan}: each use reads or writes through it, compares
     *         or tests it, passes it to a launch or to a callee that keeps no copy, or frees it; a
     *         lambda's init-capture naming it counts as a copy); otherwise what keeps it from being one
     */
    private String untracked(FunctionDef f, String v) {
        if (f.params().stream().anyMatch(p -> v.equals(p.name()))) {
            return "its pointer is written to the parameter '" + v + "'";
        }
        boolean[] declared = {false};
        boolean[] plain = {true};
        Trees.walkStmts(f.body(), s -> {
            if (s instanceof Stmt.Decl d) {
                for (klap.model.VarDecl x : d.vars()) {
                    if (x.name().equals(v)) {
                        declared[0] = true;
                        plain[0] &= !x.isStatic() && !x.reference() && !x.array() && !x.shared();
                    }
                }
            }
        });
        if (!declared[0] || !plain[0]) {
            return "its pointer variable '" + v + "' is not a plain local variable of '" + f.name() + "'";
        }
        UseScan scan = new UseScan(v, true, new java.util.HashSet<>());
        return scan.harmless(f.body()) ? null : "its pointer variable '" + v + "' is copied, written or passed on at line "
                + ctx.src.line(scan.badAt.range().offset());
    }

    /**
     * Library functions that read or write through a pointer argument but keep no copy of it
     * (an argument of theirs is not a copy of a share).
     */
    private static final java.util.regex.Pattern KEEPS_NO_COPY = java.util.regex.Pattern.compile(
            "(::)?(std::)?(memcpy|memset|memmove|printf|atomic[A-Z][A-Za-z_]*|__ld(g|cg|ca|cs|lu|cv)|__st(wb|cg|cs|wt))");

    /**
     * One check of the uses of a pointer variable ({@code v}, or a parameter of a callee that
     * receives it): whether every use only reads or writes through it, compares or tests it, passes
     * it to a launch, to a library function that keeps no copy ({@link #KEEPS_NO_COPY}) or to a
     * parameter of a {@code __device__} function of the file that is used the same way, or (for
     * {@code v} itself, {@code allowFree}) is {@code cudaFree(v)} or the {@code &v} of a cudaMalloc.
     */
    private final class UseScan {
        private final String v;
        private final boolean allowFree;
        /** the callee parameters being checked (a recursive call counts as harmless) */
        private final java.util.Set<String> visiting;
        private boolean ok = true;
        /** the first use that is not harmless */
        private Expr badAt;

        UseScan(String v, boolean allowFree, java.util.Set<String> visiting) {
            this.v = v;
            this.allowFree = allowFree;
            this.visiting = visiting;
        }

        /** @return true if every use of {@code v} in {@code body} (lambda bodies included) is harmless */
        boolean harmless(Stmt body) {
            Trees.walkStmts(body, s -> {
                for (Expr top : Trees.ownExprs(s)) {
                    boolean testOrStatement = s instanceof Stmt.ExprStmt || (s instanceof Stmt.If i && i.cond() == top)
                            || (s instanceof Stmt.Loop l && l.cond() == top);
                    scan(top, new java.util.ArrayDeque<>(), testOrStatement);
                }
            });
            return ok;
        }

        private void scan(Expr e, java.util.Deque<Expr> up, boolean topIsHarmless) {
            if (!ok || e == null) {
                return;
            }
            if (e instanceof Expr.Lambda lam) {
                if (initCaptureNames(lam, v)) {
                    ok = false;
                    badAt = lam;
                    return;
                }
                harmless(lam.body());
                return;
            }
            if (e instanceof Expr.Name n && n.name().equals(v)) {
                ok = harmlessUse(e, up, topIsHarmless);
                badAt = ok ? null : e;
                return;
            }
            up.push(e);
            for (Expr c : e.children()) {
                scan(c, up, topIsHarmless);
            }
            up.pop();
        }

        /**
         * @return true if the value {@code e} (the variable, or pointer arithmetic on it), whose
         *         enclosing expressions are {@code up} (innermost first), is used harmlessly
         */
        private boolean harmlessUse(Expr e, java.util.Deque<Expr> up, boolean topIsHarmless) {
            java.util.Iterator<Expr> it = up.iterator();
            Expr cur = e;
            while (true) {
                if (!it.hasNext()) {
                    return topIsHarmless;
                }
                Expr p = it.next();
                if (p instanceof Expr.Cast) {
                    cur = p;
                    continue;
                }
                if (p instanceof Expr.Unary u && u.op().equals("&")) {
                    // only as the first argument of a cudaMalloc (through casts)
                    Expr q = p;
                    while (it.hasNext()) {
                        Expr r = it.next();
                        if (r instanceof Expr.Cast) {
                            q = r;
                            continue;
                        }
                        return allowFree && cur == e && r instanceof Expr.Call c && "cudaMalloc".equals(c.calleeName())
                                && !c.args().isEmpty() && c.args().get(0) == q;
                    }
                    return false;
                }
                if (p instanceof Expr.Unary u) {
                    return u.op().equals("*") || u.op().equals("!");
                }
                if (p instanceof Expr.Subscript s) {
                    return s.array() == cur;
                }
                if (p instanceof Expr.Member mem) {
                    return mem.owner() == cur && mem.arrow();
                }
                if (p instanceof Expr.Launch l) {
                    return l.args().contains(cur);
                }
                if (p instanceof Expr.Call c) {
                    return harmlessArgument(c, cur, cur == e);
                }
                if (p instanceof Expr.Binary b) {
                    switch (b.op()) {
                        case "==", "!=", "<", ">", "<=", ">=", "&&", "||" -> {
                            return true;
                        }
                        case "+", "-" -> {
                            cur = p; // a pointer into the share: its own uses decide
                            continue;
                        }
                        default -> {
                            return false;
                        }
                    }
                }
                if (p instanceof Expr.Conditional c) {
                    return c.cond() == cur;
                }
                return false;
            }
        }

        /** @return true if passing {@code arg} to call {@code c} keeps no copy of it and frees nothing of it */
        private boolean harmlessArgument(Expr.Call c, Expr arg, boolean itself) {
            String callee = c.calleeName();
            int at = c.args().indexOf(arg);
            if (callee == null || at < 0) {
                return false;
            }
            if (callee.equals("cudaFree")) {
                return allowFree && itself && c.args().size() == 1;
            }
            if (KEEPS_NO_COPY.matcher(callee).matches()) {
                return true;
            }
            List<FunctionDef> defs = ctx.deviceFunctionsNamed(java.util.Set.of(AggregationContext.simpleName(callee)));
            if (defs.isEmpty()) {
                return false;
            }
            for (FunctionDef g : defs) {
                if (at >= g.params().size()) {
                    return false;
                }
                klap.model.Param pm = g.params().get(at);
                String key = g.range().offset() + "#" + at;
                if (!visiting.add(key)) {
                    continue;
                }
                if (ctx.src.text().substring(pm.range().offset(), pm.range().end()).contains("&")) {
                    return false;
                }
                if (pm.name() != null && !pm.name().isEmpty()
                        && !new UseScan(pm.name(), false, visiting).harmless(g.body())) {
                    return false;
                }
            }
            return true;
        }
    }

    /** @return true if an init-capture of {@code lam} ({@code [q = v]}, {@code [&q = v]}) names {@code v} */
    private boolean initCaptureNames(Expr.Lambda lam, String v) {
        String text = ctx.src.text();
        int open = lam.range().offset();
        int close = text.indexOf(']', open);
        if (open >= text.length() || text.charAt(open) != '[' || close < 0 || close > lam.body().range().offset()) {
            return true; // (cannot read the capture list: take it as a copy)
        }
        for (String item : text.substring(open + 1, close).split(",")) {
            String t = item.trim();
            if (t.contains("=") && !t.equals("=") && java.util.regex.Pattern.compile("\\b" + java.util.regex.Pattern.quote(v) + "\\b")
                    .matcher(t).find()) {
                return true;
            }
        }
        return false;
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

    /** @return true if {@code c} sits under {@code &&}, {@code ||}, {@code ?:} or a lambda in {@code owner} */
    private static boolean conditionallyEvaluated(Stmt owner, Expr c) {
        boolean[] found = {false};
        for (Expr top : Trees.ownExprs(owner)) {
            conditionalWalk(top, c, false, found);
        }
        return found[0];
    }

    private static void conditionalWalk(Expr e, Expr target, boolean cond, boolean[] found) {
        if (e == target) {
            found[0] |= cond;
            return;
        }
        boolean c2 = cond || e instanceof Expr.Conditional || e instanceof Expr.Other
                || (e instanceof Expr.Binary b && (b.op().equals("&&") || b.op().equals("||")));
        for (Expr ch : e.children()) {
            conditionalWalk(ch, target, c2, found);
        }
    }
}
