package klap.transform;

import java.util.HashSet;
import java.util.Set;
import klap.model.CudaUnit;
import klap.model.Expr;
import klap.model.FunctionDef;

/**
 * The variables (locals and parameters) of a function that may change after their declaration,
 * by any kind of write: assignment and compound assignment, {@code ++}/{@code --}, and everything
 * {@link Writes} counts (address taken, non-const reference binding, a non-const reference or
 * unknown callee parameter, member calls, {@code asm} operands, by-reference lambda captures).
 *
 * <p>Input: a function definition (and its unit, whose functions tell which call arguments are
 * written through reference parameters). Output: the set of names; a variable not in it keeps the
 * value of its declaration (a parameter: the value the launch passed) everywhere in the body.
 * Used by launch promotion (KLAP section III) to prove that an argument passed on unchanged, or an
 * induction argument {@code p + e}, has the same value at the start of the kernel as at its launch
 * site.
 */
public final class Mutations {
    private Mutations() {
    }

    /**
     * @param f    the function
     * @param unit its translation unit, or null (then every call of a function that is not a known
     *             by-value built-in is taken to write the variables passed to it by name)
     * @return the names of the variables of {@code f} that some statement of its body may write
     */
    public static Set<String> of(FunctionDef f, CudaUnit unit) {
        Set<String> out = new HashSet<>();
        new Writes(unit).collect(f.body(), false, out);
        Trees.walkExprs(f.body(), e -> {
            if (e instanceof Expr.Binary b && b.isAssignment() && Writes.root(b.lhs()) != null) {
                out.add(Writes.root(b.lhs()));
            } else if (e instanceof Expr.Unary u && (u.op().contains("++") || u.op().contains("--"))
                    && Writes.root(u.operand()) != null) {
                out.add(Writes.root(u.operand()));
            }
        });
        return out;
    }

    /** @return true if {@code callee} is a known function without side effects (math, intrinsics, {@code dim3}) */
    public static boolean pure(String callee) {
        return callee != null && Uniformity.PURE.contains(callee);
    }
}
