package klap.transform;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import klap.model.CudaUnit;
import klap.model.Expr;
import klap.model.FunctionDef;
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
 * {@code cg::sync(g)}, {@code barrier.arrive_and_wait()}, {@code asm} statements with {@code bar.}
 * or {@code barrier.}, and calls of functions of the unit that contain one (transitively). A call
 * of a {@code __device__} function that the unit declares but nothing in it defines (its body is in
 * another file, {@link CudaUnit#deviceFunctionsWithoutBody}) counts as a synchronization site and
 * as a launching operation: klap cannot see what it does (review 2026-11-25: a {@code block_sum}
 * with {@code __syncthreads()} in another file after a guarded return hung). Library calls
 * (intrinsics, math, CUB) are declared in headers klap reads no body of, so are not counted.
 *
 * <p>Why it matters (issue 10, first GPU run): klap's own collectives (block barriers in
 * {@code agg_begin}/{@code flush}, warp shuffles) use the same hardware barrier as the user's
 * {@code __syncthreads()}. Keeping threads that returned early alive for klap's collective, while
 * the other threads wait at the user's barrier, pairs the two barriers: a hang or a wrong result.
 */
public final class SyncSites {
    private static final Set<String> BARRIER_CALLS = Set.of("__syncthreads", "__syncthreads_count",
            "__syncthreads_and", "__syncthreads_or", "__syncwarp", "__barrier_sync", "sync", "cg::sync",
            "cooperative_groups::sync", "arrive_and_wait", "barrier_wait");

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
        for (String name : unit.deviceFunctionsWithoutBody()) {
            if (!byName.containsKey(name)) {
                syncFunctions.put(name, true);
                launchFunctions.put(name, true);
            }
        }
        boolean changed = true;
        while (changed) {
            changed = false;
            for (var e : byName.entrySet()) {
                for (FunctionDef f : e.getValue()) {
                    if (!syncFunctions.get(e.getKey()) && directSync(f.body(), syncFunctions)) {
                        syncFunctions.put(e.getKey(), true);
                        changed = true;
                    }
                    if (!launchFunctions.get(e.getKey()) && directLaunch(f.body(), launchFunctions)) {
                        launchFunctions.put(e.getKey(), true);
                        changed = true;
                    }
                }
            }
        }
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
            for (Expr top : Trees.ownExprs(x)) {
                Trees.walk(top, e -> {
                    if (isSyncExpr(e, syncFunctions) && inside(e.range().offset(), from, to, skip)) {
                        found[0] = min(found[0], e.range().offset());
                    }
                });
            }
        });
        return found[0];
    }

    /**
     * @return the operations in {@code s} that may launch a child grid: launches,
     *         calls of functions of the unit that launch, and lambdas whose body launches
     */
    public List<Expr> launchingOperations(Stmt s) {
        List<Expr> out = new java.util.ArrayList<>();
        Trees.walkExprs(s, e -> {
            if (e instanceof Expr.Launch || e instanceof Expr.Lambda l && directLaunch(l.body(), launchFunctions)
                    || e instanceof Expr.Call c && c.calleeName() != null
                    && launchFunctions.getOrDefault(simple(c.calleeName()), false)) {
                out.add(e);
            }
        });
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

    private boolean directSync(Stmt body, Map<String, Boolean> known) {
        boolean[] found = {false};
        Trees.walkStmts(body, x -> {
            if (x instanceof Stmt.Other o && isBarrierAsm(o)) {
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
        boolean[] found = {false};
        Trees.walkExprs(body, e -> {
            if (e instanceof Expr.Launch) {
                found[0] = true;
            } else if (e instanceof Expr.Call c && c.calleeName() != null
                    && known.getOrDefault(simple(c.calleeName()), false)) {
                found[0] = true;
            } else if (e instanceof Expr.Lambda l && directLaunch(l.body(), known)) {
                found[0] = true;
            }
        });
        return found[0];
    }

    private static boolean isSyncExpr(Expr e, Map<String, Boolean> known) {
        if (!(e instanceof Expr.Call c)) {
            return false;
        }
        String name = c.calleeName();
        if (name == null && c.callee() instanceof Expr.Member m) {
            name = m.member();
        }
        if (name == null) {
            return false;
        }
        String s = simple(name);
        if (c.callee() instanceof Expr.Member m) {
            s = m.member();
        }
        return BARRIER_CALLS.contains(name) || BARRIER_CALLS.contains(s)
                || s.startsWith("__") && s.endsWith("_sync")
                || known.getOrDefault(s, false);
    }

    private boolean isBarrierAsm(Stmt.Other o) {
        String t = unit.file().text().substring(o.range().offset(), o.range().end());
        String head = t.stripLeading();
        return (head.startsWith("asm") || head.startsWith("__asm"))
                && (t.contains("bar.") || t.contains("barrier.") || t.contains("bar.sync"));
    }

    private static String simple(String name) {
        int q = name.lastIndexOf("::");
        return q < 0 ? name : name.substring(q + 2);
    }

    /** @return the names of the unit's functions that synchronize (for tests and diagnostics) */
    public Set<String> synchronizingFunctions() {
        Set<String> s = new HashSet<>();
        syncFunctions.forEach((k, v) -> {
            if (v) {
                s.add(k);
            }
        });
        return s;
    }
}
