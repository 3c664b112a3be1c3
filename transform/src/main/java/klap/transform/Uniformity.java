package klap.transform;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import klap.model.CudaUnit;
import klap.model.Expr;
import klap.model.FunctionDef;
import klap.model.Stmt;
import klap.model.VarDecl;

/**
 * Which values of a function are uniform across the threads of a block (and so of a warp): the
 * analysis KLAP section II-C relies on to pass arguments "as is" instead of through arrays, and
 * that divergence handling uses to tell uniform from divergent control flow (after the variance
 * analyses KLAP cites, pocl [13] and Asanovic et al. [14]).
 *
 * <p>Rules (conservative: anything not proven uniform is divergent):
 * <ul>
 *   <li>literals, {@code sizeof}, enumerators and arithmetic constants are uniform;</li>
 *   <li>{@code blockIdx}, {@code blockDim}, {@code gridDim}, {@code warpSize} are uniform,
 *       {@code threadIdx} is not;</li>
 *   <li>parameters of a kernel are uniform (every thread receives the same value); parameters of
 *       {@code __device__} functions are not (they depend on the caller);</li>
 *   <li>memory loads ({@code a[i]}, {@code *p}, {@code p->f}), globals, shared variables, calls of
 *       functions other than pure arithmetic ones (an overloaded operator's included: {@code a + b}
 *       whose {@code operator+} reads {@code threadIdx}; and a conversion function's, {@code int v = l;}
 *       with {@code operator int()}), and anything with a side effect are not;</li>
 *   <li>a local variable (or a kernel parameter) is uniform if every definition of it
 *       (initializer, assignment, increment) is uniform and happens under uniform control flow, and
 *       it is written in no other way. Computed as the greatest fixpoint, so loop counters of
 *       uniform loops are uniform.</li>
 * </ul>
 * Writes other than a definition make a variable divergent whatever value they store (the
 * analysis cannot see the value): its address taken ({@code &x}, {@code &x.f}); bound to a
 * non-const reference ({@code int& r = x;}); passed by name to a parameter of non-const reference
 * type of a called function ({@code row_range(ptr, r, b, e)} with {@code int& b, int& e}); passed by
 * name to a function klap cannot see (not defined in the unit and not a known by-value CUDA
 * built-in such as {@code atomicAdd}, {@code __shfl_sync} or the math library); the object of a
 * member call ({@code x.reset()}) or of an overloaded {@code operator->}; an operand an overloaded
 * operator takes by non-const reference or as its non-const object ({@code acc << v}), or that a
 * non-const conversion function converts; an operand of an {@code asm} statement; written inside a
 * lambda that captures it by reference. Arrays, references, statics and {@code __shared__} variables are
 * always divergent.
 * A value that is uniform across the block is uniform across each of its warps; the analysis does
 * not try to prove warp-only uniformity (e.g. {@code threadIdx.x / 32}).
 */
public final class Uniformity {
    /** Functions whose result is uniform when all their arguments are. */
    static final Set<String> PURE = Set.of(
            "min", "max", "abs", "fabs", "fabsf", "sqrt", "sqrtf", "rsqrt", "rsqrtf", "cbrt", "cbrtf",
            "ceil", "ceilf", "floor", "floorf", "round", "roundf", "trunc", "truncf", "exp", "expf", "exp2",
            "exp2f", "log", "logf", "log2", "log2f", "log10", "log10f", "pow", "powf", "sin", "sinf", "cos",
            "cosf", "tan", "tanf", "fmin", "fminf", "fmax", "fmaxf", "fma", "fmaf", "llabs", "labs",
            "umin", "umax", "llmin", "llmax", "ullmin", "ullmax", "__popc", "__popcll", "__clz", "__clzll",
            "__ffs", "__ffsll", "__brev", "__float2int_rn", "__float2int_rz", "__int2float_rn",
            "__fdividef", "__powf", "__expf", "__logf", "__sinf", "__cosf", "dim3", "make_int2",
            "make_int3", "make_int4", "make_uint2", "make_uint3", "make_uint4", "make_float2", "make_float3",
            "make_float4", "make_double2", "std::min", "std::max", "cuda::std::min", "cuda::std::max");

    private static final Set<String> UNIFORM_BUILTINS = Set.of("blockIdx", "blockDim", "gridDim", "warpSize");
    private static final Set<String> GRID_UNIFORM_BUILTINS = Set.of("blockDim", "gridDim", "warpSize");

    private final boolean paramsUniform;
    private final Set<String> uniformBuiltins;
    private final Set<String> divergentLocals = new HashSet<>();
    private final Trees trees;
    private final Writes writes;

