package klap.transform;

import java.util.Collections;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.Set;
import java.util.regex.Pattern;
import klap.model.CudaUnit;
import klap.model.Expr;
import klap.model.FunctionDef;

/**
 * Which functions a call through a function pointer may reach: those whose address the unit
 * takes. A function's address is taken where its name is used other than as the callee of a call:
 * in a function body ({@code fp = &f;}, {@code apply(f, x)}: a {@code FUNCTION} name that is not a
 * callee), and outside function bodies, by text ({@code __device__ int (*fp)(int) = f;}), where a
 * use is the name not followed by {@code (} (a call or a declaration) or {@code <} (a template
 * argument list or a kernel launch's {@code <<<}), and not inside a comment or a literal.
 * A pointer made in another file is not seen here.
 */
public final class AddressTaken {
    private AddressTaken() {
    }

    /**
     * @param unit       the unit
     * @param candidates simple function names
     * @return the names of {@code candidates} whose address {@code unit} takes
     */
    public static Set<String> of(CudaUnit unit, Set<String> candidates) {
        Set<String> out = new HashSet<>();
        if (candidates.isEmpty()) {
            return out;
        }
        for (FunctionDef f : unit.functions()) {
            Set<Expr> callees = Collections.newSetFromMap(new IdentityHashMap<>());
            Trees.walkExprsAndLambdas(f.body(), e -> {
                if (e instanceof Expr.Call c) {
                    callees.add(c.callee());
                }
            });
            Trees.walkExprsAndLambdas(f.body(), e -> {
                if (e instanceof Expr.Name n && n.kind() == Expr.NameKind.FUNCTION && !callees.contains(n)
                        && candidates.contains(simple(n.name()))) {
                    out.add(simple(n.name()));
                }
            });
        }
        String code = outsideBodies(unit);
        for (String name : candidates) {
            if (!out.contains(name) && Pattern.compile("(?<![A-Za-z0-9_.>:])" + Pattern.quote(name) + "\\b(?!\\s*[(<])")
                    .matcher(code).find()) {
                out.add(name);
            }
        }
        return out;
    }

    /** @return the unit's text with function bodies, comments and string and character literals blanked */
    private static String outsideBodies(CudaUnit unit) {
        StringBuilder sb = new StringBuilder(Lexical.blankCommentsAndLiterals(unit.file().text()));
        for (FunctionDef f : unit.functions()) {
            for (int i = f.body().range().offset(); i < f.body().range().end() && i < sb.length(); i++) {
                sb.setCharAt(i, ' ');
            }
        }
        return sb.toString();
    }

    private static String simple(String name) {
        int q = name.lastIndexOf("::");
        return q < 0 ? name : name.substring(q + 2);
    }
}
