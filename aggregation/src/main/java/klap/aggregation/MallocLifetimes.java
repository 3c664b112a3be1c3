package klap.aggregation;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.LinkedHashSet;
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
import klap.transform.Uniformity;

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
 * null when the site may be aggregated, because one of these holds. A <em>free point</em> of
 * {@code v} is the statement that evaluates {@code cudaFree(v)} (also {@code ::cudaFree}), or the
 * {@code if} of {@code if (v) cudaFree(v);}, or each call of a lambda local whose whole body is
 * {@code cudaFree(v);} with {@code v} captured by reference. {@code v} must be a local of the
 * function declared once (no lambda parameter or local of that name either).
 * <ol>
 * <li>nothing writes {@code v} but the cudaMalloc and plain assignments ({@link UseScan}: no address
 * taken, non-const reference, call that may write it, {@code asm} naming it, lambda that writes it),
 * and a free point <em>follows</em> the site: in the same block, or in the then-block of
 * {@code if (cudaMalloc(&v, n) == cudaSuccess)}, with nothing between them (nor before the free in
 * an {@code if (v)} block) that assigns {@code v}, jumps out ({@code return}, {@code goto},
 * {@code break}, {@code continue}; one in the then-branch of a test of the call's failure, or of
 * {@code v == nullptr}, is allowed where the test is the call's own {@code if} or the statement right
 * after it: a thread whose request failed or that got nullptr holds no share), may end the thread ({@code asm} exit or
 * trap), re-allocates {@code v}, allocates under thread-dependent control, or calls what may
 * allocate or end the thread or what klap cannot follow (a functor, a member function, a pointer).
 * Every thread that got a share frees it there; any other free of it would be a second free;</li>
 * <li>or, in addition, {@code v} is never assigned or copied (each use reads or writes through it,
 * compares or tests it, or hands it to a callee or a kernel of the file whose parameter is used that
 * way, or to a CUDA built-in that keeps no copy), this is its only cudaMalloc, and every free point
 * follows the site or, for a site the kernel's threads reach together, is itself reached together
 * ({@link Convergence#reachedTogether}) in a kernel that has none of the troubles above anywhere;</li>
 * <li>or nothing that may receive the pointer frees device memory: the site is in a kernel, and
 * neither the kernel nor what it calls or launches calls {@code cudaFree} (or {@code free}), and if
 * it makes a call klap cannot follow, no device code of the file does (the pointer is freed by
 * another kernel, or never: KLAP II-C's assumption that a group frees together is kept, as in bt);
 * and every other free of the file's device code is made alike by the threads of its grid
 * ({@link #freesApartElsewhere}: under uniform tests, null tests of the freed pointer and bounds
 * on the thread's global index such as bt's {@code lidx < nLines} only), unless it frees a local
 * that only its own function's cudaMalloc calls fill. For a site in a {@code __device__} function, no device code of the file
 * may free anything.</li>
 * </ol>
 * Otherwise, why not (a phrase for warning {@code malloc-lifetime}); the planner leaves the call as
 * written, a plain allocation that {@code klap::group_free} frees as such. Known limits: a pointer
 * freed by a kernel of another file is not seen, and a bound is taken for "every thread" (a later
 * grid that frees {@code t[i]} for {@code i < n} with a smaller {@code n} than the allocating
 * grid's keeps the rest); between a site and its free, threads of one group may still take
 * different times (the group's memory is then held until the slowest frees its share).
 */
final class MallocLifetimes {

    /** A device cudaMalloc site: the function, the call's statement, the call, its group's kind. */
    record Site(FunctionDef fn, Stmt owner, Expr.Call call, boolean together) {
    }

    /**
     * Where a {@code cudaFree(v)} runs: the statement that counts ({@code stmt}: the statement that
     * evaluates it, the call of the lambda local, or the {@code if (v)} around either) and, for an
     * {@code if (v)}, the statement inside it ({@code inner}); the call there; {@code stmt} is null
     * where klap cannot tell. {@code offset} is the cudaFree's own position, for the warning.
     */
    private record FreePoint(Stmt stmt, Stmt inner, Expr call, int offset) {
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
    /** per function: whether it, or what it calls, may end its thread ({@code asm} exit, a trap) */
    private final Map<FunctionDef, Boolean> exits = new HashMap<>();
    /** per function: whether it, or what it calls, may allocate device heap memory or calls what klap cannot follow */
    private final Map<FunctionDef, Boolean> allocates = new HashMap<>();
    /** per function: its parameters and locals (not lambda locals) */
    private final Map<FunctionDef, Set<String>> variables = new HashMap<>();
    /**
     * The declared type of an error variable whose test counts as a failure test (review 2026-12-01:
     * {@code Ok e = cudaMalloc(...); if (e) return;} with a class whose conversion is true also on success)
     */
    private static final Pattern ERROR_TYPE = Pattern.compile("\\s*(const\\s+)?(cudaError_t|cudaError|enum\\s+cudaError|auto)"
            + "(\\s+const)?\\s*");
    /** the free wrappers of the unit, each with the index of the parameter it frees (computed once) */
    private Map<String, Integer> freeWrappers;
    /** each free wrapper's parameter type as written, white space removed */
    private final Map<String, String> wrapperTypes = new HashMap<>();
    /** per function: its lambda locals by name */
    private final Map<FunctionDef, Map<String, List<Expr.Lambda>>> lambdas = new HashMap<>();
    /** whether some device code of the unit frees device memory (computed once) */
    private FunctionDef anyFreer;
    private boolean anyFreerKnown;

    /** @param ctx the unit's aggregation context (its functions, kernels and source) */
    MallocLifetimes(AggregationContext ctx) {
        this.ctx = ctx;
    }

    /** @return true if {@code c} calls device {@code cudaFree} ({@code cudaFree}, {@code ::cudaFree}, {@code (cudaFree)}) */
    static boolean isCudaFree(Expr.Call c) {
        String n = callName(c);
        return n != null && AggregationContext.simpleName(n).equals("cudaFree") && (n.equals("cudaFree") || n.equals("::cudaFree"));
    }

    /** @return true if {@code c} calls {@code cudaMalloc} or {@code ::cudaMalloc} (also parenthesized) */
    static boolean isCudaMalloc(Expr.Call c) {
        String n = callName(c);
        return "cudaMalloc".equals(n) || "::cudaMalloc".equals(n);
    }

    /** @return true if {@code c} calls the C library's {@code free} (a plain or {@code ::}/{@code std::} name) */
    static boolean isLibcFree(Expr.Call c) {
        String n = callName(c);
        return n != null && (n.equals("free") || n.equals("::free") || n.equals("std::free"));
    }

    /** @return the name {@code c} calls, also through parentheses ({@code (f)(x)}), or null */
    private static String callName(Expr.Call c) {
        if (c.calleeName() != null) {
            return c.calleeName();
        }
        return strip(c.callee()) instanceof Expr.Name n ? n.name() : null;
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
            untracked = "its pointer variable '" + v + "' is not a local variable of '" + f.name()
                    + "' declared once (a parameter, static, a reference, an array, or a name declared again)";
        } else {
            UseScan uses = new UseScan(v, true, wrappersFor(f, v), new HashSet<>());
            uses.scan(f.body());
            List<FreePoint> points = freePoints(f, v, trees);
            if (uses.escapeAt < 0) {
                for (FreePoint pt : points) {
                    if (pt.stmt != null && follows(s, v, pt, uses.assigns, trees, conv)) {
                        return null;
                    }
                }
                if (uses.copyAt < 0 && uses.assigns.isEmpty() && mallocsOf(f, v) == 1) {
                    return everyFreeTogether(s, v, points, trees, conv);
                }
            }
            untracked = uses.escapeAt >= 0
                    ? "its pointer variable '" + v + "' may be written at line " + ctx.src.line(uses.escapeAt)
                            + " (through its address, a reference, a call, asm or a lambda)"
                    : uses.copyAt >= 0 ? "its pointer variable '" + v + "' is copied at line " + ctx.src.line(uses.copyAt)
                    : !uses.assigns.isEmpty() ? "its pointer variable '" + v + "' is assigned at line "
                            + ctx.src.line(uses.assigns.get(0)) + " (before a free that every thread reaches, if any)"
                    : "its pointer variable '" + v + "' is allocated by more than one cudaMalloc";
        }
        String who = freeThatMayReach(f);
        return who == null ? null : untracked + ", and " + who;
    }

    /** @return null if every free point frees the site's shares together, else why not */
    private String everyFreeTogether(Site s, String v, List<FreePoint> points, Trees trees, Convergence conv) {
        for (FreePoint pt : points) {
            String where = "'" + (pt.call.range().offset() == pt.offset ? ctx.src.slice(pt.call.range()).replaceAll("\\s+", " ")
                    : "cudaFree(" + v + ")") + "' at line " + ctx.src.line(pt.offset);
            if (pt.stmt == null) {
                return where + " is in a lambda that klap cannot follow to its calls";
            }
            if (conditionallyEvaluated(pt.inner != null ? pt.inner : pt.stmt, pt.call)) {
                return where + " is under &&, || or ?:";
            }
            boolean together = s.together() && s.fn().kind() == FunctionDef.Kind.KERNEL && !(pt.stmt instanceof Stmt.Loop)
                    && conv.reachedTogether(pt.stmt) && !troubleUntil(s, v, pt.stmt, trees, conv);
            if (!together && !follows(s, v, pt, List.of(), trees, conv)) {
                return where + " is not reached by every thread that reaches the cudaMalloc, after it and with nothing "
                        + "between that may send the threads apart (see the malloc-lifetime row of docs/constructs.md)";
            }
        }
        return null;
    }

    /**
     * @return true if something that may run between the site and free point {@code fo} may send
     *         the threads apart ({@link #trouble}): the statements from the site's (or from the
     *         outermost loop around the site that does not hold {@code fo}, whose earlier statements
     *         run again before the free) to the end of {@code fo}; the whole function if {@code fo}
     *         comes first
     */
    private boolean troubleUntil(Site s, String v, Stmt fo, Trees trees, Convergence conv) {
        int from = s.owner().range().offset();
        int to = fo.range().end();
        if (fo.range().offset() < from) {
            return trouble(s.fn().body(), s, v, Set.of(), conv);
        }
        for (Stmt x : trees.path(s.owner())) {
            if (x instanceof Stmt.Loop && !trees.isAncestorOrSelf(x, fo)) {
                from = Math.min(from, x.range().offset());
            }
        }
        return trouble(s.fn().body(), s, v, Set.of(), conv, from, to);
    }

    // ------------------------------------------------------------------------ free points

    /** @return where the {@code cudaFree(v)} calls of {@code f} run (see {@link FreePoint}) */
    private List<FreePoint> freePoints(FunctionDef f, String v, Trees trees) {
        List<FreePoint> out = new ArrayList<>();
        Map<String, List<Expr.Lambda>> locals = lambdasOf(f);
        for (Expr.Call c : freesIn(f.body())) {
            if (!isCudaFree(c) || c.args().size() != 1 || !isName(c.args().get(0), v)) {
                continue;
            }
            Stmt owner = trees.owner(c);
            if (owner != null) {
                out.add(point(owner, c, c.range().offset(), v, trees));
                continue;
            }
            // in a lambda: the calls of the local it initializes, if its whole body is this free
            List<FreePoint> calls = null;
            for (var e : locals.entrySet()) {
                if (e.getValue().size() == 1 && onlyFrees(e.getValue().get(0), c, v) && ctx.kernel(e.getKey()) == null
                        && ctx.deviceFunctionsNamed(Set.of(e.getKey())).isEmpty()) {
                    calls = callsOf(f, e.getKey(), trees);
                }
            }
            if (calls == null || calls.isEmpty()) {
                out.add(new FreePoint(null, null, c, c.range().offset()));
            } else {
                calls.forEach(pt -> out.add(point(pt.stmt, pt.call, c.range().offset(), v, trees)));
            }
        }
        // the calls of a free wrapper with v
        Map<String, Integer> wrappers = wrappersFor(f, v);
        Trees.walkExprsAndLambdas(f.body(), e -> {
            if (e instanceof Expr.Call c && strip(c.callee()) instanceof Expr.Name n && wrappers.containsKey(n.name())
                    && c.args().size() == ctx.deviceFunctionsNamed(Set.of(n.name())).get(0).params().size()
                    && isName(c.args().get(wrappers.get(n.name())), v)) {
                Stmt owner = trees.owner(c);
                out.add(owner == null ? new FreePoint(null, null, c, c.range().offset()) : point(owner, c, c.range().offset(), v, trees));
            }
        });
        return out;
    }

    /**
     * @return the free wrappers of the file, each with the index of the parameter it frees: a
     *         {@code __device__} function (no kernel, member, template or {@code __host__ __device__}
     *         one), the only function of the file with its name, whose whole body is
     *         {@code cudaFree(q);} of its parameter {@code q} (2026-12-01: a call {@code release(v)}
     *         of {@code __device__ void release(int* q) { cudaFree(q); }} frees {@code v} as the
     *         call {@code cudaFree(v)} would; the wrapper's own call becomes {@code klap::group_free})
     */
    private Map<String, Integer> freeWrappers() {
        if (freeWrappers == null) {
            freeWrappers = new HashMap<>();
            Map<String, Integer> named = new HashMap<>();
            ctx.unit.functions().forEach(h -> named.merge(h.name(), 1, Integer::sum));
            for (FunctionDef h : ctx.unit.functions()) {
                if (h.kind() != FunctionDef.Kind.DEVICE || named.get(h.name()) != 1 || h.templateHeader() != null
                        || h.memberOf() != null || h.body() == null || h.body().stmts().size() != 1
                        || !(h.body().stmts().get(0) instanceof Stmt.ExprStmt x) || !(strip(x.expr()) instanceof Expr.Call c)
                        || !isCudaFree(c) || c.args().size() != 1) {
                    continue;
                }
                for (int i = 0; i < h.params().size(); i++) {
                    klap.model.Param q = h.params().get(i);
                    if (isName(c.args().get(0), q.name()) && onlyCalled(h)) {
                        freeWrappers.put(h.name(), i);
                        wrapperTypes.put(h.name(), ctx.src.text().substring(q.range().offset(), q.nameRange().offset())
                                .replaceAll("\\s+", ""));
                    }
                }
            }
        }
        return freeWrappers;
    }

    /**
     * @return true if the name of device function {@code h} appears in the file only where {@code h}
     *         defines it and as the callee of calls (review 2026-12-01: a functor object, a data member,
     *         a {@code using} declaration, a local class's member or a prototype of another overload of
     *         that name may be what a call binds to)
     */
    private boolean onlyCalled(FunctionDef h) {
        Set<Integer> allowed = new HashSet<>(Set.of(h.nameRange().offset()));
        for (FunctionDef g : ctx.unit.functions()) {
            Trees.walkExprsAndLambdas(g.body(), e -> {
                if (e instanceof Expr.Call c && c.callee() instanceof Expr.Name n && n.name().equals(h.name())) {
                    allowed.add(n.range().offset());
                }
            });
        }
        java.util.regex.Matcher m = word(h.name()).matcher(klap.transform.Lexical.blankCommentsAndLiterals(ctx.src.text()));
        while (m.find()) {
            if (!allowed.contains(m.start())) {
                return false;
            }
        }
        return true;
    }

    /**
     * @return the free wrappers ({@link #wrappersIn}) that a call with {@code v} binds to: the type of
     *         {@code v}'s declaration (declaring {@code v} alone) is the wrapper's parameter type as
     *         written, so no overload klap does not see (a {@code <...>} header) is a better match, and
     *         no conversion changes the pointer (review 2026-12-01: {@code release(p)} of a {@code float* p}
     *         called a header's {@code release(float*)}, whose plain cudaFree freed a share)
     */
    private Map<String, Integer> wrappersFor(FunctionDef f, String v) {
        String type = declaredType(f, v);
        Map<String, Integer> out = new HashMap<>();
        wrappersIn(f).forEach((name, at) -> {
            if (type != null && type.equals(wrapperTypes.get(name))) {
                out.put(name, at);
            }
        });
        return out;
    }

    /** @return the type of the one declaration of {@code v} in {@code f} as written, white space removed, if it declares {@code v} alone */
    private String declaredType(FunctionDef f, String v) {
        String[] out = {null};
        Trees.walkStmts(f.body(), st -> {
            if (st instanceof Stmt.Decl d && d.vars().size() == 1 && d.vars().get(0).name().equals(v)) {
                out[0] = ctx.src.text().substring(d.range().offset(), d.vars().get(0).nameRange().offset()).replaceAll("\\s+", "");
            }
        });
        return out[0];
    }

    /** @return the free wrappers ({@link #freeWrappers}) whose name {@code f} does not declare itself */
    private Map<String, Integer> wrappersIn(FunctionDef f) {
        Map<String, Integer> out = new HashMap<>();
        freeWrappers().forEach((name, at) -> {
            if (!declaresName(f, name)) {
                out.put(name, at);
            }
        });
        return out;
    }

    /** @return true if {@code f} declares {@code name} (a parameter, a local, a lambda's parameter or local) */
    private boolean declaresName(FunctionDef f, String name) {
        boolean[] found = {f.params().stream().anyMatch(p -> name.equals(p.name()))};
        Trees.walkStmts(f.body(), s -> found[0] |= s instanceof Stmt.Decl d && d.vars().stream().anyMatch(x -> x.name().equals(name)));
        return found[0] || lambdaDeclares(f, name);
    }

    /**
     * @return the free point of the call {@code call} evaluated by statement {@code s}: the
     *         {@code if} of {@code if (v) s} (also {@code v != nullptr}, {@code NULL}, {@code 0},
     *         and a then-block holding {@code s} without jumps) with no else, since a thread whose
     *         {@code v} is null holds no share; else {@code s}
     */
    private static FreePoint point(Stmt s, Expr call, int offset, String v, Trees trees) {
        Stmt p = trees.parent(s);
        Stmt branch = s;
        if (p instanceof Stmt.Block b && !(trees.parent(b) instanceof Stmt.Block) && Trees.collect(b, Stmt.Jump.class).isEmpty()) {
            branch = b;
            p = trees.parent(b);
        }
        return p instanceof Stmt.If i && i.then() == branch && i.otherwise() == null && i.init() == null && nonNull(i.cond(), v)
                ? new FreePoint(i, s, call, offset) : new FreePoint(s, null, call, offset);
    }

    /**
     * @return true if {@code lam}'s whole body is the statement {@code free;} (the call {@code free}
     *         of {@code v}), it captures {@code v} by reference ({@code [&v]}, or {@code [&]} without a
     *         by-copy {@code v}) and declares no parameter of that name
     */
    private boolean onlyFrees(Expr.Lambda lam, Expr.Call free, String v) {
        if (lam.body().stmts().size() != 1 || !(lam.body().stmts().get(0) instanceof Stmt.ExprStmt es) || es.expr() != free) {
            return false;
        }
        List<String> items = captureItems(lam);
        if (items == null || word(v).matcher(lambdaHead(lam)).find()) {
            return false;
        }
        return lam.refCaptures().contains(v) || lam.captureAllByRef() && items.stream().noneMatch(i -> i.equals(v));
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

    /** @return the text of {@code lam} between its capture list and its body: its parameters, specifiers, return type */
    private String lambdaHead(Expr.Lambda lam) {
        String text = ctx.src.text();
        int close = text.indexOf(']', lam.range().offset());
        return close < 0 ? "" : text.substring(close + 1, Math.max(close + 1, lam.body().range().offset()));
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
        Set<Expr> callees = Collections.newSetFromMap(new IdentityHashMap<>());
        boolean[] other = {false};
        Trees.walkExprsAndLambdas(f.body(), e -> {
            if (e instanceof Expr.Call c && c.callee() instanceof Expr.Name n && n.name().equals(local)) {
                callees.add(n);
                Stmt owner = trees.owner(c);
                if (owner == null) {
                    other[0] = true;
                } else {
                    out.add(new FreePoint(owner, null, c, c.range().offset()));
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
     * @return true if free point {@code pt} follows the site (see the class comment, rule 1);
     *         {@code assigns} are the offsets of the plain assignments of {@code v}
     */
    private boolean follows(Site s, String v, FreePoint pt, List<Integer> assigns, Trees trees, Convergence conv) {
        Stmt mo = s.owner();
        Stmt fo = pt.stmt;
        if (mo instanceof Stmt.Loop || fo instanceof Stmt.Loop
                || conditionallyEvaluated(pt.inner != null ? pt.inner : fo, pt.call)) {
            return false;
        }
        List<Stmt> between = new ArrayList<>();
        Stmt excused = null;
        if (trees.parent(mo) instanceof Stmt.Block b && trees.parent(fo) == b) {
            int from = b.stmts().indexOf(mo);
            int to = b.stmts().indexOf(fo);
            if (from < 0 || to <= from) {
                return false;
            }
            between.addAll(b.stmts().subList(from, to));
            Stmt.If next = to > from + 1 && b.stmts().get(from + 1) instanceof Stmt.If i && i.init() == null ? i : null;
            if (mo instanceof Stmt.If check && check.init() == null && noShareTest(check.cond(), s.call(), null, v)) {
                excused = check.then(); // if (cudaMalloc(&v, n) != cudaSuccess) return;
            } else if (mo instanceof Stmt.Decl d && d.vars().size() == 1 && strip(d.vars().get(0).init()) == s.call()
                    && ERROR_TYPE.matcher(ctx.src.text().substring(d.range().offset(), d.vars().get(0).nameRange().offset())).matches()
                    && next != null && noShareTest(next.cond(), null, d.vars().get(0).name(), v)) {
                excused = next.then(); // cudaError_t e = cudaMalloc(&v, n); if (e != cudaSuccess) return;
            } else if (mo instanceof Stmt.ExprStmt x && strip(x.expr()) == s.call() && next != null
                    && noShareTest(next.cond(), null, null, v)) {
                excused = next.then(); // cudaMalloc(&v, n); if (!v) return;
            }
        } else if (mo instanceof Stmt.If check && successTest(check.cond(), s.call()) && check.then() instanceof Stmt.Block t
                && trees.parent(fo) == t) {
            between.addAll(t.stmts().subList(0, t.stmts().indexOf(fo))); // if (cudaMalloc(&v, n) == cudaSuccess) { ... }
        } else {
            return false;
        }
        if (pt.inner != null && fo instanceof Stmt.If wrapper && wrapper.then() instanceof Stmt.Block t) {
            between.addAll(t.stmts().subList(0, t.stmts().indexOf(pt.inner))); // if (v) { ...; cudaFree(v); }
        }
        Set<Stmt> direct = Collections.newSetFromMap(new IdentityHashMap<>());
        direct.addAll(between);
        for (Stmt st : between) {
            if (leaves(st, excused, trees) || trouble(st, s, v, direct, conv)) {
                return false;
            }
            for (int a : assigns) {
                if (a >= st.range().offset() && a < st.range().end()) {
                    return false;
                }
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

    /**
     * @return true if something in {@code st} may send the threads of the site's group apart while
     *         they hold their shares: an {@code asm} exit or trap; another {@code cudaMalloc(&v, ...)};
     *         a heap allocation ({@code cudaMalloc}, {@code malloc}) that is not a statement of
     *         {@code direct} and that the kernel's threads do not reach together (meanwhile the
     *         threads that went on would hold the shares the others freed, where the program as
     *         written had given them back); a call of a function of the file, or of a lambda local,
     *         that may allocate or end the thread (or that names {@code v}); a call klap cannot
     *         follow (a functor, a member function, a function pointer, a lambda called in place)
     */
    private boolean trouble(Stmt st, Site s, String v, Set<Stmt> direct, Convergence conv) {
        return trouble(st, s, v, direct, conv, 0, Integer.MAX_VALUE);
    }

    /** {@link #trouble} of the statements of {@code st} that begin at an offset in [{@code from}, {@code to}) */
    private boolean trouble(Stmt st, Site s, String v, Set<Stmt> direct, Convergence conv, int from, int to) {
        FunctionDef f = s.fn();
        Map<String, List<Expr.Lambda>> locals = lambdasOf(f);
        boolean[] found = {false};
        Trees.walkStmts(st, x -> {
            if (found[0] || x.range().offset() < from || x.range().offset() >= to) {
                return;
            }
            if (x instanceof Stmt.Other o && endsThread(o)) {
                found[0] = true;
                return;
            }
            for (Expr top : Trees.ownExprs(x)) {
                Trees.walk(top, e -> {
                    if (found[0] || !(e instanceof Expr.Call c) || c == s.call()) {
                        return;
                    }
                    if (throughExpression(c)) {
                        found[0] = true;
                        return;
                    }
                    String name = callName(c);
                    String simple = AggregationContext.simpleName(name);
                    if (simple.equals("cudaMalloc") || simple.equals("malloc")) {
                        found[0] = simple.equals("cudaMalloc") && v.equals(targetVariable(c))
                                || !direct.contains(x) && !(f.kind() == FunctionDef.Kind.KERNEL && conv.reachedTogether(x))
                                        && !(simple.equals("cudaMalloc") && givenBack(f, x, c, conv));
                    } else if (simple.equals("__trap") || simple.equals("__brkpt")) {
                        found[0] = true;
                    } else if (locals.containsKey(name)) {
                        for (Expr.Lambda lam : locals.get(name)) {
                            found[0] |= mentions(lam.body(), v) || lambdaTrouble(lam.body());
                        }
                    } else if (isVariable(f, name)) {
                        found[0] = true; // a call through a function pointer
                    } else {
                        found[0] = ctx.deviceFunctionsNamed(Set.of(simple)).stream()
                                .anyMatch(g -> mayAllocate(g) || mayEndThread(g));
                    }
                });
            }
        });
        return found[0];
    }

    /**
     * @return true if the allocation {@code c} (statement {@code x}) is given back before its thread
     *         goes on: a free of its pointer variable follows it (rule 1 of the class comment), so a
     *         thread that allocates between a site and its free holds no more than one such buffer at
     *         a time (a temporary of each round, not a table that grows)
     */
    private boolean givenBack(FunctionDef f, Stmt x, Expr.Call c, Convergence conv) {
        String w = targetVariable(c);
        if (w == null || !plainLocal(f, w)) {
            return false;
        }
        Trees trees = ctx.uni(f).trees();
        UseScan uses = new UseScan(w, true, wrappersFor(f, w), new HashSet<>());
        uses.scan(f.body());
        if (uses.escapeAt >= 0) {
            return false;
        }
        Site inner = new Site(f, x, c, false);
        for (FreePoint pt : freePoints(f, w, trees)) {
            if (pt.stmt != null && follows(inner, w, pt, uses.assigns, trees, conv)) {
                return true;
            }
        }
        return false;
    }

    /** @return true if a lambda body may allocate, end its thread or call what klap cannot follow */
    private boolean lambdaTrouble(Stmt body) {
        for (Stmt.Other o : Trees.collect(body, Stmt.Other.class)) {
            if (o.asm() != null) {
                return true;
            }
        }
        boolean[] found = {false};
        Trees.walkExprsAndLambdas(body, e -> {
            if (!found[0] && e instanceof Expr.Call c) {
                if (throughExpression(c)) {
                    found[0] = true;
                    return;
                }
                String simple = AggregationContext.simpleName(callName(c));
                found[0] = simple.equals("cudaMalloc") || simple.equals("malloc") || simple.equals("__trap")
                        || ctx.deviceFunctionsNamed(Set.of(simple)).stream().anyMatch(g -> mayAllocate(g) || mayEndThread(g));
            }
        });
        return found[0];
    }

    /** @return true if {@code name} is a variable (parameter or local) of {@code f}: a call of it goes through a pointer */
    private boolean isVariable(FunctionDef f, String name) {
        return variables.computeIfAbsent(f, g -> {
            Set<String> out = new HashSet<>();
            g.params().forEach(p -> out.add(p.name()));
            Trees.walkStmts(g.body(), st -> {
                if (st instanceof Stmt.Decl d) {
                    d.vars().stream().filter(x -> !(x.init() instanceof Expr.Lambda)).forEach(x -> out.add(x.name()));
                }
            });
            return out;
        }).contains(name);
    }

    /** @return the lambda locals of {@code f} by name ({@link Trees#lambdaLocals}), computed once */
    private Map<String, List<Expr.Lambda>> lambdasOf(FunctionDef f) {
        return lambdas.computeIfAbsent(f, g -> Trees.lambdaLocals(g.body()));
    }

    /**
     * @return true if {@code c} calls through an expression klap cannot follow by name: a functor,
     *         a member function, a lambda called in place, a pointer expression
     */
    private static boolean throughExpression(Expr.Call c) {
        return callName(c) == null || strip(c.callee()) instanceof Expr.Member;
    }

    /** @return true if {@code asm} statement {@code o} may end its thread ({@code exit}, {@code trap}) */
    private static boolean endsThread(Stmt.Other o) {
        return o.asm() != null && (o.asm().contains("exit") || o.asm().contains("trap"));
    }

    private boolean mayEndThread(FunctionDef g) {
        Boolean known = exits.get(g);
        if (known != null) {
            return known;
        }
        boolean r = false;
        for (FunctionDef h : ctx.deviceClosure(g)) {
            for (Stmt.Other o : Trees.collect(h.body(), Stmt.Other.class)) {
                r |= endsThread(o);
            }
            boolean[] trap = {false};
            Trees.walkExprsAndLambdas(h.body(), e -> trap[0] |= e instanceof Expr.Call c && callName(c) != null
                    && (callName(c).endsWith("__trap") || callName(c).endsWith("__brkpt")));
            r |= trap[0];
        }
        exits.put(g, r);
        return r;
    }

    /** @return true if {@code g} or what it calls allocates device heap memory, or calls what klap cannot follow */
    private boolean mayAllocate(FunctionDef g) {
        Boolean known = allocates.get(g);
        if (known != null) {
            return known;
        }
        boolean[] r = {false};
        for (FunctionDef h : ctx.deviceClosure(g)) {
            Trees.walkExprsAndLambdas(h.body(), e -> {
                if (e instanceof Expr.Call c) {
                    r[0] |= throughExpression(c) || AggregationContext.simpleName(callName(c)).equals("cudaMalloc")
                            || AggregationContext.simpleName(callName(c)).equals("malloc") || isVariable(h, callName(c));
                }
            });
        }
        allocates.put(g, r[0]);
        return r[0];
    }

    /**
     * @return true if {@code cond} is true only for a thread that holds no share of the site's
     *         allocation: an {@code ||} chain of tests that the site's {@code call} failed
     *         ({@code call}, {@code call != cudaSuccess}; where {@code call} is not null), that the
     *         error {@code err} it returned is one ({@code err}, {@code err != cudaSuccess}; where
     *         {@code err} is not null), or that {@code v} is null ({@code !v}, {@code v == nullptr}).
     *         A thread whose request failed, or that asked for 0 bytes, gets nullptr or its own plain
     *         pointer from {@code klap::group_malloc}, never a share.
     */
    private static boolean noShareTest(Expr cond, Expr.Call call, String err, String v) {
        Expr e = strip(cond);
        if (e instanceof Expr.Binary b && b.op().equals("||")) {
            return noShareTest(b.lhs(), call, err, v) && noShareTest(b.rhs(), call, err, v);
        }
        if (isNullTest(e, v)) {
            return true;
        }
        if (call != null && (e == call || e instanceof Expr.Binary b && b.op().equals("!=")
                && (strip(b.lhs()) == call && isSuccess(b.rhs()) || strip(b.rhs()) == call && isSuccess(b.lhs())))) {
            return true;
        }
        return err != null && (isName(e, err) || e instanceof Expr.Binary b && b.op().equals("!=")
                && (isName(b.lhs(), err) && isSuccess(b.rhs()) || isName(b.rhs(), err) && isSuccess(b.lhs())));
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
     * @return which code that may receive the site's pointer frees device memory (see the class
     *         comment, rule 3), or null if none
     */
    private String freeThatMayReach(FunctionDef f) {
        Set<FunctionDef> reach = reachable(f);
        for (FunctionDef g : reach) {
            if (frees(g)) {
                return g == f ? "'" + f.name() + "' frees device memory"
                        : "'" + g.name() + "', which '" + f.name() + "' calls or launches, frees device memory";
            }
        }
        FunctionDef any = anyFreer();
        if (any == null) {
            return null;
        }
        if (f.kind() != FunctionDef.Kind.KERNEL) {
            return "'" + any.name() + "' frees device memory, and the pointer of a __device__ function may reach it";
        }
        for (FunctionDef g : reach) {
            if (unfollowable(g)) {
                return "'" + g.name() + "' makes a call klap cannot follow (a member function, a functor or a function "
                        + "pointer), and '" + any.name() + "' frees device memory";
            }
        }
        return freesApartElsewhere();
    }

    /**
     * Rule 3's other half (2026-12-01): a pointer stored to memory may be freed by a kernel that
     * {@code f} neither calls nor launches ({@code alloc} stores {@code p} to {@code table[i]} and a
     * later {@code release} grid frees {@code table[i]} for odd {@code i} only: each group keeps its
     * whole chunk while half its shares are still held). So every device free of the file must be
     * one that the threads of a grid make alike: each {@code if}, loop and jump around or before it
     * tests only a value uniform across the grid, the freed pointer against null (freeing null does
     * nothing), or a bound on the thread's global index ({@code lidx < n}, as
     * bt's {@code freeVertexMem}). A free in a lambda, a switch, a function with {@code goto}, or
     * under {@code &&}, {@code ||} or {@code ?:} counts as apart, and so does a call of a function
     * that frees (transitively) anywhere but in a named call.
     *
     * @return null if every free of the file's device code is made alike, else why not (computed once)
     */
    private String freesApartElsewhere() {
        if (!apartKnown) {
            apartKnown = true;
            Set<FunctionDef> freers = new HashSet<>();
            for (boolean changed = true; changed; ) {
                changed = false;
                for (FunctionDef g : ctx.unit.functions()) {
                    if (g.kind().onDevice() && g.body() != null && !freers.contains(g)
                            && (frees(g) || ctx.deviceClosure(g).stream().anyMatch(h -> h != g && freers.contains(h)))) {
                        freers.add(g);
                        changed = true;
                    }
                }
            }
            for (FunctionDef h : freers) {
                if (h.memberOf() != null || h.kind() != FunctionDef.Kind.KERNEL && h.kind() != FunctionDef.Kind.DEVICE) {
                    apart = "'" + h.name() + "' frees device memory (a member function or a host-and-device function, "
                            + "whose calls klap does not check)";
                    break;
                }
                apart = freesApartIn(h, freers);
                if (apart != null) {
                    break;
                }
            }
        }
        return apart;
    }

    /** whether {@link #apart} is computed, and why some free of the file's device code is made apart (null: none) */
    private boolean apartKnown;
    private String apart;
    /** the function whose guards {@link #alikeGuard} judges ({@link #freesApartIn}) */
    private FunctionDef guardFunction;

    /** @return null if every free, and every call of a function in {@code freers}, of {@code h} is made alike, else why not */
    private String freesApartIn(FunctionDef h, Set<FunctionDef> freers) {
        Uniformity gu = ctx.gridUni(h);
        Trees trees = gu.trees();
        guardFunction = h;
        List<Stmt.Jump> jumps = Trees.collect(h.body(), Stmt.Jump.class);
        boolean gotos = jumps.stream().anyMatch(j -> j.kind() == Stmt.JumpKind.GOTO);
        List<Expr.Call> sites = new ArrayList<>();
        boolean[] hidden = {false};
        Trees.walkExprsAndLambdas(h.body(), e -> {
            if (e instanceof Expr.Call c) {
                String n = callName(c);
                if (isCudaFree(c) || isLibcFree(c)
                        || n != null && ctx.deviceFunctionsNamed(Set.of(n)).stream().anyMatch(freers::contains)) {
                    sites.add(c);
                } else if (n == null && !(strip(c.callee()) instanceof Expr.Lambda)) {
                    hidden[0] = true;
                }
            }
        });
        for (Expr.Call c : sites) {
            String where = "'" + h.name() + "' frees device memory at line " + ctx.src.line(c.range().offset());
            if (freesOwnAllocation(h, c)) {
                continue; // its shares are its own site's, which the rules above judge
            }
            Stmt owner = trees.owner(c);
            if (owner == null) {
                return where + ", in a lambda";
            }
            if (hidden[0]) {
                return where + " and calls through an expression klap cannot follow";
            }
            if (gotos || conditionallyEvaluated(owner, c)) {
                return where + (gotos ? ", in a function with goto" : ", under &&, || or ?:");
            }
            String freed = c.args().size() == 1 ? ctx.src.slice(strip(c.args().get(0)).range()).strip() : null;
            String cond = unlikeCondition(owner, trees, gu, freed);
            for (Stmt.Jump j : jumps) {
                boolean inLoopAround = trees.path(owner).stream().anyMatch(x -> x instanceof Stmt.Loop && trees.isAncestorOrSelf(x, j));
                if (cond == null && (j.range().offset() < c.range().offset() || inLoopAround)) {
                    cond = unlikeCondition(j, trees, gu, freed);
                }
            }
            if (cond != null) {
                return where + " only where " + cond + " (some threads of a group may free their shares and others not; "
                        + "see the malloc-lifetime row of docs/constructs.md)";
            }
        }
        return null;
    }

    /**
     * @return true if {@code c} is {@code cudaFree(v)} (or a free wrapper's call) of a local {@code v} of {@code h} that only
     *         {@code h}'s own cudaMalloc calls write (declared once without a value or with null,
     *         never assigned, its address never taken): it cannot free a pointer stored to memory
     */
    private boolean freesOwnAllocation(FunctionDef h, Expr.Call c) {
        // cudaFree(v), or a free wrapper's call release(v) (freeWrappers)
        Integer at = isCudaFree(c) && c.args().size() == 1 ? Integer.valueOf(0)
                : callName(c) != null && freeWrappers().containsKey(callName(c)) ? freeWrappers().get(callName(c)) : null;
        if (at == null || at >= c.args().size() || !(strip(c.args().get(at)) instanceof Expr.Name n)) {
            return false;
        }
        // a lambda's init-capture [v = t[i]] declares another v, which its body's free may free
        boolean[] redeclared = {false};
        Trees.walkExprsAndLambdas(h.body(), e -> {
            if (e instanceof Expr.Lambda lam) {
                List<String> items = captureItems(lam);
                redeclared[0] |= items == null || items.stream().anyMatch(i -> i.contains("=")
                        && i.substring(0, i.indexOf('=')).replace("&", "").strip().equals(n.name()));
            }
        });
        return !redeclared[0] && ownAllocationOnly(h, n.name(), new HashSet<>());
    }

    /**
     * @return true if local {@code v} of {@code h} only ever holds null, what {@code h}'s cudaMalloc
     *         calls give it, or a copy of such a local (its declaration's value and its plain
     *         assignments; no other write, its address never taken)
     */
    private boolean ownAllocationOnly(FunctionDef h, String v, Set<String> visiting) {
        if (!visiting.add(v)) {
            return true; // p = q; q = p;: a cycle adds nothing
        }
        if (!plainLocal(h, v)) {
            return false;
        }
        UseScan uses = new UseScan(v, true, wrappersFor(h, v), new HashSet<>());
        uses.scan(h.body());
        if (uses.escapeAt >= 0) {
            return false;
        }
        List<Expr> values = new ArrayList<>();
        Trees.walkExprsAndLambdas(h.body(), e -> {
            if (e instanceof Expr.Binary b && b.op().equals("=") && isName(b.lhs(), v)) {
                values.add(b.rhs());
            }
        });
        if (values.size() != uses.assigns.size()) {
            return false; // ++, +=: a pointer into the share, not the share
        }
        Trees.walkStmts(h.body(), s -> {
            if (s instanceof Stmt.Decl d) {
                d.vars().stream().filter(x -> x.name().equals(v) && x.init() != null).forEach(x -> values.add(x.init()));
            }
        });
        if (values.isEmpty() && mallocsOf(h, v) == 0) {
            return false; // no value klap sees (a range-for variable: review 2026-12-01)
        }
        boolean[] rangeFor = {false};
        Trees.walkStmts(h.body(), st -> rangeFor[0] |= st instanceof Stmt.Loop lp && lp.kind() == Stmt.LoopKind.RANGE_FOR
                && lp.init() != null && Trees.collect(lp.init(), Stmt.Decl.class).stream()
                        .anyMatch(d -> d.vars().stream().anyMatch(x -> x.name().equals(v))));
        if (rangeFor[0]) {
            return false;
        }
        for (Expr x : values) {
            if (!isNullLiteral(x) && !(strip(x) instanceof Expr.Name u && ownAllocationOnly(h, u.name(), visiting))) {
                return false;
            }
        }
        return true;
    }

    /**
     * @return the text of the first condition around {@code s} (its {@code if}s, loops and
     *         switches, {@code s} itself excluded) that the threads of a grid may decide unlike,
     *         or null if none ({@link #alikeGuard})
     */
    private String unlikeCondition(Stmt s, Trees trees, Uniformity gu, String freed) {
        for (Stmt x : trees.path(s)) {
            if (x == s) {
                continue;
            }
            Expr cond = x instanceof Stmt.If i ? i.cond() : x instanceof Stmt.Loop l ? l.cond() : x instanceof Stmt.Switch w ? w.cond() : null;
            if (x instanceof Stmt.Switch || cond != null && !alikeGuard(cond, gu, freed)) {
                return "'" + (cond == null ? "switch" : ctx.src.slice(cond.range()).replaceAll("\\s+", " ")) + "'";
            }
        }
        return null;
    }

    /**
     * @return true if condition {@code e} is uniform across the grid, a null test of the freed
     *         pointer {@code freed} (its text), a bound ({@code <}, {@code <=}, {@code >}, {@code >=})
     *         between a grid-uniform value and the thread's global index ({@link #globalIndex}), or
     *         {@code !}, {@code &&}, {@code ||} of such
     */
    private boolean alikeGuard(Expr e, Uniformity gu, String freed) {
        FunctionDef h = guardFunction;
        Expr x = strip(e);
        if (gu.isUniform(x)) {
            return true;
        }
        if (freed != null && ctx.src.slice(x.range()).strip().equals(freed)) {
            return true;
        }
        if (x instanceof Expr.Unary u && u.op().equals("!")) {
            return alikeGuard(u.operand(), gu, freed);
        }
        if (x instanceof Expr.Binary b) {
            switch (b.op()) {
                case "&&", "||" -> {
                    return alikeGuard(b.lhs(), gu, freed) && alikeGuard(b.rhs(), gu, freed);
                }
                case "==", "!=" -> {
                    return freed != null && (isNullLiteral(b.rhs()) && ctx.src.slice(strip(b.lhs()).range()).strip().equals(freed)
                            || isNullLiteral(b.lhs()) && ctx.src.slice(strip(b.rhs()).range()).strip().equals(freed));
                }
                case "<", "<=", ">", ">=" -> {
                    // a bound on the thread's global index (bt's lidx < nLines), not on threadIdx alone (thread 0 of
                    // each block kept its share) nor on a value read from memory (review 2026-12-01)
                    return gu.isUniform(b.rhs()) && globalIndex(b.lhs(), h, gu, new HashSet<>()) == Boolean.TRUE
                            || gu.isUniform(b.lhs()) && globalIndex(b.rhs(), h, gu, new HashSet<>()) == Boolean.TRUE;
                }
                default -> {
                    return false;
                }
            }
        }
        return false;
    }

    /**
     * @return TRUE if {@code e} is a function of the thread's global index: {@code + - *} of
     *         literals, grid-uniform values, the built-in indices, and locals of {@code h} declared
     *         once with such a value and changed only by {@code +=} of a grid-uniform value (a
     *         grid-stride loop), mentioning {@code blockIdx}; FALSE if it is such an expression
     *         without {@code blockIdx}; null otherwise
     */
    private Boolean globalIndex(Expr e, FunctionDef h, Uniformity gu, Set<String> visiting) {
        Expr x = strip(e);
        if (x instanceof Expr.Literal || gu.isUniform(x) && !(x instanceof Expr.Name n0 && n0.kind() == Expr.NameKind.LOCAL)) {
            return Boolean.FALSE;
        }
        if (x instanceof Expr.Member m) {
            return !m.arrow() && strip(m.owner()) instanceof Expr.Name o && Set.of("threadIdx", "blockIdx", "blockDim", "gridDim")
                    .contains(o.name()) ? Boolean.valueOf(o.name().equals("blockIdx")) : null;
        }
        if (x instanceof Expr.Binary b && Set.of("+", "-", "*").contains(b.op())) {
            Boolean l = globalIndex(b.lhs(), h, gu, visiting);
            Boolean r = l == null ? null : globalIndex(b.rhs(), h, gu, visiting);
            return l == null || r == null ? null : Boolean.valueOf(l || r);
        }
        if (x instanceof Expr.Name n && n.kind() == Expr.NameKind.LOCAL && visiting.add(n.name())) {
            List<Expr> inits = new ArrayList<>();
            int[] decls = {0};
            Trees.walkStmts(h.body(), st -> {
                if (st instanceof Stmt.Decl d) {
                    d.vars().stream().filter(v -> v.name().equals(n.name())).forEach(v -> {
                        decls[0]++;
                        if (v.init() != null) {
                            inits.add(v.init());
                        }
                    });
                }
            });
            boolean[] other = {false};
            Trees.walkExprsAndLambdas(h.body(), y -> {
                if (y instanceof Expr.Binary a && a.isAssignment() && isName(a.lhs(), n.name())) {
                    other[0] |= !(a.op().equals("+=") && gu.isUniform(a.rhs()));
                } else if (y instanceof Expr.Unary u && isName(u.operand(), n.name()) && !u.op().equals("()")
                        && !u.op().equals("!") && !u.op().equals("-") && !u.op().equals("+")) {
                    other[0] = true; // ++, --, &
                }
            });
            if (decls[0] != 1 || inits.size() != 1 || other[0]) {
                return null;
            }
            return globalIndex(inits.get(0), h, gu, visiting);
        }
        return null;
    }


    /** @return a function of the unit whose device code frees device memory, or null */
    private FunctionDef anyFreer() {
        if (!anyFreerKnown) {
            anyFreerKnown = true;
            anyFreer = ctx.unit.functions().stream().filter(g -> g.kind().onDevice() && frees(g)).findFirst().orElse(null);
        }
        return anyFreer;
    }

    /** @return true if {@code g} (lambda bodies included) calls {@code cudaFree} or {@code free} */
    private static boolean frees(FunctionDef g) {
        boolean[] found = {false};
        Trees.walkExprsAndLambdas(g.body(), e -> found[0] |= e instanceof Expr.Call c && (isCudaFree(c) || isLibcFree(c)));
        return found[0];
    }

    /** @return true if {@code g} calls a member function, a functor, a function pointer or a lambda in place */
    private boolean unfollowable(FunctionDef g) {
        Map<String, List<Expr.Lambda>> locals = lambdasOf(g);
        boolean[] found = {false};
        Trees.walkExprsAndLambdas(g.body(), e -> {
            if (e instanceof Expr.Call c) {
                found[0] |= throughExpression(c) || !locals.containsKey(callName(c)) && isVariable(g, callName(c));
            }
        });
        return found[0];
    }

    /** @return {@code f}, the device functions it calls and the kernels it launches, and theirs, transitively */
    private Set<FunctionDef> reachable(FunctionDef f) {
        Set<FunctionDef> out = new LinkedHashSet<>();
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

    // ------------------------------------------------------------------------ uses of the pointer variable

    /**
     * @return true if {@code v} is a local variable of {@code f} declared exactly once in its body
     *         (not a parameter, not static, {@code __shared__}, a reference or an array) and no lambda
     *         of {@code f} declares a parameter or local of that name
     */
    private boolean plainLocal(FunctionDef f, String v) {
        if (f.params().stream().anyMatch(p -> v.equals(p.name()))) {
            return false;
        }
        int[] declared = {0};
        boolean[] plain = {true};
        Trees.walkStmts(f.body(), s -> {
            if (s instanceof Stmt.Decl d) {
                for (VarDecl x : d.vars()) {
                    if (x.name().equals(v)) {
                        declared[0]++;
                        plain[0] &= !x.isStatic() && !x.reference() && !x.array() && !x.shared();
                    }
                }
            }
        });
        if (declared[0] != 1 || !plain[0]) {
            return false;
        }
        return !lambdaDeclares(f, v);
    }

    /** @return true if a lambda of {@code f} declares {@code name} (a capture, a parameter or a local of its body) */
    private boolean lambdaDeclares(FunctionDef f, String name) {
        boolean[] found = {false};
        Trees.walkExprsAndLambdas(f.body(), e -> {
            if (e instanceof Expr.Lambda lam) {
                found[0] |= word(name).matcher(lambdaHead(lam)).find();
                Trees.walkStmts(lam.body(), s -> found[0] |= s instanceof Stmt.Decl d
                        && d.vars().stream().anyMatch(x -> x.name().equals(name)));
            }
        });
        return found[0];
    }

    private static Pattern word(String v) {
        return Pattern.compile("\\b" + Pattern.quote(v) + "\\b");
    }

    /** @return how many cudaMalloc calls of {@code f} write {@code v} */
    private static int mallocsOf(FunctionDef f, String v) {
        int[] n = {0};
        Trees.walkExprsAndLambdas(f.body(), e -> {
            if (e instanceof Expr.Call c && isCudaMalloc(c) && v.equals(targetVariable(c))) {
                n[0]++;
            }
        });
        return n[0];
    }

    /**
     * The uses of a pointer variable ({@code v}, or a parameter of a callee or kernel that receives
     * it): the first that may write it other than by a plain assignment ({@code escapeAt}: its
     * address taken, a reference bound to it, a call that may take it by reference, an {@code asm}
     * that names it, a write inside a lambda), the plain assignments and increments outside lambdas
     * ({@code assigns}), and the first that may copy its value somewhere ({@code copyAt}); offsets,
     * -1 for none. Harmless: reading or writing through it ({@code *v}, {@code v[i]}, {@code v->m},
     * also after pointer arithmetic, but not their address {@code &v[i]}, which is a pointer into the
     * share), comparing or testing it, {@code sizeof}, handing it to a callee or a kernel of the file
     * whose parameter is used only in these ways (by value), to the address argument of a CUDA
     * built-in ({@link #ADDRESS_FIRST}) or to {@link #THROUGH_ALL}; for {@code v} itself ({@code own}),
     * {@code &v} as the first argument of {@code cudaMalloc} and {@code cudaFree(v)}.
     */
    private final class UseScan {
        private final String v;
        private final boolean own;
        /** the callee parameters being checked (a recursive call counts as harmless) */
        private final Set<String> visiting;
        /** the free wrappers the scanned function may call ({@link #wrappersIn}) */
        private final Map<String, Integer> wrappers;
        private boolean inLambda;
        int escapeAt = -1;
        int copyAt = -1;
        final List<Integer> assigns = new ArrayList<>();

        UseScan(String v, boolean own, Map<String, Integer> wrappers, Set<String> visiting) {
            this.v = v;
            this.own = own;
            this.wrappers = wrappers;
            this.visiting = visiting;
        }

        boolean harmless() {
            return escapeAt < 0 && copyAt < 0 && assigns.isEmpty();
        }

        private void escape(int at) {
            escapeAt = escapeAt < 0 ? at : escapeAt;
        }

        private void copy(int at) {
            copyAt = copyAt < 0 ? at : copyAt;
        }

        /** Scans every use of {@code v} in {@code body}, lambda bodies included. */
        void scan(Stmt body) {
            Trees.walkStmts(body, s -> {
                if (s instanceof Stmt.Decl d) {
                    for (VarDecl x : d.vars()) {
                        if (x.init() != null) {
                            scan(x.init(), new ArrayDeque<>(), x.reference() ? Use.ESCAPE : Use.COPY);
                        }
                    }
                    return;
                }
                if (s instanceof Stmt.Other o && o.asm() != null && word(v).matcher(o.asm()).find()) {
                    escape(o.range().offset()); // an asm operand (the model has no operand expressions)
                }
                for (Expr top : Trees.ownExprs(s)) {
                    Use t = s instanceof Stmt.ExprStmt || s instanceof Stmt.If || s instanceof Stmt.Loop
                            || s instanceof Stmt.Switch ? Use.HARMLESS : s instanceof Stmt.Other o && o.asm() != null ? Use.ESCAPE
                            : Use.COPY;
                    scan(top, new ArrayDeque<>(), t);
                }
            });
        }

        private void scan(Expr e, Deque<Expr> up, Use top) {
            if (e == null) {
                return;
            }
            if (e instanceof Expr.Lambda lam) {
                lambda(lam);
                return;
            }
            if (e instanceof Expr.Name n && n.name().equals(v)) {
                int at = e.range().offset();
                switch (use(e, up, top)) {
                    case ESCAPE -> escape(at);
                    case ASSIGN -> {
                        if (inLambda) {
                            escape(at);
                        } else {
                            assigns.add(at);
                        }
                    }
                    case COPY -> copy(at);
                    default -> {
                    }
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
            if (items == null) {
                escape(lam.range().offset());
                return;
            }
            boolean byCopy = false;
            for (String item : items) {
                int eq = item.indexOf('=');
                if (eq > 0 && word(v).matcher(item.substring(eq + 1)).find()) {
                    if (item.startsWith("&")) {
                        escape(lam.range().offset());
                    } else {
                        copy(lam.range().offset());
                    }
                }
                byCopy |= item.equals(v) || item.equals("=") && !lam.refCaptures().contains(v);
            }
            if (byCopy && mentions(lam.body(), v)) {
                copy(lam.range().offset()); // the lambda object holds a copy
            }
            boolean was = inLambda;
            inLambda = true;
            scan(lam.body());
            inLambda = was;
        }

        /** @return how the use {@code e} of {@code v}, under the expressions {@code up} (innermost first), uses it */
        private Use use(Expr e, Deque<Expr> up, Use top) {
            Iterator<Expr> it = up.iterator();
            Expr cur = e;
            boolean through = false; // cur is an lvalue in the share (*v, v[i], v->m)
            boolean direct = true;   // cur is v itself, through casts and parentheses only
            while (true) {
                if (!it.hasNext()) {
                    return through ? Use.HARMLESS : top;
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
                            return direct && own && mallocTarget(p, it) ? Use.HARMLESS : Use.ESCAPE;
                        }
                        case "*" -> {
                            through = true;
                            direct = false;
                            cur = p;
                            continue;
                        }
                        case "!", "sizeof", "alignof" -> {
                            return Use.HARMLESS;
                        }
                        case "++pre", "--pre", "post++", "post--" -> {
                            return direct ? Use.ASSIGN : Use.COPY;
                        }
                        default -> {
                            return Use.COPY;
                        }
                    }
                }
                if (p instanceof Expr.Subscript || p instanceof Expr.Member) {
                    // v[i], v->m: an lvalue in the share; an index, or a member of v itself, is a copy
                    if (!(p instanceof Expr.Subscript s && s.array() == cur || p instanceof Expr.Member m && m.owner() == cur
                            && m.arrow())) {
                        return Use.COPY;
                    }
                    through = true;
                    direct = false;
                    cur = p;
                    continue;
                }
                if (p instanceof Expr.Launch l) {
                    int at = indexOf(l.args(), cur);
                    FunctionDef k = ctx.kernel(l.kernelName());
                    return at >= 0 && k != null && harmlessParam(k, at) ? Use.HARMLESS : Use.COPY;
                }
                if (p instanceof Expr.Call c) {
                    return argument(c, cur, direct);
                }
                if (p instanceof Expr.Binary b) {
                    if (b.isAssignment()) {
                        return b.lhs() == cur && direct ? Use.ASSIGN : Use.COPY;
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
                            direct = false;
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
                    direct = false;
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
                return r instanceof Expr.Call c && isCudaMalloc(c) && !c.args().isEmpty()
                        && c.args().get(0) == q;
            }
            return false;
        }

        /** @return how passing {@code arg} ({@code v} itself if {@code itself}) to call {@code c} uses it */
        private Use argument(Expr.Call c, Expr arg, boolean itself) {
            int at = indexOf(c.args(), arg);
            String callee = callName(c);
            if (at < 0 || throughExpression(c)) {
                return itself ? Use.ESCAPE : Use.COPY;
            }
            String simple = AggregationContext.simpleName(callee);
            List<FunctionDef> defs = ctx.deviceFunctionsNamed(Set.of(simple));
            boolean mayWrite = c.paramModes() == null || at >= c.paramModes().length() || c.paramModes().charAt(at) == 'w';
            if (own && itself && callee.equals(simple) && wrappers.containsKey(simple) && wrappers.get(simple) == at
                    && c.args().size() == defs.get(0).params().size()) {
                return Use.HARMLESS; // release(v): a free point, as cudaFree(v)
            }
            if (defs.isEmpty()) {
                if (isCudaFree(c)) {
                    return own && itself && c.args().size() == 1 ? Use.HARMLESS : Use.COPY;
                }
                if (THROUGH_ALL.contains(callee) || ADDRESS_FIRST.matcher(callee).matches() && at == 0) {
                    return Use.HARMLESS;
                }
                return itself && mayWrite ? Use.ESCAPE : Use.COPY;
            }
            boolean templateArgs = ctx.src.text().substring(c.callee().range().offset(), c.callee().range().end()).contains("<");
            for (FunctionDef g : defs) {
                if (at >= g.params().size()) {
                    return Use.COPY;
                }
                if (templateArgs || byReference(g, at) || c.paramModes() != null && mayWrite) {
                    return itself ? Use.ESCAPE : Use.COPY;
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
            UseScan inner = new UseScan(pm.name(), false, Map.of(), visiting);
            inner.scan(g.body());
            return inner.harmless();
        }

        /** @return true if parameter {@code at} of {@code g} is declared as a reference, or through a name that may be one */
        private boolean byReference(FunctionDef g, int at) {
            klap.model.Param pm = g.params().get(at);
            String text = ctx.src.text().substring(pm.range().offset(), pm.range().end());
            if (text.contains("&")) {
                return true;
            }
            // a typedef, an alias, a template parameter or a macro may hide a reference: only the
            // built-in spellings of a pointer are known to be by value
            String type = text.substring(0, Math.max(0, text.lastIndexOf(pm.name() == null ? "" : pm.name())));
            return !type.replaceAll("\\b(const|volatile|__restrict__|unsigned|signed|struct|class)\\b", " ").contains("*")
                    && !type.isBlank();
        }
    }

    /** What a use does with the pointer. */
    private enum Use { HARMLESS, COPY, ASSIGN, ESCAPE }

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
            if (e instanceof Expr.Call c && isCudaFree(c)) {
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
