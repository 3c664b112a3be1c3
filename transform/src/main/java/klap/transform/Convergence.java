package klap.transform;

import java.util.ArrayList;
import java.util.List;
import klap.model.FunctionDef;
import klap.model.Stmt;

/**
 * Where the threads of a block (or warp) can meet for a collective operation around a launch site:
 * the analysis behind divergence elimination (KLAP section II-A, last paragraph).
 *
 * <p>KLAP converts control flow to data flow so that every thread reaches the aggregated launch,
 * launching zero blocks when it would not have launched. klap does the same without restructuring
 * the user's statements: each launch is placed in a <em>region</em>, the outermost statement around
 * it that all threads of the group execute together (a statement in a <em>convergent position</em>:
 * every enclosing {@code if}, {@code switch} and loop has a uniform condition). The group's slots are
 * taken from the pool before the region ({@code agg_begin}), a thread that reaches the launch only
 * records its configuration and arguments in its slot, and after the region all threads scan and
 * one launches ({@code flush}); threads that did not launch keep a zero-block slot. Because a child
 * may start at any time after its launch, launching at the end of the region is one of the
 * executions the original program allowed; launches of one region are flushed in source order,
 * so the order of launches into one stream is kept.
 *
 * <p>Early exits before a launch are the usual obstacle ({@code if (i >= n) return;}). A
 * <em>guard</em> {@code if (c) return;} in the function body (or {@code if (c) continue;} in a loop
 * body) whose condition is divergent is rewritten to {@code if (c) {} else { rest of the block }};
 * the region then starts at the guard and ends with the block, which threads that took the guard
 * still reach. A jump inside the region that leaves it (its {@link Region#exits}: a {@code return},
 * or a {@code break}/{@code continue} of a loop or switch around it) must not skip the region's
 * end, or the launches recorded before it are lost: the emitter makes it pass through the end
 * first ({@code { klap_x0 = 1; goto klap_r0; }} ... {@code klap_r0:; flush; if (klap_x0 == 1)
 * return;}), which is correct when the whole group takes the jump together or when it leaves the
 * way a guard does ({@link #exitThreat}). Any other jump that could make a thread skip the region's
 * end (a divergent {@code return} before the region, a divergent {@code break}/{@code continue} of
 * an enclosing loop, any {@code goto}), an exit that would split the group, or a loop with a
 * divergent trip count between the region and the launch, makes the site non-convergent: it is
 * then aggregated among the threads that arrive together ({@link Placement.Immediate}).
 *
 * <p><em>Survivor regions.</em> A launch in a loop after a divergent guard {@code if (c) return;} of
 * the function body cannot use the guard region (the threads that returned never enter the loop, so
 * they cannot meet the others at a collective inside it). When the loop's trip count is uniform and
 * no jump but the body's guards (and jumps every thread takes together) can make a thread skip the
 * launch's region, every lane of a warp that passed the guards executes the region in every
 * iteration, in the same order: the group is those lanes, a mask the guards keep with
 * {@code __ballot_sync} ({@code klap::guard_exit}), and the collectives are warp-wide over it. This is
 * KLAP II-A's divergence elimination restricted to the threads still alive; it replaces the in-place
 * aggregation among the lanes that happen to arrive together, which hung on the GPU in such loops
 * (2026-11-27, H200: {@code testcases/src/loops}' {@code loopUniform}). Outside loops the guard
 * region (block-wide) is preferred; a survivor region that ends with the launch's own statement
 * ({@link #survivorsOnly}) is what the planner asks for when the guard region's end would come
 * after a later launch of the same thread.
 *
 * <p><em>Convergent loops.</em> A launch in a {@code for}, {@code while} or {@code do} loop whose
 * trip count differs between threads (KLAP II-A: "loops with divergent trip counts" are converted
 * to data flow too), or whose body a thread-dependent {@code break}/{@code continue} of the loop
 * keeps from a plain region, reached by the whole group together (a convergent position, or a
 * survivor position): the loop runs while any thread of the group still has an iteration
 * ({@code klap::group_any(g, klap_on = klap_on && (cond))}), each thread's body and step only while
 * its own condition held ({@code if (klap_on) body}, {@code klap_on ? (void)(step) : (void)0}), so
 * each thread evaluates its condition, body and step exactly as often as before; the region is the
 * body, and a thread that is done records nothing. A {@code break} or {@code continue} of the loop
 * is an exit of the region: it goes through the body's flush, and a break then sets
 * {@code klap_on = false} (the thread's step and condition are skipped as the break skipped them)
 * instead of leaving the loop that the group still runs. A {@code return} in the body goes through
 * the flush too, ends the thread's iterations the same way and is taken after the loop, once the
 * group is done with it (among the lanes that passed the body's guards it then leaves their mask, as
 * at a guard); where an enclosing region also has that return among its exits, the thread takes that
 * region's exit there instead, so each region launches what was recorded before it. Only without a
 * barrier or warp collective in the loop, or another loop between the body and the launch.
 *
 * <p><em>Loops the lanes reach apart.</em> Where no group of the warp or block reaches the
 * innermost loop around a launch together (it is in a thread-dependent branch, in a loop whose trip
 * count differs, after a thread-dependent return that is no guard), the loop is still made
 * convergent among the lanes of a warp that enter it together: their mask is taken once as they
 * enter ({@code __activemask()}, {@link Region#arrived}) and stays the group of every collective
 * until the last of them is done with the loop (a return in it is taken after the loop; it does not
 * synchronize).
 * Unlike the in-place form, whose group is taken anew at each launch among lanes that may be in
 * different iterations of the loop, the group and its rounds are fixed for the whole loop.
 */