    /**
     * Analyses {@code f} for uniformity across a block (and its warps).
     *
     * @param f the function (kernel or device function)
     */
    public Uniformity(FunctionDef f) {
        this(f, false);
    }

    /**
     * Analyses {@code f}.
     *
     * @param f    the function (kernel or device function)
     * @param grid true for uniformity across the whole grid (kernel granularity, KLAP II-B):
     *             then {@code blockIdx} is not uniform either
     */
    public Uniformity(FunctionDef f, boolean grid) {
        this(f, grid, null);
    }

    /**
     * Analyses {@code f} of {@code unit}, whose other functions tell which call arguments are
     * written through reference parameters (without the unit every call of a function other than a
     * known by-value built-in is taken to write the variables passed to it by name).
     *
     * @param f    the function (kernel or device function)
     * @param grid true for uniformity across the whole grid (kernel granularity, KLAP II-B)
     * @param unit the translation unit of {@code f}, or null
     */
    public Uniformity(FunctionDef f, boolean grid, CudaUnit unit) {
        this.paramsUniform = f.kind() == FunctionDef.Kind.KERNEL;
        this.uniformBuiltins = grid ? GRID_UNIFORM_BUILTINS : UNIFORM_BUILTINS;
        this.trees = new Trees(f.body());
        this.writes = new Writes(unit);
        // structurally divergent locals, and variables written other than by a definition
        writes.collect(f.body(), false, divergentLocals);
        // a label before a goto: the statements between may run a thread-dependent number of times
        // (review 2026-12-01: again: x = x + 1; if (threadIdx.x < 3 && x < 5) goto again; left x "uniform")
        List<Stmt.Label> labels = Trees.collect(f.body(), Stmt.Label.class);
        for (Stmt.Jump j : Trees.collect(f.body(), Stmt.Jump.class)) {
            if (j.kind() == Stmt.JumpKind.GOTO) {
                for (Stmt.Label l : labels) {
                    if (l.range().offset() < j.range().offset()) {
                        gotoLoops.add(new int[] {l.range().offset(), j.range().end()});
                    }
                }
            }
        }
        // fixpoint
        boolean changed = true;
        while (changed) {
            changed = visit(f.body(), false);
        }
    }

    /** the extents {label, goto end} of the loops written with a goto back to a label */
    private final List<int[]> gotoLoops = new java.util.ArrayList<>();

    /** Types whose temporaries run no code of the program: arithmetic types and CUDA's vector types and dim3. */
    private static final java.util.regex.Pattern VALUE_TYPE = java.util.regex.Pattern.compile(
            "(?:unsigned|signed|char|short|int|long|float|double|bool|size_t|u?int(?:8|16|32|64)_t|\\s)+"
            + "|u?(?:char|short|int|long|longlong)[1-4]|(?:float|double)[1-4]|dim3|__half2?|__nv_bfloat162?");

    /** One pass over the statements; returns true if a local became divergent. */
    private boolean visit(Stmt s, boolean divergentControl) {
        boolean changed = false;
        for (int[] r : gotoLoops) {
            divergentControl |= s.range().offset() >= r[0] && s.range().end() <= r[1]
                    // a loop that holds the label but not the goto: its condition and step run again after the jump
                    // (review 2026-12-01: for (...; i++) { again: ... } if (...) goto again;)
                    || s instanceof Stmt.Loop && s.range().offset() < r[0] && r[0] < s.range().end() && s.range().end() <= r[1];
        }
        if (s instanceof Stmt.Decl d) {
            for (VarDecl v : d.vars()) {
                if (v.constructed() || v.init() != null && (divergentControl || !isUniform(v.init()))) {
                    // a user constructor or default member initializer may read the indices
                    changed |= divergentLocals.add(v.name());
                }
                if (v.init() != null) {
                    changed |= definitionsIn(v.init(), divergentControl);
                }
            }
            return changed;
        }
        boolean inner = divergentControl || !controlIsUniform(s);
        if (s instanceof Stmt.Loop lp) {
            // the condition and the step run as often as the body: under the loop's own control
            if (lp.init() != null) {
                // a condition declaration (while (T x = e), for (...; T x = e; ...)) runs every round, like the
                // condition; a for-init runs once, before the loop (review 2026-11-27)
                List<Stmt> parts = lp.init() instanceof Stmt.Block b && lp.kind() != Stmt.LoopKind.RANGE_FOR
                        ? b.stmts() : List.of(lp.init());
                for (Stmt part : parts) {
                    boolean everyRound = lp.cond() != null && part.range().contains(lp.cond().range());
                    changed |= visit(part, everyRound ? inner : divergentControl);
                }
            }
            changed |= definitionsIn(lp.cond(), inner);
            changed |= definitionsIn(lp.step(), inner);
            changed |= visit(lp.body(), inner);
            return changed;
        }
        for (Expr e : Trees.ownExprs(s)) {
            changed |= definitionsIn(e, divergentControl);
        }
        if (s instanceof Stmt.Block b) {
            // after a thread-dependent break or continue, the rest of the loop body runs in some threads only
            boolean after = inner;
            for (Stmt c : b.stmts()) {
                changed |= visit(c, after);
                after = after || divergentLoopJump(c);
            }
            return changed;
        }
        Stmt init = s instanceof Stmt.If i ? i.init() : s instanceof Stmt.Switch sw ? sw.init() : null;
        for (Stmt c : s.children()) {
            // an init-statement or condition declaration runs before the condition chooses a path
            changed |= visit(c, c == init ? divergentControl : inner);
        }
        return changed;
    }

