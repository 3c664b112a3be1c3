package klap.transform;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import klap.model.CudaUnit;
import klap.model.Expr;
import klap.model.FunctionDef;
import klap.model.LibraryCalls;
import klap.model.Stmt;

/**
 * Synchronization sites and launching calls of a translation unit, computed once: which statements
 * hold a barrier or warp collective (directly or through a called function), and which hold a
 * device-side launch (directly, in a called function, or in a lambda). The aggregation planner asks
 * these facts instead of reading code (ARCHITECTURE.md, "Facts, computed once").
 *
 * <p>Synchronization sites: {@code __syncthreads} and its {@code _count/_and/_or} forms,
 * {@code __syncwarp}, {@code __barrier_sync}, every {@code *_sync} warp intrinsic
 * ({@code __shfl_sync}, {@code __ballot_sync}, {@code __all_sync}, {@code __any_sync},
 * {@code __match_*_sync}, {@code __reduce_*_sync}), cooperative-groups {@code g.sync()},
 * {@code cg::sync(g)}, {@code barrier.arrive_and_wait()}, {@code asm} statements whose PTX
 * synchronizes (also written through a macro; {@link #SYNC_PTX}), and calls of functions of the
 * unit that contain one (transitively). A call
 * of a {@code __device__} function that the unit declares but nothing in it defines (its body is in
 * another file, {@link CudaUnit#deviceFunctionsWithoutBody}) counts as a synchronization site and
 * as a launching operation: klap cannot see what it does (review 2026-11-25: a {@code block_sum}
 * with {@code __syncthreads()} in another file after a guarded return hung). Library calls
 * (intrinsics, math, CUB) are declared in headers klap reads no body of, so are not counted, but for
 * the collectives of the libraries the unit includes ({@link LibraryCalls}: CUB's block and
 * warp primitives, cooperative groups' {@code tile.shfl}, {@code cg::reduce}, {@code cg::wait}, ...,
 * libcu++'s barrier waits; review 2026-11-29: such a call after a guarded return was no site), and a
 * call of a CUB device-wide algorithm ({@code cub::DeviceReduce::Sum}) is a launching operation. A
 * {@code __device__} function that a project header defines counts by what its body does
 * ({@link CudaUnit#headerSyncFunctions}, or as unseen when it does what klap cannot follow).
 *
 * <p>Calls through a variable (review 2026-11-27): a call of a local initialized with a lambda
 * synchronizes or launches when that lambda's body does; a member call {@code s.finish()} when a
 * member function of that name of the unit does; a call through a function pointer, functor or
 * other callable variable when any device function of the unit whose address is taken does, or any
 * lambda of the unit (a copy of a lambda local, {@code auto m = l; m();}, or a lambda passed as an
 * argument and called through the parameter: review 2026-11-29), or when the unit calls functions
 * klap cannot see (the pointer may come from another file).
 *
 * <p>Calls without a call expression (review 2026-11-29, {@link klap.model.ImplicitCall}): an
 * overloaded operator, a functor's {@code operator()}, a constructor or a destructor synchronizes or
 * launches when the function called does: one of the file by its name, one of a header by its own
 * facts, one whose body klap cannot follow always. Such a call is a site at its offset.
 *
 * <p>Why it matters (issue 10, first GPU run): klap's own collectives (block barriers in
 * {@code agg_begin}/{@code flush}, warp shuffles) use the same hardware barrier as the user's
 * {@code __syncthreads()}. Keeping threads that returned early alive for klap's collective, while
 * the other threads wait at the user's barrier, pairs the two barriers: a hang or a wrong result.
 */
public final class SyncSites {
    /**
     * Device runtime calls that are ordered with launches in a stream: event records and waits, and
     * the asynchronous copies and sets (a copy after a launch into the NULL stream reads what the
     * child wrote). Aggregation never defers a launch past one; promotion refuses a kernel that makes
     * one, since its successor no longer waits for it.
     */
    public static final Set<String> STREAM_OPERATIONS = Set.of("cudaEventRecord", "cudaEventRecordWithFlags",
            "cudaStreamWaitEvent", "cudaMemcpyAsync", "cudaMemcpy2DAsync", "cudaMemcpy3DAsync", "cudaMemsetAsync",
            "cudaMemset2DAsync", "cudaMemset3DAsync", "cudaMemcpyToSymbolAsync", "cudaMemcpyFromSymbolAsync",
            "cudaMemcpyPeerAsync");

