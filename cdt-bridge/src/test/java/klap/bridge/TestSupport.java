package klap.bridge;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import klap.model.CudaUnit;
import klap.model.Expr;
import klap.model.FunctionDef;
import klap.model.SourceRange;
import klap.model.Stmt;

/** Helpers shared by the front-end tests: parsing a string and walking the model. */
final class TestSupport {
    private TestSupport() {
    }

    /** Parses {@code text} as {@code /virtual/test.cu} with no include directories. */
    static CudaUnit parse(String text) {
        return CudaParser.parse(Path.of("/virtual/test.cu"), text, List.of());
    }

    /** @return the text of {@code r} in the unit's main file */
    static String slice(CudaUnit u, SourceRange r) {
        return u.file().slice(r);
    }

    /** @return the function named {@code name} (first one) */
    static FunctionDef fn(CudaUnit u, String name) {
        return u.functions().stream().filter(f -> f.name().equals(name)).findFirst()
            .orElseThrow(() -> new AssertionError("no function " + name + " in " + u.functions()));
    }

    /** @return every expression in the statement tree, pre-order */
    static List<Expr> exprs(Stmt s) {
        List<Expr> out = new ArrayList<>();
        walk(s, out);
        return out;
    }

    private static void walk(Stmt s, List<Expr> out) {
        if (s instanceof Stmt.ExprStmt es) {
            add(es.expr(), out);
        } else if (s instanceof Stmt.If is) {
            add(is.cond(), out);
        } else if (s instanceof Stmt.Loop l) {
            add(l.cond(), out);
            add(l.step(), out);
        } else if (s instanceof Stmt.Switch sw) {
            add(sw.cond(), out);
        } else if (s instanceof Stmt.Jump j) {
            add(j.value(), out);
        } else if (s instanceof Stmt.Decl d) {
            d.vars().forEach(v -> add(v.init(), out));
        } else if (s instanceof Stmt.Other o) {
            o.exprs().forEach(e -> add(e, out));
        }
        for (Stmt c : s.children()) {
            walk(c, out);
        }
    }

    private static void add(Expr e, List<Expr> out) {
        if (e == null) {
            return;
        }
        out.add(e);
        for (Expr c : e.children()) {
            add(c, out);
        }
    }

    /** @return the launches in the function's body, in source order */
    static List<Expr.Launch> launches(FunctionDef f) {
        return exprs(f.body()).stream().filter(e -> e instanceof Expr.Launch).map(e -> (Expr.Launch) e).toList();
    }

    /** @return the first name expression spelled {@code name} in the function's body */
    static Expr.Name nameIn(FunctionDef f, String name) {
        return exprs(f.body()).stream().filter(e -> e instanceof Expr.Name n && n.name().equals(name))
            .map(e -> (Expr.Name) e).findFirst().orElseThrow(() -> new AssertionError("no name " + name));
    }
}
