package klap.np;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import klap.model.CudaUnit;
import klap.model.Diagnostic;
import klap.model.Expr;
import klap.model.FunctionDef;
import klap.model.Param;
import klap.model.Pragma;
import klap.model.SourceFile;
import klap.model.SourceRange;
import klap.model.Stmt;
import klap.model.VarDecl;
import klap.transform.Trees;
import klap.transform.Uniformity;

/**
 * The facts the CUDA-NP transform needs about one kernel, and the proof that the transform keeps
 * its result (the safety rule): which {@code #pragma np parallel for} loops can be spread over a
 * master and its slaves, which statements must run on the master only, where each local array
 * lives, and whether the inter-warp layout is possible. Input: a kernel of a parsed unit and its
 * np pragmas. Output: an {@link NpPlan}, or null with a {@code klap-np} warning per reason.
 *
 * <p>klap's execution model: CUDA-NP (section 3.5) runs sequential code on the master only and
 * broadcasts live-ins, computing them redundantly only when they are "uniform vector operations"
 * (section 3.1). klap goes all the way: every member of a group (the master and its S-1 slaves)
 * runs the sequential code <em>redundantly</em> with the master's {@code threadIdx}, so every value
 * a parallel loop reads is already in each member's registers (no broadcast, no copyin needed), and
 * control flow around a loop is the same in all members. This is exact only if the members compute
 * the same values, so the planner proves:
 * <ul>
 *   <li>a sequential statement that stores to memory (or calls a function that may) writes no local
 *       variable: it runs on the master only ({@code if (slave == 0)}), followed by a group barrier
 *       in the intra-warp layout;</li>
 *   <li>declarations and conditions have no side effect (they run in every member);</li>
 *   <li>the kernel uses nothing that differs between members: warp intrinsics, {@code warpSize},
 *       {@code clock}, {@code asm}, lambdas, {@code goto}, references or {@code static} locals,
 *       addresses of locals, calls of functions klap cannot see or that read {@code threadIdx};</li>
 *   <li>a parallel loop is canonical ({@code for (int i = lo; i < hi; i++)}), its body writes no
 *       local declared outside it except reduction and scan variables (section 3.2) and local
 *       arrays (placed below), and has no {@code break}, {@code return}, {@code goto} or barrier;</li>
 *   <li>reduction variables are only updated with their operator; a scan variable is updated once,
 *       at the top of the body, by statements that do not read it, and only read after.</li>
 * </ul>
 * Local arrays written in a parallel loop (section 3.3): kept in registers, split over the members,
 * when every access is {@code a[i]} inside parallel loops with the same lower bound (element i lives
 * in the member that runs iteration i, at index {@code (i - lo) / S}); otherwise in shared memory,
 * one copy per group; otherwise the loops stay sequential.
 * Inter-warp layout: its collectives are block barriers, so every parallel loop must be reached by
 * the whole block (uniform control flow, no divergent return/break/continue before it, KLAP's
 * {@link Uniformity}), and no sequential load may follow a master-only store unless a
 * {@code __syncthreads()} of the program lies between them (klap cannot add a block barrier in
 * code that may be divergent).
 */
final class NpPlanner {
    /** Builtins that differ between the members of a group, or that count threads. */
    private static final Set<String> FORBIDDEN_CALLS = Set.of("__activemask", "__syncwarp", "__syncthreads_count",
            "__syncthreads_and", "__syncthreads_or", "clock", "clock64", "__globaltimer", "__lanemask_lt",
            "__barrier_sync", "this_thread_block", "tiled_partition", "coalesced_threads");
    private static final Pattern FORBIDDEN_PREFIX = Pattern.compile(
            "__(?:shfl|ballot|any|all|uni|match|reduce_|lanemask)\\w*|cooperative_groups::\\w+|cg::\\w+");
    /** Builtins with a memory side effect (a sequential call runs on the master only). */
    private static final Pattern IMPURE = Pattern.compile(
            "atomic\\w*|printf|assert|malloc|free|memcpy|memset|__st(?:cg|cs|wb|wt)|__threadfence\\w*|__nanosleep"
            + "|__trap|__brkpt|cuda\\w*|sincos\\w*|__sincosf|frexpf?|modff?|remquof?");
    /** Cache-hinted loads: weak loads, like a dereference (not {@code __ldcv}, a volatile load). */
    private static final Pattern LOADS = Pattern.compile("__ld(?:g|ca|cg|cs|lu)");
    /**
     * The double-underscore intrinsics klap knows to be pure functions of their arguments (math,
     * conversions, reinterpretations, bit and SIMD operations). Any other {@code __} name is unknown:
     * {@code __nv_atomic_*}, {@code __atomic_*}, {@code __builtin_mem*}, {@code __pipeline_*} store.
     */
    private static final Pattern PURE_INTRINSIC = Pattern.compile(
            "__[fd](?:add|sub|mul|div|rcp|sqrt|rsqrt)_r[nduz]|__fmaf?(?:_ieee)?_r[nduz]|__fdividef|__saturatef"
            + "|__(?:exp|exp10|log|log2|log10|pow|sin|cos|tan)f"
            + "|__[a-z0-9]+2[a-z0-9_]+|__[a-z0-9]+_as_[a-z0-9]+"
            + "|__(?:u?mul24|u?mulhi|u?mul64hi|u?sad|popc(?:ll)?|clz(?:ll)?|ffs(?:ll)?|brev(?:ll)?|byte_perm"
            + "|funnelshift_[lr]c?|u?r?hadd|fns|dp4a|dp2a_(?:lo|hi)|isnanf?|isinff?|finitef?|signbitf?)"
            + "|__v(?!ib)[a-z0-9_]+"
            + "|__h(?:add|sub|mul|div|fma|neg|abs|max|min|eq|ne|lt|le|gt|ge|equ|neu|ltu|leu|gtu|geu|isnan|isinf"
            + "|cmadd|bfma)\\w*"
            + "|__is(?:Global|Shared|Constant|Local|GridConstant)|__cvta_\\w+|__builtin_(?:expect|assume|assume_aligned)");
    private static final Set<String> BARRIERS = Set.of("__syncthreads");
    private static final Set<String> CALL_OK_NAMES = Set.of("min", "max", "abs", "sizeof");

    private final CudaUnit unit;
    private final SourceFile src;
    private final List<Diagnostic> diags;
    private final Map<String, CalleeFacts> callees = new HashMap<>();
    /** per template kernel, the template type parameters whose arguments in the file a decision read */
    private final Map<FunctionDef, Set<String>> consulted = new HashMap<>();
    /** the variables the kernel being planned writes anywhere (a written pointer parameter may point anywhere) */
    private Set<String> kernelWrites = Set.of();

    /** the kernel, template type parameter and argument that {@link #templateArguments} adds, or nulls */
    private final FunctionDef extraKernel;
    private final String extraParam;
    private final String extraType;

    NpPlanner(CudaUnit unit, List<Diagnostic> diags) {
        this(unit, diags, null, null, null);
    }

    /**
     * A planner that plans as if the file also instantiated template kernel {@code k} with
     * {@code type} for its template type parameter {@code param} ({@code k<..., type, ...>}): where a
     * launch leaves the arguments to deduction, the variant planned without it is checked for that
     * type by comparing the two plans' variants (NpPass).
     */
    NpPlanner(CudaUnit unit, List<Diagnostic> diags, FunctionDef k, String param, String type) {
        this.unit = unit;
        this.src = unit.file();
        this.diags = diags;
        this.extraKernel = k;
        this.extraParam = param;
        this.extraType = type;
    }

    // ----------------------------------------------------------------------------------------
    // Variables and their scopes

    /** A variable of the kernel: a parameter (decl == null) or a local. */
    record Var(String name, VarDecl decl, Stmt.Decl stmt, SourceRange scope) {
        boolean isArray() {
            return decl != null && decl.array();
        }

        boolean isPrivate() {
            return decl == null || (!decl.shared() && !decl.isStatic() && !decl.reference());
        }
    }

    /** Name resolution by scope (innermost declaration visible at the use). */
    static final class Scopes {
        final List<Var> vars = new ArrayList<>();
        private final SourceFile src;

        /** @return the number of array dimensions in v's declarator ({@code a[2][3]}: 2; a parameter: 0) */
        int dims(Var v) {
            if (v.decl() == null || !v.decl().array()) {
                return 0;
            }
            String t = src.text();
            int depth = 0;
            int n = 0;
            for (int i = v.decl().nameRange().end(); i < v.stmt().range().end(); i++) {
                char c = t.charAt(i);
                if (c == '[') {
                    if (depth == 0) {
                        n++;
                    }
                    depth++;
                } else if (c == ']') {
                    depth--;
                } else if (depth == 0 && c != ' ' && c != '\t' && c != '\n') {
                    break;
                }
            }
            return n;
        }

        Scopes(FunctionDef k, SourceFile src) {
            this.src = src;
            for (Param p : k.params()) {
                vars.add(new Var(p.name(), null, null, k.range()));
            }
            visit(k.body());
        }

        private void visit(Stmt s) {
            if (s instanceof Stmt.Block b) {
                for (Stmt c : b.stmts()) {
                    if (c instanceof Stmt.Decl d) {
                        for (VarDecl v : d.vars()) {
                            vars.add(new Var(v.name(), v, d, SourceRange.of(v.nameRange().offset(), b.range().end())));
                        }
                    }
                }
            } else if (s instanceof Stmt.Loop lp && lp.init() instanceof Stmt.Decl d) {
                for (VarDecl v : d.vars()) {
                    vars.add(new Var(v.name(), v, d, SourceRange.of(v.nameRange().offset(), lp.range().end())));
                }
            }
            for (Stmt c : s.children()) {
                visit(c);
            }
        }

        /** @return the variable {@code n} names at its position, or null (a global, a function, ...) */
        Var resolve(Expr.Name n) {
            if (n.kind() != Expr.NameKind.LOCAL && n.kind() != Expr.NameKind.PARAM) {
                return null;
            }
            Var best = null;
            for (Var v : vars) {
                if (v.name().equals(n.name()) && v.scope().contains(n.range().offset())
                        && (best == null || v.scope().offset() >= best.scope().offset())) {
                    best = v;
                }
            }
            return best;
        }
    }

    // ----------------------------------------------------------------------------------------
    // The plan

    /** Where a local array lives in the transformed kernel (CUDA-NP section 3.3). */
    enum Place { REGISTERS, SHARED }

    /**
     * A local array that a parallel loop writes.
     *
     * @param elemType the element type text ({@code float})
     * @param dim      the dimension text ({@code NPOINTS})
     * @param lo       for REGISTERS, the common lower bound of the loops (text)
     */
    record ArrayPlan(Var var, Place place, String elemType, String dim, String lo) {
    }

    /**
     * A scan (CUDA-NP section 3.2): {@code update} is the statement at {@code index} of the body
     * block; {@code operand} the value it combines into {@code var} (null for {@code ++}).
     */
    record ScanPlan(String var, NpPragma.Op op, int index, Stmt.ExprStmt update, Expr operand) {
    }

    /**
     * One parallel loop.
     *
     * @param loop       the {@code for} statement
     * @param pragma     its directive
     * @param clauses    the parsed clauses
     * @param var        the loop variable
     * @param lo         the lower bound (the loop variable's initializer)
     * @param hi         the bound of the condition
     * @param cmp        {@code <} or {@code <=}
     * @param reductions reduction variables (clauses and inferred) -> operator
     * @param scan       the scan, or null
     * @param interOk    true if the inter-warp layout can run it (block-uniform reach)
     */
    record NpLoop(Stmt.Loop loop, Pragma pragma, NpPragma clauses, String var, Expr lo, Expr hi, String cmp,
                  Map<String, NpPragma.Op> reductions, ScanPlan scan, String interReason, Pragma unroll) {
        Stmt.Block body() {
            return (Stmt.Block) loop.body(); // scan loops only (the planner checked)
        }
    }

    /**
     * The plan for one kernel.
     *
     * @param masterOnly  sequential statements that run on the master only
     * @param interReason why the inter-warp layout is impossible, or null
     * @param slaves      the num_slaves clause common to the loops, or 0
     * @param type        the type clause common to the loops, or null
     */
    record NpPlan(FunctionDef kernel, Scopes scopes, List<NpLoop> loops, Map<Var, ArrayPlan> arrays,
                  List<Stmt> masterOnly, List<Broadcast> broadcasts, String interReason, int slaves, String type) {
        boolean scratch() {
            return !broadcasts.isEmpty() || loops.stream().anyMatch(l -> !l.reductions().isEmpty() || l.scan() != null);
        }
    }

    /**
     * A sequential value with a side effect, computed by the master and broadcast to the group
     * (CUDA-NP section 3.1, read_from_master): {@code T x = e;} or {@code x = e;} where e stores to
     * memory (an atomic, a call). {@code value} is e, {@code var} x, {@code stmt} the statement.
     */
    record Broadcast(Stmt stmt, String var, Expr value) {
    }

    // ----------------------------------------------------------------------------------------

    /** A reason to leave a loop or a kernel as written. */
    static final class Refusal extends Exception {
        final int offset;

        Refusal(int offset, String message) {
            super(message, null, false, false);
            this.offset = offset;
        }
    }

    private void warn(int offset, String msg) {
        diags.add(Diagnostic.at(Diagnostic.Severity.WARNING, src, offset, msg, "np"));
    }

    /**
     * @param k       a kernel
     * @param pragmas the np pragmas inside its body, in source order (non-empty)
     * @return the plan, or null (warnings added) when nothing can be transformed
     */
    NpPlan plan(FunctionDef k, List<Pragma> pragmas) {
        Scopes scopes = new Scopes(k, src);
        kernelWrites = klap.transform.Mutations.of(k, unit);
        try {
            checkKernel(k, scopes);
        } catch (Refusal r) {
            warn(r.offset, "kernel '" + k.name() + "' is left as written: " + r.getMessage());
            return null;
        }
        Uniformity uni = new Uniformity(k, false, unit);
        Trees trees = uni.trees();
        List<NpLoop> loops = new ArrayList<>();
        for (Pragma p : pragmas) {
            NpPragma clauses;
            try {
                clauses = NpPragma.parse(p.text());
            } catch (IllegalArgumentException e) {
                warn(p.range().offset(), "#pragma np ignored: " + e.getMessage());
                continue;
            }
            Stmt target = firstStatementAfter(k.body(), trees, p.range());
            try {
                if (!(target instanceof Stmt.Loop lp) || lp.kind() != Stmt.LoopKind.FOR) {
                    throw new Refusal(p.range().offset(), "#pragma np parallel for must precede a for loop");
                }
                for (NpLoop outer : loops) {
                    if (outer.loop().range().contains(lp.range())) {
                        throw new Refusal(lp.range().offset(), "a parallel loop inside another parallel loop runs "
                                + "sequentially in its iteration (nested CUDA-NP loops are not supported)");
                    }
                }
                loops.add(loop(k, scopes, trees, uni, p, clauses, lp));
            } catch (Refusal r) {
                warn(r.offset, "loop left sequential: " + r.getMessage());
            }
        }
        Map<Var, ArrayPlan> arrays = new LinkedHashMap<>();
        // placing arrays may refuse loops (their accesses become sequential): iterate to a fixpoint
        while (true) {
            arrays.clear();
            NpLoop refused = placeArrays(k, scopes, loops, arrays);
            if (refused == null) {
                break;
            }
            loops.remove(refused);
        }
        if (loops.isEmpty()) {
            warn(k.nameRange().offset(), "kernel '" + k.name() + "' is left as written: none of its "
                    + "#pragma np parallel for loops can be transformed (see the warnings above)");
            return null;
        }
        List<Stmt> masterOnly = new ArrayList<>();
        List<Broadcast> broadcasts = new ArrayList<>();
        Sequential seq = new Sequential(scopes, loops, arrays, masterOnly, broadcasts, trees);
        try {
            seq.stmt(k.body());
        } catch (Refusal r) {
            warn(r.offset, "kernel '" + k.name() + "' is left as written: " + r.getMessage());
            return null;
        }
        String inter = seq.interReason();
        for (Broadcast b : broadcasts) {
            if (inter == null) {
                inter = blockReach(k, trees, uni, b.stmt(), "the broadcast of '" + b.var() + "'");
            }
        }
        for (NpLoop l : loops) {
            if (inter == null && l.interReason() != null) {
                inter = l.interReason();
            }
        }
        int slaves = 0;
        String type = null;
        boolean slavesConflict = false;
        boolean typeConflict = false;
        for (NpLoop l : loops) {
            int s = l.clauses().numSlaves();
            if (s != 0) {
                slavesConflict |= slaves != 0 && slaves != s;
                slaves = s;
            }
            String t = l.clauses().type();
            if (t != null) {
                typeConflict |= type != null && !type.equals(t);
                type = t;
            }
        }
        if (slavesConflict) {
            warn(k.nameRange().offset(), "kernel '" + k.name() + "': its loops ask for different num_slaves; "
                    + "all loops of a kernel share one group size, so klap uses --np-slaves");
            slaves = 0;
        }
        if (typeConflict) {
            warn(k.nameRange().offset(), "kernel '" + k.name() + "': its loops ask for different type(...) "
                    + "clauses; klap follows --np");
            type = null;
        }
        return new NpPlan(k, scopes, List.copyOf(loops), java.util.Collections.unmodifiableMap(arrays), List.copyOf(masterOnly),
                List.copyOf(broadcasts), inter, slaves, type);
    }