public final class Convergence {

    /**
     * A region: the statements from {@code anchor} to {@code end} (exclusive) that a group of
     * threads executes together.
     *
     * @param anchor     the first statement of the region
     * @param guardBlock for a guard region, the block whose guards are rewritten (the region then
     *                   extends to the block's closing brace); null for a single-statement region
     * @param guards     the guards of {@code guardBlock} to rewrite, in source order
     * @param exits      the jumps inside the region (other than the guards' own) that leave it: a
     *                   {@code return}, or a {@code break}/{@code continue} of a loop or switch around
     *                   the region. Each must go through the region's end (the collective) before it
     *                   leaves, or the launches recorded before it would be lost; in source order
     * @param passed     for a survivor region: the divergent {@code if (c) return;} guards of the
     *                   function body, in source order (at least one before the region), whose
     *                   returning threads really leave (they are not rewritten); the group is the
     *                   lanes of the warp that passed those before the region, a mask kept by a
     *                   {@code __ballot_sync} at each guard ({@code klap::guard_exit}). Empty for
     *                   every other region
     * @param loop       for a convergent loop: the {@code for}/{@code while}/{@code do} loop whose
     *                   body is the region ({@code anchor}); the emitter runs it until no thread of
     *                   the group has an iteration left, each thread's body and step only while its
     *                   own condition holds. Null otherwise
     * @param arrived    for a convergent loop that the warp's lanes may reach apart (in a branch, after
     *                   a thread-dependent jump): the group is the lanes of the warp that arrive at
     *                   the loop together, a mask taken as they enter it ({@code __activemask()}),
     *                   which stays the group until the last of them is done with the loop. False
     *                   for every other region
     */
    public record Region(Stmt anchor, Stmt.Block guardBlock, List<Stmt.If> guards, List<Stmt.Jump> exits,
                         List<Stmt.If> passed, Stmt.Loop loop, boolean arrived) {
        /** A region whose group is the whole warp or block ({@code passed} empty), in no convergent loop. */
        public Region(Stmt anchor, Stmt.Block guardBlock, List<Stmt.If> guards, List<Stmt.Jump> exits) {
            this(anchor, guardBlock, guards, exits, List.of(), null, false);
        }

        /**
         * @return true if the region's group is a set of lanes of one warp fixed before the region
         *         ({@link #survivors} or {@link #arrived}): its collectives are warp-wide over that
         *         mask whatever the granularity
         */
        public boolean warpSubset() {
            return survivors() || arrived;
        }

        /**
         * @return true if the region is the body of a loop whose trip count differs between threads,
         *         which the emitter makes convergent ({@link #loop}, class comment)
         */
        public boolean convergentLoop() {
            return loop != null;
        }

        /**
         * @return true if the region's group is the lanes of a warp that passed the function body's
         *         divergent return guards {@link #passed} (a survivor region, see {@link Convergence})
         */
        public boolean survivors() {
            return !passed.isEmpty();
        }

        /** @return offset where the region starts */
        public int start() {
            return anchor.range().offset();
        }

        /** @return offset where the region ends: the anchor's end, or the guard block's closing brace */
        public int end() {
            return guardBlock == null ? anchor.range().end() : guardBlock.range().end() - 1;
        }
    }

