package klap.promotion;

import java.util.ArrayList;
import java.util.List;
import klap.model.Expr;
import klap.model.FunctionDef;
import klap.model.Param;
import klap.model.Pragma;
import klap.model.SourceFile;
import klap.transform.EditSet;

/**
 * Rewrites one promotable kernel (a {@link PromotionPlan}) into its promoted form, KLAP section III
 * on the device runtime {@code klap/promote.cuh}. Input (KLAP Fig. 5a / Fig. 7a):
 * <pre>
 * __global__ void K(const int* in, int t, long long before) {
 *   Pi;                                   // independent prologue (only with PO/PAO)
 *   #pragma klap overlap
 *   Pd;                                   // dependent prologue
 *   if (threadIdx.x == 0 &amp;&amp; cond) K&lt;&lt;&lt;1, B&gt;&gt;&gt;(in, t + 1, before + s);   // PASS, INDUCTION, POSTPONED
 *   epilogue;
 * }
 * </pre>
 * Output for PA-n (one text that replaces the definition; Fig. 7b/7c with the pool of III-B):
 * <pre>
 * struct K_klap_post { bytes&lt;param_t&lt;void(const int* in, int t, long long before), 2u&gt;&gt; before; };  // the postponed arguments, as bytes
 * static __device__ void K_klap_body(block_ctx&amp; klap_pc, const uint3 blockIdx, const dim3 gridDim,
 *                                   const int* in, int t) {     // the indices (n &gt; 1 only): block 0 of 1
 *   if (!acquire(klap_pc)) return;                       // wait for the release (or the abort)
 *   if (launches_next(klap_pc) &amp;&amp; thread0()) {            // the host instance, the last of a pool
 *     pool = new_pool(n); if (pool) K_klap_pro&lt;&lt;&lt;n, B, S, cudaStreamFireAndForget&gt;&gt;&gt;(pool, in, t + 1); launched(...);
 *   }
 *   long long before = klap_pc.in.before.get();
 *   Pi; Pd;
 *   if (threadIdx.x == 0 &amp;&amp; cond) { K_klap_post a; a.before.set((before + s));
 *     if (!release(klap_pc, a)) K&lt;&lt;&lt;1, B&gt;&gt;&gt;(in, t + 1, a.before.get()); }  // no successor: launch as written
 *   epilogue;
 * }
 * </pre>
 * With PO/PAO the body starts with the existence chain and the acquire moves to the pragma:
 * <pre>
 *   if (!await_exists(klap_pc)) return;
 *   if (thread0()) { bool c = cond-at-start; if (c &amp;&amp; launches_next(klap_pc)) { launch the next pool }
 *                    announce(klap_pc, c); }
 *   Pi;
 *   if (!acquire(klap_pc)) return; long long before = klap_pc.in.before.get();
 *   Pd; ...
 * </pre>
 * and, for both:
 * <pre>
 * __global__ void K_klap_pro(pool_header* p, const int* in, int t) {   // the descendants: n per launch
 *   j = enter(klap_pc, p); K_klap_body(klap_pc, {0,0,0}, {1,1,1}, in, t + j * 1); finish(klap_pc);
 * }
 * __global__ void K(const int* in, int t, long long before) {          // the host instance, same signature
 *   if (a 2-D block and the guard tests threadIdx.x only) fail(...);  // each block starts its own chain
 *   host_instance(klap_pc, {before}); K_klap_body(klap_pc, blockIdx, gridDim, in, t); finish(klap_pc);
 * }
 * </pre>
 * The kernel keeps its name and signature for the code that launches it (the host, other files).
 * Inserted code stays on the lines it replaces and every copied body starts with a {@code #line},
 * so nvcc's messages about the user's code name the user's lines.
 */
final class PromotedKernel {
    private final PromotionPlan plan;
    private final SourceFile src;
    private final FunctionDef k;
    private final String post;
    /** the kernel's template header ({@code template <int B, typename T> }) or "" */
    private final String tmpl;
    /** its template arguments as the generated code names them ({@code <B, T>}) or "" */
    private final String targs;
    /** {@link #post} with {@link #targs} */
    private final String postT;
    private final String body;
    private final String pro;
    private final List<Pragma> pragmas;

    /**
     * @param plan    the plan
     * @param src     the source file
     * @param pragmas the {@code #pragma klap ...} directives inside the kernel's body (commented
     *                out in the output, except the overlap point, which becomes the acquire)
     */
    PromotedKernel(PromotionPlan plan, SourceFile src, List<Pragma> pragmas) {
        this.plan = plan;
        this.src = src;
        this.k = plan.kernel();
        this.post = k.name() + "_klap_post";
        this.tmpl = k.templateHeader() == null ? "" : withoutDefaults(src.slice(k.templateHeader()).strip()) + " ";
        List<String> names = templateParams(k, src);
        this.targs = names.isEmpty() ? "" : "<" + String.join(", ", names) + ">";
        this.postT = post + targs;
        this.body = k.name() + "_klap_body";
        this.pro = k.name() + "_klap_pro";
        this.pragmas = pragmas;
    }