    /**
     * @return true if {@code s} holds a {@code break}/{@code continue} that leaves {@code s} (its
     *         target loop or switch encloses {@code s}) under thread-dependent control, or a goto
     */
    private boolean divergentLoopJump(Stmt s) {
        for (Stmt.Jump j : Trees.collect(s, Stmt.Jump.class)) {
            if (j.kind() == Stmt.JumpKind.GOTO) {
                return true;
            }
            if (j.kind() == Stmt.JumpKind.RETURN) {
                continue;
            }
            Stmt target = trees.jumpTarget(j);
            if (target != null && trees.isAncestorOrSelf(s, target)) {
                continue; // stays inside s
            }
            for (Stmt x = trees.parent(j); x != null; x = trees.parent(x)) {
                if (!controlIsUniform(x)) {
                    return true;
                }
                if (x == s) {
                    break;
                }
            }
        }
        return false;
    }

    /**
     * Marks locals assigned in {@code e} divergent when the assignment is. An assignment in an arm
     * of {@code c ? a : b}, or in the right operand of {@code &&} / {@code ||}, runs only in the
     * threads where the condition chose it: under divergent control unless that condition is
     * uniform ({@code c ? (lo = m) : (hi = m)} in a per-thread binary search).
     */
    private boolean definitionsIn(Expr e, boolean divergentControl) {
        if (e == null) {
            return false;
        }
        boolean changed = false;
        if (e instanceof Expr.Conditional c) {
            boolean chosen = divergentControl || !isUniform(c.cond());
            changed |= definitionsIn(c.cond(), divergentControl);
            changed |= definitionsIn(c.then(), chosen);
            changed |= definitionsIn(c.otherwise(), chosen);
            return changed;
        }
        if (e instanceof Expr.Binary b && (b.op().equals("&&") || b.op().equals("||"))) {
            changed |= definitionsIn(b.lhs(), divergentControl);
            changed |= definitionsIn(b.rhs(), divergentControl || !isUniform(b.lhs()));
            return changed;
        }
        if (e instanceof Expr.Binary b && b.isAssignment()) {
            // a user-defined operator= or operator+= stores what its body computes (review 2026-11-29)
            boolean uniformValue = isUniform(b.rhs()) && (b.op().equals("=") || isUniform(b.lhs()))
                    && writes.ownOperatorCalls(b).isEmpty();
            changed |= assigned(b.lhs(), uniformValue, divergentControl);
        } else if (e instanceof Expr.Unary u && (u.op().endsWith("++") || u.op().endsWith("--")
                || u.op().equals("++pre") || u.op().equals("--pre") || u.op().equals("post++")
                || u.op().equals("post--"))) {
            changed |= assigned(u.operand(), isUniform(u.operand()) && writes.ownOperatorCalls(u).isEmpty(), divergentControl);
        }
        for (Expr x : e.children()) {
            changed |= definitionsIn(x, divergentControl);
        }
        return changed;
    }

    /**
     * Marks the locals that the store into {@code lhs} may change divergent when it is: a value that
     * is not uniform, divergent control, or a thread-dependent choice of the target ({@code
     * (c ? a : b) = v} writes {@code a} in some threads and {@code b} in others).
     */
    private boolean assigned(Expr lhs, boolean uniformValue, boolean divergentControl) {
        boolean[] changed = {false};
        Writes.lvalueLeaves(lhs, List.of(), (leaf, choices) -> {
            boolean control = divergentControl || !choices.stream().allMatch(this::isUniform);
            String target = localName(leaf);
            boolean value = uniformValue;
            if (target == null) {
                // assignment through a member of a local struct: the struct becomes divergent
                target = rootLocal(leaf);
                value = value && target != null && uniformTarget(leaf);
            }
            changed[0] |= target != null && (control || !value) && divergentLocals.add(target);
            // get<0>(t) = v, v.at(i) = x: the call returns into its arguments
            for (String r : Writes.callArguments(leaf)) {
                changed[0] |= (control || !uniformValue) && divergentLocals.add(r);
            }
        });
        return changed[0];
    }

