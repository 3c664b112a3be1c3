package klap.aggregation;

import java.util.List;
import klap.model.Stmt;
import klap.transform.Convergence;
import klap.transform.EditSet;
import klap.transform.Granularity;

/**
 * Warp and block granularity (KLAP II-A, Fig. 2): the launches of a group of threads become one
 * launch of the child's aggregated variant ({@link ChildVariants}).
 * <h2>Input</h2>
 * <pre>
 * __global__ void parent(float* p, int* cnt, int n) {
 *   int i = blockIdx.x * blockDim.x + threadIdx.x;
 *   if (i &gt;= n) return;
 *   if (cnt[i] &gt; 0) child&lt;&lt;&lt;cnt[i], 32&gt;&gt;&gt;(p + i, n);
 * }
 * </pre>
 * <h2>Output (block granularity)</h2>
 * <pre>
 * __global__ void parent(float* p, int* cnt, int n) { klap::block_group klap_blk = klap::block_group::hardware();
 *   int i = ...;
 *   { auto klap_g0 = klap_blk; auto klap_s0 = klap::agg_begin&lt;klap_args_child&gt;(klap_g0);   // slots from the pool
 *   if (i &gt;= n) {} else {                                        // early return made convergent
 *   if (cnt[i] &gt; 0) klap_s0.record(dim3(cnt[i]), dim3(32), 0u, (cudaStream_t)0, klap_args_child(p + i, n));
 *   } klap_s0.flush(klap_g0, [&amp;](...) { child_klap_agg_vu&lt;&lt;&lt;...&gt;&gt;&gt;(klap_cfg, klap_n, klap_args, klap_mine.n); ... }); }
 * }
 * </pre>
 * A site deferred to a region ({@link Convergence.Placement.Deferred}) records in its slot; the
 * region begins with the group's {@code agg_begin} and ends with its {@code flush} (scan, one
 * launch), the sites of one region in source order. The group is the block ({@code klap_blk}) or,
 * at warp granularity, the block's warp ({@code klap::warp_group::of(klap_blk)}). A site without a
 * convergent region is aggregated in place among the threads of the warp that arrive together:
 * {@code { auto klap_g0 = klap::warp_group::active(); ... record ... flush ... }}.
 */
final class GroupAggregation {
    private final AggregationContext ctx;
    private final CudaText cuda;

    /** Emits warp/block sites with the calls of {@code cuda}; the group follows the granularity of {@code ctx}. */
    GroupAggregation(AggregationContext ctx, CudaText cuda) {
        this.ctx = ctx;
        this.cuda = cuda;
    }

    /** The lane mask of a kernel's survivor regions: the lanes of the warp that passed its divergent return guards. */
    static final String LIVE = "klap_live";

    /**
     * Keeps the mask of the lanes that passed the divergent return guards of {@code f}'s body, for
     * its survivor regions ({@link Convergence.Region#survivors}; none: no edit). Before the first
     * guard, {@code unsigned klap_live = klap::warp_group::of(klap_blk).mask();}; each guard
     * {@code if (c) return;} becomes {@code if (klap::guard_exit(klap_live, static_cast<bool>(c))) return;}
     * (a {@code __ballot_sync} over the lanes still there; the guard's threads still return).
     */
    void survivorMask(List<SitePlan> sites, EditSet e) {
        List<Stmt.If> guards = sites.stream().filter(s -> s.region() != null && s.region().survivors())
                .flatMap(s -> s.region().passed().stream()).distinct()
                .sorted(java.util.Comparator.comparingInt(g -> g.range().offset())).toList();
        if (guards.isEmpty()) {
            return;
        }
        e.insert(guards.get(0).range().offset(), "unsigned " + LIVE + " = klap::warp_group::of(klap_blk).mask(); ");
        for (Stmt.If g : guards) {
            e.insert(g.cond().range().offset(), "klap::guard_exit(" + LIVE + ", static_cast<bool>(");
            e.insert(g.cond().range().end(), "))");
        }
    }