    /**
     * @return the statement a pragma applies to: the first statement after it in the statement
     *         that holds it (the innermost block, if, loop or label around the pragma), or null
     *         (a pragma at the end of a block applies to nothing, not to what follows the block)
     */
    private static Stmt firstStatementAfter(Stmt root, Trees trees, SourceRange pragma) {
        Stmt[] holder = {null};
        Trees.walkStmts(root, s -> {
            if (s.range().contains(pragma) && (holder[0] == null || holder[0].range().contains(s.range()))) {
                holder[0] = s;
            }
        });
        Stmt[] best = {null};
        Trees.walkStmts(root, s -> {
            if (s.range().offset() >= pragma.end() && s.range().length() > 0 && trees.parent(s) == holder[0]
                    && (best[0] == null || s.range().offset() < best[0].range().offset())) {
                best[0] = s;
            }
        });
        return best[0];
    }

    /** @return a {@code #pragma unroll} right before the np pragma or between it and the loop, or null */
    private Pragma unrollPragma(Pragma np, Stmt.Loop lp) {
        for (Pragma q : unit.pragmas()) {
            if (!q.text().strip().startsWith("unroll") || q.range().end() > lp.range().offset()) {
                continue;
            }
            int from = Math.min(q.range().end(), np.range().offset());
            String between = src.text().substring(from, lp.range().offset());
            String rest = between.replace(src.slice(np.range()), "").replace(src.slice(q.range()), "");
            if (rest.isBlank() && q.range().offset() < lp.range().offset()
                    && (q.range().end() <= np.range().offset() ? src.text().substring(q.range().end(), np.range().offset()).isBlank()
                    : true)) {
                return q;
            }
        }
        return null;
    }

    // ----------------------------------------------------------------------------------------
    // Kernel-wide conditions

    private void checkKernel(FunctionDef k, Scopes scopes) throws Refusal {
        if (k.memberOf() != null) {
            throw new Refusal(k.nameRange().offset(), "member kernels are not supported");
        }
        for (Stmt s : allStmts(k.body())) {
            if (s instanceof Stmt.Jump j && j.kind() == Stmt.JumpKind.GOTO) {
                throw new Refusal(s.range().offset(), "it uses goto");
            }
            if (s instanceof Stmt.Loop lp && lp.kind() == Stmt.LoopKind.RANGE_FOR) {
                throw new Refusal(s.range().offset(), "range-based for loops are not supported");
            }
            if (initOrConditionDeclaration(s)) {
                // code in a statement's header: klap's master-only and broadcast rewrites are statements
                throw new Refusal(s.range().offset(), "an init-statement or a condition declaration "
                        + "(if (init; c), switch (init; c), if (T x = e), while (T x = e)) is not supported");
            }
            if (s instanceof Stmt.Other o && o.asmText(src.slice(o.range())) != null) {
                throw new Refusal(s.range().offset(), "inline asm may read the lane or thread index");
            }
            if (s instanceof Stmt.Decl d) {
                for (VarDecl v : d.vars()) {
                    if (v.reference() || v.isStatic()) {
                        throw new Refusal(v.nameRange().offset(), "local '" + v.name() + "' is a "
                                + (v.reference() ? "reference" : "static variable") + " (not supported)");
                    }
                    if (v.name().startsWith("klap_np_")) {
                        throw new Refusal(v.nameRange().offset(), "names starting with klap_np_ are reserved");
                    }
                }
                String why = declarationProblem(d);
                if (why != null) {
                    throw new Refusal(d.range().offset(), why);
                }
            }
        }
        String text = src.slice(k.range());
        String headerMacros = unit.headerMacroTextIn(k.range()); // a header's macros (review 2026-12-01)
        java.util.regex.Matcher alloc = NEW_DELETE.matcher(klap.transform.Lexical.blankCommentsAndLiterals(text));
        if (alloc.find()) {
            throw new Refusal(k.range().offset() + alloc.start(), NEW_DELETE_WHY);
        }
        if (NEW_DELETE.matcher(macroTexts(text) + "\n" + headerMacros).find()) {
            throw new Refusal(k.range().offset(), "a macro it uses: " + NEW_DELETE_WHY);
        }
        if (volatileIn(text) || volatileIn(macroTexts(text) + "\n" + headerMacros)) {
            throw new Refusal(k.range().offset(), "it uses volatile (also through a typedef or a macro): the members of a "
                    + "group could read different values where the original thread read one");
        }
        java.util.regex.Matcher qual = Pattern.compile("::\\s*(threadIdx|blockDim)\\b").matcher(text + "\n" + macroTexts(text) + "\n" + headerMacros);
        if (qual.find()) {
            throw new Refusal(k.range().offset() + (qual.start() < text.length() ? qual.start() : 0), "it names ::" + qual.group(1)
                    + " (also through a macro), which klap cannot replace with the master's value");
        }
        Refusal[] bad = {null};
        Map<Expr, Expr> parents = new IdentityHashMap<>();
        walkKernelExprs(k.body(), e -> {
            for (Expr c : e.children()) {
                parents.put(c, e);
            }
        });
        walkKernelExprs(k.body(), e -> {
            if (bad[0] != null) {
                return;
            }
            String why = forbidden(e, scopes);
            if (why == null && e instanceof Expr.Name n && (n.kind() == Expr.NameKind.LOCAL
                    || n.kind() == Expr.NameKind.PARAM)) {
                Var v = scopes.resolve(n);
                Expr p = parents.get(n);
                if (v == null) {
                    why = "klap cannot resolve the declaration of '" + n.name() + "' (a condition declaration or a "
                            + "structured binding)";
                } else if (v.isArray() && v.isPrivate() && !(p instanceof Expr.Subscript sub && sub.array() == n)
                        && !(p instanceof Expr.Unary u && u.op().startsWith("sizeof"))) {
                    why = "local array '" + n.name() + "' is used other than as " + n.name() + "[i] (its address "
                            + "escapes: klap could not tell which member's copy is read or written)";
                }
            }
            if (why == null && decays(e, parents.get(e), scopes)) {
                // c.v of a struct's array member, c[0] of a 2-D local array (review 2026-12-01: fill(c.v, ...)
                // ran on the master alone and filled only its copy; put(c[i], ...) in the loop filled each
                // member's copy)
                why = "'" + src.slice(e.range()).strip() + "' is an array in a local variable used other than by an index "
                        + "(it decays to a pointer: klap could not tell which member's copy is read or written)";
            }
            if (why != null) {
                bad[0] = new Refusal(e.range().offset(), why);
            }
        });
        if (bad[0] != null) {
            throw bad[0];
        }
    }

    /**
     * @return true if {@code e}, an array member of a private variable ({@code c.v}) or a row of a
     *         private multi-dimensional array ({@code c[0]} of {@code float c[4][4]}), decays to a
     *         pointer: its parent {@code p} neither indexes it nor takes its size
     */
    private static boolean decays(Expr e, Expr p, Scopes scopes) {
        boolean array = false;
        if (e instanceof Expr.Member m && !m.arrow() && m.array()) {
            array = privateRoot(m.owner(), scopes) != null;
        } else if (e instanceof Expr.Subscript s) {
            Rows r = rows(s);
            Var v = r.root() instanceof Expr.Name n ? scopes.resolve(n) : null;
            array = v != null && v.isPrivate() && v.isArray() && r.depth() < scopes.dims(v);
        }
        if (!array) {
            return false;
        }
        if (p instanceof Expr.Unary u && u.op().equals("()")) {
            return true; // (c.v): klap does not look through the parentheses
        }
        return !(p instanceof Expr.Subscript sub && unparen(sub.array()) == e)
                && !(p instanceof Expr.Unary u && u.op().startsWith("sizeof"));
    }

    private klap.transform.MacroTexts macros;

    /**
     * @return the replacement texts of the file's macros that {@code text} names, transitively
     *         ({@link klap.transform.MacroTexts}): what the textual checks ({@code new}/{@code delete},
     *         {@code volatile}, {@code ::threadIdx}) must also read (review 2026-12-01:
     *         {@code #define RELEASE(p) delete[] p} in a kernel)
     */
    private String macroTexts(String text) {
        if (macros == null) {
            macros = new klap.transform.MacroTexts(src.text());
        }
        return macros.used(text);
    }

    /** {@code new} and {@code delete} expressions (the model keeps them as opaque expressions). */
    private static final Pattern NEW_DELETE = Pattern.compile("(?<![\\w.])(?:new|delete)\\b");

    private static final String NEW_DELETE_WHY = "it uses new or delete, which every member of a group would run "
            + "(an allocation per member, or the same memory freed several times)";

    /**
     * @return true if {@code s} is an if or switch with an init-statement or a condition declaration,
     *         or a loop whose condition declares a variable ({@code while (T x = e)}, {@code for (; T x = e;)})
     */
    private static boolean initOrConditionDeclaration(Stmt s) {
        if (s instanceof Stmt.If i) {
            return i.init() != null;
        }
        if (s instanceof Stmt.Switch sw) {
            return sw.init() != null;
        }
        if (s instanceof Stmt.Loop lp && lp.init() != null && lp.cond() != null) {
            return lp.kind() == Stmt.LoopKind.WHILE || lp.init().range().contains(lp.cond().range());
        }
        return false;
    }

    /** @return true if {@code text} says volatile, directly or through a typedef/using of the file */
    private boolean volatileIn(String text) {
        if (Pattern.compile("\\bvolatile\\b").matcher(text).find()) {
            return true;
        }
        Matcher td = Pattern.compile("(?:typedef[^;]*\\bvolatile\\b[^;]*?(\\w+)\\s*;)|(?:using\\s+(\\w+)\\s*=[^;]*\\bvolatile\\b)")
                .matcher(src.text());
        while (td.find()) {
            String alias = td.group(1) != null ? td.group(1) : td.group(2);
            if (Pattern.compile("\\b" + Pattern.quote(alias) + "\\b").matcher(text).find()) {
                return true;
            }
        }
        return false;
    }

    /** @return why {@code e} cannot be in a CUDA-NP kernel, or null */
    private String forbidden(Expr e, Scopes scopes) {
        if (e instanceof Expr.Lambda) {
            return "lambdas in kernels are not supported";
        }
        if (e instanceof Expr.Name n && n.kind() == Expr.NameKind.BUILTIN && n.name().equals("warpSize")) {
            return "it uses warpSize: lanes change when the block grows";
        }
        if (e instanceof Expr.Unary u && u.op().equals("&")) {
            // &x, &a[i], &s.f of a local; &p[i] through a pointer is an address in memory
            Var v = privateRoot(u.operand(), scopes);
            if (v == null) {
                v = ambiguousRoot(u.operand(), scopes);
            }
            if (v != null) {
                return "it takes the address of local '" + v.name() + "'";
            }
        }
        if (e instanceof Expr.Call c) {
            String name = c.calleeName();
            if (name == null) {
                return "it calls through an expression or a member function (klap cannot see the callee)";
            }
            String why = calleeProblem(name, c);
            if (why != null) {
                return why;
            }
        }
        return null;
    }

    private String calleeProblem(String name, Expr.Call c) {
        String base = name.replaceFirst("^::", "");
        if (FORBIDDEN_CALLS.contains(base) || FORBIDDEN_PREFIX.matcher(base).matches()) {
            return "it calls " + base + ", a warp- or thread-level primitive whose result changes when the "
                    + "block grows";
        }
        if (c.callee() instanceof Expr.Name n && n.kind() == Expr.NameKind.TYPE) {
            FunctionDef owner = unit.functions().stream().filter(f -> f.range().contains(c.range())).findFirst().orElse(null);
            String why = typeProblem(base, owner);
            return why == null ? null : "it constructs a '" + base + "'" + why;
        }
        if (base.equals("__ldcv")) {
            return "it calls __ldcv, a volatile load: the members of a group could read different values where "
                    + "the original thread read one";
        }
        CalleeFacts f = callee(base);
        if (f == null && (BARRIERS.contains(base) || IMPURE.matcher(base).matches() || LOADS.matcher(base).matches()
                || pureBuiltin(base))) {
            return null;
        }
        if (f == null) {
            return "it calls '" + base + "', whose body klap cannot see (it may read threadIdx or store to memory)";
        }
        return f.forbidden;
    }

    private static boolean pureBuiltin(String name) {
        return klap.transform.Mutations.pure(name) || CALL_OK_NAMES.contains(name)
                || PURE_INTRINSIC.matcher(name).matches() || MAKE_VECTOR.matcher(name).matches()
                || name.matches("(?:std|cuda::std)::(?:min|max|abs|fabs|sqrt|exp|log|pow|sin|cos|tan|floor|ceil|round"
                        + "|trunc|fmin|fmax|fma|isnan|isinf|isfinite|signbit|hypot|atan2|tanh|erf|copysign|fmod|llabs|labs)")
                || name.matches("[a-z0-9]+f?") && MATH.contains(name);
    }

    /**
     * CUDA's vector constructors ({@code make_float3}, {@code make_uint2}, {@code make_cudaExtent});
     * another {@code make_*} of a header klap does not read may read the thread index or store
     * (review 2026-12-01: {@code make_ticket(counter)}, an atomicAdd, ran in every member)
     */
    private static final Pattern MAKE_VECTOR = Pattern.compile("make_(?:u?(?:char|short|int|long|longlong)|float|double)[1-4]"
            + "|make_cuda(?:Extent|Pos|PitchedPtr)|make_(?:half2|bfloat162|cuComplex|cuFloatComplex|cuDoubleComplex)");

    private static final Set<String> MATH = Set.of("sqrt", "sqrtf", "exp", "expf", "log", "logf", "sin", "sinf",
            "cos", "cosf", "tanh", "tanhf", "atan2", "atan2f", "asin", "acos", "atan", "asinf", "acosf", "atanf",
            "erf", "erff", "erfc", "erfcf", "hypot", "hypotf", "copysign", "copysignf", "fmod", "fmodf", "isnan",
            "isinf", "isfinite", "signbit", "lround", "lroundf", "llround", "llroundf", "rint", "rintf", "nearbyint",
            "exp10", "exp10f", "expm1", "expm1f", "log1p", "log1pf", "normcdf", "normcdff",
            "rcbrt", "rcbrtf", "tan", "tanf", "sinh", "sinhf", "cosh", "coshf", "ldexp", "ldexpf");

    private static final Pattern KNOWN_BY_VALUE = Pattern.compile("(?:u?char|u?short|u?int|u?long|u?longlong|longlong"
            + "|float|double)[1-4]|dim3|__half2?|half2?|__nv_bfloat162?|size_t|ptrdiff_t|u?int(?:8|16|32|64)_t"
            + "|bool|char|short|int|long|float|double|void|unsigned|signed|auto|wchar_t|char(?:8|16|32)_t");
    private static final Set<String> TYPE_WORDS = Set.of("const", "volatile", "static", "register", "struct", "class",
            "union", "enum", "typename", "__shared__", "__device__", "__constant__", "__restrict__", "__restrict",
            "extern", "constexpr", "std", "cuda");

    /**
     * @return why a local declaration must not run in every member of a group, or null: a class type
     *         whose construction (and destruction) klap cannot show to be a pure function of its
     *         arguments ({@link #classProblem}); pointers and references construct nothing
     */
    private String declarationProblem(Stmt.Decl d) {
        if (d.vars().isEmpty()) {
            return null;
        }
        String type = src.slice(SourceRange.of(d.range().offset(), d.vars().get(0).nameRange().offset()));
        if (d.vars().stream().allMatch(x -> scalarType(x.nameRange().offset()) != null)) {
            return null; // arithmetic, also through a typedef or macro (FunctionDef.scalarTypes): constructs nothing
        }
        if (type.contains("*") || type.contains("&") || type.contains("<")) {
            // a pointer or reference; template arguments: a template type parameter is T itself (below)
            if (type.contains("*") || type.contains("&")) {
                return null;
            }
        }
        FunctionDef owner = unit.functions().stream().filter(f -> f.range().contains(d.range())).findFirst().orElse(null);
        Matcher m = IDENT.matcher(type.replaceAll("__align__\\s*\\([^)]*\\)", " "));
        while (m.find()) {
            String id = m.group();
            if (TYPE_WORDS.contains(id) || KNOWN_BY_VALUE.matcher(id).matches()) {
                continue;
            }
            String why = typeProblem(id, owner);
            if (why != null) {
                return "local '" + d.vars().get(0).name() + "' has type '" + id + "'" + why;
            }
        }
        return null;
    }

