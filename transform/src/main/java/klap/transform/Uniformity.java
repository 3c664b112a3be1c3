package klap.transform;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
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
 *       functions other than pure arithmetic ones, and anything with a side effect are not;</li>
 *   <li>a local variable is uniform if every definition of it (initializer, assignment, increment)
 *       is uniform and happens under uniform control flow, its address is never taken, and it is
 *       not an array, reference, static or {@code __shared__} variable. Computed as the greatest
 *       fixpoint, so loop counters of uniform loops are uniform.</li>
 * </ul>
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
        this.paramsUniform = f.kind() == FunctionDef.Kind.KERNEL;
        this.uniformBuiltins = grid ? GRID_UNIFORM_BUILTINS : UNIFORM_BUILTINS;
        this.trees = new Trees(f.body());
        // structurally divergent locals
        Trees.walkStmts(f.body(), s -> {
            if (s instanceof Stmt.Decl d) {
                for (VarDecl v : d.vars()) {
                    if (v.array() || v.reference() || v.isStatic() || v.shared()) {
                        divergentLocals.add(v.name());
                    }
                }
            }
        });
        Trees.walkExprs(f.body(), e -> {
            if (e instanceof Expr.Unary u && u.op().equals("&") && u.operand() instanceof Expr.Name n
                    && n.kind() == Expr.NameKind.LOCAL) {
                divergentLocals.add(n.name());
            }
        });
        // fixpoint
        boolean changed = true;
        while (changed) {
            changed = visit(f.body(), false);
        }
    }

    /** One pass over the statements; returns true if a local became divergent. */
    private boolean visit(Stmt s, boolean divergentControl) {
        boolean changed = false;
        if (s instanceof Stmt.Decl d) {
            for (VarDecl v : d.vars()) {
                if (v.init() != null && (divergentControl || !isUniform(v.init()))) {
                    changed |= divergentLocals.add(v.name());
                }
                if (v.init() != null) {
                    changed |= definitionsIn(v.init(), divergentControl);
                }
            }
            return changed;
        }
        for (Expr e : Trees.ownExprs(s)) {
            changed |= definitionsIn(e, divergentControl);
        }
        boolean inner = divergentControl || !controlIsUniform(s);
        if (s instanceof Stmt.Loop lp && lp.init() != null) {
            changed |= visit(lp.init(), divergentControl);
            changed |= visit(lp.body(), inner);
            return changed;
        }
        for (Stmt c : s.children()) {
            changed |= visit(c, inner);
        }
        return changed;
    }

    /** Marks locals assigned in {@code e} divergent when the assignment is. */
    private boolean definitionsIn(Expr e, boolean divergentControl) {
        boolean[] changed = {false};
        Trees.walk(e, x -> {
            String target = null;
            boolean uniformValue = true;
            if (x instanceof Expr.Binary b && b.isAssignment()) {
                target = localName(b.lhs());
                uniformValue = isUniform(b.rhs()) && (b.op().equals("=") || isUniform(b.lhs()));
                if (target == null) {
                    // assignment through a member of a local struct: the struct becomes divergent
                    target = rootLocal(b.lhs());
                    uniformValue = uniformValue && target != null && isUniform(b.lhs());
                }
            } else if (x instanceof Expr.Unary u && (u.op().endsWith("++") || u.op().endsWith("--")
                    || u.op().equals("++pre") || u.op().equals("--pre") || u.op().equals("post++")
                    || u.op().equals("post--"))) {
                target = rootLocal(u.operand());
                uniformValue = isUniform(u.operand());
            }
            if (target != null && (divergentControl || !uniformValue)) {
                changed[0] |= divergentLocals.add(target);
            }
        });
        return changed[0];
    }

    private static String localName(Expr e) {
        return e instanceof Expr.Name n && n.kind() == Expr.NameKind.LOCAL ? n.name() : null;
    }

    private static String rootLocal(Expr e) {
        while (e instanceof Expr.Member m && !m.arrow()) {
            e = m.owner();
        }
        return localName(e);
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
            return init && (lp.cond() == null || isUniform(lp.cond())) && (lp.step() == null || isUniform(lp.step()));
        }
        return true;
    }

    /** @return true if {@code e} provably has the same value in every thread of a block */
    public boolean isUniform(Expr e) {
        if (e == null) {
            return true;
        }
        if (e instanceof Expr.Literal) {
            return true;
        }
        if (e instanceof Expr.Name n) {
            return switch (n.kind()) {
                case LOCAL -> !divergentLocals.contains(n.name());
                case PARAM -> paramsUniform;
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
            boolean pureCallee = (c.calleeName() != null && PURE.contains(c.calleeName()))
                    || (c.callee() instanceof Expr.Name n && n.kind() == Expr.NameKind.TYPE);
            return pureCallee && c.args().stream().allMatch(this::isUniform);
        }
        return false;
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
