package klap.transform;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import klap.model.Expr;
import klap.model.Stmt;
import klap.model.VarDecl;

/**
 * Navigation over the model's statement and expression trees: parents, paths, the expressions a
 * statement evaluates itself (not those of nested statements), and walks.
 */
public final class Trees {
    private final Stmt root;
    private final Map<Stmt, Stmt> parent = new IdentityHashMap<>();
    private final Map<Expr, Stmt> exprOwner = new IdentityHashMap<>();

    /** Indexes the tree below {@code root} (a function body). */
    public Trees(Stmt root) {
        this.root = root;
        index(root);
    }

    private void index(Stmt s) {
        for (Expr e : ownExprs(s)) {
            walk(e, x -> exprOwner.put(x, s));
        }
        for (Stmt c : s.children()) {
            parent.put(c, s);
            index(c);
        }
    }

    /** @return the root statement */
    public Stmt root() {
        return root;
    }

    /** @return the parent of {@code s}, or null for the root */
    public Stmt parent(Stmt s) {
        return parent.get(s);
    }

    /** @return the statement that evaluates {@code e} (the innermost one), or null */
    public Stmt owner(Expr e) {
        return exprOwner.get(e);
    }

    /** @return the statements from the root down to {@code s}, both included */
    public List<Stmt> path(Stmt s) {
        List<Stmt> p = new ArrayList<>();
        for (Stmt x = s; x != null; x = parent.get(x)) {
            p.add(0, x);
        }
        return p;
    }

    /** @return true if {@code anc} is {@code s} or one of its ancestors */
    public boolean isAncestorOrSelf(Stmt anc, Stmt s) {
        for (Stmt x = s; x != null; x = parent.get(x)) {
            if (x == anc) {
                return true;
            }
        }
        return false;
    }

    /** @return the expressions evaluated by {@code s} itself, not by nested statements */
    public static List<Expr> ownExprs(Stmt s) {
        List<Expr> l = new ArrayList<>();
        if (s instanceof Stmt.If i) {
            add(l, i.cond());
        } else if (s instanceof Stmt.Loop lp) {
            add(l, lp.cond());
            add(l, lp.step());
        } else if (s instanceof Stmt.Switch sw) {
            add(l, sw.cond());
        } else if (s instanceof Stmt.Jump j) {
            add(l, j.value());
        } else if (s instanceof Stmt.Decl d) {
            for (VarDecl v : d.vars()) {
                add(l, v.init());
            }
        } else if (s instanceof Stmt.ExprStmt es) {
            add(l, es.expr());
        } else if (s instanceof Stmt.Other o) {
            for (Expr e : o.exprs()) {
                add(l, e);
            }
        }
        return l;
    }

    private static void add(List<Expr> l, Expr e) {
        if (e != null) {
            l.add(e);
        }
    }

    /** Visits {@code e} and all its sub-expressions, pre-order. */
    public static void walk(Expr e, Consumer<Expr> f) {
        if (e == null) {
            return;
        }
        f.accept(e);
        for (Expr c : e.children()) {
            walk(c, f);
        }
    }

    /** Visits {@code s} and all nested statements, pre-order. */
    public static void walkStmts(Stmt s, Consumer<Stmt> f) {
        f.accept(s);
        for (Stmt c : s.children()) {
            walkStmts(c, f);
        }
    }

    /** Visits every expression (and sub-expression) evaluated anywhere in {@code s}. */
    public static void walkExprs(Stmt s, Consumer<Expr> f) {
        walkStmts(s, x -> {
            for (Expr e : ownExprs(x)) {
                walk(e, f);
            }
        });
    }

    /** {@link #walkExprs}, also into the bodies of the lambdas it meets (each lambda is visited before its body). */
    public static void walkExprsAndLambdas(Stmt s, Consumer<Expr> f) {
        walkExprs(s, e -> {
            f.accept(e);
            if (e instanceof Expr.Lambda lam) {
                walkExprsAndLambdas(lam.body(), f);
            }
        });
    }

    /**
     * @return the locals of {@code s} initialized with a lambda ({@code auto f = [&](int x) { ... };}),
     *         by name, each with its lambdas (one name may be declared in several scopes): calling
     *         such a local runs a body klap sees
     */
    public static java.util.Map<String, List<Expr.Lambda>> lambdaLocals(Stmt s) {
        java.util.Map<String, List<Expr.Lambda>> out = new java.util.HashMap<>();
        walkStmts(s, st -> {
            if (st instanceof Stmt.Decl d) {
                d.vars().stream().filter(v -> v.init() instanceof Expr.Lambda).forEach(v -> out
                        .computeIfAbsent(v.name(), k -> new java.util.ArrayList<>()).add((Expr.Lambda) v.init()));
            }
        });
        return out;
    }

    /** @return every statement below {@code s} (included) that is an instance of {@code type} */
    public static <T extends Stmt> List<T> collect(Stmt s, Class<T> type) {
        List<T> l = new ArrayList<>();
        walkStmts(s, x -> {
            if (type.isInstance(x)) {
                l.add(type.cast(x));
            }
        });
        return l;
    }

    /** @return the nearest enclosing loop of {@code s} (excluding {@code s}), or null */
    public Stmt.Loop enclosingLoop(Stmt s) {
        for (Stmt x = parent.get(s); x != null; x = parent.get(x)) {
            if (x instanceof Stmt.Loop l) {
                return l;
            }
        }
        return null;
    }

    /** @return the outermost loop around {@code s} (excluding {@code s}), or null */
    public Stmt.Loop outermostLoop(Stmt s) {
        Stmt.Loop outer = null;
        for (Stmt.Loop l = enclosingLoop(s); l != null; l = enclosingLoop(l)) {
            outer = l;
        }
        return outer;
    }

    /**
     * @return the outermost statement around {@code s} whose body a thread may run several times:
     *         the function body when a backward {@code goto} may jump over {@code s} (a label before
     *         {@code s}, a {@code goto} after it: a loop written with {@code goto}, which has no
     *         {@link Stmt.Loop}), else {@link #outermostLoop}; null if neither
     */
    public Stmt outermostLoopOrGotoLoop(Stmt s) {
        int at = s.range().offset();
        for (Stmt.Jump g : collect(root, Stmt.Jump.class)) {
            if (g.kind() != Stmt.JumpKind.GOTO || g.range().end() <= at) {
                continue;
            }
            for (Stmt.Label l : collect(root, Stmt.Label.class)) {
                if (l.range().offset() <= at) {
                    return root;
                }
            }
        }
        return outermostLoop(s);
    }

    /**
     * @return the statement a {@code break} or {@code continue} leaves: the nearest enclosing loop
     *         (or, for break, switch), or null if none
     */
    public Stmt jumpTarget(Stmt.Jump j) {
        for (Stmt x = parent.get(j); x != null; x = parent.get(x)) {
            if (x instanceof Stmt.Loop) {
                return x;
            }
            if (x instanceof Stmt.Switch && j.kind() == Stmt.JumpKind.BREAK) {
                return x;
            }
        }
        return null;
    }
}