    /** @return the text that replaces the kernel's definition */
    String emit(String modeName) {
        // C++ [temp.param]: a default template argument is given once; the generated declarations
        // repeat the header without them (they always name their template arguments)
        String prefix = k.templateHeader() == null ? src.text().substring(k.range().offset(), k.nameRange().offset())
                : tmpl + src.text().substring(k.templateHeader().end(), k.nameRange().offset()).strip() + " ";
        // C++ [dcl.fct.default]: a default argument is given once. The prototype carries the default arguments the definition wrote (after an earlier declaration
        // without them, they are added here, once); the definition below has none
        String prototype = k.firstDeclaration() == null
                ? src.text().substring(k.range().offset(), k.paramsRange().end() + 1)
                : prefix + k.name() + "(" + String.join(", ", plan.args().stream()
                        .map(a -> paramText(a.param(), true)).toList()) + ")";
        String header = prefix + k.name() + "(" + String.join(", ", plan.args().stream()
                .map(a -> paramText(a.param(), false)).toList()) + ")";
        boolean shadow = plan.poolSize() > 1;
        String ctx = "klap::promote::block_ctx<" + postT + ">";
        StringBuilder sb = new StringBuilder();
        sb.append("/* klap --promote=").append(modeName).append(": '").append(k.name())
                .append("' launches its successor early and releases it at the launch site (KLAP III) */\n");
        sb.append(tmpl).append("struct ").append(post).append(" {");
        // each member holds its argument's bytes (klap::promote::bytes), typed from the kernel's own
        // parameter declarations: no default constructor or assignment of the user's type is needed
        String signature = "void(" + String.join(", ", k.params().stream().map(this::declaration).toList()) + ")";
        for (PromotionPlan.Arg a : plan.of(PromotionPlan.ArgKind.POSTPONED)) {
            sb.append(" klap::promote::bytes<klap::promote::param_t<").append(signature).append(", ")
                    .append(k.params().indexOf(a.param())).append("u>> ").append(a.param().name()).append(';');
        }
        sb.append(" };\n");
        sb.append(prototype).append(";\n");
        sb.append(prefix).append(pro).append('(').append(params("klap::promote::pool_header* klap_pool", plan.available()))
                .append(");\n");
        // the promoted body
        sb.append(tmpl).append("static __device__ void ").append(body).append('(')
                .append(params(ctx + "& klap_pc" + (shadow ? ", const uint3 blockIdx, const dim3 gridDim" : ""),
                        plan.available()))
                .append(")\n");
        sb.append(src.lineDirective(k.body().range().offset())).append(promotedBody()).append('\n');
        // the descendants: one launch of n blocks, each takes its position from the pool's ticket
        sb.append(prefix).append(pro).append('(').append(params("klap::promote::pool_header* klap_pool", plan.available()))
                .append(") {\n");
        sb.append("  __shared__ ").append(ctx).append(" klap_pc;\n");
        sb.append("  const unsigned klap_j = klap::promote::enter(klap_pc, klap_pool);\n");
        List<String> callArgs = new ArrayList<>();
        callArgs.add(shadow ? "klap_pc, make_uint3(0u, 0u, 0u), dim3(1u, 1u, 1u)" : "klap_pc");
        for (PromotionPlan.Arg a : plan.available()) {
            callArgs.add(a.kind() == PromotionPlan.ArgKind.PASS ? a.param().name()
                    : a.param().name() + (a.minus() ? " - " : " + ") + "(long long)klap_j * (" + text(a.step()) + ")");
        }
        sb.append("  ").append(body).append(targs).append('(').append(String.join(", ", callArgs)).append(");\n");
        sb.append("  klap::promote::finish(klap_pc);\n}\n");
        // the host instance: K's own name and signature
        sb.append(header).append(" {\n");
        if (!plan.anyBlockShape()) {
            // only the dimensions the guard does not test must be 1: with threadIdx.x == 0 && threadIdx.y == 0,
            // a block of 16 x 16 x 1 still has one launching thread
            String test = !plan.guardedY() && !plan.guardedZ() ? "blockDim.y * blockDim.z != 1u"
                    : !plan.guardedY() ? "blockDim.y != 1u" : "blockDim.z != 1u";
            String guard = !plan.guardedY() && !plan.guardedZ() ? "threadIdx.x == 0"
                    : !plan.guardedY() ? "threadIdx.x == 0 and threadIdx.z == 0" : "threadIdx.x == 0 and threadIdx.y == 0";
            sb.append("  if (").append(test).append(") klap::promote::fail(\"'").append(k.name())
                    .append("' was promoted for blocks in which one thread launches (its launch is guarded by ").append(guard)
                    .append(" only) but launched with (blockDim.y, blockDim.z)\", blockDim.y, blockDim.z);\n");
        }
        sb.append("  __shared__ ").append(ctx).append(" klap_pc;\n");
        sb.append("  ").append(postT).append(" klap_a;");
        for (PromotionPlan.Arg a : plan.of(PromotionPlan.ArgKind.POSTPONED)) {
            sb.append(" klap_a.").append(a.param().name()).append(".set(").append(a.param().name()).append(");");
        }
        sb.append("\n  klap::promote::host_instance(klap_pc, klap_a);\n");
        List<String> names = new ArrayList<>();
        names.add(shadow ? "klap_pc, blockIdx, gridDim" : "klap_pc");
        plan.available().forEach(a -> names.add(a.param().name()));
        sb.append("  ").append(body).append(targs).append('(').append(String.join(", ", names)).append(");\n");
        sb.append("  klap::promote::finish(klap_pc);\n}\n");
        sb.append(src.lineDirective(k.range().end()));
        return sb.toString();
    }

