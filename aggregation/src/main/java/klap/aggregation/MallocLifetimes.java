package klap.aggregation;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import klap.model.Expr;
import klap.model.FunctionDef;
import klap.model.Stmt;
import klap.model.VarDecl;
import klap.transform.Convergence;
import klap.transform.Trees;

/**
 * Whether the threads of an aggregated device {@code cudaMalloc}'s group may free their shares at
 * different times. An aggregated allocation goes back to the heap only when the last share of it
 * is freed ({@code klap::group_free}, KLAP II-C), so a share kept longer than its siblings keeps the
 * memory of the whole group: the GPU review reproducer {@code C_malloc_pin} (H200, 2026-11-28), where
 * thread 0 of each block kept its 8 KiB of every round and the others freed theirs at once, kept each
 * round's 2 MiB block-wide allocation, and 11 to 286 later {@code cudaMalloc} calls failed where the
 * program as written had none.
 *
 * <h2>Input</h2>
 * A device {@code cudaMalloc(&v, n)} call of a kernel or {@code __device__} function, its statement,
 * and whether the kernel's threads reach it together (then its group is a whole warp or block;
 * otherwise the lanes of a warp that arrive together).
 * <h2>Output</h2>
 * null when the site may be aggregated, because one of these holds (each free of {@code v} is a
 * <em>free point</em>: the statement that evaluates {@code cudaFree(v)}, or that of each call of a
 * lambda local that captures {@code v} by reference and frees it, or the {@code if} of
 * {@code if (v) cudaFree(v);}):
 * <ol>
 * <li>nothing but {@code cudaMalloc(&v, ...)} writes {@code v} ({@link UseScan}: no assignment,
 * increment, address taken, non-const reference, by-reference capture that writes it, call that
 * may write it), and a free point <em>follows</em> the site: in the same block, or in the
 * then-block of {@code if (cudaMalloc(&v, n) == cudaSuccess)}, with no {@code return}, {@code goto},
 * {@code break} or {@code continue} that leaves, no {@code asm("exit;")}/{@code trap}, no other
 * {@code cudaMalloc(&v, ...)} and no heap allocation under thread-dependent control between them
 * (jumps in the then-branch of a test of the call's failure are allowed: a thread whose request
 * failed holds no share). Every thread that got a share frees it there; any other free of it would
 * be a second free;</li>
 * <li>or {@code v} is also never copied (each use reads or writes through it, compares or tests it,
 * or hands it to a callee or a kernel of the file whose parameter is used that way, or to a CUDA
 * built-in that keeps no copy), this is its only cudaMalloc, and every free point follows the site
 * or, for a site the kernel's threads reach together, is itself reached together
 * ({@link Convergence#reachedTogether});</li>
 * <li>or nothing that may free the pointer runs in this code: neither the function, nor what it
 * calls or launches, nor (for a {@code __device__} function) a function that calls it or takes its
 * address, calls {@code cudaFree} (the pointer is freed by another kernel, or never: KLAP II-C's
 * assumption that a group frees together is kept, as in bt).</li>
 * </ol>
 * Otherwise, why not (a phrase for warning {@code malloc-lifetime}); the planner leaves the call as
 * written, a plain allocation that {@code klap::group_free} frees as such. Known limits: a pointer
 * stored to memory and freed by some threads of another, later kernel (or of a kernel that another
 * file launches) is not seen; between a site and its free, threads of one group may still take
 * different times (the group's memory is then held until the slowest frees its share).
 */
final class MallocLifetimes {

    /** A device cudaMalloc site: the function, the call's statement, the call, its group's kind. */
    record Site(FunctionDef fn, Stmt owner, Expr.Call call, boolean together) {
    }

    /**
     * Where a {@code cudaFree(v)} runs: the statement that evaluates it (or the call of the lambda
     * local, or the {@code if (v)} around it) and the call there; {@code stmt} is null where klap
     * cannot tell. {@code offset} is the cudaFree's own position, for the warning.
     */
    private record FreePoint(Stmt stmt, Expr call, int offset) {
    }

    /**
     * CUDA built-ins that read or write through their first (address) argument and keep no copy
     * of it; their other arguments are values, which they may store.
     */
    private static final Pattern ADDRESS_FIRST = Pattern.compile(
            "atomic(Add|Sub|Exch|Min|Max|Inc|Dec|CAS|And|Or|Xor)(_block|_system)?|__ld(g|cg|ca|cs|lu|cv)|__st(wb|cg|cs|wt)");
    /** C library functions that read or write through every pointer argument and keep no copy. */
    private static final Set<String> THROUGH_ALL = Set.of("memcpy", "memset", "memmove", "printf");

    private final AggregationContext ctx;
    /** per function: whether it (or what it calls) may end its thread ({@code asm("exit;")}, a trap) */
    private final Map<FunctionDef, Boolean> exits = new HashMap<>();
    /** per function: whether it (or what it calls) allocates device heap memory */
    private final Map<FunctionDef, Boolean> allocates = new HashMap<>();

