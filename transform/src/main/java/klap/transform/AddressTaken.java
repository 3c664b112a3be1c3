package klap.transform;

import java.util.Collections;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.Set;
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
        Set<String> used = valueUses(outsideBodies(unit));
        for (String name : candidates) {
            if (used.contains(name)) {
                out.add(name);
            }
        }
        return out;
    }

    /**
     * One pass over {@code code} (linear in its length; a regular expression per candidate name was
     * quadratic on large files: 47k lines took minutes): every identifier that is not preceded by
     * {@code .}, {@code >} or {@code :} (a member or a qualified name) and whose next character other
     * than white space is neither {@code (} nor {@code <}.
     *
     * @param code text with function bodies, comments and literals blanked
     * @return the identifiers used as a value somewhere in {@code code}
     */
    static Set<String> valueUses(String code) {
        Set<String> used = new HashSet<>();
        int n = code.length();
        int i = 0;
        while (i < n) {
            if (!identifierPart(code.charAt(i))) {
                i++;
                continue;
            }
            int start = i;
            while (i < n && identifierPart(code.charAt(i))) {
                i++;
            }
            char first = code.charAt(start);
            if (Character.isDigit(first) || start > 0 && ".>:".indexOf(code.charAt(start - 1)) >= 0) {
                continue;
            }
            int next = i;
            while (next < n && Character.isWhitespace(code.charAt(next)) && code.charAt(next) < 128) {
                next++;
            }
            if (next == n || code.charAt(next) != '(' && code.charAt(next) != '<') {
                used.add(code.substring(start, i));
            }
        }
        return used;
    }

    private static boolean identifierPart(char c) {
        return c == '_' || Character.isLetterOrDigit(c);
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