    /** Where a collective around a site can be placed. */
    public sealed interface Placement {
        /** Collective before and after {@code region}; the site itself only records. */
        record Deferred(Region region) implements Placement {
        }

        /** No convergent region: aggregate among the threads that arrive together; {@code reason} says why. */
        record Immediate(String reason) implements Placement {
        }
    }

    private final FunctionDef fn;
    private final Uniformity uni;
    private final Trees trees;
    private final List<Stmt.Jump> jumps;
    /** whether the function has a {@code goto} (then no region, and a thread may reach any statement again) */
    private final boolean gotos;

    private final klap.model.SourceFile src;

    private final SyncSites syncs;

    /** Prepares the analysis of kernel {@code fn} of {@code src} with its uniformity facts. */
    public Convergence(klap.model.SourceFile src, FunctionDef fn, Uniformity uni) {
        this(src, fn, uni, null);
    }

    /**
     * Prepares the analysis of kernel {@code fn} of {@code src} with its uniformity facts and the
     * unit's synchronization sites: a guard region is refused when a barrier or warp collective
     * lies between its first guard and its end (the threads kept alive by the guard rewrite would
     * meet klap's collective while the others wait at the user's barrier).
     */
    public Convergence(klap.model.SourceFile src, FunctionDef fn, Uniformity uni, SyncSites syncs) {
        this.syncs = syncs;
        this.src = src;
        this.fn = fn;
        this.uni = uni;
        this.trees = uni.trees();
        this.jumps = Trees.collect(fn.body(), Stmt.Jump.class);
        this.gotos = jumps.stream().anyMatch(j -> j.kind() == Stmt.JumpKind.GOTO);
    }

    /** @return true if the function has a {@code goto} */
    public boolean usesGoto() {
        return gotos;
    }

    /**
     * Places the collective for a launch statement {@code site} (a statement of this function).
     *
     * @return a deferred region, or the reason why none exists
     */
    public Placement place(Stmt site) {
        Placement p = placeInGroup(site);
        if (p instanceof Placement.Immediate && fn.kind() == FunctionDef.Kind.KERNEL
                && !gotos) {
            // no region for the warp, the block or the survivors: the innermost loop around the site
            // can still be run by the lanes that arrive at it together
            List<Stmt> path = trees.path(site);
            Placement arrived = innermostLoopConverged(path, 0, path.size() - 1, List.of(), true);
            return arrived != null ? arrived : p;
        }
        return p;
    }