    /**
     * @return why constructing the type {@code id} named in {@code owner} may not run in every
     *         member (": reason", or " = arg: reason" for a template type parameter, checked with
     *         every argument this file instantiates it with), or null
     */
    /**
     * @return true if the file names function template {@code f} followed by {@code (} anywhere but at
     *         its definition's and first declaration's names: a call that leaves the template
     *         arguments to deduction (conservative: a same-named member or another overload counts too)
     */
    private boolean calledWithoutTemplateArguments(FunctionDef f) {
        Matcher m = Pattern.compile("(?<![\\w])" + Pattern.quote(f.name()) + "\\s*\\(").matcher(src.text());
        while (m.find()) {
            boolean declaration = m.start() == f.nameRange().offset()
                    || f.firstDeclaration() != null && f.firstDeclaration().contains(m.start());
            if (!declaration) {
                return true;
            }
        }
        return false;
    }

    private String typeProblem(String id, FunctionDef owner) {
        if (owner != null && owner.templateHeader() != null
                && src.slice(owner.templateHeader()).matches("(?s).*\\b(?:typename|class)\\s+" + Pattern.quote(id) + "\\b.*")) {
            List<String> args = new ArrayList<>(templateArguments(owner, id));
            if (owner.kind() != FunctionDef.Kind.KERNEL && calledWithoutTemplateArguments(owner)) {
                // a function template called without template arguments: C++ deduces them, klap does not see
                // them (review 2026-11-30: g(a) of template <typename U> g(const U *) with a U whose
                // constructor has side effects; a kernel's deduced launches are checked in NpPass)
                args.add("<default " + id + ">");
            }
            for (String arg : args) {
                Matcher a = IDENT.matcher(arg.startsWith("<default") ? "unknown_default_argument" : arg);
                while (a.find()) {
                    String why = arg.contains("*") ? null : classProblem(a.group(), new HashSet<>());
                    if (why != null) {
                        return " = " + arg.strip() + ": " + why;
                    }
                }
            }
            return null;
        }
        String why = classProblem(id, new HashSet<>());
        return why == null ? null : ": " + why;
    }

    /**
     * @return why an overloaded operator (or conversion function) {@code f} of a class may not run in
     *         every member of a group, or null: operators are not calls in klap's model, so where one
     *         runs (an assignment, {@code int x = obj;}) klap would take it for plain arithmetic
     */
    private String operatorProblem(FunctionDef f) {
        CalleeFacts facts = callee(f.name());
        if (facts == null || facts.forbidden() != null || facts.stores() || facts.syncs() || facts.loads()
                || !facts.refParams().isEmpty()) {
            return "its operator '" + f.name() + "' stores, loads, synchronizes or does what klap cannot follow, and "
                    + "klap does not see where an operator runs";
        }
        return null;
    }

    /**
     * @return why constructing or destroying an object of the type named {@code id} may not be
     *         repeated in every member of a group, or null: the type must be arithmetic, a CUDA vector
     *         type, an alias of such, or a class of this file whose constructors, destructor, default
     *         member initializers, bases and members read no thread index, store, load or call
     *         nothing klap cannot see (every member constructs its own copy, with the master's
     *         {@code threadIdx} only in the kernel's own text)
     */
    private String classProblem(String id, Set<String> visited) {
        if (KNOWN_BY_VALUE.matcher(id).matches() || TYPE_WORDS.contains(id) || !visited.add(id)) {
            return null;
        }
        String text = src.text();
        Matcher alias = Pattern.compile("\\btypedef\\s+([^;{}]*?)\\b" + Pattern.quote(id) + "\\s*;|\\busing\\s+"
                + Pattern.quote(id) + "\\s*=\\s*([^;]*);").matcher(text);
        if (alias.find()) {
            String target = alias.group(1) != null ? alias.group(1) : alias.group(2);
            if (target.contains("*")) {
                return null;
            }
            Matcher m = IDENT.matcher(target);
            while (m.find()) {
                String why = classProblem(m.group(), visited);
                if (why != null) {
                    return why;
                }
            }
            return null;
        }
        Matcher def = Pattern.compile("\\b(?:struct|class|union)\\s+(?:__align__\\s*\\([^)]*\\)\\s*|alignas\\s*\\([^)]*\\)\\s*)?"
                + Pattern.quote(id) + "\\s*(?:final\\s*)?(:[^{;]*)?\\{").matcher(text);
        Matcher tdStruct = Pattern.compile("\\btypedef\\s+(?:struct|union)\\s*\\w*\\s*\\{").matcher(text);
        int open = -1;
        String bases = null;
        if (def.find()) {
            open = def.end() - 1;
            bases = def.group(1);
        } else {
            while (tdStruct.find()) {
                int close = matchingBrace(text, tdStruct.end() - 1);
                if (close > 0 && text.substring(close + 1).matches("(?s)\\s*" + Pattern.quote(id) + "\\s*;.*")) {
                    open = tdStruct.end() - 1;
                    break;
                }
            }
        }
        if (open < 0 && Pattern.compile("\\benum\\s+(?:class\\s+|struct\\s+)?" + Pattern.quote(id) + "\\b").matcher(text).find()) {
            return null; // an enumeration: a value
        }
        if (open < 0) {
            return "klap cannot see its constructor (not a class of this file, an arithmetic or a CUDA vector type)";
        }
        int close = matchingBrace(text, open);
        if (close < 0) {
            return "klap cannot find the end of its definition";
        }
        StringBuilder body = new StringBuilder(text.substring(open + 1, close));
        StringBuilder inits = new StringBuilder(); // default member initializers and constructor init lists
        for (FunctionDef f : unit.functions()) {
            if (!id.equals(f.memberOf())) {
                continue;
            }
            boolean special = f.name().equals(id) || f.name().equals("~" + id);
            if (SourceRange.of(open, close).contains(f.range())) {
                // blank the inline body; keep the init list in the text
                int from = f.body().range().offset() - open - 1;
                for (int i = from; i < from + f.body().range().length(); i++) {
                    body.setCharAt(i, ' ');
                }
            } else if (special) {
                inits.append(' ').append(text, f.paramsRange().end(), f.body().range().offset());
            }
            String ft = src.slice(f.range());
            if (Pattern.compile("\\b(?:threadIdx|blockDim|warpSize|volatile|asm|__asm__)\\b").matcher(ft).find()) {
                return "its member '" + f.name() + "' reads the real thread index, volatile memory or has asm";
            }
            if (f.name().startsWith("operator")) {
                String why = operatorProblem(f);
                if (why != null) {
                    return why;
                }
            }
            if (special) {
                CalleeFacts facts = callee(f.name());
                if (facts != null && (facts.forbidden() != null || facts.stores() || facts.syncs() || facts.loads())) {
                    return "its " + (f.name().startsWith("~") ? "destructor" : "constructor") + " "
                            + (facts.forbidden() != null ? "is refused (" + facts.forbidden() + ")"
                            : "stores to, reads or synchronizes memory (it would run in every member of the group)");
                }
            }
        }
        for (FunctionDef f : unit.functions()) {
            // a free operator taking the class: c += 1 runs it in every member (review 2026-11-27)
            if (f.memberOf() == null && f.name().startsWith("operator")
                    && Pattern.compile("\\b" + Pattern.quote(id) + "\\b").matcher(src.slice(f.paramsRange())).find()) {
                String why = operatorProblem(f);
                if (why != null) {
                    return why;
                }
            }
        }
        inits.append(' ').append(body);
        String init = inits.toString();
        if (Pattern.compile("\\b(?:threadIdx|blockDim|warpSize|volatile|asm|__asm__|virtual)\\b").matcher(init).find()) {
            return "its definition reads the real thread index, volatile memory, has asm or virtual members";
        }
        if (init.contains("[") && Pattern.compile("\\w\\s*\\[|\\)\\s*\\[").matcher(init.replaceAll("\\b\\w+\\s+\\w+\\s*\\[[^\\]]*\\]\\s*;", ";"))
                .find() || init.contains("->") || Pattern.compile("[(,=:{]\\s*\\*").matcher(init).find()) {
            return "its member initializers may read memory";
        }
        if (bases != null) {
            Matcher b = IDENT.matcher(bases);
            while (b.find()) {
                if (!Set.of("public", "private", "protected", "virtual").contains(b.group())) {
                    String why = classProblem(b.group(), visited);
                    if (why != null) {
                        return "its base " + b.group() + ": " + why;
                    }
                }
            }
        }
        Matcher call = Pattern.compile("(~?)\\b([A-Za-z_]\\w*(?:::\\w+)*)\\s*\\(").matcher(init);
        while (call.find()) {
            String name = call.group(2);
            int at = call.start(2);
            if (name.equals(id) || CLASS_KEYWORDS.contains(name) || KNOWN_BY_VALUE.matcher(name).matches()
                    || (at > 0 && init.charAt(at - 1) == '.') || (at > 1 && init.startsWith("->", at - 2))) {
                continue;
            }
            if (Pattern.compile("\\b" + Pattern.quote(name) + "\\s*[;=\\[,{:]").matcher(init).find()
                    && !unit.functions().stream().anyMatch(f -> f.name().equals(name))) {
                continue; // a member initialized in a constructor's init list
            }
            CalleeFacts f = callee(name);
            if (f != null ? f.forbidden() != null || f.stores() || f.syncs() || f.loads()
                    : !pureBuiltin(name) && classProblem(name, visited) != null) {
                return "its member initializers call '" + name + "' (klap cannot show it pure)";
            }
        }
        // members of class type are constructed too
        Matcher member = IDENT.matcher(init);
        Set<String> seen = new HashSet<>();
        while (member.find()) {
            String m2 = member.group();
            if (seen.add(m2) && !m2.equals(id) && Pattern.compile("\\b(?:struct|class|union)\\s+(?:__align__\\s*\\([^)]*\\)\\s*)?"
                    + Pattern.quote(m2) + "\\s*(?:final\\s*)?(?::[^{;]*)?\\{").matcher(text).find()) {
                String why = classProblem(m2, visited);
                if (why != null) {
                    return "its member of type " + m2 + ": " + why;
                }
            }
        }
        // a global variable read by a member initializer is a load
        Matcher ref = IDENT.matcher(init);
        while (ref.find()) {
            String d = globalDeclaration(ref.group());
            if (d != null && Pattern.compile("\\b(?:__device__|__constant__|__shared__|__managed__)\\b").matcher(d).find()
                    && !d.matches("(?s).*\\b(?:struct|class|union)\\b.*")) {
                return "its member initializers read the device variable '" + ref.group() + "'";
            }
        }
        return null;
    }

    private static final Set<String> CLASS_KEYWORDS = Set.of("if", "for", "while", "switch", "return", "sizeof",
            "alignof", "decltype", "alignas", "static_assert", "__align__", "__launch_bounds__", "noexcept", "operator",
            "static_cast", "reinterpret_cast", "const_cast", "dynamic_cast", "__attribute__", "__declspec");

