package klap.np;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import klap.model.Expr;
import klap.model.FunctionDef;
import klap.model.SourceFile;
import klap.model.SourceRange;
import klap.model.Stmt;
import klap.model.VarDecl;
import klap.np.NpPlanner.ArrayPlan;
import klap.np.NpPlanner.NpLoop;
import klap.np.NpPlanner.NpPlan;
import klap.np.NpPlanner.Place;
import klap.np.NpPlanner.Var;
import klap.transform.EditSet;

/**
 * Emits one CUDA-NP variant of a planned kernel (CUDA-NP sections 3.1-3.5, preprocessor 1 of 3.7). Input: a kernel
 * {@code K} with {@code #pragma np parallel for} loops and its {@link NpPlan}. Output: a kernel
 * {@code K_klap_npX} (X = i for intra-warp, w for inter-warp) launched with
 * {@code M * S} threads in one dimension (M = the original block's threads) and three more
 * parameters: the original block shape, the offset of klap's dynamic shared memory, and the
 * global memory of the local arrays when they do not fit in shared memory (else null):
 * <pre>
 * __global__ void K(A a)  { seq1; #pragma np parallel for reduction(+:s)
 *                           for (int i = lo; i &lt; hi; i++) { s += f(i); }  seq2(s); y[t] = s; }
 * becomes
 * __global__ void K_klap_npi(A a, dim3 klap_np_bd, unsigned klap_np_dyn, unsigned char *klap_np_gmem) {
 *   const klap::np::IntraWarp&lt;S&gt; klap_np_g;                      // master = tid / S, slave = tid % S
 *   const uint3 threadIdx = (master's index in klap_np_bd);  const dim3 blockDim = klap_np_bd;
 *   { seq1;                                                      // every member, redundantly
 *     { const auto klap_np_r_s = s; s = Plus::identity();
 *       for (int i = (lo) + slave; i &lt; hi; i += S) { s += f(i); }
 *       s = Plus{}(klap_np_r_s, klap_np_g.reduce&lt;Plus&gt;(s)); klap_np_g.sync(); }
 *     seq2(s);
 *     { if (klap_np_g.slave == 0) { y[t] = s; } klap_np_g.sync(); } }     // master only
 * }
 * </pre>
 * A sequential value with a side effect ({@code int slot = atomicAdd(c, 1);}) is computed by the
 * master and broadcast (CUDA-NP section 3.1, read_from_master):
 * {@code int slot = klap_np_g.first(klap_np_g.slave == 0 ? (atomicAdd(c, 1)) : decltype(slot){});}
 * ({@code __shfl_sync} intra-warp, shared memory and a block barrier inter-warp).
 * Scan loops run in rounds of S iterations (section 3.2): iteration {@code base + slave} computes
 * its contribution, {@code klap_np_g.scan} gives each member its inclusive prefix, the statements
 * after the update see the prefix, and the round's total carries over. Local arrays: REGISTERS
 * become {@code a[(D + S - 1) / S]} indexed {@code (i - lo) / S}; SHARED become a slice of dynamic
 * shared memory, or of global memory when the host finds that shared memory exceeds the budget
 * ({@code klap::np::launch_memory}), element e of master m at {@code e * M + m} (section 3.3). The inter-warp variant
 * puts a block barrier before each loop and runs its collectives in shared memory; loops with a scan
 * run their rounds while any thread of the block has an iteration ({@code __syncthreads_or}).
 */
final class NpKernel {
    private final NpPlan plan;
    private final SourceFile src;
    private final boolean inter;
    private final int slaves;
    private final String suffix;

    /**
     * @param plan   the plan
     * @param src    the file
     * @param inter  true for the inter-warp layout
     * @param slaves S, the threads per group (a power of two up to 32 for intra-warp)
     */
    NpKernel(NpPlan plan, SourceFile src, boolean inter, int slaves) {
        this.plan = plan;
        this.src = src;
        this.inter = inter;
        this.slaves = slaves;
        this.suffix = inter ? "_klap_npw" : "_klap_npi";
    }