    /** The kernel body with the acquire (or the existence chain and the acquire at the overlap point), the successor launch and the release. */
    private String promotedBody() {
        EditSet e = new EditSet(src.text());
        int open = k.body().range().offset() + 1;
        if (plan.overlap() == null) {
            e.insert(open, " if (!klap::promote::acquire(klap_pc)) return;" + launchNext("true") + postponed());
        } else {
            // two release-acquire chains (KLAP III-D): existence first, then the postponed values
            List<String> cs = plan.condition().stream().map(c -> "(" + text(c) + ")").toList();
            e.insert(open, " if (!klap::promote::await_exists(klap_pc)) return; if (klap::promote::thread0()) {"
                    + " const bool klap_c = " + (cs.isEmpty() ? "true" : String.join(" && ", cs)) + ";"
                    + launchNext("klap_c") + " klap::promote::announce(klap_pc, klap_c); }");
        }
        for (Pragma p : pragmas) {  // the overlap point gets the acquire; nvcc would warn about the pragma
            e.replace(p.range().offset(), p.range().end(), p.equals(plan.overlap())
                    ? "if (!klap::promote::acquire(klap_pc)) return;" + postponed()
                    : "/* " + src.slice(p.range()) + " */");
        }
        StringBuilder rel = new StringBuilder("{ " + postT + " klap_a;");
        List<String> fallback = new ArrayList<>();
        for (PromotionPlan.Arg a : plan.args()) {
            String name = a.param().name();
            if (a.kind() == PromotionPlan.ArgKind.POSTPONED) {
                String t = text(a.arg());
                rel.append(" klap_a.").append(name).append(".set(").append(t.startsWith("{") ? t : "(" + t + ")").append(");");
                fallback.add("klap_a." + name + ".get()");
            } else {
                fallback.add(a.kind() == PromotionPlan.ArgKind.PASS ? name : "(" + text(a.arg()) + ")");
            }
        }
        // no promoted successor (its launch failed): launch as the original program did, so that the
        // program sees that launch's own result
        Expr.Launch l = plan.launch();
        rel.append(" if (!klap::promote::release(klap_pc, klap_a)) ").append(k.name()).append(targs).append("<<<1, (")
                .append(text(l.block())).append(")")
                .append(l.sharedMem() == null ? "" : ", (" + text(l.sharedMem()) + ")")
                .append(l.stream() == null ? "" : (l.sharedMem() == null ? ", 0" : "") + ", " + text(l.stream()))
                .append(">>>(").append(String.join(", ", fallback)).append("); }");
        e.replace(plan.site().range().offset(), plan.site().range().end(), rel.toString());
        return e.render(k.body().range().offset(), k.body().range().end());
    }

    /**
     * The launch of the next pool by the host instance and the last descendant of each pool, when
     * {@code cond} holds (one line; thread 0 only: its other threads go on at once).
     */
    private String launchNext(String cond) {
        Expr.Launch l = plan.launch();
        int n = plan.poolSize();
        List<String> args = new ArrayList<>();
        args.add("klap_np");
        for (PromotionPlan.Arg a : plan.available()) {
            args.add(a.kind() == PromotionPlan.ArgKind.PASS ? a.param().name() : "(" + text(a.arg()) + ")");
        }
        return " if (" + (cond.equals("true") ? "" : cond + " && ") + "klap::promote::launches_next(klap_pc)"
                + (cond.equals("true") ? " && klap::promote::thread0()" : "") + ") {"
                + " klap::promote::pool_header* klap_np = klap::promote::new_pool<" + postT + ">(" + n + "u);"
                + " if (klap_np != nullptr) " + pro + targs + "<<<" + n + "u, (" + text(l.block()) + "), "
                + (l.sharedMem() == null ? "0" : "(" + text(l.sharedMem()) + ")")
                + ", cudaStreamFireAndForget>>>(" + String.join(", ", args) + ");"
                + " klap::promote::launched(klap_pc, klap_np, klap_np != nullptr ? cudaGetLastError() "
                + ": cudaErrorMemoryAllocation); }";
    }