    /**
     * @return true if storing a uniform value into {@code e} ({@code s.a}, {@code s.c[i]}) keeps
     *         its root variable uniform: the root is uniform and every index on the path is
     */
    private boolean uniformTarget(Expr e) {
        if (e instanceof Expr.Member m) {
            return !m.arrow() && uniformTarget(m.owner());
        }
        if (e instanceof Expr.Subscript sub) {
            return isUniform(sub.index()) && uniformTarget(sub.array());
        }
        return isUniform(e);
    }

    private static String localName(Expr e) {
        return Writes.variable(e);
    }

    /**
     * @return the variable a store into {@code e} changes: {@link Writes#root}, or for an element of
     *         a local that is not an array member path ({@code v[0] = x}: an object with
     *         {@code operator[]}, or a pointer local, taken as changed to err on the safe side; review
     *         2026-11-27) that local
     */
    private static String rootLocal(Expr e) {
        String r = Writes.root(e);
        if (r != null) {
            return r;
        }
        Expr base = e;
        while (base instanceof Expr.Subscript s) {
            base = s.array();
        }
        return base != e && base instanceof Expr.Name n && n.kind() == Expr.NameKind.LOCAL ? n.name() : null;
    }

    /**
     * @return true if the condition(s) controlling the children of {@code s} are uniform, i.e. all
     *         threads that reach {@code s} take the same path through it. Blocks and labels are
     *         uniform; a range-for is treated as divergent.
     */
    public boolean controlIsUniform(Stmt s) {
        if (s instanceof Stmt.If i) {
            return isUniform(i.cond());
        }
        if (s instanceof Stmt.Switch sw) {
            return isUniform(sw.cond());
        }
        if (s instanceof Stmt.Loop lp) {
            if (lp.kind() == Stmt.LoopKind.RANGE_FOR) {
                return false;
            }
            boolean init = lp.init() == null || Trees.ownExprs(lp.init()).stream().allMatch(this::isUniform);
            if (lp.init() instanceof Stmt.Decl d) {
                init = d.vars().stream().allMatch(v -> !divergentLocals.contains(v.name()));
            }
            return init && (lp.cond() == null || isUniform(lp.cond())) && (lp.step() == null || isUniform(lp.step()))
                    && !divergentBreak(lp);
        }
        return true;
    }

    /** @return true if a {@code break} of {@code lp} (or a goto) sits under thread-dependent control in its body */
    private boolean divergentBreak(Stmt.Loop lp) {
        for (Stmt.Jump j : Trees.collect(lp.body(), Stmt.Jump.class)) {
            if (j.kind() == Stmt.JumpKind.GOTO) {
                return true;
            }
            if (j.kind() != Stmt.JumpKind.BREAK || trees.jumpTarget(j) != lp) {
                continue;
            }
            for (Stmt x = trees.parent(j); x != null && x != lp; x = trees.parent(x)) {
                if (!(x instanceof Stmt.Loop) && !controlIsUniform(x)) {
                    return true;
                }
            }
        }
        return false;
    }