    /** @return the generated kernel's name */
    String name() {
        return plan.kernel().name() + suffix;
    }

    /** @return true if the kernel uses klap's dynamic shared memory (scratch or arrays) */
    private boolean usesSmem() {
        return (inter && plan.scratch()) || plan.arrays().values().stream().anyMatch(a -> a.place() == Place.SHARED);
    }

    /**
     * @param m C++ expression of the masters per block (M)
     * @return the bytes of the inter-warp collectives' shared memory, as a C++ expression in {@code m}
     */
    String scratchBytes(String m) {
        return inter && plan.scratch() ? "klap::np::InterWarp<" + slaves + ">::scratch_bytes(" + m + ")" : "(size_t)0";
    }

    /**
     * @param m C++ expression of the masters per block (M)
     * @return the bytes of one block's local arrays placed out of registers, as a C++ expression in {@code m}
     */
    String arrayBytes(String m) {
        List<String> parts = new ArrayList<>();
        for (ArrayPlan a : sharedArrays()) {
            parts.add("klap::np::align16(sizeof(" + a.elemType() + ") * (size_t)(" + a.dim() + ") * (" + m + "))");
        }
        return parts.isEmpty() ? "(size_t)0" : String.join(" + ", parts);
    }

    private List<ArrayPlan> sharedArrays() {
        return plan.arrays().values().stream().filter(a -> a.place() == Place.SHARED)
                .sorted(java.util.Comparator.comparingInt(a -> a.var().decl().nameRange().offset())).toList();
    }

    /** @return the kernel's header (template header, attributes, name, parameters) without body */
    String header() {
        FunctionDef k = plan.kernel();
        int base = k.range().offset();
        String h = src.text().substring(base, k.body().range().offset());
        int nameAt = k.nameRange().offset() - base;
        int paramsEnd = k.paramsRange().end() - base;
        String params = src.slice(k.paramsRange()).strip();
        String extra = "dim3 klap_np_bd, unsigned klap_np_dyn, unsigned char *klap_np_gmem";
        String newParams = params.isEmpty() || params.equals("void") ? extra : null;
        StringBuilder sb = new StringBuilder();
        sb.append(h, 0, nameAt).append(name()).append(h, k.nameRange().end() - base, k.paramsRange().offset() - base);
        if (newParams != null) {
            sb.append(newParams);
        } else {
            sb.append(h, k.paramsRange().offset() - base, paramsEnd).append(", ").append(extra);
        }
        sb.append(h.substring(paramsEnd));
        return launchBounds(sb.toString()).stripTrailing();
    }

