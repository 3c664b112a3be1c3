package klap.promotion;

import java.util.List;
import klap.model.Expr;
import klap.model.FunctionDef;
import klap.model.Param;
import klap.model.Pragma;
import klap.model.Stmt;

/**
 * What {@link PromotionPlanner} proved about one promotable kernel, and what
 * {@link PromotedKernel} needs to rewrite it.
 *
 * @param kernel     the kernel K (single-block, launches itself once, KLAP Fig. 5a)
 * @param site       the statement {@code K<<<1, B>>>(args);}
 * @param launch     its launch expression
 * @param args       one entry per parameter of K, in order: how its argument reaches the successor
 * @param overlap    the {@code #pragma klap overlap} that ends the independent prologue, or null
 *                   (no overlap: the acquire is the first statement of the body)
 * @param condition  with an overlap: the launch condition's conjuncts other than the thread-0 tests,
 *                   all computable at the start of the kernel (empty: always launched); else null
 * @param poolSize   descendants per launch: 1 for P and PO, the n of PA-n and PAO-n
 * @param guardedY   true if the launch's guard also has {@code threadIdx.y == 0}, so the host
 *                   instance may have any {@code blockDim.y}
 * @param guardedZ   the same for {@code threadIdx.z == 0} and {@code blockDim.z}
 */
public record PromotionPlan(FunctionDef kernel, Stmt.ExprStmt site, Expr.Launch launch, List<Arg> args,
                            Pragma overlap, List<Expr> condition, int poolSize, boolean guardedY, boolean guardedZ) {

    /** @return true if one thread launches whatever the host's block shape (the guard tests x, y and z) */
    public boolean anyBlockShape() {
        return guardedY && guardedZ;
    }

    /** How an argument of the self-launch reaches the successor. */
    public enum ArgKind {
        /** the same parameter, never written: a kernel parameter of every descendant */
        PASS,
        /**
         * {@code p + e} or {@code p - e} with {@code p} the parameter itself (never written, integral
         * or pointer) and {@code e} built from PASS parameters and constants: descendant j of a pool
         * gets {@code first + j * e} (or {@code first - j * e})
         */
        INDUCTION,
        /** anything else: evaluated at the launch site and handed over through the link (released) */
        POSTPONED
    }

    /**
     * One parameter of K and its argument in the self-launch.
     *
     * @param param the parameter
     * @param kind  its kind
     * @param arg   the argument expression
     * @param minus for INDUCTION: true for {@code p - e}
     * @param step  for INDUCTION: {@code e}; otherwise null
     */
    public record Arg(Param param, ArgKind kind, Expr arg, boolean minus, Expr step) {
    }

    /** @return the arguments of the given kind, in parameter order */
    public List<Arg> of(ArgKind k) {
        return args.stream().filter(a -> a.kind() == k).toList();
    }

    /** @return the PASS and INDUCTION arguments (available at the start of the kernel), in order */
    public List<Arg> available() {
        return args.stream().filter(a -> a.kind() != ArgKind.POSTPONED).toList();
    }
}