    /** @param ctx the unit's aggregation context (its functions, kernels and source) */
    MallocLifetimes(AggregationContext ctx) {
        this.ctx = ctx;
    }

    /**
     * @param s    the site
     * @param conv the convergence facts of {@code s.fn()}
     * @return null if the site's shares are freed together (see the class comment), else why not
     */
    String freedApart(Site s, Convergence conv) {
        FunctionDef f = s.fn();
        Trees trees = ctx.uni(f).trees();
        String v = targetVariable(s.call());
        String untracked;
        if (v == null) {
            untracked = "its pointer is written to memory";
        } else if (!plainLocal(f, v)) {
            untracked = "its pointer variable '" + v + "' is not a plain local variable of '" + f.name() + "'";
        } else {
            UseScan uses = new UseScan(v, true, new HashSet<>());
            uses.scan(f.body());
            List<FreePoint> points = freePoints(f, v, trees);
            if (uses.writtenAt == null) {
                for (FreePoint pt : points) {
                    if (pt.stmt != null && follows(s, v, pt, trees, conv)) {
                        return null;
                    }
                }
                if (uses.copiedAt == null && mallocsOf(f, v) == 1) {
                    return everyFreeTogether(s, v, points, trees, conv);
                }
            }
            Expr at = uses.writtenAt != null ? uses.writtenAt : uses.copiedAt;
            untracked = at != null ? "its pointer variable '" + v + "' is " + (uses.writtenAt != null ? "written" : "copied")
                    + " at line " + ctx.src.line(at.range().offset())
                    : "its pointer variable '" + v + "' is allocated by more than one cudaMalloc";
        }
        String who = freeThatMayReach(f);
        return who == null ? null : untracked + ", and " + who;
    }

    /** @return null if every free point frees the site's shares together, else why not */
    private String everyFreeTogether(Site s, String v, List<FreePoint> points, Trees trees, Convergence conv) {
        for (FreePoint pt : points) {
            String where = "'cudaFree(" + v + ")' at line " + ctx.src.line(pt.offset);
            if (pt.stmt == null) {
                return where + " is in a lambda that klap cannot follow to its calls";
            }
            if (conditionallyEvaluated(pt.stmt, pt.call)) {
                return where + " is under &&, || or ?:";
            }
            // (a thread that ends by asm or a trap is no jump the convergence facts know: none may, anywhere)
            boolean together = s.together() && s.fn().kind() == FunctionDef.Kind.KERNEL && !(pt.stmt instanceof Stmt.Loop)
                    && conv.reachedTogether(pt.stmt) && !endsThread(s.fn().body());
            if (!together && !follows(s, v, pt, trees, conv)) {
                return where + " is not reached by every thread that reaches the cudaMalloc, after it and without a "
                        + "thread-dependent allocation between";
            }
        }
        return null;
    }

    // ------------------------------------------------------------------------ free points

    /** @return where the {@code cudaFree(v)} calls of {@code f} run (see {@link FreePoint}) */
    private List<FreePoint> freePoints(FunctionDef f, String v, Trees trees) {
        List<FreePoint> out = new ArrayList<>();
        Map<String, List<Expr.Lambda>> locals = Trees.lambdaLocals(f.body());
        for (Expr.Call c : freesIn(f.body())) {
            if (c.args().size() != 1 || !(strip(c.args().get(0)) instanceof Expr.Name n && n.name().equals(v))) {
                continue;
            }
            Stmt owner = trees.owner(c);
            if (owner != null) {
                out.add(new FreePoint(nullTested(owner, v, trees), c, c.range().offset()));
                continue;
            }
            // in a lambda: the calls of the local it initializes, if it captures v by reference and is only called
            String local = null;
            Expr.Lambda lambda = null;
            for (var e : locals.entrySet()) {
                for (Expr.Lambda lam : e.getValue()) {
                    if (lam.range().contains(c.range()) && (lambda == null || lambda.range().contains(lam.range()))) {
                        local = e.getKey();
                        lambda = lam;
                    }
                }
            }
            List<FreePoint> calls = lambda == null || locals.get(local).size() != 1 || !capturesByReference(lambda, v)
                    ? null : callsOf(f, local, trees);
            if (calls == null || calls.isEmpty()) {
                out.add(new FreePoint(null, c, c.range().offset()));
            } else {
                calls.forEach(pt -> out.add(new FreePoint(nullTested(pt.stmt, v, trees), pt.call, c.range().offset())));
            }
        }
        return out;
    }

