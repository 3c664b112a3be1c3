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
import klap.transform.TemplateParams;

/**
 * Emits one CUDA-NP variant of a planned kernel (CUDA-NP sections 3.1-3.5, preprocessor 1 of
 * 3.7). Input: a kernel
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
 *     { klap_np_g.sync(); const auto klap_np_r_s = s; s = Plus::identity();
 *       const int klap_np_lo = (lo); const unsigned long long klap_np_n = klap::np::trips(klap_np_lo, (hi), false);
 *       for (unsigned long long klap_np_k = slave; klap_np_k &lt; klap_np_n; klap_np_k += S) {
 *           int i = klap::np::nth(klap_np_lo, klap_np_k); { s += f(i); } }
 *       s = Plus{}(klap_np_r_s, klap_np_g.reduce&lt;Plus&gt;(s)); klap_np_g.sync(); }
 *     seq2(s);
 *     { klap_np_g.sync(); if (klap_np_g.slave == 0) { y[t] = s; } klap_np_g.sync(); } }   // master only
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
 * ({@code klap::np::launch_memory}), element e of master m at {@code e * M + m} (section 3.3). Both
 * layouts put a group barrier before and after each loop ({@code __syncwarp(mask)} intra-warp,
 * {@code __syncthreads()} inter-warp); the inter-warp variant runs its collectives in shared memory,
 * and its scan loops run their rounds while any thread of the block has an iteration
 * ({@code __syncthreads_or}).
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
        return sharedArrays().isEmpty() ? "(size_t)0" : name() + "_arrays(" + m + ")";
    }

    /**
     * @return the file-scope function {@code K_klap_npX_arrays(m)}: the bytes of one block's local
     *         arrays out of registers, so that the host launch computes them with the kernel's names
     *         (a host local could shadow an array size such as {@code N}), or "" if there are none
     */
    String arraysHelper() {
        if (sharedArrays().isEmpty()) {
            return "";
        }
        return "\nstatic __host__ __device__ constexpr size_t " + name() + "_arrays(size_t klap_np_m) { return "
                + arrayExpr("klap_np_m") + "; }\n";
    }

    private String arrayExpr(String m) {
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

    /** The parameters a variant takes after the kernel's: the block shape, dynamic shared bytes, global memory. */
    static final String EXTRA_PARAMS = "dim3 klap_np_bd, unsigned klap_np_dyn, unsigned char *klap_np_gmem";

    /**
     * @param definition for the variant's definition (else its prototype)
     * @return the variant's header (template header, attributes, name, parameters) without body
     */
    String header(boolean definition) {
        FunctionDef k = plan.kernel();
        int base = k.range().offset();
        String h = src.text().substring(base, k.body().range().offset());
        String template = "";
        if (!definition && k.templateHeader() != null && k.templateHeader().offset() >= base) {
            // the variant's prototype, after the kernel's first declaration, has that declaration's
            // default template arguments (TemplateParams.declarationHeader); its definition has the
            // kernel definition's header as written, with the defaults the definition adds, as C++
            // merges them ([temp.param]/10; a default is never given twice, [temp.param]/12)
            template = TemplateParams.declarationHeader(k, src.text(), false).stripTrailing();
            int cut = k.templateHeader().end() - base;
            h = h.substring(cut);
            base += cut;
        }
        int nameAt = k.nameRange().offset() - base;
        int paramsEnd = k.paramsRange().end() - base;
        String params = src.slice(k.paramsRange()).strip();
        String extra = EXTRA_PARAMS;
        String newParams = params.isEmpty() || params.equals("void") ? extra : null;
        StringBuilder sb = new StringBuilder(template);
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
        int[] at = launchBoundsAt(h);
        if (at == null) {
            return h;
        }
        return h.substring(0, at[0]) + "__launch_bounds__((" + h.substring(at[1], at[2]).strip() + ") * " + slaves + ")"
                + h.substring(at[3]);
    }

    /**
     * @return where {@code __launch_bounds__(N[, min[, max]])} is in {@code header}: its start, the
     *         first argument's start and end (parentheses inside it balanced: {@code ((128), 4)}),
     *         and the end after the closing parenthesis; null if there is none
     */
    static int[] launchBoundsAt(String header) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("__launch_bounds__\\s*\\(").matcher(header);
        if (!m.find()) {
            return null;
        }
        int depth = 1;
        int argEnd = -1;
        for (int i = m.end(); i < header.length(); i++) {
            char c = header.charAt(i);
            if (c == '(') {
                depth++;
            } else if (c == ')' && --depth == 0) {
                return new int[] {m.start(), m.end(), argEnd < 0 ? i : argEnd, i + 1};
            } else if (c == ',' && depth == 1 && argEnd < 0) {
                argEnd = i;
            }
        }
        return null;
    }

    /** @return the whole kernel definition, preceded and followed by {@code #line} directives */
    String emit() {
        FunctionDef k = plan.kernel();
        StringBuilder sb = new StringBuilder();
        sb.append("\n/* klap --np: ").append(inter ? "inter-warp" : "intra-warp").append(" CUDA-NP variant of ")
                .append(k.name()).append(", ").append(slaves).append(" threads per group (CUDA-NP, PPoPP 2014) */\n");
        sb.append(arraysHelper());
        sb.append(src.lineDirective(k.range().offset()));
        sb.append(header(true)).append("\n{\n");
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
                    + "* (blockIdx.y + (size_t)gridDim.y * blockIdx.z)) * ").append(arrayBytes("klap_np_m"))
                    .append(" : klap_np_smem + klap::np::align16((size_t)klap_np_dyn + ").append(scratchBytes("klap_np_m"))
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
            // a group barrier before (the members' earlier loads happen before the side effect) and
            // after (intra-warp; inter-warp first() ends with a block barrier)
            if (b.stmt() instanceof Stmt.ExprStmt) {
                ed.insert(b.stmt().range().offset(), "{ klap_np_g.sync(); ");
                ed.insert(b.stmt().range().end(), inter ? " }" : " klap_np_g.sync(); }");
            } else {
                ed.insert(b.stmt().range().offset(), "klap_np_g.sync(); ");
                if (!inter) {
                    ed.insert(b.stmt().range().end(), " klap_np_g.sync();");
                }
            }
        }
        for (Stmt s : plan.masterOnly()) {
            // intra-warp: the group's earlier loads happen before the store, its later loads after
            ed.insert(s.range().offset(), inter ? "{ if (klap_np_g.slave == 0) { " : "{ klap_np_g.sync(); if (klap_np_g.slave == 0) { ");
            ed.insert(s.range().end(), " }" + (inter ? "" : " klap_np_g.sync();") + " }");
        }
        arrays(ed);
        return ed.render(k.body().range().offset(), k.body().range().end());
    }

    private String g(String what) {
        return "klap_np_g." + what;
    }

    /** Replaces a pragma (from its '#') with a comment. */
    private void comment(EditSet ed, klap.model.Pragma p) {
        int hash = src.text().lastIndexOf('#', p.range().offset());
        int from = hash >= 0 && src.text().substring(hash, p.range().offset()).isBlank() ? hash
                : src.text().lastIndexOf('#', p.range().offset() + 1);
        ed.replace(Math.min(from, p.range().offset()), p.range().end(),
                "/* klap --np: #pragma " + p.text().strip().replace("*/", "* /") + " */");
    }

    private void loop(EditSet ed, NpLoop l) {
        Stmt.Loop lp = l.loop();
        comment(ed, l.pragma());
        // a #pragma unroll before the loop moves onto the distributed loop (else it would precede
        // klap's '{' and nvcc would drop it)
        String unroll = "";
        if (l.unroll() != null) {
            comment(ed, l.unroll());
            unroll = "_Pragma(\"" + l.unroll().text().strip().replace("\\", "\\\\").replace("\"", "\\\"") + "\") ";
        }
        // a group barrier before the loop orders the members' earlier loads before its stores
        StringBuilder pre = new StringBuilder("{ " + g("sync();") + " ");
        StringBuilder post = new StringBuilder();
        for (Map.Entry<String, NpPragma.Op> r : l.reductions().entrySet()) {
            String v = r.getKey();
            NpPragma.Op op = r.getValue();
            if (op == NpPragma.Op.MIN || op == NpPragma.Op.MAX) {
                // idempotent: every member starts from the value before the loop, whatever the
                // operand types of the user's min/max
                post.append(v).append(" = ").append(g("template reduce<klap::np::")).append(op.functor).append(">(")
                        .append(v).append("); ");
                continue;
            }
            pre.append("const auto klap_np_r_").append(v).append(" = ").append(v).append("; ").append(v).append(" = ")
                    .append(identity(op, v)).append("; ");
            if (op == NpPragma.Op.LAND || op == NpPragma.Op.LOR) {
                // v0 && identity is 0 or 1, not v0: a loop without iterations keeps a non-bool v0 (2 stays 2).
                // The collective runs in every member; only the choice depends on the trip count.
                post.append("{ const auto klap_np_t_").append(v).append(" = ").append(g("template reduce<klap::np::"))
                        .append(op.functor).append(">(").append(v).append("); ").append(v).append(" = klap_np_n == 0 ? ")
                        .append("klap_np_r_").append(v).append(" : ").append(op.cpp()).append("(klap_np_r_").append(v)
                        .append(", klap_np_t_").append(v).append("); } ");
                continue;
            }
            post.append(v).append(" = ").append(op.cpp()).append("(klap_np_r_").append(v).append(", ")
                    .append(g("template reduce<klap::np::")).append(op.functor).append(">(").append(v)
                    .append(")); ");
        }
        // the bounds are evaluated once, as a trip count (no overflow of the loop variable)
        Stmt.Decl init = (Stmt.Decl) lp.init();
        String type = src.slice(SourceRange.of(init.range().offset(), init.vars().get(0).nameRange().offset())).strip();
        String hi = src.slice(l.hi().range());
        String lo = src.slice(l.lo().range());
        NpPlanner.ScanPlan sc = l.scan();
        if (sc != null) {
            pre.append("decltype(").append(sc.var()).append(") klap_np_carry_").append(sc.var()).append(" = ")
                    .append(sc.var()).append("; ");
        }
        pre.append("const ").append(type).append(" klap_np_lo = (").append(lo).append("); const unsigned long long klap_np_n = "
                + "klap::np::trips(klap_np_lo, (").append(hi).append("), ").append(l.cmp().equals("<=")).append("); ");
        ed.insert(lp.range().offset(), pre.toString());
        String nth = "klap::np::nth(klap_np_lo, klap_np_k)";
        if (sc == null) {
            ed.replace(lp.range().offset(), lp.body().range().offset(), unroll + "for (unsigned long long klap_np_k = "
                    + g("slave") + "; klap_np_k < klap_np_n; klap_np_k += " + slaves + ") ");
            // not const: decltype(i) in the body must be the loop variable's own type (review 2026-12-01)
            ed.insert(lp.body().range().offset(), "{ " + type + " " + l.var() + " = " + nth + "; ");
            ed.insert(lp.body().range().end(), " }");
            ed.insert(lp.range().end(), " " + post + g("sync();") + " }");
            return;
        }
        String v = sc.var();
        String op = sc.op().cpp();
        String carry = "klap_np_carry_" + v;
        String round = "klap_np_base < klap_np_n";
        ed.replace(lp.range().offset(), lp.body().range().offset(), unroll + "for (unsigned long long klap_np_base = 0; "
                + (inter ? "__syncthreads_or(" + round + ")" : round) + "; klap_np_base += " + slaves + ") ");
        Stmt.Block body = l.body();
        ed.insert(body.range().offset() + 1, " const unsigned long long klap_np_k = klap_np_base + " + g("slave")
                + "; const bool klap_np_act = klap_np_k < klap_np_n; " + type + " " + l.var() + " = klap_np_act ? "
                + nth + " : klap_np_lo;");
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
                    + (negate ? "-" : "") + "static_cast<" + t + ">((");
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

    /** @return the name of the never-defined function that deduces this template variant's arguments ({@link #deduction}) */
    String deduceName() {
        return name() + "_deduce";
    }

    /**
     * For a host launch of a template kernel that leaves its template arguments to deduction
     * ({@code k<<<g, b>>>(a, o, n)}): C++ deduces them for a never-defined function template with the
     * kernel's template header (and the defaults of its first declaration: {@link
     * TemplateParams#declarationHeader}) and parameters, whose return type names the variant's
     * instantiation for them. Placed where the variant's first declaration is.
     * <pre>
     * template &lt;typename T, int B&gt; struct k_klap_npi_ref { static constexpr auto kernel = &amp;k_klap_npi&lt;T, B&gt;; };
     * template &lt;typename T, int B = 64&gt; k_klap_npi_ref&lt;T, B&gt; *k_klap_npi_deduce(const T *a, T *out, int n);
     * </pre>
     * The launch takes {@code cuda::std::remove_pointer_t<decltype(k_klap_npi_deduce(a, o, n))>::kernel}
     * (an unevaluated operand: the arguments are evaluated once, by the launch itself). With a
     * {@code condition} on the template parameters (the types klap checked the variant with), the
     * reference is a null pointer where it does not hold, and the launch runs the original kernel:
     * <pre>
     * template &lt;bool klap_np_checked, typename T, int B&gt; struct k_klap_npi_ref { static constexpr void (*kernel)(const T *a, T *out, int n, dim3 klap_np_bd, unsigned klap_np_dyn, unsigned char *klap_np_gmem) = nullptr; };
     * template &lt;typename T, int B&gt; struct k_klap_npi_ref&lt;true, T, B&gt; { static constexpr auto kernel = &amp;k_klap_npi&lt;T, B&gt;; };
     * template &lt;typename T, int B = 64&gt; k_klap_npi_ref&lt;(::cuda::std::is_same&lt;T, float&gt;::value), T, B&gt; *k_klap_npi_deduce(const T *a, T *out, int n);
     * </pre>
     *
     * @param condition null, or a constant expression on the template parameters
     * @return the declarations, or "" for a kernel that is not a template
     */
    String deduction(String condition) {
        FunctionDef k = plan.kernel();
        if (k.templateHeader() == null) {
            return "";
        }
        String first = TemplateParams.declarationHeader(k, src.text(), false).stripTrailing();
        String bare = TemplateParams.withoutDefaults(first);
        String args = TemplateParams.argumentList(first);
        String params = src.slice(k.paramsRange()).replaceAll("\\b__grid_constant__\\b", "");
        if (condition == null) {
            return "\n" + bare + " struct " + name() + "_ref { static constexpr auto kernel = &" + name() + args + "; };\n"
                    + first + " " + name() + "_ref" + args + " *" + deduceName() + "(" + params + ");\n";
        }
        // the condition comes first (a parameter pack of the kernel's must stay last); the null pointer's
        // type is spelled out: naming the variant's instantiation for a type klap did not check, even in
        // decltype, makes nvcc want its definition (warning 20280-D without -rdc)
        String all = params.strip().isEmpty() || params.strip().equals("void") ? EXTRA_PARAMS : params + ", " + EXTRA_PARAMS;
        String withBool = "template <bool klap_np_checked, " + bare.substring(bare.indexOf('<') + 1);
        String inner = args.substring(1, args.length() - 1);
        return "\n" + withBool + " struct " + name() + "_ref { static constexpr void (*kernel)(" + all + ") = nullptr; };\n"
                + bare + " struct " + name() + "_ref<true, " + inner + "> { static constexpr auto kernel = &" + name() + args
                + "; };\n" + first + " " + name() + "_ref<(" + condition + "), " + inner + "> *" + deduceName() + "(" + params
                + ");\n";
    }

    /** @return the prototype of the generated kernel, for a kernel declared before its definition */
    String prototype() {
        String helper = sharedArrays().isEmpty() ? ""
                : "\nstatic __host__ __device__ constexpr size_t " + name() + "_arrays(size_t klap_np_m);";
        return helper + "\n" + header(false) + ";\n";
    }
}