    /** {@link #place} for a group that is the whole warp or block, or the lanes that passed the body's guards */
    private Placement placeInGroup(Stmt site) {
        if (fn.kind() != FunctionDef.Kind.KERNEL) {
            return new Placement.Immediate("it is in a __device__ function, whose callers' control flow is unknown");
        }
        if (gotos) {
            return new Placement.Immediate("the kernel uses goto");
        }
        List<Stmt> path = trees.path(site);
        Stmt anchor = null;
        Stmt.Block guardBlock = null;
        List<Stmt.If> guards = List.of();
        int walkedTo = 0;
        for (int i = 1; i < path.size(); i++) {
            Stmt node = path.get(i);
            Stmt par = path.get(i - 1);
            if (par instanceof Stmt.Block b) {
                List<Stmt.If> gs = divergentGuardsBefore(b, node);
                if (!gs.isEmpty()) {
                    anchor = gs.get(0);
                    guardBlock = b;
                    guards = divergentGuardsFrom(b, gs.get(0));
                    walkedTo = i;
                    break;
                }
            } else if (!uni.controlIsUniform(par)) {
                break;
            }
            anchor = node;
            walkedTo = i;
        }
        if (anchor == null) {
            return new Placement.Immediate("no statement around it is executed by all threads together");
        }
        // no loop between the region and the site
        int from = guardBlock == null ? path.indexOf(anchor) : walkedTo;
        for (int i = from; i < path.size() - 1; i++) {
            if (path.get(i) instanceof Stmt.Loop lp) {
                if (guardBlock == null && lp == anchor) {
                    // the whole group reaches the loop: it can be made convergent
                    Placement converged = convergentLoop(path, i, lp, List.of(), false);
                    if (converged != null) {
                        return converged;
                    }
                }
                if (guardBlock != null && uniformPath(lp, guardBlock)) {
                    // the threads that took the guard never enter the loop, but the lanes that passed the
                    // guards reach it together and can meet inside it (a convergent loop if its trip count
                    // differs between them)
                    Placement survivors = survivorRegion(path, walkedTo, guardBlock, guards);
                    if (survivors != null) {
                        return survivors;
                    }
                }
                if (guardBlock != null && uni.controlIsUniform(lp) && uniformPath(lp, guardBlock)) {
                    return new Placement.Immediate("it is in a loop (line " + src.line(lp.range().offset()) + ") after "
                            + "the thread-dependent " + (guardJump(guards.get(0)).kind() == Stmt.JumpKind.RETURN ? "return"
                            : "continue") + " at line " + src.line(guards.get(0).range().offset()) + ", so the threads "
                            + "that left there cannot meet the others at a collective inside the loop");
                }
                return new Placement.Immediate("it is in a loop whose trip count may differ between threads (line "
                        + src.line(lp.range().offset()) + ")");
            }
        }
        Region region = new Region(anchor, guardBlock, guards, List.of());
        region = new Region(anchor, guardBlock, guards, exits(region));
        if (syncs != null && !guards.isEmpty()) {
            Integer sync = syncs.firstSync(guardBlock, guards.get(0).range().offset(), region.end(), List.of());
            if (sync != null) {
                return new Placement.Immediate("the kernel synchronizes (line " + src.line(sync) + ") after a "
                        + "thread-dependent " + (Convergence.guardJump(guards.get(0)).kind() == Stmt.JumpKind.RETURN
                        ? "return" : "continue") + " (line " + src.line(guards.get(0).range().offset()) + "); the threads "
                        + "that leave there cannot join a " + "collective at the region's end without pairing it with "
                        + "that barrier");
            }
        }
        String threat = threat(region);
        if (threat != null) {
            // a thread-dependent break/continue in a loop the whole group reaches: the loop's body can still be
            // a region once the loop is made convergent
            // (convergentLoop's own threat check proves that the whole group reaches the loop's body)
            Placement converged = innermostLoopConverged(path, 0, from, List.of(), false);
            return converged != null ? converged : new Placement.Immediate(threat);
        }
        return new Placement.Deferred(region);
    }

    /**
     * The innermost loop among {@code path[from, to)} (every construct above it has a uniform
     * condition, so the group reaches it together unless a jump intervenes) made a convergent loop
     * ({@link #convergentLoop}) for the site at the end of {@code path}; null if there is no such
     * loop or it cannot be made convergent. Used where a thread-dependent {@code break} or
     * {@code continue} of a loop with a uniform trip count keeps the launch from a plain region, and
     * ({@code arrived}) for the lanes that enter the loop together where no other group reaches it.
     */
    private Placement innermostLoopConverged(List<Stmt> path, int from, int to, List<Stmt.If> passed, boolean arrived) {
        for (int i = to - 1; i >= from; i--) {
            if (path.get(i) instanceof Stmt.Loop lp) {
                return convergentLoop(path, i, lp, passed, arrived);
            }
        }
        return null;
    }

    /**
     * A survivor region (class comment) for the site at the end of {@code path}, whose statement
     * {@code path.get(top)} of the function body comes after the divergent guards {@code guards} of
     * {@code body}; null if there is none. The region's anchor is the outermost statement inside the
     * innermost loop around the site such that every construct between the guards and it has a
     * uniform condition; between the anchor and the site there must be no loop, and every jump of
     * the function must be a divergent return guard of the body, a jump that every thread takes
     * together (a uniform path), or a jump inside the region that does not leave it.
     */
    private Placement survivorRegion(List<Stmt> path, int top, Stmt.Block body, List<Stmt.If> guards) {
        return survivorRegion(path, top, body, guards, true);
    }

