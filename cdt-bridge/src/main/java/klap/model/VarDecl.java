package klap.model;

/**
 * One declared variable of a {@link Stmt.Decl}.
 *
 * @param name      the variable's name
 * @param nameRange the range of the name in its declarator
 * @param init      the initializer expression ({@code = e}, {@code (e)} or {@code {e}}; for a
 *                  brace list, an {@link Expr.Other} holding the elements), or null
 * @param shared    declared {@code __shared__}
 * @param isStatic  declared {@code static}
 * @param array     declared with an array declarator
 * @param reference declared as a reference ({@code T& x = ...})
 * @param sharedBytes for a {@code __shared__} variable of complete type, its size in bytes as the
 *                  front end computes {@code sizeof} (array extents evaluated, LP64 sizes); 0 for
 *                  a variable that is not {@code __shared__} and for {@code extern __shared__}
 *                  (dynamic shared memory); -1 when the size is not known (a template-dependent
 *                  type or extent, an unresolved type)
 * @param constructed the variable's class type has a user-provided constructor or a default member
 *                  initializer defined in the unit: its construction runs code that may read the
 *                  indices ({@code GlobalId id;}, {@code Slice s(n);}, {@code auto s = Slice(n);};
 *                  review 2026-11-27), whatever its initializer shows
 */
public record VarDecl(String name, SourceRange nameRange, Expr init, boolean shared, boolean isStatic,
                      boolean array, boolean reference, long sharedBytes, boolean constructed) {

    /** A declaration whose construction runs no user code (or that klap does not know of). */
    public VarDecl(String name, SourceRange nameRange, Expr init, boolean shared, boolean isStatic,
                   boolean array, boolean reference, long sharedBytes) {
        this(name, nameRange, init, shared, isStatic, array, reference, sharedBytes, false);
    }

    /** A declaration whose shared-memory size is 0 (not {@code __shared__}) or unknown (-1) for a shared one. */
    public VarDecl(String name, SourceRange nameRange, Expr init, boolean shared, boolean isStatic,
                   boolean array, boolean reference) {
        this(name, nameRange, init, shared, isStatic, array, reference, shared ? -1 : 0);
    }
}