    /** The postponed parameters, declared as locals from the released values (one line). */
    private String postponed() {
        StringBuilder sb = new StringBuilder();
        for (PromotionPlan.Arg a : plan.of(PromotionPlan.ArgKind.POSTPONED)) {
            sb.append(' ').append(declaration(a.param())).append(" = klap_pc.in.").append(a.param().name()).append(".get();");
        }
        return sb.toString();
    }

    private String params(String first, List<PromotionPlan.Arg> args) {
        List<String> out = new ArrayList<>();
        if (first != null) {
            out.add(first);
        }
        for (PromotionPlan.Arg a : args) {
            out.add(declaration(a.param()));
        }
        return String.join(", ", out);
    }

    /**
     * @return the names of the template parameters of {@code k} in order ({@code template <int B,
     *         typename T = float>} gives B, T), or an empty list for a kernel that is not a template;
     *         null if a parameter is a pack or unnamed (the planner refuses such kernels)
     */
    static List<String> templateParams(FunctionDef k, SourceFile src) {
        if (k.templateHeader() == null) {
            return List.of();
        }
        List<String> parts = templateParts(src.slice(k.templateHeader()).strip());
        if (parts == null) {
            return null;
        }
        List<String> out = new ArrayList<>();
        for (String part : parts) {
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("([A-Za-z_][A-Za-z0-9_]*)$").matcher(part);
            if (part.contains("...") || !m.find() || part.equals(m.group(1))) {
                return null;
            }
            out.add(m.group(1));
        }
        return out;
    }

    /** @return {@code template <int B, typename T = float>} as {@code template <int B, typename T>} */
    private static String withoutDefaults(String header) {
        return header.substring(0, header.indexOf('<') + 1) + String.join(", ", templateParts(header)) + ">";
    }

    /**
     * @return the parameters of a template header without their default arguments
     *         ({@code int B}, {@code typename T}), split at the commas outside parentheses and angles;
     *         null if the header has no parameter list
     */
    private static List<String> templateParts(String header) {
        int open = header.indexOf('<');
        int close = header.lastIndexOf('>');
        if (open < 0 || close <= open) {
            return null;
        }
        List<String> parts = new ArrayList<>();
        int depth = 0;
        int start = open + 1;
        for (int i = open + 1; i <= close; i++) {
            char c = i == close ? ',' : header.charAt(i);
            if (c == '<' || c == '(') {
                depth++;
            } else if ((c == '>' || c == ')') && i != close) {
                depth--;
            } else if (c == ',' && depth == 0) {
                String part = header.substring(start, i);
                int eq = part.indexOf('=');
                parts.add((eq >= 0 ? part.substring(0, eq) : part).strip());
                start = i + 1;
            }
        }
        return parts;
    }

    /**
     * @return the parameter's declaration in its adjusted type ({@code int a[4]} -> {@code int (*a)}),
     *         without a default argument and {@code __grid_constant__}, on one line
     *         ({@link Param#variableDeclaration}): usable as a parameter and as a local
     */
    private String declaration(Param p) {
        return p.variableDeclaration(src.text(), p.name());
    }

    /**
     * @return the whole parameter declaration on one line ({@code int (*f)(int)} included), with or
     *         without its default argument (the text after a {@code =} outside parentheses and angles)
     */
    private String paramText(Param p, boolean keepDefault) {
        String d = src.slice(p.range());
        if (!keepDefault) {
            int depth = 0;
            for (int i = 0; i < d.length(); i++) {
                char c = d.charAt(i);
                if (c == '(' || c == '<' || c == '[') {
                    depth++;
                } else if (c == ')' || c == '>' || c == ']') {
                    depth--;
                } else if (c == '=' && depth == 0) {
                    d = d.substring(0, i);
                    break;
                }
            }
        }
        return d.replaceAll("\\s+", " ").strip();
    }

    /** @return the source text of {@code e} on one line (unless it holds a line comment) */
    private String text(Expr e) {
        String t = src.slice(e.range());
        return t.contains("//") ? t : t.replaceAll("\\s*\\R\\s*", " ");
    }
}