    /**
     * @return the {@code if} of {@code if (v) cudaFree(v);} (also {@code v != nullptr}, {@code NULL},
     *         {@code 0}, and a then-block without jumps) around statement {@code s}, with no else: a
     *         thread whose {@code v} is null holds no share; else {@code s}
     */
    private static Stmt nullTested(Stmt s, String v, Trees trees) {
        Stmt p = trees.parent(s);
        Stmt branch = s;
        if (p instanceof Stmt.Block b && !(trees.parent(b) instanceof Stmt.Block) && Trees.collect(b, Stmt.Jump.class).isEmpty()) {
            branch = b;
            p = trees.parent(b);
        }
        return p instanceof Stmt.If i && i.then() == branch && i.otherwise() == null && i.init() == null && nonNull(i.cond(), v)
                ? i : s;
    }

    /** @return true if {@code cond} is {@code v}, {@code v != nullptr}, {@code v != NULL} or {@code v != 0} (either side) */
    private static boolean nonNull(Expr cond, String v) {
        Expr e = strip(cond);
        if (e instanceof Expr.Name n) {
            return n.name().equals(v);
        }
        return e instanceof Expr.Binary b && b.op().equals("!=")
                && (isName(b.lhs(), v) && isNullLiteral(b.rhs()) || isName(b.rhs(), v) && isNullLiteral(b.lhs()));
    }

    /** @return true if {@code cond} is {@code !v}, {@code v == nullptr}, {@code v == NULL} or {@code v == 0} */
    private static boolean isNullTest(Expr cond, String v) {
        Expr e = strip(cond);
        if (e instanceof Expr.Unary u && u.op().equals("!")) {
            return isName(u.operand(), v);
        }
        return e instanceof Expr.Binary b && b.op().equals("==")
                && (isName(b.lhs(), v) && isNullLiteral(b.rhs()) || isName(b.rhs(), v) && isNullLiteral(b.lhs()));
    }

    private static boolean isName(Expr e, String v) {
        return strip(e) instanceof Expr.Name n && n.name().equals(v);
    }

    private static boolean isNullLiteral(Expr e) {
        Expr x = strip(e);
        if (x instanceof Expr.Name n) {
            return n.name().equals("NULL") || n.name().equals("nullptr");
        }
        return x instanceof Expr.Literal;
    }

    /**
     * @return true if lambda {@code lam} captures {@code v} by reference: {@code [&v]}, or a
     *         {@code [&]} default without a by-copy {@code v}
     */
    private boolean capturesByReference(Expr.Lambda lam, String v) {
        if (lam.refCaptures().contains(v)) {
            return true;
        }
        List<String> items = captureItems(lam);
        return items != null && lam.captureAllByRef() && items.stream().noneMatch(i -> i.equals(v));
    }

