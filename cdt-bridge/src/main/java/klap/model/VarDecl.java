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
 */
public record VarDecl(String name, SourceRange nameRange, Expr init, boolean shared, boolean isStatic,
                      boolean array, boolean reference) {
}