    /**
     * @return the group expression of region {@code r}: the lanes that passed the kernel's returns for a
     *         survivor region, else the block ({@code klap_blk}) or, at warp granularity, its warp
     */
    private String groupOf(Convergence.Region r, SitePlan first) {
        return r.survivors() ? "klap::warp_group::from_mask(" + LIVE + ")"
                : r.arrived() ? "klap::warp_group::from_mask(" + arrivedMask(first) + ")"
                : ctx.opt.granularity() == Granularity.BLOCK ? "klap_blk" : "klap::warp_group::of(klap_blk)";
    }

    /** @return the mask of the lanes that entered the convergent loop whose first site is {@code first} together */
    private static String arrivedMask(SitePlan first) {
        return "klap_arrived" + first.id();
    }

    /**
     * Makes the loop of the region of {@code sites}, if it is a convergent loop
     * ({@link Convergence.Region#convergentLoop}; called right after {@link #region} has wrapped its
     * body, before any region around it, whose end may be at the same offset as the loop's) run until
     * no thread of the group has an iteration left, each thread's condition, body and step only as
     * often as before:
     * <pre>
     * for (int r = 0; r &lt; cnt[i]; ++r) { ... child&lt;&lt;&lt;...&gt;&gt;&gt;(...); }
     * becomes
     * { bool klap_on0 = true; for (int r = 0; klap::group_any(G, klap_on0 = klap_on0 &amp;&amp; (r &lt; cnt[i]));
     *   klap_on0 ? (void)(++r) : (void)0) { auto klap_s0 = klap::agg_begin...(G); if (klap_on0) { ... record ... }
     *   klap_s0.flush(G, ...); } }
     * </pre>
     * ({@code while (c) body} the same, without a step; {@code do body while (c);} runs its body first,
     * {@code { bool klap_on0 = true; do if (klap_on0) body while (klap::group_any(G, klap_on0 = klap_on0 && (c))); }}).
     * G is the region's group; for a loop that the lanes of a warp may reach apart
     * ({@link Convergence.Region#arrived}) it is the lanes that enter it together,
     * {@code unsigned klap_arrived0 = klap::warp_group::active().mask();} before the loop, and
     * G = {@code klap::warp_group::from_mask(klap_arrived0)}. A {@code break} or {@code continue} of the loop in its body is an exit
     * of the region ({@link #region}): it goes through the flush, and a break then sets
     * {@code klap_on0 = false} instead of leaving the loop, so the thread's step and condition are
     * skipped as before while the group goes on. A {@code return} in the body does the same and sets
     * {@code klap_ret0} ({@code bool klap_ret0 = false;} beside {@code klap_on0}); after the loop,
     * {@code if (klap_ret0) return;} ({@code if (klap::guard_exit(klap_live, klap_ret0)) return;} among
     * the lanes that passed the kernel's guards, whose mask the later collectives use), or the exit of
     * an enclosing region that the return also leaves ({@link #returnFrom}).
     */
    void convergentLoop(List<SitePlan> sites, List<List<SitePlan>> regions, EditSet e) {
        Convergence.Region r = sites.get(0).region();
        if (r.convergentLoop()) {
            Stmt.Loop lp = r.loop();
            SitePlan first = sites.get(0);
            String on = onFlag(first);
            String g = groupOf(r, first);
            boolean returns = hasReturnExit(r);
            e.insert(lp.range().offset(), "{ bool " + on + " = true; " + (returns ? "bool " + retFlag(first) + " = false; " : "")
                    + (r.arrived() ? "unsigned " + arrivedMask(first) + " = klap::warp_group::active().mask(); " : ""));
            e.insert(lp.cond().range().offset(), "klap::group_any(" + g + ", " + on + " = " + on + " && (");
            e.insert(lp.cond().range().end(), "))");
            if (lp.step() != null) {
                e.insert(lp.step().range().offset(), on + " ? (void)(");
                e.insert(lp.step().range().end(), ") : (void)0");
            }
            e.insert(lp.body().range().offset(), "if (" + on + ") ");
            // a return in the body ended the thread's iterations: it is taken once the group is done with the
            // loop; the lanes that passed the kernel's guards then drop the returning ones, as a guard does
            String ret = !returns ? "" : " if (" + (r.survivors() ? "klap::guard_exit(" + LIVE + ", " + retFlag(first) + ")"
                    : retFlag(first)) + ") " + returnFrom(r, regions);
            e.insert(lp.range().end(), ret + " }");
        }
    }