    /**
     * A survivor region for a launch that {@link #place} deferred to the guard region of the
     * function body ({@code region}: its guards are {@code if (c) return;}), narrowed to end where
     * that launch's own statement ends: the innermost statement around {@code site} after the guards
     * that the lanes which passed them reach together (every construct between is uniform). Used
     * where the guard region's end would come after a later launch of the same thread that goes
     * out before it (a launch in a loop, or in a {@code __device__} function): the narrower region
     * launches first, keeping the thread's order, without falling back to the lanes that happen to
     * arrive together. Same rules as the survivor regions in loops (class comment): no jump of the
     * function but the body's guards, jumps every thread takes together, and jumps that stay
     * inside the region; no exit of the region; no loop between the region and the launch.
     *
     * @param site   a launch statement of this function
     * @param region the guard region {@link #place} gave it
     * @return the survivor region, or null if there is none (the region is not a guard region of
     *         the body, a condition declares, a jump may skip the region or leave it)
     */
    public Placement.Deferred survivorsOnly(Stmt site, Region region) {
        if (region.guardBlock() != fn.body() || region.guards().isEmpty() || region.survivors() || region.convergentLoop()
                || gotos) {
            return null;
        }
        // (the guard region's guards come before the body's statement that holds the site)
        List<Stmt> path = trees.path(site);
        int top = path.indexOf(fn.body()) + 1;
        if (top <= 0 || top >= path.size()) {
            return null;
        }
        return survivorRegion(path, top, fn.body(), region.guards(), false) instanceof Placement.Deferred d
                && d.region().survivors() && !d.region().convergentLoop() ? d : null;
    }

    /** {@link #survivorRegion}; without {@code inLoop}, also for a site in no loop ({@link #survivorsOnly}) */
    private Placement survivorRegion(List<Stmt> path, int top, Stmt.Block body, List<Stmt.If> guards, boolean inLoop) {
        if (body != fn.body() || guards.stream().anyMatch(g -> guardJump(g).kind() != Stmt.JumpKind.RETURN)) {
            return null;
        }
        List<Stmt.If> passable = divergentGuardsFrom(body, guards.get(0));
        if (passable.stream().anyMatch(g -> g.init() != null)) {
            return null; // a condition that declares (if (T x = e)): its ballot would need the declaration rewritten
        }
        Stmt anchor = path.get(top);
        int at = top;
        for (int i = top + 1; i < path.size(); i++) {
            Stmt par = path.get(i - 1);
            if (!(par instanceof Stmt.Block) && !uni.controlIsUniform(par)) {
                break;
            }
            anchor = path.get(i);
            at = i;
        }
        if (anchor instanceof Stmt.Loop lp && !uni.controlIsUniform(lp)) {
            // the lanes that passed the guards reach a loop whose trip count differs between them
            return convergentLoop(path, at, lp, List.copyOf(passable), false);
        }
        boolean loopAbove = false;
        for (int i = top; i < at; i++) {
            loopAbove |= path.get(i) instanceof Stmt.Loop;
        }
        for (int i = at; i < path.size() - 1; i++) {
            if (path.get(i) instanceof Stmt.Loop) {
                return null; // a loop inside the region: its trip count may differ between threads
            }
        }
        if (!loopAbove && inLoop) {
            return null;
        }
        Region r = new Region(anchor, null, List.of(), List.of(), List.copyOf(passable), null, false);
        if (!exits(r).isEmpty() || !survivorJumpsOnly(r, passable)) {
            // a thread-dependent break/continue of the innermost loop: its body is a region once the loop
            // runs until no lane that passed the guards has an iteration left
            return innermostLoopConverged(path, top, at, List.copyOf(passable), false);
        }
        return new Placement.Deferred(r);
    }

    /**
     * @return true if every jump of the function is a divergent return guard of the body among
     *         {@code passable}, a jump every thread takes together (a uniform path), or a jump inside
     *         {@code r} (which {@link #exits} has found not to leave it)
     */
    private boolean survivorJumpsOnly(Region r, List<Stmt.If> passable) {
        for (Stmt.Jump j : jumps) {
            boolean guard = passable.stream().anyMatch(g -> guardJump(g) == j);
            boolean inside = j.range().offset() >= r.start() && j.range().end() <= r.end();
            Stmt target = j.kind() == Stmt.JumpKind.RETURN ? null : trees.jumpTarget(j);
            // a break/continue of a loop or switch that does not enclose the region stays inside that
            // statement, which every thread still leaves the way it did: whether it reaches the region is unchanged
            boolean elsewhere = target != null && !trees.isAncestorOrSelf(target, r.anchor());
            if (!guard && !inside && !elsewhere && !continuesAfter(j, r) && !uniformPath(j, target)) {
                return false;
            }
        }
        return true;
    }