    /** Device launches without {@code <<<>>>} (CUDA programming guide, CDP, "Device-side Launch from PTX"). */
    public static final Set<String> RAW_LAUNCHES = Set.of("cudaLaunchDevice", "cudaLaunchDeviceV2",
            "cudaLaunchDevice_ptsz", "cudaLaunchDeviceV2_ptsz");

    /** Key, in both maps, of what constructing an object of a class of the unit may do. */
    private static final String CONSTRUCTOR = "constructor:";

    private static final Set<String> BARRIER_CALLS = Set.of("__syncthreads", "__syncthreads_count",
            "__syncthreads_and", "__syncthreads_or", "__syncwarp", "__barrier_sync", "sync", "cg::sync",
            "cooperative_groups::sync", "arrive_and_wait", "barrier_wait");

    /** Keys of the lambda-valued locals in {@link #syncFunctions} and {@link #launchFunctions}. */
    private static final String LAMBDA = "lambda:";
    /** Key, in both maps, of what a call through a function pointer may reach. */
    private static final String POINTER = "pointer:";

    private final CudaUnit unit;
    private final Map<String, Boolean> syncFunctions = new HashMap<>();
    private final Map<String, Boolean> launchFunctions = new HashMap<>();

    /** Indexes {@code unit}: the functions that synchronize and the functions that launch, transitively. */
    public SyncSites(CudaUnit unit) {
        this.unit = unit;
        Map<String, List<FunctionDef>> byName = new HashMap<>();
        for (FunctionDef f : unit.functions()) {
            if (f.kind() != FunctionDef.Kind.HOST) {
                byName.computeIfAbsent(f.name(), k -> new java.util.ArrayList<>()).add(f);
            }
        }
        for (String name : byName.keySet()) {
            syncFunctions.put(name, false);
            launchFunctions.put(name, false);
        }
        // a header function of the same simple name as one of the file is another overload: its facts
        // count for the name too (conservatively)
        for (String name : unit.deviceFunctionsWithoutBody()) {
            syncFunctions.put(name, true);
            launchFunctions.put(name, true);
        }
        for (String name : unit.headerSyncFunctions()) {
            syncFunctions.put(name, true);
            launchFunctions.putIfAbsent(name, false);
        }
        // the lambdas held by locals, by the local's name
        Map<String, List<Stmt>> lambdas = new HashMap<>();
        for (FunctionDef f : unit.functions()) {
            Trees.lambdaLocals(f.body()).forEach((name, ls) -> ls.forEach(l -> lambdas
                    .computeIfAbsent(LAMBDA + name, k -> new java.util.ArrayList<>()).add(l.body())));
        }
        for (String k : lambdas.keySet()) {
            syncFunctions.put(k, false);
            launchFunctions.put(k, false);
        }
        // every lambda of the unit, held in a local or not: a copy of one (auto m = l; m();) or one passed as
        // an argument and called through the parameter is a call through a variable (review 2026-11-29)
        // (a lambda of host code only where it is an extended __device__ lambda, which a kernel may be passed:
        // a host lambda's launches are host launches)
        List<Stmt> anyLambda = new java.util.ArrayList<>();
        for (FunctionDef f : unit.functions()) {
            Trees.walkExprsAndLambdas(f.body(), e -> {
                if (e instanceof Expr.Lambda l && (f.kind().onDevice() || unit.file().text()
                        .substring(l.range().offset(), l.body().range().offset()).contains("__device__"))) {
                    anyLambda.add(l.body());
                }
            });
        }
        // what a call through a pointer or a functor may reach: the device functions (of the file or of a
        // header) whose address is taken, functors' operator(), and, if the unit declares device
        // functions defined in another file, anything (the pointer may come from there)
        Set<String> targets = new HashSet<>(unit.headerSyncFunctions());
        targets.addAll(unit.deviceFunctionsWithoutBody());
        byName.forEach((name, fs) -> {
            if (fs.stream().anyMatch(f -> f.kind() != FunctionDef.Kind.KERNEL)) {
                targets.add(name);
            }
        });
        Set<String> addressTaken = AddressTaken.of(unit, targets);
        byName.keySet().stream().filter(n -> n.replace(" ", "").equals("operator()")).forEach(addressTaken::add);
        Set<String> declaredOnly = new HashSet<>(unit.deviceFunctionsWithoutBody());
        declaredOnly.removeAll(unit.headerOpaqueFunctions());
        boolean unseen = !declaredOnly.isEmpty();
        syncFunctions.put(POINTER, unseen);
        launchFunctions.put(POINTER, unseen);
        // a declaration that runs a user constructor (review 2026-11-27: a barrier or a launch in a
        // constructor was not seen): whatever a constructor of the unit does (one of a header: not yet)
        syncFunctions.put(CONSTRUCTOR, false);
        launchFunctions.put(CONSTRUCTOR, false);
        Set<String> ctors = new HashSet<>();
        for (FunctionDef f : unit.functions()) {
            if (f.memberOf() != null && f.name().equals(f.memberOf())) {
                ctors.add(f.name());
            }
        }
        boolean changed = true;
        while (changed) {
            changed = false;
            for (var e : byName.entrySet()) {
                for (FunctionDef f : e.getValue()) {
                    changed |= update(e.getKey(), f.body());
                }
            }
            for (var e : lambdas.entrySet()) {
                for (Stmt body : e.getValue()) {
                    changed |= update(e.getKey(), body);
                }
            }
            for (String c : ctors) {
                changed |= propagate(c, CONSTRUCTOR);
            }
            for (Stmt body : anyLambda) {
                changed |= update(POINTER, body);
            }
            for (String t : addressTaken) {
                changed |= propagate(t, POINTER);
            }
        }
    }