    /** @return the flag of the convergent loop whose first site is {@code first}: set when the thread returned in its body */
    private static String retFlag(SitePlan first) {
        return "klap_ret" + first.id();
    }

    private static boolean hasReturnExit(Convergence.Region r) {
        return r.exits().stream().anyMatch(j -> j.kind() == Stmt.JumpKind.RETURN);
    }

    /**
     * The statement that takes the {@code return}s leaving region {@code r} once its flush is done:
     * {@code return;}, or, where an enclosing region of {@code regions} has the same returns among its
     * exits (a convergent loop inside a region of the whole group), that region's exit
     * ({@code { klap_x1 = 1; goto klap_r1; }}), so each region launches what it recorded before the
     * thread leaves.
     */
    private static String returnFrom(Convergence.Region r, List<List<SitePlan>> regions) {
        List<SitePlan> outer = enclosingClaim(r, regions);
        return outer == null ? "return;" : exitJump(outer.get(0), Stmt.JumpKind.RETURN);
    }

    /** @return the jump of an exit of kind {@code k} to the end of the region whose first site is {@code first} */
    private static String exitJump(SitePlan first, Stmt.JumpKind k) {
        return "{ klap_x" + first.id() + " = " + (k.ordinal() + 1) + "; goto klap_r" + first.id() + "; }";
    }

    /**
     * @return the sites of the innermost region of {@code regions} other than {@code r} that has a
     *         return exit of {@code r} among its exits (it encloses {@code r}), or null
     */
    private static List<SitePlan> enclosingClaim(Convergence.Region r, List<List<SitePlan>> regions) {
        Stmt.Jump ret = r.exits().stream().filter(j -> j.kind() == Stmt.JumpKind.RETURN).findFirst().orElse(null);
        List<SitePlan> best = null;
        for (List<SitePlan> o : regions) {
            Convergence.Region or = o.get(0).region();
            if (ret != null && encloses(or, r) && or.exits().contains(ret)
                    && (best == null || size(or) < size(best.get(0).region()))) {
                best = o;
            }
        }
        return best;
    }

    /** @return true if region {@code outer} (another region than {@code inner}) spans {@code inner} */
    private static boolean encloses(Convergence.Region outer, Convergence.Region inner) {
        return outer.anchor() != inner.anchor() && outer.start() <= inner.start() && inner.end() <= outer.end();
    }

    private static int size(Convergence.Region r) {
        return r.end() - r.start();
    }

    /** @return true if a region of {@code regions} inside {@code r} (not {@code r}) has {@code j} among its exits: it rewrites {@code j} */
    private static boolean claimedInside(Stmt.Jump j, Convergence.Region r, List<List<SitePlan>> regions) {
        for (List<SitePlan> o : regions) {
            Convergence.Region or = o.get(0).region();
            if (encloses(r, or) && size(or) < size(r) && or.exits().contains(j)) {
                return true;
            }
        }
        return false;
    }

    /**
     * @return the flag of the convergent loop whose first site is {@code first}: true while the
     *         thread's own iterations go on
     */
    private static String onFlag(SitePlan first) {
        return "klap_on" + first.id();
    }

    /** Replaces the launch of {@code s} by its aggregation among the threads of its warp that arrive together. */
    void inPlace(SitePlan s, EditSet e, EditSet fine) {
        e.replace(s.stmt().range().offset(), s.stmt().range().end(), "{ " + cuda.aggBegin(s, "klap::warp_group::active()")
                + cuda.recordCall(s, fine) + " " + cuda.flushCall(s) + " }");
    }

