package klap.model;

import java.util.List;

/**
 * A statement of the CUDA model, with the exact source range of the whole statement (for
 * compound statements, from the opening to the closing brace inclusive; for expression and
 * declaration statements, the terminating semicolon included).
 */
public sealed interface Stmt {
    SourceRange range();

    /** @return the directly nested statements, in source order */
    List<Stmt> children();

    /** {@code { ... }}. */
    record Block(SourceRange range, List<Stmt> stmts) implements Stmt {
        public List<Stmt> children() {
            return stmts;
        }
    }

    /**
     * {@code if (init; cond) then else otherwise}; {@code otherwise} may be null. {@code init} is null,
     * or what runs before the condition and declares what it names: the C++17 init-statement, or
     * the declaration of a condition {@code if (T x = e)} (then {@code cond} is the name {@code x}),
     * or a {@link Block} of both, whose range is not a braced block's.
     */
    record If(SourceRange range, Expr cond, Stmt then, Stmt otherwise, Stmt init) implements Stmt {
        /** An {@code if} without an init-statement or condition declaration. */
        public If(SourceRange range, Expr cond, Stmt then, Stmt otherwise) {
            this(range, cond, then, otherwise, null);
        }

        public List<Stmt> children() {
            List<Stmt> c = new java.util.ArrayList<>(3);
            if (init != null) {
                c.add(init);
            }
            c.add(then);
            if (otherwise != null) {
                c.add(otherwise);
            }
            return c;
        }
    }

    /** Loop kinds. */
    enum LoopKind { FOR, WHILE, DO, RANGE_FOR }

    /**
     * A loop. For {@code for}: {@code init} (a statement, may be null), {@code cond} (may be null),
     * {@code step} (may be null). For {@code while}/{@code do}: only {@code cond}. For a range-for,
     * {@code init} is the loop variable's declaration and {@code cond} the range expression.
     */
    record Loop(SourceRange range, LoopKind kind, Stmt init, Expr cond, Expr step, Stmt body) implements Stmt {
        public List<Stmt> children() {
            return init == null ? List.of(body) : List.of(init, body);
        }
    }

    /** {@code switch (init; cond) body}; {@code init} as for {@link If}, may be null. */
    record Switch(SourceRange range, Expr cond, Stmt body, Stmt init) implements Stmt {
        /** A {@code switch} without an init-statement or controller declaration. */
        public Switch(SourceRange range, Expr cond, Stmt body) {
            this(range, cond, body, null);
        }

        public List<Stmt> children() {
            return init == null ? List.of(body) : List.of(init, body);
        }
    }

    /** Jump kinds. */
    enum JumpKind { RETURN, BREAK, CONTINUE, GOTO }

    /** {@code return [value];}, {@code break;}, {@code continue;}, {@code goto label;}. */
    record Jump(SourceRange range, JumpKind kind, Expr value) implements Stmt {
        public List<Stmt> children() {
            return List.of();
        }
    }

    /** {@code case x:} / {@code default:} / {@code label:} markers, and the statement they label if any. */
    record Label(SourceRange range, Stmt inner) implements Stmt {
        public List<Stmt> children() {
            return inner == null ? List.of() : List.of(inner);
        }
    }

    /** A declaration statement declaring one or more variables. */
    record Decl(SourceRange range, List<VarDecl> vars) implements Stmt {
        public List<Stmt> children() {
            return List.of();
        }
    }

    /** An expression statement {@code expr;}. */
    record ExprStmt(SourceRange range, Expr expr) implements Stmt {
        public List<Stmt> children() {
            return List.of();
        }
    }

    /**
     * Anything else (asm, try, empty statement, nested declarations of types...).
     *
     * @param asm for an {@code asm} statement, its operand text as the compiler sees it (after macro
     *            expansion: the template string, the output and input operands, the clobbers); null
     *            for any other statement
     */
    record Other(SourceRange range, List<Expr> exprs, String asm) implements Stmt {

        /** A statement that is not {@code asm}. */
        public Other(SourceRange range, List<Expr> exprs) {
            this(range, exprs, null);
        }

        public List<Stmt> children() {
            return List.of();
        }

        /**
         * The assembly of an {@code asm} statement, for every check of what it does (a barrier, a
         * special register, a write): read it here, not from the statement's text, which may be a
         * macro's name ({@code BARRIER();}, 2026-11-28: a barrier and a {@code %tid} read were missed).
         *
         * @param ownText the statement's source text (its {@link #range()})
         * @return {@link #asm()} (after macro expansion) where the parser gave it; else {@code ownText}
         *         if it starts with {@code asm} or {@code __asm}; else null (not an {@code asm} statement)
         */
        public String asmText(String ownText) {
            if (asm != null) {
                return asm;
            }
            String head = ownText.stripLeading();
            return head.startsWith("asm") || head.startsWith("__asm") ? ownText : null;
        }
    }
}