    /**
     * A convergent loop (class comment) for the site at the end of {@code path}, in loop {@code lp}
     * ({@code path.get(at)}), which the group reaches together: the warp's or block's threads
     * ({@code passed} empty; no jump may make a thread skip the loop), the lanes that passed the
     * body's guards {@code passed}, or ({@code arrived}) the lanes of a warp that enter it together,
     * whatever came before. Null if there is none: {@code lp} is not a {@code for} or {@code do} with
     * a condition or a plain {@code while}, or is written by a macro; a loop lies between its body and
     * the site; a jump leaves the body other than a {@code break}/{@code continue} of {@code lp} or a
     * {@code return;} (exits that the emitter rewrites, unless written by a macro); the loop
     * synchronizes (a barrier or warp collective that the threads that are done would no longer reach).
     */
    private Placement convergentLoop(List<Stmt> path, int at, Stmt.Loop lp, List<Stmt.If> passed, boolean arrived) {
        boolean forLoop = lp.kind() == Stmt.LoopKind.FOR && src.startsWithWord(lp.range(), "for");
        boolean whileLoop = lp.kind() == Stmt.LoopKind.WHILE && lp.init() == null && src.startsWithWord(lp.range(), "while");
        boolean doLoop = lp.kind() == Stmt.LoopKind.DO && src.startsWithWord(lp.range(), "do");
        if (!forLoop && !whileLoop && !doLoop || lp.cond() == null || syncs == null || syncs.synchronizes(lp)) {
            return null;
        }
        int bodyAt = lp.body().range().offset();
        int bodyEnd = lp.body().range().end();
        boolean wrappable = doLoop
                ? bodyAt > lp.range().offset() && lp.cond().range().offset() >= bodyEnd && lp.cond().range().end() < lp.range().end()
                : lp.cond().range().end() <= bodyAt && lp.cond().range().offset() >= lp.range().offset()
                        && (lp.step() == null || lp.step().range().end() <= bodyAt
                                && lp.step().range().offset() >= lp.cond().range().end())
                        && bodyEnd == lp.range().end();
        if (!wrappable) {
            return null; // text the emitter cannot wrap (a macro's expansion)
        }
        if (path.get(at) != lp || path.get(at + 1) != lp.body()) {
            return null;
        }
        for (int i = at + 1; i < path.size() - 1; i++) {
            if (path.get(i) instanceof Stmt.Loop) {
                return null;
            }
        }
        Region r = new Region(lp.body(), null, List.of(), List.of(), passed, lp, arrived);
        r = new Region(lp.body(), null, List.of(), exits(r), passed, lp, arrived);
        for (Stmt.Jump j : r.exits()) {
            // a break or continue of the loop goes through the body's end (the flush) first; a break then
            // ends the thread's iterations (klap_on = false), a continue goes on to the step. A return ends
            // them too and is taken after the loop, once the group is done with it (a thread that left the
            // group inside the loop would keep the others waiting at its group_any)
            boolean ret = j.kind() == Stmt.JumpKind.RETURN && j.value() == null;
            if (!ret && trees.jumpTarget(j) != lp || !src.startsWithWordAfterAttributes(j.range(), keyword(j))) {
                return null;
            }
        }
        // (the lanes that arrive together are the group whatever happened before the loop: nothing
        // outside it can keep one of them from the body's end)
        if (!arrived && (passed.isEmpty() ? threat(r) != null : !survivorJumpsOnly(r, passed))) {
            return null;
        }
        return new Placement.Deferred(r);
    }

    /**
     * @return true if the statement {@code owner} (evaluating a collective call such as device
     *         {@code cudaMalloc}) is itself reached by all threads of the block together, so the call
     *         can be replaced by a block-wide collective in place
     */
    public boolean reachedTogether(Stmt owner) {
        if (owner instanceof Stmt.Loop) {
            return false;
        }
        Placement p = place(owner);
        // (not a survivor region or a convergent loop's body: the threads that returned, or that are
        // done with the loop, do not reach it; those regions need klap's own rewriting around them)
        return p instanceof Placement.Deferred d && d.region().anchor() == owner && d.region().guardBlock() == null
                && !d.region().survivors() && !d.region().convergentLoop();
    }

    /** @return the jumps of this function inside {@code r} (not a guard's) that leave it, in source order */
    private List<Stmt.Jump> exits(Region r) {
        List<Stmt.Jump> l = new ArrayList<>();
        for (Stmt.Jump j : jumps) {
            int at = j.range().offset();
            if (at < r.start() || at >= r.end() || r.guards().stream().anyMatch(g -> trees.isAncestorOrSelf(g, j))) {
                continue;
            }
            if (j.kind() == Stmt.JumpKind.RETURN) {
                l.add(j);
            } else if (j.kind() == Stmt.JumpKind.BREAK || j.kind() == Stmt.JumpKind.CONTINUE) {
                Stmt target = trees.jumpTarget(j);
                if (target != null && !inside(target, r)) {
                    l.add(j);
                }
            }
        }
        return l;
    }