    /** One step of the fixed point: what {@code from} does, {@code to} does. @return true if it changed */
    private boolean propagate(String from, String to) {
        boolean changed = false;
        if (syncFunctions.getOrDefault(from, false) && !syncFunctions.get(to)) {
            syncFunctions.put(to, true);
            changed = true;
        }
        if (launchFunctions.getOrDefault(from, false) && !launchFunctions.get(to)) {
            launchFunctions.put(to, true);
            changed = true;
        }
        return changed;
    }

    /** One step of the fixed point: what {@code body}, held under {@code key}, does. @return true if it changed */
    private boolean update(String key, Stmt body) {
        boolean changed = false;
        if (!syncFunctions.get(key) && directSync(body, syncFunctions)) {
            syncFunctions.put(key, true);
            changed = true;
        }
        if (!launchFunctions.get(key) && directLaunch(body, launchFunctions)) {
            launchFunctions.put(key, true);
            changed = true;
        }
        return changed;
    }

    /**
     * @return the key under which {@code known} holds what call {@code c} may do: the function's
     *         simple name, a member call's member name, {@code lambda:x} for a local {@code x} that
     *         holds a lambda, {@link #POINTER} for another call through a variable or an expression;
     *         null for a call of a name klap does not resolve (a library function)
     */
    private static String calleeKey(Expr.Call c, Map<String, Boolean> known) {
        if (c.callee() instanceof Expr.Member m) {
            return m.member();
        }
        if (c.callee() instanceof Expr.Name n) {
            return switch (n.kind()) {
                case LOCAL -> known.containsKey(LAMBDA + n.name()) ? LAMBDA + n.name() : POINTER;
                case PARAM, GLOBAL -> POINTER;
                default -> c.calleeName() == null ? null : simple(c.calleeName());
            };
        }
        return c.calleeName() != null ? simple(c.calleeName()) : POINTER;
    }

    /** @return true if statement {@code s} (with everything nested in it) synchronizes threads */
    public boolean synchronizes(Stmt s) {
        return directSync(s, syncFunctions);
    }