    /** {@code __launch_bounds__(N[, min])} becomes {@code __launch_bounds__(N * S)} (the planner checked N * S <= 1024). */
    private String launchBounds(String h) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("__launch_bounds__\\s*\\(([^,()]+)(,[^()]*)?\\)").matcher(h);
        if (!m.find()) {
            return h;
        }
        return h.substring(0, m.start()) + "__launch_bounds__((" + m.group(1).strip() + ") * " + slaves + ")"
                + h.substring(m.end());
    }

    /** @return the whole kernel definition, preceded and followed by {@code #line} directives */
    String emit() {
        FunctionDef k = plan.kernel();
        StringBuilder sb = new StringBuilder();
        sb.append("\n/* klap --np: ").append(inter ? "inter-warp" : "intra-warp").append(" CUDA-NP variant of ")
                .append(k.name()).append(", ").append(slaves).append(" threads per group (CUDA-NP, PPoPP 2014) */\n");
        sb.append(src.lineDirective(k.range().offset()));
        sb.append(header()).append("\n{\n");
        sb.append("    const unsigned klap_np_m = klap_np_bd.x * klap_np_bd.y * klap_np_bd.z;\n");
        if (usesSmem()) {
            sb.append("    extern __shared__ __align__(16) unsigned char klap_np_smem[];\n");
        }
        if (inter) {
            sb.append("    const klap::np::InterWarp<").append(slaves).append("> klap_np_g(klap_np_m, ")
                    .append(plan.scratch() ? "klap_np_smem + klap_np_dyn" : "nullptr").append(");\n");
        } else {
            sb.append("    const klap::np::IntraWarp<").append(slaves).append("> klap_np_g;\n");
        }
        List<ArrayPlan> shared = sharedArrays();
        if (!shared.isEmpty()) {
            // shared memory after the user's and the scratch, or this block's slice of global memory
            sb.append("    unsigned char *const klap_np_a0 = klap_np_gmem ? klap_np_gmem + (size_t)(blockIdx.x + gridDim.x "
                    + "* (blockIdx.y + (size_t)gridDim.y * blockIdx.z)) * (").append(arrayBytes("klap_np_m"))
                    .append(") : klap_np_smem + klap::np::align16((size_t)klap_np_dyn + ").append(scratchBytes("klap_np_m"))
                    .append(");\n");
        }
        for (int i = 1; i < shared.size(); i++) {
            ArrayPlan a = shared.get(i - 1);
            sb.append("    unsigned char *const klap_np_a").append(i).append(" = klap_np_a").append(i - 1)
                    .append(" + klap::np::align16(sizeof(").append(a.elemType()).append(") * (size_t)(").append(a.dim())
                    .append(") * klap_np_m);\n");
        }
        sb.append("    (void)klap_np_gmem;\n");
        sb.append("    (void)klap_np_m;\n");
        sb.append("    const uint3 threadIdx = make_uint3(klap_np_g.master % klap_np_bd.x, "
                + "klap_np_g.master / klap_np_bd.x % klap_np_bd.y, klap_np_g.master / (klap_np_bd.x * klap_np_bd.y));\n");
        sb.append("    const dim3 blockDim = klap_np_bd;\n");
        sb.append("    (void)threadIdx; (void)blockDim;\n");
        sb.append(src.lineDirective(k.body().range().offset()));
        sb.append(body()).append("\n}\n");
        sb.append(src.lineDirective(k.range().end()));
        return sb.toString();
    }

    /** @return the transformed body text */
    String body() {
        FunctionDef k = plan.kernel();
        EditSet ed = new EditSet(src.text());
        for (NpLoop l : plan.loops()) {
            loop(ed, l);
        }
        for (NpPlanner.Broadcast b : plan.broadcasts()) {
            // the master evaluates the value (its side effect happens once), every member gets it
            ed.insert(b.value().range().offset(), g("first(klap_np_g.slave == 0 ? ("));
            ed.insert(b.value().range().end(), ") : decltype(" + b.var() + "){})");
            if (b.stmt() instanceof Stmt.ExprStmt) {
                ed.insert(b.stmt().range().offset(), "{ ");
                ed.insert(b.stmt().range().end(), inter ? " }" : " klap_np_g.sync(); }");
            } else if (!inter) {
                ed.insert(b.stmt().range().end(), " klap_np_g.sync();");
            }
        }
        for (Stmt s : plan.masterOnly()) {
            ed.insert(s.range().offset(), "{ if (klap_np_g.slave == 0) { ");
            ed.insert(s.range().end(), " }" + (inter ? "" : " klap_np_g.sync();") + " }");
        }
        arrays(ed);
        return ed.render(k.body().range().offset(), k.body().range().end());
    }

    private String g(String what) {
        return "klap_np_g." + what;
    }

    private void loop(EditSet ed, NpLoop l) {
        Stmt.Loop lp = l.loop();
        int hash = src.text().lastIndexOf('#', l.pragma().range().offset());
        int from = hash >= 0 && src.text().substring(hash, l.pragma().range().offset()).isBlank() ? hash
                : src.text().lastIndexOf('#', l.pragma().range().offset() + 1);
        ed.replace(Math.min(from, l.pragma().range().offset()), l.pragma().range().end(),
                "/* klap --np: #pragma " + l.pragma().text().strip().replace("*/", "* /") + " */");
        StringBuilder pre = new StringBuilder("{ ");
        StringBuilder post = new StringBuilder();
        if (inter) {
            pre.append(g("sync();")).append(' ');
        }
        for (Map.Entry<String, NpPragma.Op> r : l.reductions().entrySet()) {
            String v = r.getKey();
            pre.append("const auto klap_np_r_").append(v).append(" = ").append(v).append("; ").append(v).append(" = ")
                    .append(identity(r.getValue(), v)).append("; ");
            post.append(v).append(" = ").append(r.getValue().cpp()).append("(klap_np_r_").append(v).append(", ")
                    .append(g("template reduce<klap::np::")).append(r.getValue().functor).append(">(").append(v)
                    .append(")); ");
        }
        if (l.scan() == null) {
            ed.insert(lp.range().offset(), pre.toString());
            ed.insert(l.lo().range().offset(), "(");
            ed.insert(l.lo().range().end(), ") + (int)" + g("slave"));
            ed.replace(lp.step().range().offset(), lp.step().range().end(), l.var() + " += " + slaves);
            ed.insert(lp.range().end(), " " + post + g("sync();") + " }");
            return;
        }
        NpPlanner.ScanPlan sc = l.scan();
        String v = sc.var();
        String op = sc.op().cpp();
        String carry = "klap_np_carry_" + v;
        pre.append("decltype(").append(v).append(") ").append(carry).append(" = ").append(v).append("; ");
        ed.insert(lp.range().offset(), pre.toString());
        Stmt.Decl init = (Stmt.Decl) lp.init();
        String type = src.slice(SourceRange.of(init.range().offset(), init.vars().get(0).nameRange().offset())).strip();
        String hi = src.slice(l.hi().range());
        String lo = src.slice(l.lo().range());
        String round = "klap_np_base " + l.cmp() + " (" + hi + ")";
        ed.replace(lp.range().offset(), lp.body().range().offset(), "for (" + type + " klap_np_base = (" + lo + "); "
                + (inter ? "__syncthreads_or(" + round + ")" : round) + "; klap_np_base += " + slaves + ") ");
        Stmt.Block body = l.body();
        ed.insert(body.range().offset() + 1, " const " + type + " " + l.var() + " = klap_np_base + (" + type + ")"
                + g("slave") + "; const bool klap_np_act = " + l.var() + " " + l.cmp() + " (" + hi + ");");
        for (int i = 0; i < sc.index(); i++) {
            Stmt s = body.stmts().get(i);
            if (s instanceof Stmt.Decl d) {
                for (VarDecl x : d.vars()) {
                    if (x.init() != null) {
                        ed.insert(x.init().range().offset(), "klap_np_act ? (");
                        ed.insert(x.init().range().end(), ") : decltype(" + x.name() + "){}");
                    }
                }
            } else {
                ed.insert(s.range().offset(), "if (klap_np_act) { ");
                ed.insert(s.range().end(), " }");
            }
        }
        Stmt.ExprStmt up = sc.update();
        String t = "decltype(" + v + ")";
        String tail = t + " klap_np_t; " + v + " = " + op + "(" + carry + ", " + g("template scan<klap::np::")
                + sc.op().functor + ">(klap_np_c, klap_np_t)); if (klap_np_act) { ";
        boolean negate = negated(up.expr());
        if (sc.operand() == NpPlanner.ONE || sc.operand() == NpPlanner.MINUS_ONE) {
            ed.replace(up.range().offset(), up.range().end(), "const " + t + " klap_np_c = klap_np_act ? " + t + "("
                    + (sc.operand() == NpPlanner.ONE ? "1" : "-1") + ") : " + identity(sc.op(), v) + "; " + tail);
        } else {
            ed.replace(up.range().offset(), sc.operand().range().offset(), "const " + t + " klap_np_c = klap_np_act ? "
                    + "static_cast<" + t + ">(" + (negate ? "-(" : "("));
            ed.replace(sc.operand().range().end(), up.range().end(), ")) : " + identity(sc.op(), v) + "; " + tail);
        }
        ed.insert(body.range().end() - 1, " } " + carry + " = " + op + "(" + carry + ", klap_np_t); ");
        ed.insert(lp.range().end(), " " + v + " = " + carry + "; " + post + g("sync();") + " }");
    }

    /** @return true for {@code v -= e} and {@code v = v - e} (a sum of -e) */
    private static boolean negated(Expr e) {
        if (e instanceof Expr.Binary b && b.op().equals("-=")) {
            return true;
        }
        return e instanceof Expr.Binary b && b.op().equals("=") && b.rhs() instanceof Expr.Binary r && r.op().equals("-");
    }

    private static String identity(NpPragma.Op op, String v) {
        return "klap::np::" + op.functor + "::template identity<decltype(" + v + ")>()";
    }

    /** Array declarations and accesses (CUDA-NP section 3.3). */
    private void arrays(EditSet ed) {
        if (plan.arrays().isEmpty()) {
            return;
        }
        List<ArrayPlan> shared = sharedArrays();
        java.util.Set<Stmt.Decl> done = new java.util.HashSet<>();
        for (ArrayPlan a : plan.arrays().values()) {
            Stmt.Decl d = a.var().stmt();
            if (!done.add(d)) {
                continue;
            }
            StringBuilder sb = new StringBuilder();
            for (VarDecl x : d.vars()) {
                ArrayPlan p = plan.arrays().values().stream().filter(y -> y.var().decl() == x).findFirst().orElse(null);
                String declarator = src.text().substring(x.nameRange().offset(), declaratorEnd(d, x));
                String elem = src.slice(SourceRange.of(d.range().offset(), d.vars().get(0).nameRange().offset())).strip();
                if (p == null) {
                    sb.append(elem).append(' ').append(declarator).append("; ");
                } else if (p.place() == Place.REGISTERS) {
                    sb.append(elem).append(' ').append(x.name()).append("[((").append(p.dim()).append(") + ")
                            .append(slaves - 1).append(") / ").append(slaves).append("]; ");
                } else {
                    sb.append(elem).append(" *const ").append(x.name()).append(" = reinterpret_cast<").append(elem)
                            .append(" *>(klap_np_a").append(shared.indexOf(p)).append(") + ").append(g("master"))
                            .append("; ");
                }
            }
            ed.replace(d.range().offset(), d.range().end(), sb.toString().stripTrailing());
        }
        NpPlanner.walkKernelExprs(plan.kernel().body(), e -> {
            if (e instanceof Expr.Subscript s && s.array() instanceof Expr.Name n) {
                Var v = plan.scopes().resolve(n);
                ArrayPlan p = v == null ? null : plan.arrays().get(v);
                if (p == null) {
                    return;
                }
                if (p.place() == Place.REGISTERS) {
                    ed.insert(s.index().range().offset(), "((");
                    ed.insert(s.index().range().end(), ") - (" + p.lo() + ")) / " + slaves);
                } else {
                    ed.insert(s.index().range().offset(), "(");
                    ed.insert(s.index().range().end(), ") * klap_np_m");
                }
            }
        });
    }

    private int declaratorEnd(Stmt.Decl d, VarDecl v) {
        String t = src.text();
        int i = v.nameRange().end();
        int depth = 0;
        while (i < d.range().end()) {
            char c = t.charAt(i);
            if (c == '[' || c == '(' || c == '{') {
                depth++;
            } else if (c == ']' || c == ')' || c == '}') {
                depth--;
            } else if (depth == 0 && (c == ',' || c == ';')) {
                break;
            }
            i++;
        }
        return i;
    }

    /** @return the prototype of the generated kernel, for a kernel declared before its definition */
    String prototype() {
        return "\n" + header() + ";\n";
    }
}