    /** @return true if statement {@code s} lies within the region */
    private boolean inside(Stmt s, Region r) {
        return s.range().offset() >= r.start() && s.range().end() <= (r.guardBlock() == null ? r.anchor().range().end()
                : r.guardBlock().range().end() - 1);
    }

    /**
     * Why the exit {@code j} of region {@code r} cannot be made to pass through the region's end, or
     * null if it can. Rewritten, the exit first goes to the region's collective and leaves from
     * there; that keeps the group whole for every later collective when
     * <ul>
     * <li>the whole group takes it together (a guard-free region, a uniform path to the jump), or</li>
     * <li>it leaves the way a guard does: a {@code return} from a guard region of the function body
     *     (nothing follows that region), a {@code return} from a guard-free region outside every
     *     loop (later regions already treat a divergent return before them as a threat), or a
     *     {@code continue} of the innermost loop around the region (the threads that continue meet
     *     the others again at the region's next instance; a later region of the same body already
     *     treats such a continue as a threat).</li>
     * </ul>
     * A thread-dependent exit is refused when a barrier or warp collective follows it in the region:
     * the exiting threads would wait at klap's collective while the others wait at that barrier.
     */
    private static String keyword(Stmt.Jump j) {
        return j.kind().name().toLowerCase(java.util.Locale.ROOT);
    }

    private String exitThreat(Stmt.Jump j, Region r) {
        if (!src.startsWithWordAfterAttributes(j.range(), keyword(j))) {
            return "a " + keyword(j) + " written by a macro (line " + src.line(j.range().offset()) + ") leaves its "
                    + "region, and klap cannot rewrite a macro's expansion";
        }
        Stmt target = j.kind() == Stmt.JumpKind.RETURN ? null : trees.jumpTarget(j);
        if (r.convergentLoop() && (target == r.loop() || j.kind() == Stmt.JumpKind.RETURN)) {
            // the emitter ends the thread's iterations there (convergentLoop), a return taking effect after the
            // loop; the loop does not synchronize
            return null;
        }
        boolean together = r.guards().isEmpty() && uniformPath(j, target);
        List<Stmt.Loop> loops = enclosingLoops(r.anchor());
        boolean likeGuard = j.kind() == Stmt.JumpKind.RETURN
                ? (r.guardBlock() == fn.body() || r.guards().isEmpty() && loops.isEmpty())
                : j.kind() == Stmt.JumpKind.CONTINUE && !loops.isEmpty() && target == loops.get(0);
        String what = "a thread-dependent " + keyword(j) + " (line "
                + src.line(j.range().offset()) + ")";
        if (!together && !likeGuard) {
            return what + " may skip it";
        }
        if (!together && syncs != null) {
            Integer sync = syncs.firstSync(r.guardBlock() != null ? r.guardBlock() : r.anchor(), j.range().end(), r.end(),
                    List.of());
            if (sync != null) {
                return "the kernel synchronizes (line " + src.line(sync) + ") after " + what + "; the threads that "
                        + "leave there cannot join a collective at the region's end without pairing it with that barrier";
            }
        }
        return null;
    }

    /** Which jump could make a thread skip the region's end; null if none. */
    private String threat(Region r) {
        for (Stmt.Jump j : r.exits()) {
            String t = exitThreat(j, r);
            if (t != null) {
                return t;
            }
        }
        for (Stmt.Jump j : jumps) {
            boolean rewritten = r.guards().stream().anyMatch(g -> trees.isAncestorOrSelf(g, j));
            if (rewritten || r.exits().contains(j)) {
                continue;
            }
            switch (j.kind()) {
                case RETURN -> {
                    boolean before = j.range().offset() < r.end();
                    boolean inEnclosingLoop = enclosingLoops(r.anchor()).stream().anyMatch(l -> trees.isAncestorOrSelf(l, j));
                    if ((before || inEnclosingLoop) && !uniformPath(j, null)) {
                        return "a thread-dependent return (line " + src.line(j.range().offset()) + ") may skip it";
                    }
                }
                case BREAK, CONTINUE -> {
                    Stmt target = trees.jumpTarget(j);
                    if (target != null && trees.isAncestorOrSelf(target, r.anchor()) && target != r.anchor()
                            && !continuesAfter(j, r) && !uniformPath(j, target)) {
                        return "a thread-dependent " + j.kind().name().toLowerCase(java.util.Locale.ROOT)
                                + " of an enclosing loop (line " + src.line(j.range().offset()) + ") may skip it";
                    }
                    if (target != null && r.guardBlock() != null && trees.isAncestorOrSelf(target, r.guardBlock())
                            && target != r.guardBlock() && !uniformPath(j, target)) {
                        return "a thread-dependent " + j.kind().name().toLowerCase(java.util.Locale.ROOT)
                                + " of an enclosing loop (line " + src.line(j.range().offset()) + ") may skip it";
                    }
                }
                case GOTO -> {
                    return "the kernel uses goto";
                }
            }
        }
        return null;
    }