    /**
     * @return the first synchronization site in {@code s} whose offset lies in [{@code from},
     *         {@code to}), or null; a site inside one of the statements {@code skip} is ignored
     */
    public Integer firstSync(Stmt s, int from, int to, List<? extends Stmt> skip) {
        Integer[] found = {null};
        Trees.walkStmts(s, x -> {
            if (x instanceof Stmt.Other o && isBarrierAsm(o) && inside(o.range().offset(), from, to, skip)) {
                found[0] = min(found[0], o.range().offset());
            }
            if (constructs(x, syncFunctions) && inside(x.range().offset(), from, to, skip)) {
                found[0] = min(found[0], x.range().offset());
            }
            for (Expr top : Trees.ownExprs(x)) {
                Trees.walk(top, e -> {
                    if (isSyncExpr(e, syncFunctions) && inside(e.range().offset(), from, to, skip)) {
                        found[0] = min(found[0], e.range().offset());
                    }
                });
            }
        });
        for (int at : implicitIn(s.range(), syncFunctions)) {
            if (inside(at, from, to, skip)) {
                found[0] = min(found[0], at);
            }
        }
        return found[0];
    }

    /**
     * @return the operations in {@code s} that may launch a child grid: launches, calls of functions
     *         of the unit that launch, lambdas whose body launches, and calls of CUB's device-wide
     *         algorithms ({@link LibraryCalls#launches})
     */
    public List<Expr> launchingOperations(Stmt s) {
        List<Expr> out = new java.util.ArrayList<>();
        Trees.walkExprs(s, e -> {
            if (e instanceof Expr.Launch || e instanceof Expr.Lambda l && directLaunch(l.body(), launchFunctions)
                    || e instanceof Expr.Call c && (c.calleeName() != null && RAW_LAUNCHES.contains(simple(c.calleeName()))
                    || LibraryCalls.launches(unit.libraries(), c)
                    || calleeKey(c, launchFunctions) != null
                    && launchFunctions.getOrDefault(calleeKey(c, launchFunctions), false))) {
                out.add(e);
            }
        });
        Trees.walkStmts(s, x -> {
            if (constructs(x, launchFunctions)) {
                out.add(new Expr.Other(x.range(), List.of())); // the declaration's constructor launches
            }
        });
        for (int at : implicitIn(s.range(), launchFunctions)) {
            out.add(new Expr.Other(new klap.model.SourceRange(at, 0), List.of())); // an operator, constructor or destructor that launches
        }
        out.sort(java.util.Comparator.comparingInt(e -> e.range().offset()));
        return out;
    }

    /** @return true if the function named {@code name} (of the unit) launches, directly or through calls */
    public boolean launches(String name) {
        return launchFunctions.getOrDefault(simple(name), false);
    }

    private static boolean inside(int off, int from, int to, List<? extends Stmt> skip) {
        if (off < from || off >= to) {
            return false;
        }
        for (Stmt k : skip) {
            if (k.range().contains(off)) {
                return false;
            }
        }
        return true;
    }

    private static Integer min(Integer a, int b) {
        return a == null || b < a ? Integer.valueOf(b) : a;
    }

    /**
     * @return the implicit calls ({@link klap.model.ImplicitCall}: operators, constructors, destructors)
     *         in {@code r} that may do what {@code known} records by name: a function of the unit or of
     *         a header that does it, or one whose body is in no file klap reads
     */
    private List<Integer> implicitIn(klap.model.SourceRange r, Map<String, Boolean> known) {
        List<Integer> out = new java.util.ArrayList<>();
        for (klap.model.ImplicitCall c : unit.implicitCallsIn(r)) {
            boolean does = switch (c.origin()) {
                case UNSEEN -> true;
                // the header function called, by its own facts (a header function that launches is UNSEEN)
                case HEADER, INITIALIZER -> known == syncFunctions && c.synchronizes();
                case MAIN -> known.getOrDefault(c.name(), false);
            };
            if (does) {
                out.add(c.offset());
            }
        }
        return out;
    }

    private boolean directSync(Stmt body, Map<String, Boolean> known) {
        boolean[] found = {!implicitIn(body.range(), known).isEmpty()};
        Trees.walkStmts(body, x -> {
            if (x instanceof Stmt.Other o && isBarrierAsm(o) || constructs(x, known)) {
                found[0] = true;
            }
        });
        Trees.walkExprs(body, e -> {
            if (isSyncExpr(e, known)) {
                found[0] = true;
            }
            if (e instanceof Expr.Lambda l && directSync(l.body(), known)) {
                found[0] = true;
            }
        });
        return found[0];
    }