    /** @return true if {@code e} provably has the same value in every thread of a block */
    public boolean isUniform(Expr e) {
        if (e == null) {
            return true;
        }
        if (e instanceof Expr.Literal) {
            return writes.ownOperatorCalls(e).isEmpty(); // a user-defined literal (5_lane) is a call of its operator
        }
        if (writes.converts(e)) {
            return false; // the value of a conversion function: a call, like an operator's
        }
        if (e instanceof Expr.Name n) {
            return switch (n.kind()) {
                case LOCAL -> !divergentLocals.contains(n.name());
                case PARAM -> paramsUniform && !divergentLocals.contains(n.name());
                case BUILTIN -> uniformBuiltins.contains(n.name());
                case CONSTANT, FUNCTION, TYPE -> true;
                case GLOBAL, UNKNOWN -> false;
            };
        }
        if (e instanceof Expr.Member m) {
            return !m.arrow() && isUniform(m.owner());
        }
        if (e instanceof Expr.Subscript) {
            return false;
        }
        if (!writes.ownOperatorCalls(e).isEmpty()) {
            // an overloaded operator is a call of a function that is not pure arithmetic, like any other
            return false;
        }
        if (e instanceof Expr.Unary u) {
            return switch (u.op()) {
                case "sizeof", "alignof" -> true;
                case "*", "&" -> false;
                default -> isUniform(u.operand());
            };
        }
        if (e instanceof Expr.Binary b) {
            return isUniform(b.lhs()) && isUniform(b.rhs());
        }
        if (e instanceof Expr.Conditional c) {
            return isUniform(c.cond()) && isUniform(c.then()) && isUniform(c.otherwise());
        }
        if (e instanceof Expr.Cast c) {
            return isUniform(c.operand());
        }
        if (e instanceof Expr.Call c) {
            // a functor local or parameter named max, or the user's own max, is not the math library's
            boolean functor = c.callee() instanceof Expr.Name n
                    && (n.kind() == Expr.NameKind.LOCAL || n.kind() == Expr.NameKind.PARAM);
            String name = c.calleeName();
            boolean pureName = name != null && PURE.contains(name) && !functor
                    && !writes.defines(name.contains("::") ? name.substring(name.lastIndexOf("::") + 2) : name);
            // a temporary of a type: pure only for an arithmetic or CUDA vector type; a class's constructor, default
            // member initializers, bases or members may read the indices (review 2026-12-01: Tile(width).row,
            // M().a with unsigned a = threadIdx.x, ns::Tile<1>(w).col were taken as uniform)
            boolean pureCallee = pureName || (c.callee() instanceof Expr.Name n && n.kind() == Expr.NameKind.TYPE
                    && VALUE_TYPE.matcher(n.name().strip()).matches());
            return pureCallee && c.args().stream().allMatch(this::isUniform);
        }
        return false;
    }

    /**
     * Uniform across loop iterations: true if {@code e} is uniform ({@link #isUniform}) and reads no
     * variable that the outermost loop around {@code site} declares or assigns, so that it has one
     * value in every thread of the block in every iteration. Needed where threads of different
     * iterations can meet: the lanes that arrive together at a launch aggregated in place (independent
     * thread scheduling, sm_70+, lets lanes of one warp reach the same instruction in different
     * iterations). Without a loop around {@code site} it is {@link #isUniform}.
     *
     * @param e    an expression evaluated at {@code site}
     * @param site a statement of the analysed function
     */
    public boolean isUniformAcrossIterations(Expr e, Stmt site) {
        if (!isUniform(e)) {
            return false;
        }
        Set<String> defined = definedInOutermostLoop(site);
        boolean[] reads = {false};
        Trees.walk(e, x -> reads[0] |= x instanceof Expr.Name n && defined.contains(n.name()));
        return !reads[0];
    }

    /**
     * @return the variables the outermost loop around {@code site} (a loop written with {@code goto}
     *         included) declares or assigns (empty without a loop)
     */
    private Set<String> definedInOutermostLoop(Stmt site) {
        Stmt outer = trees.outermostLoopOrGotoLoop(site);
        Set<String> defined = new HashSet<>();
        if (outer == null) {
            return defined;
        }
        Trees.walkStmts(outer, x -> {
            if (x instanceof Stmt.Decl d) {
                d.vars().forEach(v -> defined.add(v.name()));
            }
            for (Expr top : Trees.ownExprs(x)) {
                Trees.walk(top, y -> {
                    Expr target = y instanceof Expr.Binary b && b.isAssignment() ? b.lhs()
                            : y instanceof Expr.Unary u && (u.op().contains("++") || u.op().contains("--")) ? u.operand() : null;
                    String name = baseName(target);
                    if (name != null) {
                        defined.add(name);
                    }
                });
            }
        });
        return defined;
    }

    /** @return the name at the base of {@code x}, {@code x.f}, {@code x[i]}, {@code *x}, {@code (T)x}; null if none */
    private static String baseName(Expr e) {
        while (e instanceof Expr.Member || e instanceof Expr.Subscript || e instanceof Expr.Unary || e instanceof Expr.Cast) {
            e = e instanceof Expr.Member m ? m.owner() : e instanceof Expr.Subscript sub ? sub.array()
                    : e instanceof Expr.Unary u ? u.operand() : ((Expr.Cast) e).operand();
        }
        return e instanceof Expr.Name n ? n.name() : null;
    }

    /** @return the statement trees the analysis indexed */
    public Trees trees() {
        return trees;
    }

    /** @return the names of locals found divergent (for tests and diagnostics) */
    public Set<String> divergentLocals() {
        return Set.copyOf(divergentLocals);
    }

    /** @return true if every expression in {@code es} is uniform */
    public boolean allUniform(List<Expr> es) {
        return es.stream().allMatch(this::isUniform);
    }
}