    /**
     * @return true if {@code j} is a {@code continue} after region {@code r}'s end: a thread that takes
     *         it has passed the region (and its flush) in this iteration and reaches it again in the
     *         next one, so it skips nothing of the region (a {@code break} would skip later iterations)
     */
    private static boolean continuesAfter(Stmt.Jump j, Region r) {
        return j.kind() == Stmt.JumpKind.CONTINUE && j.range().offset() >= r.end();
    }

    private List<Stmt.Loop> enclosingLoops(Stmt s) {
        List<Stmt.Loop> l = new ArrayList<>();
        for (Stmt x = trees.parent(s); x != null; x = trees.parent(x)) {
            if (x instanceof Stmt.Loop lp) {
                l.add(lp);
            }
        }
        return l;
    }

    /** @return true if every construct between {@code upTo} (exclusive; null = the body) and {@code s} is uniform */
    private boolean uniformPath(Stmt s, Stmt upTo) {
        for (Stmt x = trees.parent(s); x != null && x != upTo; x = trees.parent(x)) {
            if (!uni.controlIsUniform(x)) {
                return false;
            }
        }
        return true;
    }

    private List<Stmt.If> divergentGuardsBefore(Stmt.Block b, Stmt node) {
        List<Stmt.If> l = new ArrayList<>();
        for (Stmt s : b.stmts()) {
            if (s == node) {
                break;
            }
            if (s instanceof Stmt.If i && isGuard(b, i) && !uni.isUniform(i.cond())) {
                l.add(i);
            }
        }
        return l;
    }

    private List<Stmt.If> divergentGuardsFrom(Stmt.Block b, Stmt.If first) {
        List<Stmt.If> l = new ArrayList<>();
        boolean on = false;
        for (Stmt s : b.stmts()) {
            on |= s == first;
            if (on && s instanceof Stmt.If i && isGuard(b, i) && !uni.isUniform(i.cond())) {
                l.add(i);
            }
        }
        return l;
    }

    /**
     * A guard is {@code if (c) return;} in the function body or {@code if (c) continue;} in a loop's
     * body block (the then-branch may be a block ending with the jump and holding no other jump),
     * without else.
     */
    boolean isGuard(Stmt.Block b, Stmt.If i) {
        if (i.otherwise() != null) {
            return false;
        }
        Stmt.Jump last = guardJump(i);
        if (last == null || !src.startsWithWord(i.range(), "if") || !src.startsWithWordAfterAttributes(last.range(), keyword(last))) {
            return false; // written by a macro: its text cannot be rewritten
        }
        if (last.kind() == Stmt.JumpKind.RETURN) {
            return last.value() == null && b == fn.body();
        }
        if (last.kind() == Stmt.JumpKind.CONTINUE) {
            return trees.parent(b) instanceof Stmt.Loop lp && lp.body() == b;
        }
        return false;
    }

    /** @return the guard's final jump statement, or null if {@code i}'s then-branch is not of guard shape */
    public static Stmt.Jump guardJump(Stmt.If i) {
        Stmt t = i.then();
        Stmt.Jump last;
        if (t instanceof Stmt.Jump j) {
            last = j;
        } else if (t instanceof Stmt.Block b && !b.stmts().isEmpty() && b.stmts().get(b.stmts().size() - 1) instanceof Stmt.Jump j) {
            last = j;
            if (Trees.collect(b, Stmt.Jump.class).size() != 1) {
                return null;
            }
        } else {
            return null;
        }
        return last.kind() == Stmt.JumpKind.RETURN || last.kind() == Stmt.JumpKind.CONTINUE ? last : null;
    }
}
