package klap.transform;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import klap.model.CudaUnit;
import klap.model.Expr;
import klap.model.FunctionDef;
import klap.model.Stmt;

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
            if (e instanceof Expr.Binary b && b.isAssignment()) {
                out.addAll(Writes.roots(uncast(b.lhs())));
            } else if (e instanceof Expr.Unary u && (u.op().contains("++") || u.op().contains("--"))) {
                out.addAll(Writes.roots(uncast(u.operand())));
            } else if (e instanceof Expr.Cast c && c.typeText().contains("&")) {
                out.addAll(Writes.roots(c.operand())); // (int&)t, const_cast<int&>(t): a writable alias
            }
        });
        if (unit != null) {
            // T x{a, b} / T x(a) of a class type may bind a reference member to a or b: a writable alias
            for (Stmt.Decl d : Trees.collect(f.body(), Stmt.Decl.class)) {
                if (SCALAR_DECL.matcher(unit.file().slice(d.range())).lookingAt()) {
                    continue;
                }
                for (klap.model.VarDecl v : d.vars()) {
                    if (v.init() == null) {
                        continue;
                    }
                    // only a variable named directly (the initializer, an element of its brace list or a
                    // constructor argument) can be bound to a reference member; t in `auto b = t * 64` cannot
                    List<Expr> direct = new java.util.ArrayList<>(List.of(v.init()));
                    if (v.init() instanceof Expr.Other || v.init() instanceof Expr.Call) {
                        direct.addAll(v.init().children());
                    }
                    for (Expr x : direct) {
                        String r = Writes.variable(x);
                        if (r != null) {
                            out.add(r);
                        }
                    }
                }
            }
        }
        return out;
    }

    /** A declaration of arithmetic or pointer type (its initializer can bind no reference). */
    private static final java.util.regex.Pattern SCALAR_DECL = java.util.regex.Pattern.compile(
            "\\s*(?:(?:const|volatile|static|constexpr|register|unsigned|signed|__shared__|__restrict__)\\s+)*"
            + "(?:bool|char|short|int|long|float|double|size_t|ptrdiff_t|u?int(?:8|16|32|64)_t|unsigned|signed)\\b"
            + "(?:\\s*(?:long|int|short|char|const|volatile|\\*))*\\s*[A-Za-z_]");

    /** @return {@code e} without the casts around it ({@code (int&)t} -> {@code t}) */
    private static Expr uncast(Expr e) {
        while (e instanceof Expr.Cast c) {
            e = c.operand();
        }
        return e;
    }

    /**
     * @return true if evaluating {@code e} has no side effect, so that generated code may evaluate it
     *         a second time: names, literals, member and subscript reads, operators other than
     *         assignments and {@code ++}/{@code --}, casts, conditionals and calls of {@link #pure}
     *         functions ({@code dim3(...)}, {@code min}, ...) on such operands, where a function of
     *         that name that {@code unit} defines is not taken for the pure one (review 2026-12-01: a
     *         user's {@code max} that counts its calls); false for anything else (other calls,
     *         lambdas, constructs klap does not model)
     */
    public static boolean sideEffectFree(Expr e, CudaUnit unit) {
        if (e instanceof Expr.Name || e instanceof Expr.Literal) {
            return true;
        }
        if (e instanceof Expr.Unary u && (u.op().contains("++") || u.op().contains("--"))) {
            return false;
        }
        if (e instanceof Expr.Binary b && b.isAssignment()) {
            return false;
        }
        if (e instanceof Expr.Call c && !pure(c.calleeName(), unit)) {
            return false;
        }
        if (e instanceof Expr.Unary || e instanceof Expr.Binary || e instanceof Expr.Call || e instanceof Expr.Member
                || e instanceof Expr.Subscript || e instanceof Expr.Conditional || e instanceof Expr.Cast) {
            return e.children().stream().filter(x -> !(e instanceof Expr.Call c && x == c.callee()))
                    .allMatch(x -> x != null && sideEffectFree(x, unit));
        }
        return false;
    }

    /** @return true if {@code callee} is a known function without side effects (math, intrinsics, {@code dim3}) */
    public static boolean pure(String callee) {
        return callee != null && Uniformity.PURE.contains(callee);
    }

    /**
     * @return true if {@code callee} is a known function without side effects ({@link #pure(String)})
     *         and {@code unit} defines no function of that (unqualified) name: a user's {@code max(int*,
     *         int)} or {@code min} that stores or loads is not the math function (review 2026-12-01:
     *         promotion evaluated such a launch condition early, and its overlap check missed the
     *         store; {@link Uniformity} has the same guard)
     */
    /**
     * @return true if call {@code c} calls a {@link #pure(String, CudaUnit)} function: also not
     *         through a variable of that name (review 2026-12-01: a functor object {@code max} that
     *         reads memory hid the math {@code max})
     */
    public static boolean pureCall(Expr.Call c, CudaUnit unit) {
        return pure(c.calleeName(), unit) && !(c.callee() instanceof Expr.Name n && (n.kind() == Expr.NameKind.LOCAL
                || n.kind() == Expr.NameKind.GLOBAL || n.kind() == Expr.NameKind.PARAM));
    }

    /**
     * @return true if {@code callee} is a known function without side effects ({@link #pure(String)})
     *         and {@code unit} defines no function of that (unqualified) name (see {@link #pure(String,
     *         CudaUnit)})
     */
    public static boolean pure(String callee, CudaUnit unit) {
        if (!pure(callee)) {
            return false;
        }
        String simple = callee.contains("::") ? callee.substring(callee.lastIndexOf("::") + 2) : callee;
        return unit.functions().stream().noneMatch(f -> f.name().equals(simple));
    }
}