    private boolean directLaunch(Stmt body, Map<String, Boolean> known) {
        boolean[] found = {!implicitIn(body.range(), known).isEmpty()};
        Trees.walkStmts(body, x -> found[0] |= constructs(x, known));
        Trees.walkExprs(body, e -> {
            if (e instanceof Expr.Launch || e instanceof Expr.Call rc && rc.calleeName() != null
                    && (RAW_LAUNCHES.contains(simple(rc.calleeName()))
                    || LibraryCalls.launches(unit.libraries(), rc))) {
                found[0] = true;
            } else if (e instanceof Expr.Call c && calleeKey(c, known) != null
                    && known.getOrDefault(calleeKey(c, known), false)) {
                found[0] = true;
            } else if (e instanceof Expr.Lambda l && directLaunch(l.body(), known)) {
                found[0] = true;
            }
        });
        return found[0];
    }

    private boolean isSyncExpr(Expr e, Map<String, Boolean> known) {
        if (!(e instanceof Expr.Call c)) {
            return false;
        }
        String name = c.calleeName();
        if (name == null && c.callee() instanceof Expr.Member m) {
            name = m.member();
        }
        String key = calleeKey(c, known);
        if (name == null) {
            return key != null && known.getOrDefault(key, false);
        }
        String s = simple(name);
        if (c.callee() instanceof Expr.Member m) {
            s = m.member();
        }
        return BARRIER_CALLS.contains(name) || BARRIER_CALLS.contains(s)
                || s.startsWith("__") && s.endsWith("_sync")
                || key != null && known.getOrDefault(key, false)
                || LibraryCalls.isCollective(unit.libraries(), c); // CDT resolved no function for it
    }

    /**
     * PTX that synchronizes threads: a CTA barrier ({@code bar.sync}, {@code bar.red}, {@code
     * bar.arrive}, {@code barrier.sync}, {@code barrier.cta.*}), {@code bar.warp.sync}, an {@code
     * mbarrier.*} operation, or a warp collective ({@code shfl.sync}, {@code vote.sync}, {@code
     * redux.sync}, {@code match.*.sync}); PTX ISA, "Parallel Synchronization and Communication
     * Instructions". No word boundary before the opcode: {@code "\tbar.sync 0;"} is the usual spelling.
     */
    private static final Pattern SYNC_PTX = Pattern.compile("bar\\.|barrier\\.|(?:shfl|vote|redux)\\.sync|match\\.\\w+\\.sync");

    /**
     * @return true if {@code o} is an {@code asm} statement whose PTX synchronizes ({@link #SYNC_PTX}),
     *         read after macro expansion ({@link Stmt.Other#asmText}), so that a barrier written through
     *         a macro ({@code #define BARRIER() asm volatile("bar.sync 0;")}) counts
     */
    private boolean isBarrierAsm(Stmt.Other o) {
        String asm = o.asmText(unit.file().text().substring(o.range().offset(), o.range().end()));
        return asm != null && SYNC_PTX.matcher(asm).find();
    }

    /** @return true if {@code s} declares an object whose user constructor may do what {@code known} says */
    private static boolean constructs(Stmt s, Map<String, Boolean> known) {
        return s instanceof Stmt.Decl d && d.vars().stream().anyMatch(klap.model.VarDecl::constructed)
                && known.getOrDefault(CONSTRUCTOR, false);
    }

    private static String simple(String name) {
        int q = name.lastIndexOf("::");
        return q < 0 ? name : name.substring(q + 2);
    }

    /** @return the names of the unit's functions that synchronize (for tests and diagnostics) */
    public Set<String> synchronizingFunctions() {
        Set<String> s = new HashSet<>();
        syncFunctions.forEach((k, v) -> {
            if (v && !k.startsWith(LAMBDA) && !k.equals(POINTER)) {
                s.add(k);
            }
        });
        return s;
    }
}