    /** @return the items of {@code lam}'s capture list as written (trimmed), or null if klap cannot read it */
    private List<String> captureItems(Expr.Lambda lam) {
        String text = ctx.src.text();
        int open = lam.range().offset();
        int close = text.indexOf(']', open);
        if (open >= text.length() || text.charAt(open) != '[' || close < 0 || close > lam.body().range().offset()) {
            return null;
        }
        List<String> out = new ArrayList<>();
        for (String item : text.substring(open + 1, close).split(",")) {
            if (!item.isBlank()) {
                out.add(item.trim());
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
        Set<Expr> callees = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
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

    // ------------------------------------------------------------------------ "follows"

    /**
     * @return true if free point {@code pt} follows the site (see the class comment, rule 1): every
     *         thread that reaches the site's statement with a share reaches {@code pt} next in the
     *         same block, and nothing between frees or re-allocates {@code v}, ends the thread or
     *         allocates under thread-dependent control
     */
    private boolean follows(Site s, String v, FreePoint pt, Trees trees, Convergence conv) {
        Stmt mo = s.owner();
        Stmt fo = pt.stmt;
        if (mo instanceof Stmt.Loop || fo instanceof Stmt.Loop || conditionallyEvaluated(fo, pt.call)) {
            return false;
        }
        List<Stmt> between;
        Stmt excused = null;
        if (trees.parent(mo) instanceof Stmt.Block b && trees.parent(fo) == b) {
            int from = b.stmts().indexOf(mo);
            int to = b.stmts().indexOf(fo);
            if (from < 0 || to <= from) {
                return false;
            }
            between = b.stmts().subList(from, to);
            if (mo instanceof Stmt.If check && failureTest(check.cond(), s.call(), v)) {
                excused = check.then();
            } else if (mo instanceof Stmt.Decl d && d.vars().size() == 1 && strip(d.vars().get(0).init()) == s.call()
                    && to > from + 1 && b.stmts().get(from + 1) instanceof Stmt.If check
                    && errorTest(check.cond(), d.vars().get(0).name())) {
                excused = check.then(); // cudaError_t e = cudaMalloc(&v, n); if (e != cudaSuccess) return;
            }
        } else if (mo instanceof Stmt.If check && successTest(check.cond(), s.call()) && check.then() instanceof Stmt.Block t
                && trees.parent(fo) == t) {
            between = t.stmts().subList(0, t.stmts().indexOf(fo)); // if (cudaMalloc(&v, n) == cudaSuccess) { ... cudaFree(v); }
        } else {
            return false;
        }
        for (Stmt st : between) {
            if (leaves(st, excused, trees) || endsThread(st) || reallocates(st, s.call(), v)
                    || allocatesApart(st, st == mo ? s.call() : null, between, s.fn(), conv, trees)) {
                return false;
            }
        }
        return true;
    }

    /** @return true if a jump in {@code st} (not in {@code excused}) can take a thread out of {@code st} */
    private static boolean leaves(Stmt st, Stmt excused, Trees trees) {
        for (Stmt.Jump j : Trees.collect(st, Stmt.Jump.class)) {
            if (excused != null && trees.isAncestorOrSelf(excused, j)) {
                continue;
            }
            Stmt target = j.kind() == Stmt.JumpKind.BREAK || j.kind() == Stmt.JumpKind.CONTINUE ? trees.jumpTarget(j) : null;
            if (target == null || target == st || !trees.isAncestorOrSelf(st, target)) {
                return true;
            }
        }
        return false;
    }

    /** @return true if {@code st} has another {@code cudaMalloc(&v, ...)} than {@code site} */
    private static boolean reallocates(Stmt st, Expr.Call site, String v) {
        boolean[] again = {false};
        Trees.walkExprsAndLambdas(st, e -> again[0] |= e instanceof Expr.Call c && c != site
                && "cudaMalloc".equals(c.calleeName()) && v.equals(targetVariable(c)));
        return again[0];
    }

    /**
     * @return true if {@code st} may end its thread: an {@code asm} with {@code exit} or {@code trap},
     *         {@code __trap()}, or a call of a function of the file that may
     */
    private boolean endsThread(Stmt st) {
        for (Stmt.Other o : Trees.collect(st, Stmt.Other.class)) {
            if (o.asm() != null && (o.asm().contains("exit") || o.asm().contains("trap"))) {
                return true;
            }
        }
        boolean[] found = {false};
        Trees.walkExprsAndLambdas(st, e -> {
            if (!found[0] && e instanceof Expr.Call c && c.calleeName() != null) {
                String name = AggregationContext.simpleName(c.calleeName());
                found[0] = name.equals("__trap") || name.equals("__brkpt")
                        || ctx.deviceFunctionsNamed(Set.of(name)).stream().anyMatch(this::mayEndThread);
            }
        });
        return found[0];
    }

    private boolean mayEndThread(FunctionDef g) {
        Boolean known = exits.get(g);
        if (known != null) {
            return known;
        }
        exits.put(g, false); // (recursion)
        boolean r = false;
        for (FunctionDef h : ctx.deviceClosure(g)) {
            for (Stmt.Other o : Trees.collect(h.body(), Stmt.Other.class)) {
                r |= o.asm() != null && (o.asm().contains("exit") || o.asm().contains("trap"));
            }
            boolean[] trap = {false};
            Trees.walkExprsAndLambdas(h.body(), e -> trap[0] |= e instanceof Expr.Call c && c.calleeName() != null
                    && (c.calleeName().endsWith("__trap") || c.calleeName().endsWith("__brkpt")));
            r |= trap[0];
        }
        exits.put(g, r);
        return r;
    }

    /**
     * @return true if {@code st} allocates device heap memory ({@code cudaMalloc}, {@code malloc}, or
     *         a function of the file that does) other than {@code site}, under control that may send
     *         the threads of the group apart: nested in a statement of {@code between} that is not
     *         reached together by the kernel's threads. Meanwhile the threads that went on would hold
     *         the shares the others freed, where the program as written had given them back.
     */
    private boolean allocatesApart(Stmt st, Expr.Call site, List<Stmt> between, FunctionDef f, Convergence conv,
                                   Trees trees) {
        boolean[] apart = {false};
        Trees.walkStmts(st, x -> {
            if (apart[0]) {
                return;
            }
            for (Expr top : Trees.ownExprs(x)) {
                Trees.walk(top, e -> {
                    if (apart[0] || !(e instanceof Expr.Call c) || c == site || c.calleeName() == null) {
                        return;
                    }
                    String name = AggregationContext.simpleName(c.calleeName());
                    boolean alloc = name.equals("cudaMalloc") || name.equals("malloc")
                            || ctx.deviceFunctionsNamed(Set.of(name)).stream().anyMatch(this::mayAllocate);
                    if (alloc) {
                        boolean direct = between.contains(x);
                        apart[0] = !direct && !(f.kind() == FunctionDef.Kind.KERNEL && conv.reachedTogether(x));
                    }
                });
            }
        });
        return apart[0];
    }

    private boolean mayAllocate(FunctionDef g) {
        Boolean known = allocates.get(g);
        if (known != null) {
            return known;
        }
        boolean[] r = {false};
        for (FunctionDef h : ctx.deviceClosure(g)) {
            Trees.walkExprsAndLambdas(h.body(), e -> r[0] |= e instanceof Expr.Call c && c.calleeName() != null
                    && (AggregationContext.simpleName(c.calleeName()).equals("cudaMalloc")
                            || AggregationContext.simpleName(c.calleeName()).equals("malloc")));
        }
        allocates.put(g, r[0]);
        return r[0];
    }

    /**
     * @return true if {@code cond} is true exactly when the site's call failed or left no share:
     *         {@code call}, {@code call != cudaSuccess}, either {@code || v == nullptr}
     */
    private static boolean failureTest(Expr cond, Expr.Call call, String v) {
        Expr e = strip(cond);
        if (e instanceof Expr.Binary b && b.op().equals("||")) {
            return failureTest(b.lhs(), call, v) && (isNullTest(b.rhs(), v) || failureTest(b.rhs(), call, v))
                    || isNullTest(b.lhs(), v) && failureTest(b.rhs(), call, v);
        }
        if (e == call) {
            return true;
        }
        return e instanceof Expr.Binary b && b.op().equals("!=")
                && (strip(b.lhs()) == call && isSuccess(b.rhs()) || strip(b.rhs()) == call && isSuccess(b.lhs()));
    }

    /** @return true if {@code cond} is {@code err} or {@code err != cudaSuccess} */
    private static boolean errorTest(Expr cond, String err) {
        Expr e = strip(cond);
        if (isName(e, err)) {
            return true;
        }
        return e instanceof Expr.Binary b && b.op().equals("!=")
                && (isName(b.lhs(), err) && isSuccess(b.rhs()) || isName(b.rhs(), err) && isSuccess(b.lhs()));
    }

    /** @return true if {@code cond} is {@code call == cudaSuccess} or {@code !call} */
    private static boolean successTest(Expr cond, Expr.Call call) {
        Expr e = strip(cond);
        if (e instanceof Expr.Unary u && u.op().equals("!")) {
            return strip(u.operand()) == call;
        }
        return e instanceof Expr.Binary b && b.op().equals("==")
                && (strip(b.lhs()) == call && isSuccess(b.rhs()) || strip(b.rhs()) == call && isSuccess(b.lhs()));
    }

    private static boolean isSuccess(Expr e) {
        return strip(e) instanceof Expr.Name n && (n.name().equals("cudaSuccess") || n.name().equals("::cudaSuccess"));
    }

    // ------------------------------------------------------------------------ frees that may reach a copy

    /**
     * @return which code that may receive the site's pointer calls {@code cudaFree} (see the class
     *         comment, rule 3), or null if none
     */
    private String freeThatMayReach(FunctionDef f) {
        for (FunctionDef g : reachable(f)) {
            if (!freesIn(g.body()).isEmpty()) {
                return g == f ? "'" + f.name() + "' calls cudaFree"
                        : "'" + g.name() + "', which '" + f.name() + "' calls or launches, calls cudaFree";
            }
        }
        if (f.kind() != FunctionDef.Kind.KERNEL) {
            boolean addressTaken = addressTaken(f);
            for (FunctionDef caller : ctx.unit.functions()) {
                if (caller == f || !caller.kind().onDevice()) {
                    continue;
                }
                if (addressTaken || ctx.deviceClosure(caller).contains(f)) {
                    for (FunctionDef g : reachable(caller)) {
                        if (g != f && !freesIn(g.body()).isEmpty()) {
                            return "'" + g.name() + "', which may receive it from '" + f.name() + "'"
                                    + (addressTaken ? " (whose address the file takes)" : "") + ", calls cudaFree";
                        }
                    }
                }
            }
        }
        return null;
    }

    /** @return {@code f}, the device functions it calls and the kernels it launches, and theirs, transitively */
    private Set<FunctionDef> reachable(FunctionDef f) {
        Set<FunctionDef> out = new java.util.LinkedHashSet<>();
        ArrayDeque<FunctionDef> todo = new ArrayDeque<>(List.of(f));
        while (!todo.isEmpty()) {
            FunctionDef g = todo.poll();
            if (!out.add(g)) {
                continue;
            }
            for (FunctionDef h : ctx.deviceClosure(g)) {
                todo.add(h);
                Trees.walkExprsAndLambdas(h.body(), e -> {
                    if (e instanceof Expr.Launch l && ctx.kernel(l.kernelName()) != null) {
                        todo.add(ctx.kernel(l.kernelName()));
                    }
                });
            }
        }
        return out;
    }

    /** @return true if the unit names device function {@code f} other than by calling it (a function pointer) */
    private boolean addressTaken(FunctionDef f) {
        boolean[] taken = {false};
        for (FunctionDef g : ctx.unit.functions()) {
            Set<Expr> callees = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
            Trees.walkExprsAndLambdas(g.body(), e -> {
                if (e instanceof Expr.Call c) {
                    callees.add(c.callee());
                }
            });
            Trees.walkExprsAndLambdas(g.body(), e -> taken[0] |= e instanceof Expr.Name n && !callees.contains(n)
                    && AggregationContext.simpleName(n.name()).equals(f.name()));
        }
        return taken[0];
    }

    // ------------------------------------------------------------------------ uses of the pointer variable

    /**
     * @return true if {@code v} is a local variable of {@code f}: declared in its body (not a
     *         parameter), not static, {@code __shared__}, a reference or an array
     */
    private static boolean plainLocal(FunctionDef f, String v) {
        if (f.params().stream().anyMatch(p -> v.equals(p.name()))) {
            return false;
        }
        boolean[] declared = {false};
        boolean[] plain = {true};
        Trees.walkStmts(f.body(), s -> {
            if (s instanceof Stmt.Decl d) {
                for (VarDecl x : d.vars()) {
                    if (x.name().equals(v)) {
                        declared[0] = true;
                        plain[0] &= !x.isStatic() && !x.reference() && !x.array() && !x.shared();
                    }
                }
            }
        });
        return declared[0] && plain[0];
    }

    /** @return how many cudaMalloc calls of {@code f} write {@code v} */
    private static int mallocsOf(FunctionDef f, String v) {
        int[] n = {0};
        Trees.walkExprsAndLambdas(f.body(), e -> {
            if (e instanceof Expr.Call c && "cudaMalloc".equals(c.calleeName()) && v.equals(targetVariable(c))) {
                n[0]++;
            }
        });
        return n[0];
    }

    /**
     * The uses of a pointer variable ({@code v}, or a parameter of a callee or kernel that receives
     * it): the first that may write it ({@code writtenAt}) and the first that may copy its value
     * somewhere ({@code copiedAt}). Harmless: reading or writing through it ({@code *v}, {@code v[i]},
     * {@code v->m}, also after pointer arithmetic, but not their address {@code &v[i]}, which is a
     * pointer into the share), comparing or testing it, {@code sizeof}, handing it to a callee or a
     * kernel of the file whose parameter is used only in these ways (by value), to the address
     * argument of a CUDA built-in ({@link #ADDRESS_FIRST}) or to {@link #THROUGH_ALL}; for {@code v}
     * itself ({@code own}), {@code &v} as the first argument of {@code cudaMalloc} and {@code cudaFree(v)}.
     */
    private final class UseScan {
        private final String v;
        private final boolean own;
        /** the callee parameters being checked (a recursive call counts as harmless) */
        private final Set<String> visiting;
        Expr writtenAt;
        Expr copiedAt;

        UseScan(String v, boolean own, Set<String> visiting) {
            this.v = v;
            this.own = own;
            this.visiting = visiting;
        }

        boolean harmless() {
            return writtenAt == null && copiedAt == null;
        }

        /** Scans every use of {@code v} in {@code body}, lambda bodies included. */
        void scan(Stmt body) {
            Trees.walkStmts(body, s -> {
                if (s instanceof Stmt.Decl d) {
                    for (VarDecl x : d.vars()) {
                        if (x.init() != null) {
                            scan(x.init(), new ArrayDeque<>(), x.reference() ? Top.REFERENCE : Top.COPY);
                        }
                    }
                    return;
                }
                for (Expr top : Trees.ownExprs(s)) {
                    Top t = s instanceof Stmt.ExprStmt || s instanceof Stmt.If || s instanceof Stmt.Loop
                            || s instanceof Stmt.Switch ? Top.HARMLESS
                            : s instanceof Stmt.Other o && o.asm() != null ? Top.REFERENCE : Top.COPY;
                    scan(top, new ArrayDeque<>(), t);
                }
            });
        }

        private void scan(Expr e, Deque<Expr> up, Top top) {
            if (e == null) {
                return;
            }
            if (e instanceof Expr.Lambda lam) {
                lambda(lam);
                return;
            }
            if (e instanceof Expr.Name n && n.name().equals(v)) {
                Use u = use(e, up, top);
                if (u == Use.WRITE && writtenAt == null) {
                    writtenAt = e;
                } else if (u == Use.COPY && copiedAt == null) {
                    copiedAt = e;
                }
                return;
            }
            up.push(e);
            for (Expr c : e.children()) {
                scan(c, up, top);
            }
            up.pop();
        }

        /** A lambda: its init-captures of {@code v} (by reference: a write; by copy: a copy), its captures, its body. */
        private void lambda(Expr.Lambda lam) {
            List<String> items = captureItems(lam);
            Pattern word = Pattern.compile("\\b" + Pattern.quote(v) + "\\b");
            if (items == null) {
                if (writtenAt == null) {
                    writtenAt = lam;
                }
                return;
            }
            boolean byCopy = false;
            for (String item : items) {
                int eq = item.indexOf('=');
                if (eq > 0 && word.matcher(item.substring(eq + 1)).find()) {
                    if (item.startsWith("&")) {
                        writtenAt = writtenAt == null ? lam : writtenAt;
                    } else {
                        copiedAt = copiedAt == null ? lam : copiedAt;
                    }
                }
                byCopy |= item.equals(v) || item.equals("=") && !lam.refCaptures().contains(v);
            }
            UseScan inner = new UseScan(v, own, visiting);
            inner.scan(lam.body());
            if (byCopy && mentions(lam.body(), v) && copiedAt == null) {
                copiedAt = lam; // the lambda object holds a copy
            }
            writtenAt = writtenAt == null ? inner.writtenAt : writtenAt;
            copiedAt = copiedAt == null ? inner.copiedAt : copiedAt;
        }

        /** @return how the use {@code e} of {@code v}, under the expressions {@code up} (innermost first), uses it */
        private Use use(Expr e, Deque<Expr> up, Top top) {
            Iterator<Expr> it = up.iterator();
            Expr cur = e;
            boolean through = false; // cur is an lvalue in the share (*v, v[i], v->m)
            while (true) {
                if (!it.hasNext()) {
                    return through ? Use.HARMLESS : top.use;
                }
                Expr p = it.next();
                if (p instanceof Expr.Cast || p instanceof Expr.Unary u0 && u0.op().equals("()")) {
                    cur = p;
                    continue;
                }
                if (through) {
                    if (p instanceof Expr.Member m && !m.arrow() && m.owner() == cur || p instanceof Expr.Subscript s && s.array() == cur) {
                        cur = p;
                        continue;
                    }
                    if (p instanceof Expr.Unary u && u.op().equals("&")) {
                        through = false; // &v[i]: a pointer into the share
                        cur = p;
                        continue;
                    }
                    return Use.HARMLESS;
                }
                if (p instanceof Expr.Unary u) {
                    switch (u.op()) {
                        case "&" -> {
                            return cur == e && own && mallocTarget(p, it) ? Use.HARMLESS : Use.WRITE;
                        }
                        case "*" -> {
                            through = true;
                            cur = p;
                            continue;
                        }
                        case "!", "sizeof", "alignof" -> {
                            return Use.HARMLESS;
                        }
                        case "++pre", "--pre", "post++", "post--" -> {
                            return cur == e ? Use.WRITE : Use.COPY;
                        }
                        default -> {
                            return Use.COPY;
                        }
                    }
                }
                if (p instanceof Expr.Subscript s) {
                    if (s.array() != cur) {
                        return Use.COPY;
                    }
                    through = true;
                    cur = p;
                    continue;
                }
                if (p instanceof Expr.Member m) {
                    if (m.owner() != cur || !m.arrow()) {
                        return Use.COPY;
                    }
                    through = true;
                    cur = p;
                    continue;
                }
                if (p instanceof Expr.Launch l) {
                    int at = indexOf(l.args(), cur);
                    FunctionDef k = ctx.kernel(l.kernelName());
                    return at >= 0 && k != null && harmlessParam(k, at) ? Use.HARMLESS : Use.COPY;
                }
                if (p instanceof Expr.Call c) {
                    return argument(c, cur, cur == e);
                }
                if (p instanceof Expr.Binary b) {
                    if (b.isAssignment()) {
                        return b.lhs() == cur && cur == e ? Use.WRITE : b.lhs() == cur ? Use.COPY : Use.COPY;
                    }
                    switch (b.op()) {
                        case "==", "!=", "<", ">", "<=", ">=", "&&", "||" -> {
                            return Use.HARMLESS;
                        }
                        case "," -> {
                            if (b.lhs() == cur) {
                                return Use.HARMLESS;
                            }
                            cur = p;
                            continue;
                        }
                        case "+", "-" -> {
                            cur = p; // a pointer into the share: its own uses decide
                            continue;
                        }
                        default -> {
                            return Use.COPY;
                        }
                    }
                }
                if (p instanceof Expr.Conditional c) {
                    if (c.cond() == cur) {
                        return Use.HARMLESS;
                    }
                    cur = p;
                    continue;
                }
                return Use.COPY;
            }
        }

        /** @return true if {@code amp} ({@code &v}) is, through casts, the first argument of a cudaMalloc */
        private boolean mallocTarget(Expr amp, Iterator<Expr> it) {
            Expr q = amp;
            while (it.hasNext()) {
                Expr r = it.next();
                if (r instanceof Expr.Cast || r instanceof Expr.Unary u && u.op().equals("()")) {
                    q = r;
                    continue;
                }
                return r instanceof Expr.Call c && "cudaMalloc".equals(c.calleeName()) && !c.args().isEmpty()
                        && c.args().get(0) == q;
            }
            return false;
        }

        /** @return how passing {@code arg} ({@code v} itself if {@code itself}) to call {@code c} uses it */
        private Use argument(Expr.Call c, Expr arg, boolean itself) {
            int at = indexOf(c.args(), arg);
            String callee = c.calleeName();
            if (at < 0 || callee == null) {
                return Use.COPY;
            }
            String simple = AggregationContext.simpleName(callee);
            List<FunctionDef> defs = ctx.deviceFunctionsNamed(Set.of(simple));
            if (simple.equals("cudaFree") && defs.isEmpty()) {
                return own && itself && c.args().size() == 1 ? Use.HARMLESS : Use.COPY;
            }
            if (defs.isEmpty()) {
                if (THROUGH_ALL.contains(callee) || ADDRESS_FIRST.matcher(callee).matches() && at == 0) {
                    return Use.HARMLESS;
                }
                boolean mayWrite = c.paramModes() == null || at >= c.paramModes().length() || c.paramModes().charAt(at) == 'w';
                return itself && mayWrite ? Use.WRITE : Use.COPY;
            }
            for (FunctionDef g : defs) {
                if (at >= g.params().size()) {
                    return Use.COPY;
                }
                if (byReference(g, at)) {
                    return itself ? Use.WRITE : Use.COPY;
                }
                if (!harmlessParam(g, at)) {
                    return Use.COPY;
                }
            }
            return Use.HARMLESS;
        }

        /** @return true if parameter {@code at} of {@code g} (by value) is used only harmlessly in {@code g} */
        private boolean harmlessParam(FunctionDef g, int at) {
            if (at >= g.params().size() || byReference(g, at)) {
                return false;
            }
            klap.model.Param pm = g.params().get(at);
            if (pm.name() == null || pm.name().isEmpty()) {
                return true;
            }
            if (!visiting.add(g.range().offset() + "#" + at)) {
                return true;
            }
            UseScan inner = new UseScan(pm.name(), false, visiting);
            inner.scan(g.body());
            return inner.harmless();
        }

        private boolean byReference(FunctionDef g, int at) {
            klap.model.Param pm = g.params().get(at);
            return ctx.src.text().substring(pm.range().offset(), pm.range().end()).contains("&");
        }
    }

    /** What a use does with the pointer. */
    private enum Use { HARMLESS, COPY, WRITE }

    /** What the statement around a use's outermost expression does with its value. */
    private enum Top {
        /** an expression statement, a condition: the value is discarded or tested */
        HARMLESS(Use.HARMLESS),
        /** an initializer, a return: the value is copied */
        COPY(Use.COPY),
        /** a reference initializer, an {@code asm} operand: the variable may be written */
        REFERENCE(Use.WRITE);

        final Use use;

        Top(Use use) {
            this.use = use;
        }
    }

    /** @return true if {@code body} names {@code v} anywhere */
    private static boolean mentions(Stmt body, String v) {
        boolean[] found = {false};
        Trees.walkExprsAndLambdas(body, e -> found[0] |= e instanceof Expr.Name n && n.name().equals(v));
        return found[0];
    }

    /** @return the position of {@code x} in {@code l} by identity, or -1 */
    private static int indexOf(List<Expr> l, Expr x) {
        for (int i = 0; i < l.size(); i++) {
            if (l.get(i) == x) {
                return i;
            }
        }
        return -1;
    }

    // ------------------------------------------------------------------------ small helpers

    /** @return the device cudaFree calls in {@code s}, lambda bodies included */
    static List<Expr.Call> freesIn(Stmt s) {
        List<Expr.Call> l = new ArrayList<>();
        Trees.walkExprsAndLambdas(s, e -> {
            if (e instanceof Expr.Call c && "cudaFree".equals(c.calleeName())) {
                l.add(c);
            }
        });
        return l;
    }

    /** @return {@code e} without the casts and parentheses around it */
    static Expr strip(Expr e) {
        while (e instanceof Expr.Cast || e instanceof Expr.Unary u && u.op().equals("()")) {
            e = e instanceof Expr.Cast c ? c.operand() : ((Expr.Unary) e).operand();
        }
        return e;
    }

    /** @return the variable {@code v} of {@code cudaMalloc(&v, n)} (casts and parentheses allowed), or null */
    static String targetVariable(Expr.Call c) {
        return !c.args().isEmpty() && strip(c.args().get(0)) instanceof Expr.Unary u && u.op().equals("&")
                && strip(u.operand()) instanceof Expr.Name n ? n.name() : null;
    }

    /** @return true if {@code c} sits under {@code &&}, {@code ||}, {@code ?:} or in an unknown expression in {@code owner} */
    static boolean conditionallyEvaluated(Stmt owner, Expr c) {
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