    /**
     * Aggregates the sites of one region (same anchor, source order): slots before it, records at
     * the sites, its divergent guards rewritten ({@code if (c) return; rest} becomes
     * {@code if (c) {} else { rest }}), and the flushes at its end. A jump that leaves the region
     * ({@link Convergence.Region#exits}) goes through its end first, so that what the group recorded
     * before it is launched:
     * <pre>
     * if (blockIdx.x % 2) return;   becomes   if (blockIdx.x % 2) { klap_x0 = 1; goto klap_r0; }
     * ... } klap_r0:; klap_s0.flush(...); ... if (klap_x0 == 1) return; }
     * </pre>
     * ({@code int klap_x0 = 0;} is declared with the slots, before the region, so the goto jumps
     * over no initialization; 1 = return, 2 = break, 3 = continue of the loop or switch around the
     * region). Where regions nest (around a convergent loop), a return that a region inside this one
     * (of {@code regions}, every region of the function) also leaves by is rewritten by the
     * innermost of them, and reaches this region's end through that region's ({@link #returnFrom}).
     */
    void region(List<SitePlan> sites, List<List<SitePlan>> regions, EditSet e, EditSet fine) {
        Convergence.Region r = sites.get(0).region();
        StringBuilder begin = new StringBuilder("{ ");
        StringBuilder flush = new StringBuilder(" ");
        for (SitePlan s : sites) {
            String group = groupOf(r, sites.get(0));
            begin.append(cuda.aggBegin(s, group));
            flush.append(cuda.flushCall(s)).append(' ');
            e.replace(s.stmt().range().offset(), s.stmt().range().end(), cuda.recordCall(s, fine));
        }
        StringBuilder leave = new StringBuilder();
        if (!r.exits().isEmpty()) {
            // every exit of the region passes through its end: the records made before it are launched
            String x = "klap_x" + sites.get(0).id();
            String label = "klap_r" + sites.get(0).id();
            begin.append("int ").append(x).append(" = 0; ");
            flush.insert(0, " " + label + ":;");
            for (Stmt.JumpKind k : List.of(Stmt.JumpKind.RETURN, Stmt.JumpKind.BREAK, Stmt.JumpKind.CONTINUE)) {
                if (r.exits().stream().anyMatch(j -> j.kind() == k)) {
                    // in a convergent loop a break or return ends only the thread's own iterations: the group's
                    // loop goes on while another thread has one left, and this thread's step and condition are
                    // skipped (its return is taken after the loop, convergentLoops)
                    String on = onFlag(sites.get(0));
                    String jump = r.convergentLoop() && k == Stmt.JumpKind.BREAK ? on + " = false;"
                            : r.convergentLoop() && k == Stmt.JumpKind.RETURN ? "{ " + on + " = false; " + retFlag(sites.get(0)) + " = true; }"
                            : k == Stmt.JumpKind.RETURN ? returnFrom(r, regions)
                            : k.name().toLowerCase(java.util.Locale.ROOT) + ";";
                    leave.append("if (").append(x).append(" == ").append(k.ordinal() + 1).append(") ").append(jump).append(' ');
                }
            }
            for (Stmt.Jump j : r.exits()) {
                // (a return that a region inside this one also leaves by is rewritten there: it reaches this
                // region's end through that region's)
                if (!claimedInside(j, r, regions)) {
                    e.replace(j.range().offset(), j.range().end(), exitJump(sites.get(0), j.kind()));
                }
            }
        }
        e.insert(r.start(), begin.toString());
        for (Stmt.If g : r.guards()) {
            Stmt.Jump j = Convergence.guardJump(g);
            e.replace(j.range().offset(), j.range().end(), g.then() == j ? "{}" : "");
            e.insert(g.range().end(), " else {");
        }
        e.insert(r.end(), "}".repeat(r.guards().size()) + flush + leave + "}");
    }
}