    /** @return the offset of the brace closing the one at {@code open}, or -1 */
    private static int matchingBrace(String text, int open) {
        int depth = 0;
        for (int i = open; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '{') {
                depth++;
            } else if (c == '}' && --depth == 0) {
                return i;
            }
        }
        return -1;
    }

    /** What a device function of the unit does, transitively. */
    record CalleeFacts(boolean stores, boolean syncs, String forbidden, Set<Integer> refParams, boolean loads) {
    }

    /** @return the facts of the device function {@code name} of the unit, or null if it has no body here */
    private CalleeFacts callee(String name) {
        if (callees.containsKey(name)) {
            CalleeFacts f = callees.get(name);
            return f == null ? new CalleeFacts(true, true, "it calls the recursive function '" + name + "'", Set.of(), true)
                    : f; // recursion: refused (facts computed from a provisional entry would be cached)
        }
        List<FunctionDef> defs = unit.functions().stream()
                .filter(f -> f.kind().onDevice() && f.kind() != FunctionDef.Kind.KERNEL
                        && (f.name().equals(name) || (f.namespace() + "::" + f.name()).equals(name)))
                .toList();
        if (defs.isEmpty()) {
            return null;
        }
        callees.put(name, null);
        boolean stores = false;
        boolean syncs = false;
        String forbidden = null;
        Set<Integer> refs = new HashSet<>();
        boolean loads = false;
        for (FunctionDef f : defs) {
            Scopes sc = new Scopes(f, src);
            for (int i = 0; i < f.params().size(); i++) {
                String pt = src.slice(f.params().get(i).range());
                if (writableReference(pt)) {
                    refs.add(i); // a non-const reference parameter: the caller's variable may change
                }
                if (pt.matches("(?s).*\\b(threadIdx|blockDim|warpSize)\\b.*")) {
                    forbidden = "it calls '" + name + "', whose default argument reads the real thread index";
                }
            }
            String body = klap.transform.Lexical.blankCommentsAndLiterals(src.slice(f.body().range()));
            String fromHeaders = unit.headerMacroTextIn(f.range());
            if (NEW_DELETE.matcher(body).find() || NEW_DELETE.matcher(macroTexts(body) + "\n" + fromHeaders).find()) {
                forbidden = "it calls '" + name + "': " + NEW_DELETE_WHY;
            }
            if (volatileIn(src.slice(f.range())) || volatileIn(macroTexts(src.slice(f.range())) + "\n" + fromHeaders)) {
                forbidden = "it calls '" + name + "', which reads volatile memory (members would read different values)";
            }
            for (Stmt st : allStmts(f.body())) {
                if (st instanceof Stmt.Other o && o.asmText(src.slice(o.range())) != null) {
                    forbidden = "it calls '" + name + "', which has inline asm (it may read the lane or thread index)";
                }
                String why = st instanceof Stmt.Decl d && forbidden == null ? declarationProblem(d) : null;
                if (why != null) {
                    forbidden = "it calls '" + name + "': " + why;
                }
            }
            List<Expr> all = new ArrayList<>();
            walkKernelExprs(f.body(), all::add);
            for (Expr e : all) {
                if (e instanceof Expr.Name n && n.kind() == Expr.NameKind.BUILTIN
                        && (n.name().equals("threadIdx") || n.name().equals("blockDim"))) {
                    forbidden = forbidden != null ? forbidden : "it calls '" + name + "', which reads " + n.name()
                            + " (klap renames it only in the kernel)";
                }
                String why = forbidden(e, sc);
                if (why != null && forbidden == null && !why.startsWith("it takes the address")) {
                    forbidden = why.startsWith("it calls") ? why : "it calls '" + name + "': " + why;
                }
                if (e instanceof Expr.Call c && c.calleeName() != null) {
                    String b = c.calleeName().replaceFirst("^::", "");
                    syncs |= BARRIERS.contains(b);
                    stores |= IMPURE.matcher(b).matches();
                    CalleeFacts g = callee(b);
                    if (g != null) {
                        stores |= g.stores;
                        syncs |= g.syncs;
                        loads |= g.loads;
                    } else {
                        loads |= IMPURE.matcher(b).matches() || LOADS.matcher(b).matches();
                    }
                }
                Expr target = writeTarget(e);
                if (target != null) {
                    stores |= privateRoot(target, sc) == null;
                }
                loads |= e instanceof Expr.Subscript sub && privateRoot(sub, sc) == null
                        || e instanceof Expr.Unary u && u.op().equals("*") || e instanceof Expr.Member m && m.arrow()
                        || e instanceof Expr.Name n && n.kind() == Expr.NameKind.GLOBAL;
            }
        }
        CalleeFacts out = new CalleeFacts(stores, syncs, forbidden, Set.copyOf(refs), loads);
        callees.put(name, out);
        return out;
    }

    /**
     * @return true if the function of {@code f} may write argument {@code a} of call {@code c}: its
     *         parameter is a non-const reference as written, or as CDT resolved it at the call (a
     *         forwarding reference {@code T&&}, a typedef of a reference; review 2026-11-27)
     */
    static boolean writesArgument(CalleeFacts f, Expr.Call c, int a) {
        return f.refParams().contains(a) || c.paramModes() != null && a < c.paramModes().length()
                && c.paramModes().charAt(a) == 'w';
    }

    /**
     * @return true if a parameter declaration is a reference to a modifiable object: {@code int &x},
     *         {@code const int *&p} (a non-const pointer); not {@code const int &x},
     *         {@code int *const &p} or {@code T &&x}
     */
    static boolean writableReference(String param) {
        Matcher m = Pattern.compile("(?<!&)&(?!&)").matcher(param);
        if (!m.find()) {
            return false;
        }
        String before = param.substring(0, m.start()).strip();
        int star = before.lastIndexOf('*');
        String referenced = star >= 0 ? before.substring(star + 1) : before;
        return !Pattern.compile("\\bconst\\b").matcher(referenced).find();
    }

    // ----------------------------------------------------------------------------------------
    // Parallel loops

    private NpLoop loop(FunctionDef k, Scopes scopes, Trees trees, Uniformity uni, Pragma p, NpPragma clauses,
                        Stmt.Loop lp) throws Refusal {
        int at = lp.range().offset();
        if (!(lp.init() instanceof Stmt.Decl d) || d.vars().size() != 1 || d.vars().get(0).init() == null
                || d.vars().get(0).array()) {
            throw new Refusal(at, "the loop must declare its variable: for (int i = lo; i < hi; i++)");
        }
        String var = d.vars().get(0).name();
        String declText = src.slice(SourceRange.of(d.range().offset(), d.vars().get(0).nameRange().offset()));
        if (!declText.matches("\\s*(?:(?:unsigned|signed|long|int|short|char|size_t|ptrdiff_t|u?int(?:8|16|32|64)_t|"
                + "const)\\s*)+")) {
            throw new Refusal(at, "the loop variable '" + var + "' must have an integer type");
        }
        Expr lo = d.vars().get(0).init();
        if (lo instanceof Expr.Other) {
            throw new Refusal(at, "the loop variable must be initialized with = (not a brace list)");
        }
        if (!(lp.cond() instanceof Expr.Binary c)) {
            throw new Refusal(at, "the loop condition must be " + var + " < hi or " + var + " <= hi");
        }
        Expr hi;
        String cmp;
        if ((c.op().equals("<") || c.op().equals("<=")) && isName(c.lhs(), var)) {
            hi = c.rhs();
            cmp = c.op();
        } else if ((c.op().equals(">") || c.op().equals(">=")) && isName(c.rhs(), var)) {
            hi = c.lhs();
            cmp = c.op().equals(">") ? "<" : "<=";
        } else {
            throw new Refusal(at, "the loop condition must be " + var + " < hi or " + var + " <= hi");
        }
        if (!unitStep(lp.step(), var)) {
            throw new Refusal(at, "the loop must count up by one (" + var + "++, ++" + var + " or " + var + " += 1)");
        }
        Stmt body = lp.body();
        if (!clauses.scans().isEmpty() && !(body instanceof Stmt.Block)) {
            throw new Refusal(at, "the body of a scan loop must be a { ... } block");
        }
        for (Expr e : List.of(lo, hi)) {
            String floating = clearlyFloating(e, scopes);
            if (floating != null) {
                throw new Refusal(e.range().offset(), "the loop bounds must be integers: " + floating);
            }
            floating = floatingOperand(e, scopes);
            if (floating != null) {
                // klap::np::trips needs integer bounds; a floating one (i < n * scale) compares in floating point
                throw new Refusal(e.range().offset(), "the loop bounds must be integers klap can see: "
                        + floating.replaceFirst("^its operand ", "the bound "));
            }
            Effects ef = effects(e, scopes, Map.of());
            if (ef.sideEffect()) {
                throw new Refusal(e.range().offset(), "the loop bounds must have no side effect");
            }
            if (mentions(e, var, scopes)) {
                throw new Refusal(e.range().offset(), "the bound must not depend on the loop variable");
            }
        }
        // the body: jumps, barriers, writes
        for (Stmt s : allStmts(body)) {
            if (s instanceof Stmt.Jump j) {
                if (j.kind() == Stmt.JumpKind.RETURN) {
                    throw new Refusal(s.range().offset(), "return inside a parallel loop");
                }
                if (j.kind() == Stmt.JumpKind.BREAK && trees.jumpTarget(j) == lp) {
                    throw new Refusal(s.range().offset(), "break out of a parallel loop (its iterations would "
                            + "depend on each other)");
                }
            }
        }
        Set<String> writtenOutside = new LinkedHashSet2();
        List<Expr> bodyExprs = new ArrayList<>();
        Trees.walkExprs(body, bodyExprs::add);
        for (Expr e : bodyExprs) {
            if (e instanceof Expr.Call call && call.calleeName() != null) {
                String b = call.calleeName().replaceFirst("^::", "");
                CalleeFacts f = BARRIERS.contains(b) ? new CalleeFacts(false, true, null, Set.of(), true) : callee(b);
                if (f != null && f.syncs()) {
                    throw new Refusal(e.range().offset(), "a barrier inside a parallel loop (the iterations of "
                            + "one thread are spread over several)");
                }
            }
            List<Expr> targets = new ArrayList<>();
            if (writeTarget(e) != null) {
                targets.add(writeTarget(e));
            }
            if (e instanceof Expr.Call call && call.calleeName() != null) {
                CalleeFacts f = callee(call.calleeName().replaceFirst("^::", ""));
                for (int a = 0; f != null && a < call.args().size(); a++) {
                    if (writesArgument(f, call, a)) {
                        targets.add(call.args().get(a));
                    }
                }
            }
            for (Expr target : targets) {
                Var v = privateRoot(target, scopes);
                if (v == null) {
                    v = ambiguousRoot(target, scopes);
                    if (v != null && !lp.range().contains(v.scope().offset())) {
                        writtenOutside.add(v.name()); // an array or pointer member of a private struct
                    }
                    continue; // memory: each iteration runs once, in one member
                }
                if (v.name().equals(var) && v.stmt() == d) {
                    throw new Refusal(e.range().offset(), "the loop variable is written in the body");
                }
                if (!lp.range().contains(v.scope().offset()) && !v.isArray()) {
                    writtenOutside.add(v.name());
                }
            }
        }
        Map<String, NpPragma.Op> reductions = new LinkedHashMap<>(clauses.reductions());
        ScanPlan scan = null;
        for (String v : clauses.copyin()) {
            if (!declaredBefore(scopes, v, lp)) {
                throw new Refusal(at, "copyin(" + v + "): no local variable or parameter '" + v + "' is visible here");
            }
        }
        Map<String, NpPragma.Op> scans = new LinkedHashMap<>(clauses.scans());
        for (String v : writtenOutside) {
            if (reductions.containsKey(v) || scans.containsKey(v)) {
                continue;
            }
            NpPragma.Op inferred = inferReduction(body, v, scopes);
            if (inferred != null) {
                reductions.put(v, inferred);
                continue;
            }
            inferred = body instanceof Stmt.Block b ? inferScan(b, v, scopes) : null;
            if (inferred == null) {
                throw new Refusal(at, "the loop writes '" + v + "', declared outside it, which is neither a "
                        + "reduction(op:" + v + ") nor a scan(op:" + v + ") variable");
            }
            scans.put(v, inferred);
        }
        for (Map.Entry<String, NpPragma.Op> r : java.util.stream.Stream.concat(reductions.entrySet().stream(),
                scans.entrySet().stream()).toList()) {
            String effect = r.getValue() == NpPragma.Op.LAND || r.getValue() == NpPragma.Op.LOR ? shortCircuitEffect(body) : null;
            if (effect != null) {
                // ok = ok && claim(...): the original stops calling claim once ok is false; every member of a
                // group starts again from the identity and goes on calling it (review 2026-12-01)
                throw new Refusal(at, (scans.containsKey(r.getKey()) ? "scan(" : "reduction(") + r.getValue().symbol + ":"
                        + r.getKey() + "): " + effect + " under " + r.getValue().symbol + ", which the original skips once '"
                        + r.getKey() + "' decides the result and each member of a group would still evaluate");
            }
        }
        for (Map.Entry<String, NpPragma.Op> r : reductions.entrySet()) {
            List<String> types = checkScalarOutside(scopes, r.getKey(), lp, "reduction");
            String why = reductionUses(body, r.getKey(), r.getValue(), scopes);
            for (String type : types) {
                why = why != null ? why : typeChecks(body, r.getKey(), r.getValue(), scopes, type,
                        !clauses.reductions().containsKey(r.getKey()));
            }
            if (why != null) {
                throw new Refusal(at, "reduction(" + r.getValue().symbol + ":" + r.getKey() + "): " + why);
            }
        }
        if (scans.size() > 1) {
            throw new Refusal(at, "one scan variable per loop is supported");
        }
        for (Map.Entry<String, NpPragma.Op> s : scans.entrySet()) {
            List<String> types = checkScalarOutside(scopes, s.getKey(), lp, "scan");
            scan = scanPlan((Stmt.Block) body, s.getKey(), s.getValue(), scopes);
            String why = null;
            for (String type : types) {
                // the same checks as a reduction's (review 2026-11-27: min/max functions were not checked)
                why = why != null ? why : typeChecks(body, s.getKey(), s.getValue(), scopes, type,
                        !clauses.scans().containsKey(s.getKey()));
            }
            if (why != null) {
                throw new Refusal(at, "scan(" + s.getValue().symbol + ":" + s.getKey() + "): " + why);
            }
        }
        // inter-warp: the loop's collectives are block barriers
        String interReason = blockReach(k, trees, uni, lp, "the loop");
        return new NpLoop(lp, p, clauses, var, lo, hi, cmp, java.util.Collections.unmodifiableMap(reductions), scan, interReason,
                unrollPragma(p, lp));
    }

    /**
     * @return the first call (other than a pure built-in) or assignment in the right operand of an
     *         {@code &&} or {@code ||} of {@code body}, as "it calls 'f'" / "it assigns", or null
     */
    private String shortCircuitEffect(Stmt body) {
        String[] found = {null};
        walkKernelExprs(body, e -> {
            if (found[0] == null && e instanceof Expr.Binary b && (b.op().equals("&&") || b.op().equals("||"))) {
                klap.transform.Trees.walk(b.rhs(), x -> {
                    if (found[0] == null && x instanceof Expr.Call c && !(c.calleeName() != null && (pureBuiltin(c.calleeName())
                            || effectFree(c.calleeName().replaceFirst("^::", ""))))) {
                        found[0] = "it calls '" + src.slice(c.callee().range()).strip() + "'";
                    } else if (found[0] == null && (x instanceof Expr.Binary a && a.isAssignment()
                            || x instanceof Expr.Unary u && u.op().matches("\\+\\+pre|--pre|post\\+\\+|post--"))) {
                        found[0] = "it assigns";
                    }
                });
            }
        });
        return found[0];
    }

    /** @return true if the unit's device function {@code name} neither stores, nor synchronizes, nor writes through a reference */
    private boolean effectFree(String name) {
        CalleeFacts f = callee(name);
        return f != null && !f.stores() && !f.syncs() && f.refParams().isEmpty() && f.forbidden() == null;
    }

    /**
     * @return why {@code s} may not be reached by every thread of the block (the condition of a
     *         block barrier in it, for the inter-warp layout), or null
     */
    private String blockReach(FunctionDef k, Trees trees, Uniformity uni, Stmt s, String what) {
        int at = s.range().offset();
        for (Stmt a = trees.parent(s); a != null; a = trees.parent(a)) {
            if (!uni.controlIsUniform(a)) {
                return what + " at line " + src.line(at) + " is not reached by the whole block (divergent "
                        + "control flow around it)";
            }
        }
        Stmt outermost = trees.outermostLoop(s);
        for (Stmt.Jump j : Trees.collect(k.body(), Stmt.Jump.class)) {
            boolean skips;
            if (j.kind() == Stmt.JumpKind.RETURN) {
                // before s, or anywhere in a loop around s (the next iteration)
                skips = j.range().offset() < at
                        || (outermost != null && outermost.range().contains(j.range()) && !s.range().contains(j.range()));
            } else {
                // a break or continue skips s only if the loop it leaves or restarts holds s
                Stmt target = trees.jumpTarget(j);
                skips = target != null && target.range().contains(s.range()) && target != s;
            }
            if (!skips) {
                continue;
            }
            for (Stmt a = trees.parent(j); a != null; a = trees.parent(a)) {
                if (!(a instanceof Stmt.Loop) && !uni.controlIsUniform(a)) {
                    return "a return, break or continue at line " + src.line(j.range().offset())
                            + " lets some threads of the block skip " + what + " at line " + src.line(at);
                }
            }
        }
        return null;
    }

    /**
     * @return the template type parameters of kernel {@code k} that a decision of {@link #plan} took
     *         from the template arguments the file writes out ({@code k<float>}): a reduction variable,
     *         a local or an operand of that type was checked only with those, so a launch whose
     *         arguments C++ deduces may instantiate the variant with a type no rule was checked against
     *         (review 2026-11-30: a deduced {@code bool} XOR, an {@code int} sum of floats, a class
     *         whose {@code operator+} has side effects)
     */
    Set<String> consultedTemplateParameters(FunctionDef k) {
        return consulted.getOrDefault(k, Set.of());
    }

    /** LinkedHashSet alias (keeps insertion order for stable messages). */
    private static final class LinkedHashSet2 extends java.util.LinkedHashSet<String> {
    }

    private boolean declaredBefore(Scopes scopes, String v, Stmt.Loop lp) {
        return scopes.vars.stream().anyMatch(x -> x.name().equals(v) && x.scope().contains(lp.range().offset()));
    }

    /**
     * @return the texts this file gives the template type parameter {@code param} of {@code k}: the
     *         argument at its position in every {@code k<...>} of the file outside k's definition
     *         (explicit launches {@code k<float><<<...>>>}, instantiations, {@code &k<int>})
     */
    private List<String> templateArguments(FunctionDef k, String param) {
        consulted.computeIfAbsent(k, x -> new java.util.TreeSet<>()).add(param);
        List<String> params = topLevelSplit(src.slice(k.templateHeader()).replaceFirst("(?s)^\\s*template\\s*<", "")
                .replaceFirst("(?s)>\\s*$", ""));
        int index = -1;
        for (int i = 0; i < params.size(); i++) {
            if (params.get(i).matches("(?s)\\s*(?:typename|class)\\s+" + Pattern.quote(param) + "\\b.*")) {
                index = i;
            }
        }
        List<String> out = new ArrayList<>();
        Matcher m = Pattern.compile("\\b" + Pattern.quote(k.name()) + "\\s*<(?!<)").matcher(src.text());
        while (m.find()) {
            if (k.range().contains(m.start())) {
                continue;
            }
            int depth = 1;
            int i = m.end();
            for (; i < src.text().length() && depth > 0; i++) {
                char c = src.text().charAt(i);
                if (c == '<') {
                    depth++;
                } else if (c == '>') {
                    depth--;
                } else if (c == ';' || c == '{') {
                    break;
                }
            }
            if (depth != 0) {
                continue;
            }
            List<String> args = topLevelSplit(src.text().substring(m.end(), i - 1));
            // a missing argument (a default, or deduced: k<>, review 2026-11-30) is unknown to klap:
            // count it as not arithmetic
            out.add(index >= 0 && index < args.size() && !args.get(index).isBlank() ? args.get(index) : "<default " + param + ">");
        }
        if (k.equals(extraKernel) && param.equals(extraParam)) {
            out.add(extraType);
        }
        return out;
    }

    private static List<String> topLevelSplit(String text) {
        List<String> out = new ArrayList<>();
        int depth = 0;
        int from = 0;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '<' || c == '(' || c == '[') {
                depth++;
            } else if (c == '>' || c == ')' || c == ']') {
                depth--;
            } else if (c == ',' && depth == 0) {
                out.add(text.substring(from, i));
                from = i + 1;
            }
        }
        out.add(text.substring(from));
        return out;
    }

    /**
     * @return why updates of reduction or scan variable {@code v} of type {@code type} cannot be
     *         recombined in another order, or null: min/max functions of another type, bool updates
     *         that are not associative, integer updates with operands klap cannot show to be integers
     */
    private String typeChecks(Stmt body, String v, NpPragma.Op op, Scopes scopes, String type, boolean inferred) {
        String why = null;
        if (op == NpPragma.Op.MIN || op == NpPragma.Op.MAX) {
            why = minMaxFunctions(body, v, op, type);
        }
        if (why == null && type.matches("\\s*(?:const\\s+)?bool\\s*")) {
            why = boolUpdates(body, v, op, scopes);
        }
        if (why == null && INTEGER_TYPE.matcher(type).matches()) {
            why = integerUpdates(body, v, op, scopes, inferred);
        }
        return why;
    }

    /**
     * @return the types the reduction or scan variable v may have (checked: arithmetic scalars): its
     *         declared type, or for a template type parameter every type the file's {@code k<...>}
     *         instantiate it with (review 2026-11-27: a template type skipped the integer and bool
     *         checks)
     */
    private List<String> checkScalarOutside(Scopes scopes, String v, Stmt.Loop lp, String clause) throws Refusal {
        Var best = null;
        for (Var x : scopes.vars) {
            if (x.name().equals(v) && x.scope().contains(lp.range().offset())
                    && (best == null || x.scope().offset() >= best.scope().offset())) {
                best = x;
            }
        }
        if (best == null || !best.isPrivate() || best.isArray()) {
            throw new Refusal(lp.range().offset(), clause + "(" + v + "): '" + v + "' must be a local scalar "
                    + "variable (or parameter) declared before the loop");
        }
        final Var found = best;
        Param param = best.decl() != null ? null : unit.functions().stream().flatMap(f -> f.params().stream())
                .filter(p -> p.name().equals(v) && p.range().end() <= lp.range().offset()
                        && found.scope().contains(p.range().offset())).findFirst().orElse(null);
        String type = best.decl() == null
                ? src.slice(param == null ? new SourceRange(0, 0) : param.range())
                : src.slice(SourceRange.of(best.stmt().range().offset(), best.stmt().vars().get(0).nameRange().offset()));
        String bare = type.replaceAll("\\b" + v + "\\s*$", "").strip().replaceFirst("^const\\s+", "");
        FunctionDef kernel = unit.functions().stream().filter(f -> f.range().contains(lp.range())).findFirst().orElseThrow();
        boolean templateType = kernel.templateHeader() != null && bare.matches("[A-Za-z_]\\w*")
                && src.slice(kernel.templateHeader()).matches("(?s).*\\b(?:typename|class)\\s+" + bare + "\\b.*");
        if (templateType) {
            for (String arg : templateArguments(kernel, bare)) {
                if (!ARITHMETIC.matcher(arg).matches()) {
                    throw new Refusal(lp.range().offset(), clause + "(" + v + "): '" + v + "' has the template type " + bare
                            + ", which this file instantiates with '" + arg.strip() + "', not an arithmetic type");
                }
            }
        }
        if (!templateType && !ARITHMETIC.matcher(bare).matches() && !type.contains("auto")) {
            // a typedef, alias or macro of an arithmetic type (CDT resolves it)
            String resolved = scalarType(best.decl() != null ? best.decl().nameRange().offset()
                    : param == null || param.nameRange() == null ? -1 : param.nameRange().offset());
            bare = resolved == null ? bare : resolved.replaceFirst("^const\\s+", "");
        }
        if (!templateType && !ARITHMETIC.matcher(bare).matches()) {
            throw new Refusal(lp.range().offset(), clause + "(" + v + "): '" + v + "' must have an arithmetic type "
                    + "of at most 8 bytes (bool, integers, float, double), declared without auto; got '" + type.strip() + "'");
        }
        if (mentions(lp.cond(), v, null) || (lp.init() != null && Trees.ownExprs(lp.init()).stream()
                .anyMatch(e -> mentions(e, v, null)))) {
            throw new Refusal(lp.range().offset(), clause + "(" + v + "): the loop bounds must not use '" + v + "'");
        }
        if (templateType) {
            List<String> args = templateArguments(kernel, bare).stream().map(String::strip).toList();
            return args.isEmpty() ? List.of("") : args;
        }
        return List.of(bare);
    }

    private static final Pattern INTEGER_TYPE = Pattern.compile("\\s*(?:(?:const|volatile|register|signed|unsigned)\\s+)*"
            + "(?:bool|char|short|int|long|long\\s+long|size_t|ptrdiff_t|u?int(?:8|16|32|64)_t|unsigned|signed"
            + "|short\\s+int|long\\s+int|long\\s+long\\s+int)\\s*");
    private static final Pattern FLOATING_LITERAL = Pattern.compile(
            "(?i)(?:[0-9]*\\.[0-9]*(?:e[+-]?[0-9]+)?|[0-9]+e[+-]?[0-9]+)[fl]?|[0-9]+f");
    private static final Pattern FLOATING_WORD = Pattern.compile("\\b(?:float\\w*|double\\w*|half\\w*|__half\\w*|"
            + "__nv_bfloat\\w*|auto)\\b");
    private static final Set<String> INTEGER_CALLS = Set.of("min", "max", "abs", "umin", "umax", "llmin", "llmax",
            "ullmin", "ullmax", "llabs", "labs", "__popc", "__popcll", "__clz", "__clzll", "__ffs", "__ffsll", "__brev",
            "__brevll", "__mul24", "__umul24", "__mulhi", "__umulhi", "__mul64hi", "__umul64hi", "__sad", "__usad");

    /**
     * @return why an update of an integer variable with operand {@code e} may not be an integer
     *         operation (a floating operand is converted back at every step, so partial sums per
     *         member round differently from the original's sequence), or null. Conservative: names
     *         and calls whose type klap cannot see count as floating.
     */
    private String floatingOperand(Expr e, Scopes scopes) {
        e = unparen(e);
        if (e instanceof Expr.Cast c) {
            return INTEGER_TYPE.matcher(c.typeText()).matches() ? null
                    : "its operand is cast to '" + c.typeText().strip() + "'";
        }
        if (e instanceof Expr.Literal l) {
            String text = src.slice(l.range()).strip();
            if (text.matches("[A-Za-z_]\\w*")) {
                // a macro: its definition in this file must be an integer literal
                Matcher m = Pattern.compile("(?m)^\\s*#\\s*define\\s+" + Pattern.quote(text) + "\\s+(.*)$").matcher(src.text());
                String body = m.find() ? m.group(1).strip() : null;
                return body != null && body.matches("\\(?-?\\s*(?:0[xX][0-9a-fA-F]+|\\d+)[uUlL]*\\)?")
                        ? null : "its operand uses the macro " + text + ", which klap cannot show to be an integer";
            }
            return FLOATING_LITERAL.matcher(text).matches() ? "its operand has the floating-point literal " + text : null;
        }
        if (e instanceof Expr.Call c) {
            String name = c.calleeName() == null ? "" : c.calleeName().replaceFirst("^(::|std::|cuda::std::)", "");
            FunctionDef def = unit.functions().stream().filter(f -> f.name().equals(name)).findFirst().orElse(null);
            boolean integral = def != null ? integerType(src.text().substring(def.range().offset(), def.nameRange().offset())
                    .replaceAll("(?s)template\\s*<.*?>", "").replaceAll("\\b(?:__device__|__host__|__forceinline__|"
                            + "__noinline__|static|inline|constexpr|extern)\\b", ""))
                    : INTEGER_CALLS.contains(name);
            if (!integral) {
                return "its operand calls '" + name + "', which klap cannot show to return an integer";
            }
        } else if (e instanceof Expr.Name || e instanceof Expr.Subscript || e instanceof Expr.Member
                || e instanceof Expr.Unary u && u.op().equals("*")) {
            Expr root = rootOf(e);
            String type = null;
            if (root instanceof Expr.Name b && b.kind() == Expr.NameKind.BUILTIN) {
                return null; // threadIdx.x, blockDim.y, ...: unsigned
            }
            if (root instanceof Expr.Name n) {
                Var v = scopes.resolve(n);
                type = v == null ? globalDeclaration(n.name()) : typeText(v);
                if (type == null && n.kind() == Expr.NameKind.CONSTANT
                        && Pattern.compile("\\benum\\b[^;]*\\b" + Pattern.quote(n.name()) + "\\b").matcher(src.text()).find()) {
                    type = "int"; // an enumerator
                }
                if (type != null) {
                    type = type.replaceAll("\\b" + Pattern.quote(n.name()) + "\\b.*$", "");
                }
            }
            boolean member = e instanceof Expr.Member;
            boolean ok = type != null && (member
                    ? type.matches("(?s).*\\b(?:u?int|u?short|u?char|u?long|u?longlong)[1-4]\\b.*")
                    : integerType(type));
            if (!ok) {
                return "its operand reads '" + src.slice(e.range()).strip() + "', which klap cannot show to be an integer";
            }
            return null; // an index does not change the element's type
        }
        for (Expr c : e.children()) {
            if (e instanceof Expr.Call call && c == call.callee()) {
                continue;
            }
            String why = floatingOperand(c, scopes);
            if (why != null) {
                return why;
            }
        }
        return null;
    }

    /** @return true if a declaration's type text (qualifiers, pointers and array bounds aside) is an integer type */
    private static boolean integerType(String type) {
        String t = type.replaceAll("\\[[^\\]]*\\]", " ").replaceAll("\\b(?:const|constexpr|volatile|__restrict__|__restrict|"
                + "__shared__|__constant__|__device__|static|register|extern)\\b", " ").replace('*', ' ').replace('&', ' ')
                .replaceAll("=.*$", "").strip();
        return INTEGER_TYPE.matcher(t).matches();
    }

    /** @return what makes {@code e} a floating-point value for certain (a literal, a cast, a math call, a variable), or null */
    private String clearlyFloating(Expr e, Scopes scopes) {
        String[] why = {null};
        Trees.walk(e, x -> {
            if (why[0] != null) {
                return;
            }
            if (x instanceof Expr.Literal l && FLOATING_LITERAL.matcher(src.slice(l.range()).strip()).matches()) {
                why[0] = "the literal " + src.slice(l.range()).strip();
            } else if (x instanceof Expr.Cast c && FLOATING_WORD.matcher(c.typeText()).find()) {
                why[0] = "a cast to " + c.typeText().strip();
            } else if (x instanceof Expr.Call c && c.calleeName() != null && (MATH.contains(c.calleeName())
                    || c.calleeName().matches("(?:std::|cuda::std::)?(?:sqrt|exp|log|pow|sin|cos|fmin|fmax|floor|ceil)f?"))) {
                why[0] = "a call of " + c.calleeName();
            } else if (x instanceof Expr.Name n && scopes.resolve(n) != null && typeText(scopes.resolve(n)) != null
                    && FLOATING_WORD.matcher(typeText(scopes.resolve(n)).replace("auto", "")).find()) {
                why[0] = "'" + n.name() + "' has a floating-point type";
            }
        });
        return why[0];
    }

    /**
     * @return the text of a variable's declared type (for a parameter, its whole declaration); for one
     *         declared without {@code auto} whose type is arithmetic once typedefs and macros are resolved
     *         ({@link FunctionDef#scalarTypes}), that type ({@code "float "} for {@code real x} of {@code
     *         typedef float real;}, or of {@code #define real float})
     */
    private String typeText(Var v) {
        Param param = v.decl() != null ? null : unit.functions().stream().flatMap(f -> f.params().stream())
                .filter(p -> p.name().equals(v.name()) && v.scope().contains(p.range().offset())).findFirst().orElse(null);
        if (v.decl() == null && param == null) {
            return null;
        }
        String text = param != null ? src.slice(param.range())
                : src.slice(SourceRange.of(v.stmt().range().offset(), v.decl().nameRange().offset()));
        String resolved = text.contains("auto") ? null
                : scalarType(param != null ? (param.nameRange() == null ? -1 : param.nameRange().offset()) : v.decl().nameRange().offset());
        return resolved != null ? resolved + " " : text;
    }

    /** every function's {@link FunctionDef#scalarTypes}, merged once (name offsets are unique in the file) */
    private Map<Integer, String> scalarTypes;

    /** @return {@link FunctionDef#scalarTypes} of the variable whose name is at {@code nameOffset}, or null */
    private String scalarType(int nameOffset) {
        if (scalarTypes == null) {
            scalarTypes = new HashMap<>();
            unit.functions().forEach(f -> scalarTypes.putAll(f.scalarTypes()));
        }
        return scalarTypes.get(nameOffset);
    }

    /** @return the text before {@code name} in its file-scope declaration, or null if klap cannot find one */
    private String globalDeclaration(String name) {
        Matcher m = Pattern.compile("(?m)^[^\\n;{}()]*?\\b" + Pattern.quote(name) + "\\b\\s*(?:\\[|=|;)").matcher(src.text());
        while (m.find()) {
            String d = m.group();
            if (!d.contains("//") && !d.strip().startsWith("*") && !d.contains("/*")) {
                return d; // not a comment's text
            }
        }
        return null;
    }

    /**
     * @return true if variable {@code v} of declaration {@code d} has a type a broadcast can carry: as
     *         written ({@link #broadcastable(String)}), or, declared without {@code auto}, an arithmetic
     *         type through a typedef, alias or macro ({@link FunctionDef#scalarTypes})
     */
    private boolean broadcastable(Stmt.Decl d, VarDecl v) {
        String text = src.slice(SourceRange.of(d.range().offset(), d.vars().get(0).nameRange().offset()));
        String resolved = text.contains("auto") ? null : scalarType(v.nameRange().offset());
        // (an arithmetic type of at most 8 bytes, as klap::np's broadcast takes: not long double, review 2026-11-30)
        return broadcastable(text) || resolved != null && ARITHMETIC.matcher(resolved).matches();
    }

    /** @return true for a declared type a broadcast can carry: an arithmetic type or a pointer (not auto) */
    private static boolean broadcastable(String declType) {
        String t = declType.strip().replaceFirst("^(const\\s+|volatile\\s+|register\\s+)*", "");
        return ARITHMETIC.matcher(t).matches() || (t.endsWith("*") && !t.contains("auto") && !t.contains("&"));
    }

    private static final Pattern ARITHMETIC = Pattern.compile("\\s*(?:(?:const|volatile|register|signed|unsigned)\\s+)*"
            + "(?:bool|char|short|int|long|long\\s+long|float|double|size_t|ptrdiff_t|u?int(?:8|16|32|64)_t|unsigned|signed"
            + "|short\\s+int|long\\s+int|long\\s+long\\s+int)\\s*");

    /**
     * @return true if {@code id} is a class of this file whose default construction does nothing: no
     *         constructor, destructor, default member initializer or virtual member, and bases and
     *         class-typed members of the same kind (so raw shared or global memory holds what a local
     *         array would: indeterminate values)
     */
    private boolean trivialClass(String id, Set<String> visited) {
        if (!id.matches("[A-Za-z_]\\w*") || !visited.add(id)) {
            return visited.contains(id) && id.matches("[A-Za-z_]\\w*");
        }
        String text = klap.transform.Lexical.blankCommentsAndLiterals(src.text());
        Matcher alias = Pattern.compile("\\btypedef\\s+([^;{}]*?)\\b" + Pattern.quote(id) + "\\s*;|\\busing\\s+"
                + Pattern.quote(id) + "\\s*=\\s*([^;{}]*);").matcher(text);
        if (alias.find()) {
            // typedef float real; using vec = float4; typedef Cell cell_t;
            String target = (alias.group(1) != null ? alias.group(1) : alias.group(2)).strip()
                    .replaceFirst("^(?:const\\s+)?(?:struct\\s+|class\\s+)?", "").strip();
            return !target.contains("*") && (ARITHMETIC.matcher(target).matches() || VECTOR_TYPE.matcher(target).matches()
                    || trivialClass(target, visited));
        }
        Matcher def = Pattern.compile("\\b(?:struct|class)\\s+" + Pattern.quote(id) + "\\s*(?:final\\s*)?(:[^{;]*)?\\{")
                .matcher(text);
        int open = def.find() ? def.end() - 1 : -1;
        String bases = open >= 0 && def.group(1) != null ? def.group(1) : "";
        if (open < 0) {
            // typedef struct { ... } id;
            Matcher td = Pattern.compile("\\btypedef\\s+struct\\s*\\w*\\s*\\{").matcher(text);
            while (td.find()) {
                int end = matchingBrace(text, td.end() - 1);
                if (end > 0 && text.substring(end + 1).matches("(?s)\\s*" + Pattern.quote(id) + "\\s*;.*")) {
                    open = td.end() - 1;
                    break;
                }
            }
        }
        if (open < 0) {
            return false;
        }
        int close = matchingBrace(text, open);
        if (close < 0 || unit.functions().stream().anyMatch(f -> id.equals(f.memberOf())
                && (f.name().equals(id) || f.name().equals("~" + id)))) {
            return false;
        }
        String body = text.substring(open + 1, close);
        if (body.contains("=") || body.contains("{") || body.contains("(")
                || Pattern.compile("\\bvirtual\\b").matcher(body).find()) {
            return false; // initializers, member functions (maybe constructors), virtual members
        }
        Matcher ids = IDENT.matcher(bases + " " + body);
        while (ids.find()) {
            String t = ids.group();
            if (Set.of("public", "private", "protected", "const", "unsigned", "signed").contains(t)) {
                continue;
            }
            if (Pattern.compile("\\b(?:struct|class)\\s+" + Pattern.quote(t) + "\\b").matcher(text).find()
                    && !trivialClass(t, visited)) {
                return false;
            }
        }
        return true;
    }

    /** The CUDA vector types ({@code float4}, {@code uint2}, ...): plain structs without constructors. */
    private static final Pattern VECTOR_TYPE = Pattern.compile("\\s*(?:const\\s+)?(?:u?char|u?short|u?int|u?long"
            + "|u?longlong|float|double)[1-4]\\s*");

    private boolean unitStep(Expr step, String var) {
        if (step instanceof Expr.Unary u && (u.op().equals("++pre") || u.op().equals("post++") || u.op().equals("++"))) {
            return isName(u.operand(), var);
        }
        if (step instanceof Expr.Binary b && isName(b.lhs(), var)) {
            if (b.op().equals("+=")) {
                return b.rhs() instanceof Expr.Literal && src.slice(b.rhs().range()).strip().matches("1[uUlL]*");
            }
        }
        return false;
    }

    private static boolean isName(Expr e, String var) {
        return unparen(e) instanceof Expr.Name n && n.name().equals(var);
    }

    private static Expr unparen(Expr e) {
        while (e instanceof Expr.Other o && o.children().size() == 1) {
            e = o.children().get(0);
        }
        return e;
    }

    /** @return true if {@code e} reads or writes the variable {@code v} (resolved by name only) */
    private static boolean mentions(Expr e, String v, Scopes scopes) {
        boolean[] hit = {false};
        Trees.walk(e, x -> hit[0] |= x instanceof Expr.Name n && n.name().equals(v)
                && (n.kind() == Expr.NameKind.LOCAL || n.kind() == Expr.NameKind.PARAM));
        return hit[0];
    }

    private static boolean mentions(Stmt s, String v, Scopes scopes) {
        boolean[] hit = {false};
        Trees.walkExprs(s, x -> hit[0] |= x instanceof Expr.Name n && n.name().equals(v)
                && (n.kind() == Expr.NameKind.LOCAL || n.kind() == Expr.NameKind.PARAM));
        if (!hit[0]) {
            for (Stmt.Decl d : Trees.collect(s, Stmt.Decl.class)) {
                hit[0] |= d.vars().stream().anyMatch(x -> x.name().equals(v)); // a shadowing declaration
            }
        }
        return hit[0];
    }

    /**
     * The update forms of a reduction variable v with operator op: {@code v op= e}, {@code v = v op e},
     * {@code v = e op v}, {@code v = f(v, e)} / {@code f(e, v)} with f the operator's function,
     * {@code v++}, {@code ++v}, {@code v--}, {@code --v} (for +), where e does not mention v.
     *
     * @return the operand e, {@link #ONE} for increments, or null if {@code x} is no such update
     */
    private static Expr updateOperand(Expr x, String v, NpPragma.Op op) {
        x = unparen(x);
        if (x instanceof Expr.Unary u && isName(u.operand(), v) && op == NpPragma.Op.PLUS
                && (u.op().contains("++") || u.op().contains("--"))) {
            return u.op().contains("++") ? ONE : MINUS_ONE;
        }
        if (!(x instanceof Expr.Binary b) || !isName(b.lhs(), v)) {
            return null;
        }
        String compound = switch (op) {
            case PLUS -> "+=";
            case TIMES -> "*=";
            case AND -> "&=";
            case OR -> "|=";
            case XOR -> "^=";
            default -> null;
        };
        if (b.op().equals(compound) || (op == NpPragma.Op.PLUS && b.op().equals("-="))) {
            return nameFree(b.rhs(), v) ? b.rhs() : null;
        }
        if (!b.op().equals("=")) {
            return null;
        }
        Expr r = unparen(b.rhs());
        if (r instanceof Expr.Binary rb && rb.op().equals(op.symbol) && op != NpPragma.Op.MIN && op != NpPragma.Op.MAX) {
            if (isName(rb.lhs(), v) && nameFree(rb.rhs(), v)) {
                return rb.rhs();
            }
            if (isName(rb.rhs(), v) && nameFree(rb.lhs(), v)) {
                return rb.lhs();
            }
        }
        if (op == NpPragma.Op.PLUS && r instanceof Expr.Binary rb && rb.op().equals("-") && isName(rb.lhs(), v)
                && nameFree(rb.rhs(), v)) {
            return rb.rhs();
        }
        if (r instanceof Expr.Call c && c.args().size() == 2 && c.calleeName() != null
                && (op == NpPragma.Op.MIN || op == NpPragma.Op.MAX)) {
            String f = c.calleeName().replaceFirst("^(::|std::|cuda::std::)", "");
            boolean ok = op == NpPragma.Op.MIN ? f.matches("min|fminf?|umin|llmin|ullmin")
                    : f.matches("max|fmaxf?|umax|llmax|ullmax");
            if (ok && isName(c.args().get(0), v) && nameFree(c.args().get(1), v)) {
                return c.args().get(1);
            }
            if (ok && isName(c.args().get(1), v) && nameFree(c.args().get(0), v)) {
                return c.args().get(0);
            }
        }
        return null;
    }

    /** Markers for the operand of {@code ++} and {@code --}. */
    static final Expr ONE = new Expr.Literal(new SourceRange(0, 0));
    static final Expr MINUS_ONE = new Expr.Literal(new SourceRange(0, 0));

    private static boolean nameFree(Expr e, String v) {
        boolean[] hit = {false};
        Trees.walk(e, x -> hit[0] |= x instanceof Expr.Name n && n.name().equals(v));
        return !hit[0];
    }

    /** @return why v is used other than in updates with op in {@code body}, or null */
    private String reductionUses(Stmt body, String v, NpPragma.Op op, Scopes scopes) {
        for (Stmt.Decl d : Trees.collect(body, Stmt.Decl.class)) {
            if (d.vars().stream().anyMatch(x -> x.name().equals(v))) {
                return "the body declares another '" + v + "'";
            }
        }
        List<Expr> updates = new ArrayList<>();
        for (Stmt.ExprStmt es : Trees.collect(body, Stmt.ExprStmt.class)) {
            // an update whose value is used (out[cnt++] = x) is not a reduction: each member's partial differs
            if (updateOperand(es.expr(), v, op) != null) {
                updates.add(es.expr());
            }
        }
        int[] uses = {0};
        Trees.walkExprs(body, e -> {
            if (e instanceof Expr.Name n && n.name().equals(v)) {
                uses[0]++;
            }
        });
        int expected = 0;
        for (Expr u : updates) {
            expected += countName(u, v);
        }
        if (uses[0] != expected) {
            return "'" + v + "' is read or written in the body other than by updates with " + op.symbol
                    + " (v op= e, v = v op e, v = " + (op == NpPragma.Op.MIN ? "min" : "max") + "(v, e), ...)";
        }
        return null;
    }

    /**
     * @return why the updates of the integer variable v in {@code body} are not exact integer
     *         operations, or null: a floating operand ({@code s += 0.5f * x}) rounds at every step;
     *         min/max through CUDA's overloaded {@code min}/{@code max} may mix signed and unsigned
     *         operands, so they are accepted only when a clause says so
     */
    private String integerUpdates(Stmt body, String v, NpPragma.Op op, Scopes scopes, boolean inferred) {
        for (Stmt.ExprStmt es : Trees.collect(body, Stmt.ExprStmt.class)) {
            Expr operand = updateOperand(es.expr(), v, op);
            if (operand == null || operand == ONE || operand == MINUS_ONE) {
                continue;
            }
            if ((op == NpPragma.Op.MIN || op == NpPragma.Op.MAX) && inferred) {
                return "an integer min/max is inferred only from a clause (CUDA's min/max overloads may compare "
                        + "mixed signed and unsigned operands); write reduction(" + op.symbol + ":" + v + ")";
            }
            String why = floatingOperand(operand, scopes);
            if (why != null) {
                return "'" + v + "' is an integer and " + why + " (cast it to an integer type if that is meant)";
            }
        }
        return null;
    }

    /**
     * @return why the updates of the bool variable v are not an associative operation on bools, or
     *         null: {@code b ^= e} and {@code b += e} convert {@code b op e} back to bool at every step,
     *         which is XOR and OR only when e is a bool ({@code b ^= 2} is {@code b != 2}); {@code b -= e}
     *         is an XOR where klap combines a sum (an OR)
     */
    private String boolUpdates(Stmt body, String v, NpPragma.Op op, Scopes scopes) {
        if (op != NpPragma.Op.PLUS && op != NpPragma.Op.XOR) {
            return null; // & | * && || min max of bools are associative whatever the operand
        }
        for (Stmt.ExprStmt es : Trees.collect(body, Stmt.ExprStmt.class)) {
            Expr x = unparen(es.expr());
            Expr operand = updateOperand(x, v, op);
            if (operand == null) {
                continue;
            }
            boolean minus = operand == MINUS_ONE || x instanceof Expr.Binary b && (b.op().equals("-=")
                    || b.op().equals("=") && unparen(b.rhs()) instanceof Expr.Binary rb && rb.op().equals("-"));
            if (minus) {
                return "'" + v + "' is a bool: " + v + " -= e is an exclusive or, not a sum";
            }
            if (operand == ONE || !boolOperand(operand, scopes)) {
                return "'" + v + "' is a bool and its update " + op.symbol + " has an operand klap cannot show to be a "
                        + "bool (the original converts back to bool at every step: " + v + " " + op.symbol + "= 2 is not "
                        + "associative)";
            }
        }
        return null;
    }

    /** @return true if {@code e} is a bool for certain: a comparison, {@code !}, {@code &&}, {@code ||}, true/false, a bool variable */
    private boolean boolOperand(Expr e, Scopes scopes) {
        e = unparen(e);
        if (e instanceof Expr.Binary b) {
            return Set.of("<", ">", "<=", ">=", "==", "!=", "&&", "||").contains(b.op());
        }
        if (e instanceof Expr.Unary u) {
            return u.op().equals("!");
        }
        if (e instanceof Expr.Cast c) {
            return c.typeText().strip().equals("bool");
        }
        if (e instanceof Expr.Literal l) {
            return src.slice(l.range()).strip().matches("true|false");
        }
        if (e instanceof Expr.Name n && scopes.resolve(n) != null) {
            String t = typeText(scopes.resolve(n));
            return t != null && t.replaceAll("\\b" + Pattern.quote(n.name()) + "\\b.*$", "")
                    .matches("\\s*(?:const\\s+)?bool\\s*");
        }
        return false;
    }

    /**
     * @return why the min/max functions of v's updates do not compute in v's type, or null: members
     *         without an iteration keep v's value unconverted, while the original converts it at the
     *         first update ({@code double v = fminf(v, e)} rounds v to float)
     */
    private static String minMaxFunctions(Stmt body, String v, NpPragma.Op op, String type) {
        for (Stmt.ExprStmt es : Trees.collect(body, Stmt.ExprStmt.class)) {
            if (updateOperand(es.expr(), v, op) == null || !(unparen(((Expr.Binary) unparen(es.expr())).rhs()) instanceof Expr.Call c)
                    || c.calleeName() == null) {
                continue;
            }
            String f = c.calleeName().replaceFirst("^(::|std::|cuda::std::)", "");
            boolean floatFn = f.endsWith("f") && f.startsWith("fm");
            boolean doubleFn = f.equals("fmin") || f.equals("fmax");
            String t = type.replaceAll("\\b(const|volatile)\\b", "").strip();
            if (c.calleeName().matches("(?:::)?(?:cuda::)?std::(?:min|max)") && !INTEGER_TYPE.matcher(t).matches()) {
                // std::max(a, b) is !(a < b) ? a : b: NaN and signed zeros differ from fmaxf, which klap combines with
                return "'" + v + "' is updated with " + c.calleeName() + ", which keeps NaN and signed zeros where klap's "
                        + "floating-point " + op.symbol + " (fmin/fmax) drops them; use fminf/fmaxf or min/max";
            }
            if ((floatFn && !t.equals("float")) || (doubleFn && !t.equals("double"))) {
                return "'" + v + "' has type " + t + " but is updated with " + f + " (klap combines in v's type)";
            }
        }
        return null;
    }

    private static int countName(Expr e, String v) {
        int[] c = {0};
        Trees.walk(e, x -> {
            if (x instanceof Expr.Name n && n.name().equals(v)) {
                c[0]++;
            }
        });
        return c[0];
    }

    /** @return the operator of a reduction the body performs on v (+ * & | ^ min max), or null */
    private NpPragma.Op inferReduction(Stmt body, String v, Scopes scopes) {
        for (NpPragma.Op op : List.of(NpPragma.Op.PLUS, NpPragma.Op.TIMES, NpPragma.Op.MIN, NpPragma.Op.MAX,
                NpPragma.Op.AND, NpPragma.Op.OR, NpPragma.Op.XOR)) {
            boolean[] any = {false};
            Trees.walkExprs(body, e -> any[0] |= updateOperand(e, v, op) != null);
            if (any[0] && reductionUses(body, v, op, scopes) == null) {
                return op;
            }
        }
        return null;
    }

    /** @return the operator of a scan the body performs on v (the {@link #scanPlan} shape), or null */
    private NpPragma.Op inferScan(Stmt.Block body, String v, Scopes scopes) {
        for (NpPragma.Op op : List.of(NpPragma.Op.PLUS, NpPragma.Op.TIMES, NpPragma.Op.MIN, NpPragma.Op.MAX,
                NpPragma.Op.AND, NpPragma.Op.OR, NpPragma.Op.XOR)) {
            try {
                scanPlan(body, v, op, scopes);
                return op;
            } catch (Refusal r) {
                // not this operator
            }
        }
        return null;
    }

    private ScanPlan scanPlan(Stmt.Block body, String v, NpPragma.Op op, Scopes scopes) throws Refusal {
        int at = body.range().offset();
        int index = -1;
        Expr operand = null;
        for (int i = 0; i < body.stmts().size(); i++) {
            Stmt s = body.stmts().get(i);
            if (s instanceof Stmt.ExprStmt es && updateOperand(es.expr(), v, op) != null) {
                index = i;
                operand = updateOperand(es.expr(), v, op);
                break;
            }
            if (mentions(s, v, scopes)) {
                throw new Refusal(s.range().offset(), "scan(" + op.symbol + ":" + v + "): the statements before its "
                        + "update must not use '" + v + "'");
            }
        }
        if (index < 0) {
            throw new Refusal(at, "scan(" + op.symbol + ":" + v + "): the body must update '" + v + "' once, in a "
                    + "statement of its own at the top level of the loop body (" + v + " " + op.symbol + "= e;)");
        }
        for (int i = 0; i < index; i++) {
            Stmt s = body.stmts().get(i);
            if (s instanceof Stmt.Decl d) {
                String t = src.slice(SourceRange.of(d.range().offset(), d.vars().get(0).nameRange().offset()));
                for (VarDecl x : d.vars()) {
                    if (x.array() || x.shared() || x.init() instanceof Expr.Other || t.contains("auto")) {
                        throw new Refusal(s.range().offset(), "scan: a declaration before the update must be a "
                                + "scalar of a named type with an = initializer");
                    }
                }
            } else if (!(s instanceof Stmt.ExprStmt)) {
                throw new Refusal(s.range().offset(), "scan: only declarations and expression statements may "
                        + "precede the update");
            }
        }
        for (int i = index + 1; i < body.stmts().size(); i++) {
            for (Stmt s : allStmts(body.stmts().get(i))) {
                for (Expr e : Trees.ownExprs(s)) {
                    List<Expr> l = new ArrayList<>();
                    Trees.walk(e, l::add);
                    for (Expr x : l) {
                        Expr t = writeTarget(x);
                        if (t != null && rootOf(t) instanceof Expr.Name n && n.name().equals(v)) {
                            throw new Refusal(x.range().offset(), "scan: '" + v + "' is written again after its update");
                        }
                    }
                }
            }
        }
        if (Trees.collect(body, Stmt.Jump.class).stream().anyMatch(j -> j.kind() == Stmt.JumpKind.CONTINUE)) {
            throw new Refusal(at, "scan: continue in a scan loop is not supported");
        }
        return new ScanPlan(v, op, index, (Stmt.ExprStmt) body.stmts().get(index), operand);
    }

    // ----------------------------------------------------------------------------------------
    // Local arrays (CUDA-NP section 3.3)

    private static final Pattern ONE_DIM = Pattern.compile("\\s*\\[([^\\[\\]]+)\\]\\s*");

    /** @return a loop that must be refused because of an array it writes, or null when all arrays are placed */
    private NpLoop placeArrays(FunctionDef k, Scopes scopes, List<NpLoop> loops, Map<Var, ArrayPlan> out) {
        Map<Var, List<Expr.Name>> uses = new LinkedHashMap<>();
        Map<Expr, Expr> parents = new IdentityHashMap<>();
        walkKernelExprs(k.body(), e -> {
            for (Expr c : e.children()) {
                parents.put(c, e);
            }
            if (e instanceof Expr.Name n) {
                Var v = scopes.resolve(n);
                if (v != null && v.isArray() && v.isPrivate()) {
                    uses.computeIfAbsent(v, x -> new ArrayList<>()).add(n);
                }
            }
        });
        for (Map.Entry<Var, List<Expr.Name>> en : uses.entrySet()) {
            Var v = en.getKey();
            if (enclosing(loops, v.decl().nameRange().offset()) != null) {
                continue; // declared in a parallel loop's body: private to one iteration
            }
            NpLoop writer = null;
            for (Expr.Name n : en.getValue()) {
                NpLoop l = enclosing(loops, n.range().offset());
                Expr p = parents.get(n);
                if (l != null && p instanceof Expr.Subscript sub && sub.array() == n && isWritten(sub, parents)) {
                    writer = l;
                    break;
                }
            }
            for (Expr.Name n : en.getValue()) {
                for (NpLoop l : loops) {
                    if ((l.scan() != null || writer != null)
                            && (l.lo().range().contains(n.range()) || l.hi().range().contains(n.range()))) {
                        // the loop header is rewritten as a whole: an access to a placed array in it would not be
                        // (review 2026-11-27: overlapping edits for a plain loop)
                        warn(l.loop().range().offset(), "loop left sequential: the bounds of a "
                                + (l.scan() != null ? "scan " : "parallel ") + "loop must not read local array '"
                                + v.name() + "'" + (l.scan() != null ? "" : ", which a parallel loop writes"));
                        return l;
                    }
                }
            }
            if (writer == null) {
                continue; // read-only in parallel loops: every member keeps its own full copy
            }
            String why = null;
            String elem = null;
            String dim = null;
            Matcher m = null;
            if (v.stmt().vars().stream().anyMatch(x -> !x.array() || x.init() != null)) {
                why = "its declaration also declares scalars or initializes an array";
            } else {
                elem = src.slice(SourceRange.of(v.stmt().range().offset(), v.stmt().vars().get(0).nameRange().offset()))
                        .strip();
                int end = declaratorEnd(v);
                m = ONE_DIM.matcher(src.text().substring(v.decl().nameRange().end(), end));
                if (elem.contains("*") || elem.contains("&") || elem.contains("[") || !m.matches()) {
                    why = "it is not a one-dimensional array of a simple element type";
                } else {
                    dim = m.group(1).strip();
                }
            }
            // registers: every access is a[i] in a parallel loop with the same lower bound
            String lo = null;
            boolean registers = why == null;
            for (Expr.Name n : en.getValue()) {
                NpLoop l = enclosing(loops, n.range().offset());
                Expr p = parents.get(n);
                if (l == null || !(p instanceof Expr.Subscript sub) || sub.array() != n || !isName(sub.index(), l.var())
                        || !(unparen(sub.index()) instanceof Expr.Name idx && scopes.resolve(idx) != null
                        && scopes.resolve(idx).stmt() == l.loop().init()) || !constantText(l.lo())) {
                    registers = false;
                    break;
                }
                String t = src.slice(l.lo().range()).strip();
                if (!INTEGER_LITERAL.matcher(t).matches() || lo != null && !lo.equals(t)) {
                    // only a literal means the same in every loop: a constexpr local of another scope or a
                    // macro redefined between the loops does not (review 2026-11-27)
                    registers = false;
                    break;
                }
                lo = t;
            }
            if (registers) {
                out.put(v, new ArrayPlan(v, Place.REGISTERS, elem, dim, lo));
                continue;
            }
            if (why == null) {
                for (Expr.Name n : en.getValue()) {
                    if (!(parents.get(n) instanceof Expr.Subscript sub) || sub.array() != n) {
                        why = "it is used other than as a[index]";
                        break;
                    }
                }
            }
            if (why == null && k.templateHeader() != null && namesTemplateParameter(elem + " " + dim, k)) {
                // the host sizes the array (K_klap_npX_arrays, one function for every instantiation)
                why = "its element type or size names a template parameter of the kernel (klap sizes the array on "
                        + "the host, for every instantiation alike)";
            }
            if (why == null && !fileScopeText(dim, scopes)) {
                why = "its size '" + dim + "' is not a constant klap can evaluate on the host";
            }
            if (why == null && localType(elem, k)) {
                why = "its element type '" + elem + "' is declared in the kernel (klap sizes the array on the host)";
            }
            if (why == null && !ARITHMETIC.matcher(elem).matches() && !VECTOR_TYPE.matcher(elem).matches()
                    && !trivialClass(elem.replaceFirst("^\\s*(?:const\\s+)?(?:struct\\s+|class\\s+)?", "").strip(),
                    new HashSet<>())) {
                // shared or global placement is raw memory: no constructor or default member initializer of a
                // class element would run (review 2026-11-27)
                why = "its element type '" + elem + "' is not an arithmetic or CUDA vector type (in shared or global "
                        + "memory klap would not construct its elements)";
            }
            if (why == null) {
                out.put(v, new ArrayPlan(v, Place.SHARED, elem, dim, null));
                continue;
            }
            warn(writer.loop().range().offset(), "loop left sequential: it writes local array '" + v.name()
                    + "', which cannot be kept in registers (not every access is " + v.name() + "[i] in a parallel "
                    + "loop with the same lower bound) nor in shared memory (" + why + ")");
            return writer;
        }
        return null;
    }

    /**
     * @return true if an identifier of {@code text} is the name of a template parameter of kernel
     *         {@code k} (which hides a file-scope name of the same spelling), or {@code k}'s template
     *         header cannot be read
     */
    private boolean namesTemplateParameter(String text, FunctionDef k) {
        List<String> params = klap.transform.TemplateParams.inner(src.slice(k.templateHeader()));
        if (params == null) {
            return true;
        }
        Set<String> names = new HashSet<>();
        for (String part : params) {
            int eq = klap.transform.TemplateParams.topLevelIndex(part, '=');
            Matcher m = IDENT.matcher(eq >= 0 ? part.substring(0, eq) : part);
            String last = null;
            int words = 0;
            while (m.find()) {
                last = m.group();
                words++;
            }
            if (words > 1) {
                names.add(last);  // one word is an unnamed parameter ("int", "typename")
            }
        }
        Matcher m = IDENT.matcher(text);
        while (m.find()) {
            if (names.contains(m.group())) {
                return true;
            }
        }
        return false;
    }

    /** @return true if an identifier of {@code type} names a struct, class, union, typedef or alias declared in {@code k} */
    private boolean localType(String type, FunctionDef k) {
        String body = src.slice(k.body().range());
        Matcher m = IDENT.matcher(type);
        while (m.find()) {
            String id = Pattern.quote(m.group());
            if (Pattern.compile("\\b(?:struct|class|union)\\s+" + id + "\\b|\\btypedef\\b[^;]*\\b" + id
                    + "\\s*;|\\busing\\s+" + id + "\\s*=").matcher(body).find()) {
                return true;
            }
        }
        return false;
    }

    private int declaratorEnd(Var v) {
        String t = src.text();
        int i = v.decl().nameRange().end();
        int depth = 0;
        while (i < v.stmt().range().end()) {
            char c = t.charAt(i);
            if (c == '[' || c == '(') {
                depth++;
            } else if (c == ']' || c == ')') {
                depth--;
            } else if (depth == 0 && (c == ',' || c == ';' || c == '=')) {
                break;
            }
            i++;
        }
        return i;
    }

    private boolean constantText(Expr e) {
        boolean[] ok = {true};
        Trees.walk(e, x -> ok[0] &= !(x instanceof Expr.Name n) || ((Expr.Name) x).kind() == Expr.NameKind.CONSTANT);
        return ok[0] && !(e instanceof Expr.Call);
    }

    private static final Pattern IDENT = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    /** A decimal, hexadecimal or octal integer literal with an optional suffix, in parentheses or not. */
    private static final Pattern INTEGER_LITERAL = Pattern.compile(
            "\\(*\\s*(?:0[xX][0-9a-fA-F']+|[0-9][0-9']*)[uUlL]*\\s*\\)*");

    /** @return true if no identifier of {@code text} is a local or parameter of the kernel */
    private static boolean fileScopeText(String text, Scopes scopes) {
        Matcher m = IDENT.matcher(text);
        while (m.find()) {
            String id = m.group();
            if (scopes.vars.stream().anyMatch(v -> v.name().equals(id))) {
                return false;
            }
        }
        return true;
    }

    private static NpLoop enclosing(List<NpLoop> loops, int offset) {
        NpLoop best = null;
        for (NpLoop l : loops) {
            if (l.loop().body().range().contains(offset)
                    && (best == null || l.loop().range().offset() > best.loop().range().offset())) {
                best = l;
            }
        }
        return best;
    }

    /**
     * @return true if element {@code sub} is written: assigned, incremented, or passed to a device
     *         function of the unit that may write it through a reference parameter (review
     *         2026-11-27: {@code put(a[i], v)} left the array a private copy per member)
     */
    private boolean isWritten(Expr sub, Map<Expr, Expr> parents) {
        Expr x = sub;
        Expr p = parents.get(x);
        while (p instanceof Expr.Other o && o.children().size() == 1 || p instanceof Expr.Member mm && !mm.arrow()) {
            x = p;
            p = parents.get(x);
        }
        if (p instanceof Expr.Call c && c.calleeName() != null) {
            CalleeFacts f = callee(c.calleeName().replaceFirst("^::", ""));
            for (int a = 0; a < c.args().size(); a++) {
                boolean byCdt = c.paramModes() != null && a < c.paramModes().length();
                if (c.args().get(a) == x && (f != null ? writesArgument(f, c, a)
                        : !byCdt || c.paramModes().charAt(a) == 'w')) {
                    // a function of another file or library may write it when CDT says its parameter is a
                    // writable reference, or when CDT could not resolve it (sqrtf(a[i]) only reads)
                    return true;
                }
            }
        }
        return p != null && writeTarget(p) == x;
    }

    // ----------------------------------------------------------------------------------------
    // Effects

    /** @return the expression written by {@code e} (assignment, increment), or null */
    static Expr writeTarget(Expr e) {
        if (e instanceof Expr.Binary b && b.isAssignment()) {
            return b.lhs();
        }
        if (e instanceof Expr.Unary u && (u.op().contains("++") || u.op().contains("--"))) {
            return u.operand();
        }
        return null;
    }

    /** @return the root of an lvalue path: {@code a} of {@code a[i].f}, {@code p} of {@code *p} */
    static Expr rootOf(Expr e) {
        while (true) {
            e = unparen(e);
            if (e instanceof Expr.Subscript s) {
                e = s.array();
            } else if (e instanceof Expr.Member m) {
                e = m.owner();
            } else if (e instanceof Expr.Unary u && u.op().equals("*")) {
                e = u.operand();
            } else if (e instanceof Expr.Cast c) {
                e = c.operand();
            } else {
                return e;
            }
        }
    }

    /**
     * @return the private variable (local or parameter) an lvalue stays inside ({@code x}, {@code x.f},
     *         {@code a[i]} of a local array {@code a}), or null when it goes through memory (a pointer
     *         subscript, a dereference, {@code ->}) or names no variable of the function
     */
    static Var privateRoot(Expr e, Scopes scopes) {
        while (true) {
            e = unparen(e);
            if (e instanceof Expr.Name n) {
                Var v = scopes.resolve(n);
                return v != null && v.isPrivate() ? v : null;
            }
            if (e instanceof Expr.Member m && !m.arrow()) {
                e = m.owner();
            } else if (e instanceof Expr.Cast c) {
                e = c.operand();
            } else if (e instanceof Expr.Subscript s) {
                Rows r = rows(s);
                Expr a = r.root();
                if (!(a instanceof Expr.Name n) || scopes.resolve(n) == null || !scopes.resolve(n).isArray()
                        || r.depth() > scopes.dims(scopes.resolve(n))) {
                    return null; // a pointer (also an element of an array of pointers): memory
                }
                e = a;
            } else {
                return null;
            }
        }
    }

    /** What {@code a[i][j]...} indexes: its innermost array expression and how many subscripts. */
    record Rows(Expr root, int depth) {
    }

    /** @return the array expression under the subscripts of {@code s}, and their number */
    static Rows rows(Expr.Subscript s) {
        Expr a = unparen(s.array());
        int depth = 1;
        while (a instanceof Expr.Subscript inner) {
            a = unparen(inner.array());
            depth++;
        }
        return new Rows(a, depth);
    }

    /**
     * @return the private struct variable at the root of {@code s.m[i]} / {@code s.a.m[i]} (a member
     *         that may be an array, stored in the struct, or a pointer, to memory: klap cannot tell),
     *         or null
     */
    static Var ambiguousRoot(Expr e, Scopes scopes) {
        e = unparen(e);
        while (e instanceof Expr.Subscript s) {
            e = unparen(s.array());
        }
        if (!(e instanceof Expr.Member)) {
            return null;
        }
        while (e instanceof Expr.Member m && !m.arrow()) {
            e = unparen(m.owner());
            while (e instanceof Expr.Subscript s) {
                e = unparen(s.array());
            }
        }
        if (e instanceof Expr.Name n) {
            Var v = scopes.resolve(n);
            return v != null && v.isPrivate() ? v : null;
        }
        return null;
    }

    /**
     * What evaluating an expression does.
     *
     * @param stores        stores to memory (or to a shared-placed array), or calls something that may
     * @param loads         reads memory (global, shared, a shared-placed array)
     * @param privateWrites local variables (of any member) it writes
     */
    record Effects(boolean stores, boolean loads, Set<String> privateWrites, boolean barrier, Set<String> storeRoots,
                   Set<String> loadRoots) {
        boolean sideEffect() {
            return stores || !privateWrites.isEmpty() || barrier;
        }
    }

    /** The memory an access may touch, for the inter-warp ordering check: {@code "S:name"} a
     *  {@code __shared__} variable, {@code "G"} global memory (kernel parameters, device
     *  variables: they may alias each other), {@code "?"} anything (a local pointer may point to
     *  shared memory; a callee may store anywhere). */
    private String memoryRoot(Expr access, Scopes scopes, Map<Var, ArrayPlan> arrays) {
        Expr root = rootOf(access);
        if (!(root instanceof Expr.Name n)) {
            return "?";
        }
        Var v = scopes.resolve(n);
        if (v != null) {
            if (v.decl() != null && v.decl().shared()) {
                if (!subscriptsOnly(access, scopes.dims(v))) {
                    return "?"; // through a pointer held in the variable (or in a member): may point anywhere
                }
                if (src.slice(v.stmt().range()).matches("(?s)\\s*extern\\b.*")) {
                    return "S:extern"; // every extern __shared__ array starts at the same address
                }
                return "S:" + v.name();
            }
            if (arrays.containsKey(v) && arrays.get(v).place() == Place.SHARED) {
                return "S:klap_np_" + v.name(); // klap's own per-group copy (shared or global memory of its own)
            }
            // a parameter the kernel never reassigns holds what the host passed: global memory
            return v.decl() == null && !access.equals(root) && !kernelWrites.contains(v.name()) ? "G" : "?";
        }
        if (n.kind() == Expr.NameKind.GLOBAL) {
            String d = globalDeclaration(n.name());
            if (d != null && d.contains("__shared__")) {
                if (!subscriptsOnly(access, globalDims(n.name()))) {
                    return "?";
                }
                return d.matches("(?s).*\\bextern\\b.*") ? "S:extern" : "S:" + n.name();
            }
            if (d != null && d.contains("__constant__")) {
                return "C";
            }
            return "G";
        }
        return "?";
    }

    /**
     * @return true if the access path from {@code access} to its root is at most {@code dims}
     *         subscripts (in parentheses or not): an element of the variable itself, not memory that
     *         a pointer element or a member of it points to ({@code rows[0][t]} of
     *         {@code __shared__ float *rows[1]}, {@code b.data[t]}); members count as pointers
     *         (klap does not know the field's type), and so do casts and dereferences
     */
    private static boolean subscriptsOnly(Expr access, int dims) {
        int n = 0;
        Expr e = unparen(access);
        while (e instanceof Expr.Subscript sub) {
            n++;
            e = unparen(sub.array());
        }
        return e instanceof Expr.Name && n <= dims;
    }

    /** @return the number of array dimensions of the file-scope variable {@code name} (0 if klap cannot tell) */
    private int globalDims(String name) {
        Matcher m = Pattern.compile("(?m)^[^\\n;{}()]*?\\b" + Pattern.quote(name) + "\\b\\s*(?=\\[|=|;)").matcher(src.text());
        if (!m.find()) {
            return 0;
        }
        Matcher dim = Pattern.compile("\\s*\\[[^\\[\\];]*\\]").matcher(src.text());
        int n = 0;
        int at = m.end();
        while (dim.region(at, src.text().length()).lookingAt()) {
            n++;
            at = dim.end();
        }
        return n;
    }

    /** @return true if accesses to roots a and b (see {@link #memoryRoot}) may touch the same memory */
    static boolean mayAlias(String a, String b) {
        if (a.equals("C") || b.equals("C")) {
            return false; // __constant__ memory is not written by kernels
        }
        if (a.equals("?") || b.equals("?")) {
            return true;
        }
        if (a.startsWith("S:") || b.startsWith("S:")) {
            return a.equals(b);
        }
        return true;
    }

    /** @return the effects of {@code e}; {@code arrays}: the placed arrays (their accesses are memory) */
    Effects effects(Expr e, Scopes scopes, Map<Var, ArrayPlan> arrays) {
        boolean[] st = {false};
        boolean[] ld = {false};
        boolean[] bar = {false};
        Set<String> pw = new HashSet<>();
        Set<String> sr = new HashSet<>();
        Set<String> lr = new HashSet<>();
        Trees.walk(e, x -> {
            Expr t = writeTarget(x);
            if (t != null) {
                Var v = privateRoot(t, scopes);
                if (v != null && !(arrays.containsKey(v) && arrays.get(v).place() == Place.SHARED)) {
                    pw.add(v.name());
                } else {
                    st[0] = true;
                    sr.add(memoryRoot(t, scopes, arrays));
                }
            }
            if (t != null && privateRoot(t, scopes) == null && ambiguousRoot(t, scopes) != null) {
                pw.add(ambiguousRoot(t, scopes).name()); // a private struct's array or pointer member: both
            }
            if (x instanceof Expr.Call c && c.calleeName() != null) {
                String b = c.calleeName().replaceFirst("^::", "");
                CalleeFacts f = c.callee() instanceof Expr.Name cn && cn.kind() == Expr.NameKind.TYPE ? null : callee(b);
                if (f != null) {
                    st[0] |= f.stores();
                    if (f.stores()) {
                        sr.add("?");
                    }
                    bar[0] |= f.syncs();
                    if (f.loads()) {
                        ld[0] = true;
                        lr.add("?");
                    }
                    for (int a = 0; a < c.args().size(); a++) {
                        if (writesArgument(f, c, a)) {
                            // bound to a non-const reference: the callee writes it
                            Var v = privateRoot(c.args().get(a), scopes);
                            if (v != null && !(arrays.containsKey(v) && arrays.get(v).place() == Place.SHARED)) {
                                pw.add(v.name());
                            } else {
                                st[0] = true;
                                sr.add("?");
                            }
                        }
                    }
                } else if (BARRIERS.contains(b)) {
                    bar[0] = true;
                } else if (IMPURE.matcher(b).matches()) {
                    st[0] = true;
                    ld[0] = true;
                    sr.add("?");
                    lr.add("?");
                } else if (LOADS.matcher(b).matches()) {
                    ld[0] = true;
                    lr.add("?");
                } else if (!(c.callee() instanceof Expr.Name cn && cn.kind() == Expr.NameKind.TYPE) && !pureBuiltin(b)) {
                    st[0] = true;
                    ld[0] = true;
                    sr.add("?");
                    lr.add("?");
                }
            }
            if (x instanceof Expr.Launch) {
                st[0] = true;
                sr.add("?");
            }
            if (x instanceof Expr.Unary u && u.op().equals("*") || x instanceof Expr.Member m && m.arrow()) {
                ld[0] = true;
                lr.add(memoryRoot(x, scopes, arrays));
            }
            if (x instanceof Expr.Subscript s) {
                Var v = privateRoot(s, scopes);
                if (v == null || arrays.containsKey(v) && arrays.get(v).place() == Place.SHARED) {
                    ld[0] = true;
                    lr.add(memoryRoot(s, scopes, arrays));
                }
            }
            if (x instanceof Expr.Name n && n.kind() == Expr.NameKind.GLOBAL) {
                ld[0] = true;
                lr.add(memoryRoot(n, scopes, arrays));
            }
            if (x instanceof Expr.Name n && scopes.resolve(n) != null && scopes.resolve(n).decl() != null
                    && scopes.resolve(n).decl().shared()) {
                ld[0] = true; // a __shared__ variable (scalar, struct or array): memory of the block
                lr.add(memoryRoot(n, scopes, arrays));
            }
        });
        return new Effects(st[0], ld[0], pw, bar[0], sr, lr);
    }

    // ----------------------------------------------------------------------------------------
    // Sequential code

    /** Classifies the sequential statements (outside parallel loops) and checks them. */
    private final class Sequential {
        private final Scopes scopes;
        private final List<NpLoop> loops;
        private final Map<Var, ArrayPlan> arrays;
        private final List<Stmt> masterOnly;
        private final Set<Stmt> npLoops = java.util.Collections.newSetFromMap(new IdentityHashMap<>());
        private final List<Stmt> loopStack = new ArrayList<>();
        private final List<Broadcast> broadcasts;
        private final Trees trees;
        /** A sequential memory access or block barrier, at {@code offset} in statement {@code stmt}. */
        private record Event(int offset, Stmt stmt, Set<String> roots) {
            Event(int offset, Stmt stmt) {
                this(offset, stmt, Set.of("?"));
            }
        }

        private final List<Event> loadEvents = new ArrayList<>();
        private final List<Event> storeEvents = new ArrayList<>();
        private final List<Event> barrierEvents = new ArrayList<>();
        /** the statement being classified (the owner of the loads found in its expressions) */
        private Stmt current;

        Sequential(Scopes scopes, List<NpLoop> loops, Map<Var, ArrayPlan> arrays, List<Stmt> masterOnly,
                   List<Broadcast> broadcasts, Trees trees) {
            this.broadcasts = broadcasts;
            this.trees = trees;
            this.scopes = scopes;
            this.loops = loops;
            this.arrays = arrays;
            this.masterOnly = masterOnly;
            for (NpLoop l : loops) {
                npLoops.add(l.loop());
            }
        }

        private void redundant(Expr e, String what) throws Refusal {
            if (e == null) {
                return;
            }
            Effects ef = effects(e, scopes, arrays);
            if (ef.stores() || ef.barrier()) {
                throw new Refusal(e.range().offset(), what + " has a side effect on memory (it would run in every "
                        + "member of the group)");
            }
            if (ef.loads()) {
                load(e.range().offset(), ef.loadRoots());
            }
        }

        private void load(int offset, Set<String> roots) {
            loadEvents.add(new Event(offset, current, roots));
        }

        void stmt(Stmt s) throws Refusal {
            current = s;
            if (npLoops.contains(s)) {
                NpLoop l = loops.stream().filter(x -> x.loop() == s).findFirst().orElseThrow();
                // inter-warp: a block barrier before and after the loop
                barrierEvents.add(new Event(s.range().offset(), s));
                barrierEvents.add(new Event(s.range().end(), s));
                // bounds run in every member
                redundant(l.lo(), "the lower bound");
                redundant(l.hi(), "the loop bound");
                return;
            }
            if (s instanceof Stmt.Block b) {
                for (Stmt c : b.stmts()) {
                    stmt(c);
                }
            } else if (s instanceof Stmt.If i) {
                redundant(i.cond(), "the condition");
                stmt(i.then());
                if (i.otherwise() != null) {
                    stmt(i.otherwise());
                }
            } else if (s instanceof Stmt.Switch sw) {
                redundant(sw.cond(), "the switch condition");
                stmt(sw.body());
            } else if (s instanceof Stmt.Loop lp) {
                loopStack.add(lp);
                if (lp.init() != null) {
                    int before = masterOnly.size();
                    stmt(lp.init());
                    if (masterOnly.size() != before) {
                        throw new Refusal(lp.init().range().offset(), "the loop's init statement stores to memory");
                    }
                }
                redundant(lp.cond(), "the loop condition");
                if (lp.cond() != null && effects(lp.cond(), scopes, arrays).loads()) {
                    // the evaluation that leaves the loop happens at its end, after the body's barriers
                    loadEvents.add(new Event(lp.range().end() - 1, lp, effects(lp.cond(), scopes, arrays).loadRoots()));
                }
                if (lp.step() != null) {
                    Effects ef = effects(lp.step(), scopes, arrays);
                    if (ef.stores() || ef.barrier()) {
                        throw new Refusal(lp.step().range().offset(), "the loop step stores to memory");
                    }
                    if (ef.loads()) {
                        load(lp.step().range().offset(), ef.loadRoots());
                    }
                }
                stmt(lp.body());
                loopStack.remove(loopStack.size() - 1);
            } else if (s instanceof Stmt.Label l) {
                if (l.inner() != null) {
                    stmt(l.inner());
                }
            } else if (s instanceof Stmt.Decl d) {
                for (VarDecl v : d.vars()) {
                    if (v.init() == null) {
                        continue;
                    }
                    Effects ef = effects(v.init(), scopes, arrays);
                    if (ef.stores() && !ef.barrier() && ef.privateWrites().isEmpty() && !loopInit(d)
                            && trees.parent(d) instanceof Stmt.Block
                            && broadcastable(d, v)
                            && !(v.init() instanceof Expr.Other) && !v.array()) {
                        broadcast(new Broadcast(d, v.name(), v.init()));
                    } else {
                        redundant(v.init(), "the initializer of '" + v.name() + "'");
                    }
                }
            } else if (s instanceof Stmt.ExprStmt es) {
                exprStmt(es);
            } else if (s instanceof Stmt.Jump j) {
                if (j.value() != null) {
                    redundant(j.value(), "the return value");
                }
            } else if (s instanceof Stmt.Other o) {
                for (Expr e : o.exprs()) {
                    redundant(e, "this statement");
                }
            }
        }

        private void exprStmt(Stmt.ExprStmt es) throws Refusal {
            Stmt s = es;
            Effects ef = effects(es.expr(), scopes, arrays);
            if (ef.barrier()) {
                if (ef.stores() || !ef.privateWrites().isEmpty()
                        || !(es.expr() instanceof Expr.Call c && c.calleeName() != null
                        && BARRIERS.contains(c.calleeName().replaceFirst("^::", "")))) {
                    throw new Refusal(s.range().offset(), "a barrier inside a statement that stores to "
                            + "memory (a call of a function that synchronizes)");
                }
                barrierEvents.add(new Event(s.range().offset(), s));
                return;
            }
            if (ef.stores() && es.expr() instanceof Expr.Binary b && b.op().equals("=") && unparen(b.lhs()) instanceof Expr.Name x
                    && ef.privateWrites().equals(Set.of(x.name())) && nameFree(b.rhs(), x.name())
                    && scopes.resolve(x) != null && !scopes.resolve(x).isArray() && scopes.resolve(x).decl() != null
                    && broadcastable(scopes.resolve(x).stmt(), scopes.resolve(x).decl())
                    && !loopInit(es)) {
                broadcast(new Broadcast(es, x.name(), b.rhs()));
                return;
            }
            if (ef.stores()) {
                if (!ef.privateWrites().isEmpty()) {
                    throw new Refusal(s.range().offset(), "this statement both stores to memory (master "
                            + "only) and writes local '" + ef.privateWrites().iterator().next()
                            + "' (every member)");
                }
                masterOnly.add(s);
                storeEvents.add(new Event(s.range().offset(), s, ef.storeRoots()));
            } else if (ef.loads()) {
                load(s.range().offset(), ef.loadRoots());
            }
        }

        /** A broadcast: block barriers (inter-warp) before and after the master's side effect. */
        private void broadcast(Broadcast b) {
            broadcasts.add(b);
            barrierEvents.add(new Event(b.stmt().range().offset() - 1, b.stmt()));
            storeEvents.add(new Event(b.stmt().range().offset(), b.stmt()));
            barrierEvents.add(new Event(b.stmt().range().end(), b.stmt()));
        }

        private boolean loopInit(Stmt s) {
            return loopStack.stream().anyMatch(l -> ((Stmt.Loop) l).init() == s);
        }

        /** @return true if {@code b} runs whenever both {@code x} and {@code y} run: no condition around it,
         *          and every loop around it also holds x and y */
        private boolean unconditional(Event b, Event x, Event y) {
            for (Stmt a = trees.parent(b.stmt()); a != null; a = trees.parent(a)) {
                if (a instanceof Stmt.If || a instanceof Stmt.Switch) {
                    return false;
                }
                if (a instanceof Stmt.Loop lp && !(a.range().contains(x.stmt().range()) && a.range().contains(y.stmt().range()))
                        && !loopRunsBarrier(lp, b, x, y)) {
                    return false;
                }
            }
            return true;
        }

        /**
         * @return true if barrier b in loop lp (which holds at most one of the events x, y) runs
         *         between them: after the event lp holds, in the same iteration, with no jump
         *         between them; before it (every path to the event passes b); or, if lp holds
         *         neither, lp runs at least once and nothing jumps before b
         */
        private boolean loopRunsBarrier(Stmt.Loop lp, Event b, Event x, Event y) {
            List<Stmt.Jump> jumps = Trees.collect(lp.body(), Stmt.Jump.class);
            for (Event e : List.of(x, y)) {
                if (lp.range().contains(e.stmt().range())) {
                    return e.offset() > b.offset()
                            || jumps.stream().noneMatch(j -> j.range().offset() > e.offset() && j.range().offset() < b.offset());
                }
            }
            return runsOnce(lp) && jumps.stream().noneMatch(j -> j.range().offset() < b.offset());
        }

        /**
         * @return true if a {@code break}, {@code continue} or {@code return} in {@code lp} lies between
         *         offsets {@code from} and {@code to} and may jump past {@code to} (a jump of a loop or
         *         switch that lies wholly between them stays there)
         */
        private boolean jumpsOver(Stmt lp, int from, int to) {
            for (Stmt.Jump j : Trees.collect(lp, Stmt.Jump.class)) {
                if (j.range().offset() <= from || j.range().offset() >= to) {
                    continue;
                }
                Stmt target = j.kind() == Stmt.JumpKind.RETURN ? null : trees.jumpTarget(j);
                if (target == null || target.range().offset() <= from || target.range().end() > to) {
                    return true;
                }
            }
            return false;
        }

        /** @return true for {@code for (int x = C1; x < C2; ...)} with integer literals C1 < C2: one iteration at least */
        private boolean runsOnce(Stmt.Loop lp) {
            if (lp.kind() != Stmt.LoopKind.FOR || !(lp.init() instanceof Stmt.Decl d) || d.vars().size() != 1
                    || d.vars().get(0).init() == null || !(lp.cond() instanceof Expr.Binary c)
                    || !isName(c.lhs(), d.vars().get(0).name())) {
                return false;
            }
            Long lo = literal(d.vars().get(0).init());
            Long hi = literal(c.rhs());
            return lo != null && hi != null && (c.op().equals("<") ? lo < hi : c.op().equals("<=") && lo <= hi);
        }

        private Long literal(Expr e) {
            String t = src.slice(e.range()).strip().replaceFirst("[uUlL]+$", "");
            return e instanceof Expr.Literal && t.matches("-?\\d{1,18}") ? Long.parseLong(t) : null;
        }

        /**
         * @return true if block barriers order the store and the load both ways they can meet: one
         *         between them, and, when a loop holds both (the next iteration), one in that loop
         *         outside the stretch between them
         */
        private boolean ordered(Event st, Event ld) {
            int lo = Math.min(st.offset(), ld.offset());
            int hi = Math.max(st.offset(), ld.offset());
            Stmt common = null;
            for (Stmt a = st.stmt(); a != null; a = trees.parent(a)) {
                if (a instanceof Stmt.Loop && a.range().contains(ld.stmt().range())) {
                    common = a;
                    break;
                }
            }
            boolean between = false;
            boolean around = common == null;
            for (Event b : barrierEvents) {
                if (!unconditional(b, st, ld)) {
                    continue;
                }
                if (b.offset() > lo && b.offset() < hi) {
                    between = true;
                } else if (common != null && common.range().contains(b.offset())
                        && (b.offset() < lo || !jumpsOver(common, hi, b.offset()))) {
                    // a barrier after the later event orders it before the next iteration's earlier
                    // event only if no continue/break/return between them can skip it
                    around = true;
                }
            }
            return between && around;
        }

        /** @return why the inter-warp layout cannot order a master-only store and a load of the group, or null */
        String interReason() {
            for (Event st : storeEvents) {
                for (Event ld : loadEvents) {
                    boolean alias = st.roots().stream().anyMatch(a -> ld.roots().stream().anyMatch(b -> mayAlias(a, b)));
                    if (alias && !ordered(st, ld)) {
                        return "line " + src.line(ld.offset()) + " reads memory " + (ld.offset() > st.offset() ? "after"
                                : "before") + " the master-only store at line " + src.line(st.offset())
                                + " and no block barrier of the program orders them (an inter-warp group's members "
                                + "are in different warps)";
                    }
                }
            }
            return null;
        }
    }

    // ----------------------------------------------------------------------------------------

    private static List<Stmt> allStmts(Stmt root) {
        List<Stmt> l = new ArrayList<>();
        Trees.walkStmts(root, l::add);
        return l;
    }

    /** Visits every expression of a body, including the bodies of lambdas. */
    static void walkKernelExprs(Stmt body, java.util.function.Consumer<Expr> f) {
        Trees.walkExprs(body, e -> {
            f.accept(e);
            if (e instanceof Expr.Lambda lam) {
                walkKernelExprs(lam.body(), f);
            }
        });
    }
}
