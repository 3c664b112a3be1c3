package klap.aggregation;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import klap.model.Expr;
import klap.model.FunctionDef;
import klap.model.Param;
import klap.model.SourceRange;
import klap.transform.EditSet;
import klap.transform.TemplateParams;
import klap.transform.Trees;

/**
 * The one place that builds the generated C++ that more than one emitter uses: names, the
 * per-parent argument record, parameter declarations, and the runtime calls at a launch site.
 * User text (configurations, arguments, types) is sliced from the original source, through the
 * body's fine edits where it lies in a rewritten body, so that macros survive.
 * <h2>Names, for child {@code child}, parent {@code parent} and site 0</h2>
 * <pre>
 * klap_args_child          per-parent argument record       child_klap_agg_vu, child_klap_kagg_vu   variants
 * parent_klap_grid         kernel-granularity twin          klap_s0, klap_g0                        a site's slots and group
 * </pre>
 * <h2>Calls (KLAP II-A, II-B)</h2>
 * <pre>
 * child&lt;&lt;&lt;cnt[i], 32&gt;&gt;&gt;(p + i, n);
 *   record:  klap_s0.record(dim3(cnt[i]), dim3(32), 0u, (cudaStream_t)0, klap_args_child(p + i, n));
 *   flush:   klap_s0.flush(klap_g0, [&amp;](..., const klap_args_child&amp; klap_mine) -&gt; cudaError_t {
 *              cudaError_t klap_pre = cudaPeekAtLastError(); child_klap_agg_vu&lt;&lt;&lt;...&gt;&gt;&gt;(klap_cfg, klap_n, klap_args, klap_mine.n);
 *              cudaError_t klap_e = klap::launch_result(klap_pre); return klap_e; },
 *            [&amp;](..., const klap_args_child&amp; klap_a) -&gt; cudaError_t { ... child&lt;&lt;&lt;...&gt;&gt;&gt;(klap_a.p, klap_a.n); ... });
 *   krecord: klap::krecord&lt;klap_args_child&gt;(klap_ks, 0u, dim3(cnt[i]), ...);
 *   kfinish: klap::kfinish(klap_ks, 0u, [&amp;](const klap::ksite* klap_ksite, ...) -&gt; cudaError_t { ... });
 * </pre>
 */
final class CudaText {
    private final AggregationContext ctx;
    private final SitePlans plans;
    private final String text;

    /** @param plans the final plans, which say which kernels have kernel-granularity state */
    CudaText(AggregationContext ctx, SitePlans plans) {
        this.ctx = ctx;
        this.plans = plans;
        this.text = ctx.text;
    }

    // ------------------------------------------------------------------ names

    /** @return the name of the per-parent argument record of child {@code k} */
    static String argsName(FunctionDef k) {
        return "klap_args_" + k.name();
    }

    /** @return the name of variant {@code key} ({@code agg_vu}, {@code kagg_u}) of child {@code k} */
    static String variantName(FunctionDef k, String key) {
        return k.name() + "_klap_" + key;
    }

    /** @return the scalar mask of variant {@code key}: {@code agg_vu} gives {@code vu} */
    static String maskOf(String key) {
        int u = key.indexOf('_');
        return u < 0 ? "" : key.substring(u + 1);
    }

    /** @return the name of the kernel-granularity twin of kernel {@code k} */
    static String twinName(FunctionDef k) {
        return k.name() + "_klap_grid";
    }

    /** @return the record field of parameter {@code p}, the {@code i}-th: its name, or a made-up one */
    static String fieldName(Param p, int i) {
        return p.name().isEmpty() ? "klap_unnamed" + i : p.name();
    }

    /** @return {@code callee} ({@code k}, {@code ns::k}, {@code k<T>}, {@code &k}) with the kernel name {@code k} replaced */
    static String renamed(String callee, String k, String replacement) {
        Matcher m = nameIn(callee, k);
        return m.find() ? callee.substring(0, m.start()) + replacement + callee.substring(m.end()) : callee;
    }

    /** @return a matcher of the identifier {@code name} (not part of a longer one) in {@code text} */
    private static Matcher nameIn(String text, String name) {
        return Pattern.compile("(?<![A-Za-z0-9_])" + Pattern.quote(name) + "(?![A-Za-z0-9_])").matcher(text);
    }

    /**
     * @return the namespace qualifier of the site's callee as written ({@code ns::}), or, for a
     *         callee written unqualified, the one {@link #qualifierFor} gives (a using-declaration)
     */
    String qualifier(SitePlan s) {
        String callee = s.launch().kernelName();
        int q = callee.lastIndexOf("::");
        return q < 0 ? qualifierFor(s.child(), s.fn()) : callee.substring(0, q + 2);
    }

    /**
     * @return the namespace {@code f} is a member of ({@code a::b}): the namespaces around its
     *         definition and the qualifier of a definition outside them ({@code a::b::gid(...) {...}});
     *         empty at global scope (an unnamed namespace counts as its enclosing one: its members are
     *         found there)
     */
    String namespaceOf(FunctionDef f) {
        String q = outOfLineQualifier(f);
        String lexical = f.namespace() == null ? "" : f.namespace();
        return lexical.isEmpty() ? q : q.isEmpty() ? lexical : lexical + "::" + q;
    }

    /**
     * @return the qualifier that a name klap declares beside kernel {@code k} (a variant, twin,
     *         record or helper, declared in {@code k}'s namespace) needs where code in {@code where}
     *         (null: file scope) names {@code k} without a qualifier: empty where {@code where} is
     *         in {@code k}'s namespace (unqualified lookup finds it), else {@code ::a::b::}, since
     *         {@code k} was found through a using-declaration ({@code using a::parent;}), which
     *         does not bring klap's names along (nvcc: identifier "parent_klap_chunk" is undefined)
     */
    String qualifierFor(FunctionDef k, FunctionDef where) {
        String ns = namespaceOf(k);
        String at = where == null ? "" : namespaceOf(where);
        return ns.isEmpty() || at.equals(ns) || at.startsWith(ns + "::") ? "" : "::" + ns + "::";
    }

    /**
     * @return {@link #renamed}, with {@link #qualifierFor} before the name where {@code text} does
     *         not qualify it itself: {@code parent} -> {@code ::a::parent_klap_chunk} in a host
     *         function after {@code using a::parent;}
     */
    String renamedAt(String text, FunctionDef k, String replacement, FunctionDef where) {
        Matcher m = nameIn(text, k.name());
        if (!m.find()) {
            return text;
        }
        String before = text.substring(0, m.start());
        return before + qualifierAfter(before, k, where) + replacement + text.substring(m.end());
    }

    /**
     * @return {@link #qualifierFor}, or empty where {@code before} (the text before the kernel's
     *         name) already ends with a qualifier ({@code a::})
     */
    String qualifierAfter(String before, FunctionDef k, FunctionDef where) {
        return before.stripTrailing().endsWith("::") ? "" : qualifierFor(k, where);
    }

    /**
     * @return true if site {@code s}'s template arguments (written or deduced) name one of the
     *         parameters of {@code fn} ({@code child<decltype(+*p)>}): code outside {@code fn}, such as
     *         a helper that names the site's record type, cannot name them
     */
    boolean templateArgsNameParams(SitePlan s, FunctionDef fn) {
        String t = ctx.templateArgs(s.launch());
        if (t == null) {
            return false;
        }
        java.util.Set<String> params = fn.params().stream().map(Param::name).filter(n -> !n.isEmpty())
                .collect(java.util.stream.Collectors.toSet());
        return ChildRefusals.IDENTIFIER.matcher(klap.transform.Lexical.blankCommentsAndLiterals(t)).results()
                .anyMatch(m -> params.contains(m.group()));
    }

    /** @return the argument record type a site fills: {@code ns::klap_args_child<T>} */
    String argsType(SitePlan s) {
        return qualifier(s) + argsName(s.child()) + templateArgs(s);
    }

    /** @return the record type of template child {@code k} inside its own variants: {@code klap_args_child<T, N>} */
    String selfArgs(FunctionDef k) {
        return argsName(k) + (k.templateHeader() == null ? "" : TemplateParams.argumentList(slice(k.templateHeader())));
    }

    /** @return the site's template arguments, written or deduced ({@link AggregationContext#templateArgs}), or empty */
    private String templateArgs(SitePlan s) {
        String t = ctx.templateArgs(s.launch());
        return t == null ? "" : t;
    }

    // ------------------------------------------------------------------ declarations

    /** @return the original text of {@code r} */
    String slice(SourceRange r) {
        return ctx.slice(r);
    }

    /** @return the text of {@code x} with the fine edits of {@code fine} applied */
    static String slice(EditSet fine, Expr x) {
        return fine.render(x.range().offset(), x.range().end());
    }

    /** @return where declarations of {@code f} go: its first declaration, or the definition */
    static int declStart(FunctionDef f) {
        return f.firstDeclaration() != null ? f.firstDeclaration().offset() : f.range().offset();
    }

    /**
     * Where the declarations klap adds for {@code f} go: {@link AggregationContext#declarationsAt}.
     */
    int declStartBeforeUses(FunctionDef f) {
        return ctx.declarationsAt(f);
    }

    /**
     * @return {@code f}'s template header and a newline, or empty: for the first declaration of a
     *         variant, clone, twin or record that klap adds: the definition's, with the default template
     *         arguments of the prototype in the file before it where there is one (klap's declarations
     *         go before that: {@link TemplateParams#defaultsFrom}), else those of the definition and of
     *         a declaration in a header ({@link FunctionDef#declaredTemplateDefaults})
     */
    String templateHeader(FunctionDef f) {
        return templateHeader(f, false);
    }

    /** @return {@link TemplateParams#declarationHeader} of {@code f} in this unit (forClass: for the argument record) */
    String templateHeader(FunctionDef f, boolean forClass) {
        return TemplateParams.declarationHeader(f, text, forClass);
    }

    /**
     * @return {@code f}'s template header (and a newline) without default template arguments, or
     *         "": for the definition of a variant, clone or twin whose prototype comes first
     */
    String templateHeaderOfDefinition(FunctionDef f) {
        return f.templateHeader() == null ? "" : TemplateParams.withoutDefaults(slice(f.templateHeader())) + "\n";
    }

    /**
     * @return where {@code f}'s declarator-id starts, its namespace qualifier included: at {@code a}
     *         of {@code __device__ int a::b::gid(int s) {...}}, a definition outside its namespace
     *         (C++ [namespace.memdef]/2); {@code f.nameRange().offset()} for an unqualified name
     */
    int qualifiedNameStart(FunctionDef f) {
        int i = f.nameRange().offset();
        while (true) {
            int j = i;
            while (j > 0 && Character.isWhitespace(text.charAt(j - 1))) {
                j--;
            }
            if (j < 2 || !text.startsWith("::", j - 2)) {
                return i;
            }
            int k = j - 2;
            while (k > 0 && Character.isWhitespace(text.charAt(k - 1))) {
                k--;
            }
            int end = k;
            while (k > 0 && Character.isJavaIdentifierPart(text.charAt(k - 1))) {
                k--;
            }
            i = k;
            if (k == end) {
                return i; // ::gid, the global namespace's
            }
        }
    }

    /**
     * Declarations klap adds for {@code f} (the prototypes of its variants, clone or twin, its
     * argument record), written with {@code f}'s name unqualified, made valid where they go
     * ({@link #declStartBeforeUses}): as they are for a
     * function defined with its plain name or first declared in this file inside its namespace
     * (they go there); for a definition {@code a::b::gid(...) {...}} whose first declaration is
     * in a header, wrapped in {@code namespace a::b { ... }} (a qualified name cannot declare a
     * function: "should have been declared inside 'a'", nvcc 13; and a launch names the record
     * {@code a::klap_args_child}, as it names the kernel)
     */
    String prototypeWhereDeclared(FunctionDef f, String prototype) {
        return f.firstDeclaration() != null && declStartBeforeUses(f) == f.firstDeclaration().offset()
                ? prototype : inDefinitionNamespace(f, prototype);
    }

    /**
     * @return {@code code} (definitions of klap's helpers for {@code f}, which a launch names as it
     *         names {@code f}: {@code a::parent_klap_chunk_need}) made to declare its names in
     *         {@code f}'s namespace where it follows {@code f}'s definition: as it is after a
     *         definition inside the namespace, wrapped in {@code namespace a::b { ... }} after a
     *         definition {@code a::b::parent(...) {...}} outside it
     */
    String inDefinitionNamespace(FunctionDef f, String code) {
        String ns = outOfLineQualifier(f);
        return ns.isEmpty() || code.isBlank() ? code : "namespace " + ns + " { " + code.strip() + " }\n";
    }

    /**
     * @return the namespace qualifier with which {@code f}'s definition names it outside its
     *         namespace, without the last {@code ::} ({@code a::b} of {@code a::b::gid(...) {...}}),
     *         or empty ({@code gid}, {@code ::gid})
     */
    private String outOfLineQualifier(FunctionDef f) {
        String q = text.substring(qualifiedNameStart(f), f.nameRange().offset()).replaceAll("\\s+", "");
        q = q.startsWith("::") ? q.substring(2) : q;
        return q.isEmpty() ? "" : q.substring(0, q.length() - 2);
    }

    /** @return the text of {@code f}'s declaration after its template header, up to {@code upTo} */
    String declaration(FunctionDef f, int upTo) {
        int headStart = f.templateHeader() != null ? f.templateHeader().end() : f.range().offset();
        return text.substring(headStart, upTo);
    }

    /**
     * The launch bounds klap gives a kernel whose code it changed (an in-place parent, a variant, a
     * twin) when the program gave none: the most threads a block may have (CUDA programming guide,
     * "Launch Bounds"). klap's own code (scans, slots, the launch lambdas) raises a kernel's
     * registers (ptxas, sm_90: bfs's parent from 24 to 80, a parent with a 2 KiB argument to 255),
     * and a kernel without bounds may then no longer launch with a block its original ran with
     * (65536 registers per block: 80 x 1024 threads fail with cudaErrorLaunchOutOfResources). With
     * these bounds ptxas keeps the kernel within 64 registers (spilling if it must), so every block
     * size the original could take still launches.
     */
    static final String LAUNCH_BOUNDS = "__launch_bounds__(1024)";

    private static final Pattern GLOBAL = Pattern.compile("\\b__global__\\b");

    /**
     * @return where {@link #LAUNCH_BOUNDS} goes in kernel {@code f}'s definition ({@link
     *         #boundsAt}): right after its {@code __global__}, or, where a macro writes {@code
     *         __global__} ({@code #define KERNEL __global__}), right before its name (the position
     *         of the CUDA programming guide's own example, "Launch Bounds"); -1 where the program
     *         bounds {@code f} itself ({@code __launch_bounds__}, {@code __maxnreg__} or their
     *         attributes in any declaration of {@code f}, also through a macro: {@link
     *         FunctionDef#bounded}), or where the name is qualified ({@code ns::k}: nothing may go
     *         between the qualifier and the name)
     */
    int launchBoundsOffset(FunctionDef f) {
        if (f.kind() != FunctionDef.Kind.KERNEL || f.bounded() || boundedByProgram(f)) {
            return -1;
        }
        int headStart = f.templateHeader() != null ? f.templateHeader().end() : f.range().offset();
        String head = klap.transform.Lexical.blankCommentsAndLiterals(text.substring(headStart, f.nameRange().offset()));
        Matcher g = GLOBAL.matcher(head);
        if (g.find()) {
            return headStart + g.end();
        }
        return head.strip().endsWith(":") ? -1 : f.nameRange().offset();
    }

    /** @return the text that puts {@link #LAUNCH_BOUNDS} at {@code at}, a {@link #launchBoundsOffset} of {@code f} */
    static String boundsAt(FunctionDef f, int at) {
        return at == f.nameRange().offset() ? LAUNCH_BOUNDS + " " : " " + LAUNCH_BOUNDS;
    }

    private static final Pattern BOUNDS = Pattern.compile("(?<![A-Za-z0-9_])(__launch_bounds__|launch_bounds|__maxnreg__|maxnreg)\\b");
    private static final Pattern DIRECTIVE = Pattern.compile("(?m)^[ \\t]*#(?:[^\\n]*\\\\\\n)*[^\\n]*");
    private static final Pattern DECLARED_NAME = Pattern.compile("([A-Za-z_][A-Za-z0-9_]*)\\s*(<[^;{}()]*>\\s*)?\\(");

    /** the names of the functions whose declaration in the file gives launch bounds or a register limit (computed once) */
    private java.util.Set<String> boundedNames;

    /** @return true if a declaration of {@code f} in the file gives launch bounds or a register limit */
    private boolean boundedByProgram(FunctionDef f) {
        if (boundedNames == null) {
            // one pass over the file: after each bounds keyword, the declared name is the first identifier,
            // before the end of the declaration (; { }), that is followed by its parameter list
            boundedNames = new java.util.HashSet<>();
            // a directive's bounds (#define KERNEL_B __global__ __launch_bounds__(256)) bound no function
            // that follows it: the kernels a macro bounds are FunctionDef.bounded (read from the attributes)
            String code = DIRECTIVE.matcher(klap.transform.Lexical.blankCommentsAndLiterals(text))
                    .replaceAll(m -> " ".repeat(m.group().length()));
            Matcher b = BOUNDS.matcher(code);
            while (b.find()) {
                int open = code.indexOf('(', b.end());
                int depth = 0;
                int i = open;
                for (; open >= 0 && i < code.length(); i++) { // skip the keyword's own argument list
                    char ch = code.charAt(i);
                    if (ch == '(') {
                        depth++;
                    } else if (ch == ')' && --depth == 0) {
                        break;
                    }
                }
                int from = open >= 0 && code.substring(b.end(), open).isBlank() ? i + 1 : b.end();
                int end = from;
                while (end < code.length() && ";{}".indexOf(code.charAt(end)) < 0) {
                    end++;
                }
                Matcher n = DECLARED_NAME.matcher(code).region(Math.min(from, end), end);
                while (n.find()) {
                    String name = n.group(1);
                    if (!name.equals("__attribute__") && !name.equals("__launch_bounds__") && !name.equals("__maxnreg__")
                            && !name.equals("__align__") && !name.equals("__declspec")) {
                        boundedNames.add(name);
                        break;
                    }
                }
            }
        }
        return boundedNames.contains(AggregationContext.simpleName(f.name()));
    }

    /**
     * {@link #declaration} of kernel {@code f} up to {@code upTo} (after its {@code __global__}),
     * with {@link #LAUNCH_BOUNDS} where {@link #launchBoundsOffset} puts it: the head of a variant
     * or twin, whose code is klap's too.
     */
    String boundedDeclaration(FunctionDef f, int upTo) {
        int at = launchBoundsOffset(f);
        int headStart = f.templateHeader() != null ? f.templateHeader().end() : f.range().offset();
        return at < 0 || at > upTo ? declaration(f, upTo)
                : text.substring(headStart, at) + boundsAt(f, at) + text.substring(at, upTo);
    }

    /** @return the text between {@code f}'s parameter list and its body ({@code ) const}, attributes) */
    String afterParams(FunctionDef f) {
        return text.substring(f.paramsRange().end(), f.body().range().offset());
    }

    /** @return the declarations of {@code f}'s parameters without defaults (none for {@code (void)}) */
    List<String> paramDecls(FunctionDef f) {
        List<String> ps = new ArrayList<>();
        for (int i = 0; i < f.params().size(); i++) {
            String p = stripDefault(slice(f.params().get(i).range()));
            if (!(f.params().size() == 1 && p.equals("void"))) {
                ps.add(p);
            }
        }
        return ps;
    }

    /**
     * @return the declaration of parameter {@code p} named {@code name}, in its adjusted type (an
     *         array or function parameter declares a pointer), without default and without
     *         {@code __grid_constant__} ({@link Param#variableDeclaration})
     */
    private String paramWithName(Param p, String name) {
        return p.variableDeclaration(text, name);
    }

    /**
     * @return the declaration of parameter {@code p}, the {@code i}-th, named by its field, in its
     *         adjusted type and without default: usable as a struct member or a local variable
     */
    String paramDecl(Param p, int i) {
        return paramWithName(p, fieldName(p, i));
    }

    /** @return {@code decl} without its default argument, trimmed */
    static String stripDefault(String decl) {
        int eq = TemplateParams.topLevelIndex(decl, '=');
        return eq < 0 ? decl.trim() : decl.substring(0, eq).trim();
    }

    /**
     * A {@code #line} directive (on a line of its own) saying that the next line is the line of
     * {@code offset} in the input, so that nvcc's diagnostics on the user's code, copied into
     * variants or following inserted declarations, name the user's file and line (C++ [cpp.line]).
     */
    String lineDirective(int offset) {
        return ctx.src.lineDirective(offset);
    }

    /** @return the first lines of the output: the pool size if given, the runtime's header, and a {@code #line 1} */
    String prologue() {
        StringBuilder head = new StringBuilder();
        if (ctx.opt.poolSizeBytes() != null) {
            head.append("#define KLAP_POOL_SIZE_BYTES ").append(ctx.opt.poolSizeBytes()).append("ull\n");
        }
        head.append("#include \"klap/klap.cuh\" /* added by klap --granularity=")
                .append(ctx.opt.granularity().cliName()).append(" */\n").append(lineDirective(0));
        return head.toString();
    }

    /** @return the declaration of {@code klap_blk}, the kernel's hardware block, that regions and cudaMalloc groups use */
    static String hardwareBlockGroup() {
        return " klap::block_group klap_blk = klap::block_group::hardware();";
    }

    /** The per-slot argument record of child {@code k}: one field per parameter, built with a constructor. */
    String argsStruct(FunctionDef k) {
        StringBuilder sb = new StringBuilder("/* klap: per-parent-thread arguments of '" + k.name() + "' */\n");
        sb.append(templateHeader(k, true)).append("struct ").append(argsName(k)).append(" {");
        List<Param> ps = k.params();
        List<String> ctorParams = new ArrayList<>();
        List<String> inits = new ArrayList<>();
        for (int i = 0; i < ps.size(); i++) {
            Param p = ps.get(i);
            sb.append(' ').append(paramDecl(p, i)).append(';');
            // a launch may leave trailing parameters to their defaults (SitePlanner): the constructor evaluates them
            String def = k.defaultArgument(i, text);
            ctorParams.add(paramWithName(p, "klap_p" + i) + (def.isEmpty() ? "" : " " + def));
            inits.add(fieldName(p, i) + "(klap_p" + i + ")");
        }
        sb.append(" __device__ ").append(argsName(k)).append('(').append(String.join(", ", ctorParams)).append(')');
        if (!inits.isEmpty()) {
            sb.append(" : ").append(String.join(", ", inits));
        }
        sb.append(" {} };\n");
        return sb.toString();
    }

    // ------------------------------------------------------------------ calls at a launch site

    /**
     * @return {@code auto klap_g0 = group; auto klap_s0 = klap::agg_begin<Args>(klap_g0, klap::on_full::launch_as_written); }:
     *         the group's slots; if the pool has no room for them, the group launches as written ({@link #flushCall})
     */
    String aggBegin(SitePlan s, String group) {
        String g = "klap_g" + s.id();
        return "auto " + g + " = " + group + "; auto klap_s" + s.id() + " = klap::agg_begin<" + argsType(s) + ">(" + g
                + ", klap::on_full::launch_as_written); ";
    }

    /**
     * The arguments of a record call: {@code dim3(grid), dim3(block), smem, stream, Args(args)}, each
     * sliced from the launch through the context's fine edits.
     */
    private String recordArgs(SitePlan s, EditSet fine) {
        Expr.Launch l = s.launch();
        String smem = l.sharedMem() == null ? "0u" : "(unsigned)(" + slice(fine, l.sharedMem()) + ")";
        String stream = l.stream() == null || s.streamToNull() ? "(cudaStream_t)0"
                : "(cudaStream_t)(" + slice(fine, l.stream()) + ")";
        return "dim3(" + slice(fine, l.grid()) + "), dim3(" + slice(fine, l.block()) + "), " + smem + ", " + stream + ", "
                + argsType(s) + "(" + fine.render(l.argsRange().offset(), l.argsRange().end()) + ")";
    }

    /** @return the statement that replaces a warp/block launch: the thread records it in its slot */
    String recordCall(SitePlan s, EditSet fine) {
        return checked(s, fine, "klap_s" + s.id() + ".record(" + recordArgs(s, fine) + ");");
    }

    // ------------------------------------------------------------------ deduced template arguments

    /**
     * @return true if site {@code s} launches a template child whose arguments klap deduced
     *         ({@link TemplateDeduction}) and can have the compiler check: no lambda among the launch's
     *         arguments (an unevaluated operand may not hold one before C++20)
     */
    private boolean checksDeduction(SitePlan s) {
        Expr.Launch l = s.launch();
        if (ctx.templateArgs(l) == null || l.templateArgs() != null && ctx.templateArgs(l).equals(l.templateArgs())) {
            return false; // nothing deduced (written out, or not deducible); child<>: deduced
        }
        boolean[] lambda = {false};
        for (Expr a : l.args()) {
            klap.transform.Trees.walk(a, e -> lambda[0] |= e instanceof Expr.Lambda);
        }
        return !lambda[0];
    }

    /** @return the name of the deduction check's function of child {@code k} for launches of {@code argc} arguments */
    private static String deduceName(FunctionDef k, int argc) {
        return "klap_deduce_" + k.name() + (argc < k.params().size() ? "_" + argc : "");
    }

    /**
     * @return {@code statement}, and where the site's template arguments were deduced by klap, before it
     *         a {@code static_assert} that the compiler deduces the same ones from the same arguments
     *         (the record types compared: the parameters klap leaves to their defaults are checked too),
     *         both in braces: {@code { static_assert(cuda::std::is_same<decltype(klap_deduce_child(p, n)),
     *         klap_args_child<float>*>::value, "..."); klap_s0.record(...); }}. A deduction klap got wrong
     *         is a build error at the launch, never a variant instantiated for other types.
     */
    private String checked(SitePlan s, EditSet fine, String statement) {
        if (!checksDeduction(s)) {
            return statement;
        }
        Expr.Launch l = s.launch();
        return "{ static_assert(cuda::std::is_same<decltype(" + qualifier(s) + deduceName(s.child(), l.args().size()) + "("
                + fine.render(l.argsRange().offset(), l.argsRange().end()) + ")), " + argsType(s)
                + "*>::value, \"klap: the template arguments klap wrote for this launch of '" + s.child().name()
                + "' are not the ones the compiler deduces; write them out (" + s.child().name()
                + "<...><<<...>>>) and please report it\"); " + statement + " }";
    }

    /**
     * @return the declarations the deduction checks of {@code k}'s sites call ({@link #checked}): per
     *         argument count, a function template with {@code k}'s template header and its first
     *         parameters (adjusted types, no defaults), never defined, that returns a pointer to the
     *         argument record of the arguments the compiler deduces, every template parameter of the
     *         child included (those that take their defaults too: a parameter named through a macro
     *         is deduced where klap saw no name, review 2026-11-30): {@code template <typename T, int N
     *         = 2> __device__ klap_args_child<T, N>* klap_deduce_child(T* klap_d0, int klap_d1);}
     */
    String deductionChecks(FunctionDef k) {
        java.util.TreeSet<Integer> counts = new java.util.TreeSet<>();
        for (SitePlan s : plans.all()) {
            if (s.child() == k && checksDeduction(s)) {
                counts.add(s.launch().args().size());
            }
        }
        StringBuilder sb = new StringBuilder();
        for (int argc : counts) {
            List<String> ps = new ArrayList<>();
            for (int i = 0; i < argc; i++) {
                ps.add(paramWithName(k.params().get(i), "klap_d" + i));
            }
            sb.append("/* klap: checks the template arguments klap deduced for launches of '").append(k.name())
                    .append("' (never called) */\n").append(templateHeader(k)).append("__device__ ")
                    .append(selfArgs(k)).append("* ").append(deduceName(k, argc))
                    .append('(').append(String.join(", ", ps)).append(");\n");
        }
        return sb.toString();
    }

    /**
     * @return the group's scan and one launch of the aggregated variant (the end of a region), and
     *         the launcher of direct mode ({@link #asWritten}) for a group that found no pool memory
     */
    String flushCall(SitePlan s) {
        String t = argsType(s);
        return "klap_s" + s.id() + ".flush(klap_g" + s.id() + ", " + launcher(s, "dim3 klap_grid, dim3 klap_block, "
                + "unsigned klap_smem, cudaStream_t klap_stream, const klap::launch_cfg* klap_cfg, unsigned klap_n, const "
                + t + "* klap_args, const " + t + "& klap_mine", "klap_cfg, klap_n, klap_args", "klap_mine.") + ", "
                + asWritten(s) + ");";
    }

    /**
     * The launcher of a group in direct mode (the pool had no room for its slots, issue 11): the
     * thread's own launch as written, the callee as the user wrote it, its arguments the record's
     * fields: {@code [&](dim3 klap_grid, ..., const Args& klap_a) -> cudaError_t { ...
     * child<<<klap_grid, klap_block, klap_smem, klap_stream>>>(klap_a.p, klap_a.n); ... }}.
     */
    private String asWritten(SitePlan s) {
        StringBuilder sb = new StringBuilder("[&](dim3 klap_grid, dim3 klap_block, unsigned klap_smem, cudaStream_t "
                + "klap_stream, const " + argsType(s) + "& klap_a) -> cudaError_t { cudaError_t klap_pre = "
                + "cudaPeekAtLastError(); ").append(s.launch().callee())
                .append("<<<klap_grid, klap_block, klap_smem, klap_stream>>>(");
        List<Param> ps = s.child().params();
        for (int i = 0; i < ps.size(); i++) {
            sb.append(i == 0 ? "" : ", ").append("klap_a.").append(fieldName(ps.get(i), i));
        }
        return sb.append("); return klap::launch_result(klap_pre); }").toString();
    }

    /**
     * Replaces a kernel-granularity launch: the out-of-order atomic scan records it (klap::krecord).
     * In a kernel that makes no tail launch ({@link SitePlans#tailFallback}) the record call also
     * gets the launcher of the launch as written ({@link #asWritten}), which the runtime uses, into
     * cudaStreamTailLaunch, when the pool has no room for the record.
     */
    String krecordCall(SitePlan s, EditSet fine) {
        List<SitePlan> ks = plans.kernelSites(s.fn());
        String direct = plans.tailFallback(s.fn()) ? ", " + asWritten(s) : "";
        if (plans.perRound(s)) {
            List<SitePlan> rs = plans.roundSites(s.fn());
            return checked(s, fine, "klap::krecord_seq<" + argsType(s) + ">(klap_ks, " + (ks.size() - rs.size()) + "u, "
                    + rs.size() + "u, " + rs.indexOf(s) + "u, klap_seq, " + recordArgs(s, fine) + direct + ");");
        }
        return checked(s, fine, "klap::krecord<" + argsType(s) + ">(klap_ks, " + ks.indexOf(s) + "u, " + recordArgs(s, fine)
                + direct + ");");
    }

    /**
     * The epilogue of a kernel-granularity parent, run by the grid's last block: per site, the
     * launcher of its aggregated grid paired with the launch as written of one record ({@link
     * #asWritten}), which the runtime uses for each record when the device runtime refuses the
     * aggregated launch, and for a site with one record: {@code klap::kfinish(klap_ks, N,
     * klap::klaunch_pair<Args>([&](const klap::ksite* klap_ksite, ...) {...}, [&](dim3 klap_grid, ...,
     * const Args& klap_a) {...}), ...)}; {@code klaunch_pair<Args, false>} where the child is itself a
     * kernel-granularity parent (its launch as written would not aggregate its own launches).
     */
    String kfinishCall(FunctionDef f) {
        StringBuilder sb = new StringBuilder("klap::kfinish(klap_ks, " + plans.roundSites(f).size() + "u");
        for (SitePlan s : plans.kernelSites(f)) {
            // a child that is itself a kernel-granularity parent is never launched as written for a
            // site's one record (it would run its own launches unaggregated): klaunchers' AloneAsWritten
            sb.append(", klap::klaunch_pair<").append(argsType(s)).append(plans.hasKernelState(s.child()) ? ", false" : "")
                    .append(">(")
                    .append(launcher(s, "const klap::ksite* klap_ksite, dim3 klap_grid, dim3 klap_block, "
                            + "unsigned klap_smem, cudaStream_t klap_stream", "klap_ksite",
                            "klap::kfirst_args<" + argsType(s) + ">(klap_ksite)."))
                    .append(", ").append(asWritten(s)).append(')');
        }
        return sb.append(");").toString();
    }

    /**
     * A lambda that launches the site's aggregated variant and returns the launch's error:
     * {@code [&](params) -> cudaError_t { ... variant<<<klap_grid, ...>>>(first, scalars...); ... }}.
     *
     * @param first   the variant's leading arguments (where the records are)
     * @param scalars how a scalar argument is read, followed by its field name
     */
    private String launcher(SitePlan s, String params, String first, String scalars) {
        StringBuilder sb = new StringBuilder("[&](").append(params)
                .append(") -> cudaError_t { cudaError_t klap_pre = cudaPeekAtLastError(); ")
                .append(childState(s.child(), first.equals("klap_ksite")))
                .append(qualifier(s)).append(variantName(s.child(), s.variantKey())).append(templateArgs(s))
                .append("<<<klap_grid, klap_block, klap_smem, klap_stream>>>(").append(first);
        List<Param> ps = s.child().params();
        for (int i = 0; i < ps.size(); i++) {
            if (s.mask().charAt(i) == 'u') {
                sb.append(", ").append(scalars).append(fieldName(ps.get(i), i));
            }
        }
        return sb.append(plans.hasKernelState(s.child()) ? ", klap_cks" : "").append("); ")
                .append(launchResult(s.child())).append(" }").toString();
    }

    /**
     * The end of a launch lambda: the launch's own error (not one the user's code left pending,
     * {@code klap::launch_result}); a fresh kernel-granularity state is given back if the launch failed.
     */
    private String launchResult(FunctionDef child) {
        return "cudaError_t klap_e = klap::launch_result(klap_pre); "
                + (plans.hasKernelState(child) ? "if (klap_e != cudaSuccess) klap::kstate_discard(klap_cks); " : "")
                + "return klap_e;";
    }

    /**
     * Declares {@code klap_cks}, a fresh kernel-granularity state for a child grid that aggregates
     * its own launches; for a child without tail launches, one that lets the child launch as
     * written when the pool has no room for the state ({@link SitePlans#tailFallback}). The state
     * launched by {@code kfinish} is told the site ({@code klap_ksite}) whose grid it serves, so that
     * the grid's blocks whose records went out as written (no pool room, kernel.cuh) count as finished.
     */
    private String childState(FunctionDef child, boolean fromSite) {
        if (!plans.hasKernelState(child)) {
            return "";
        }
        String mode = plans.tailFallback(child) ? ", klap::on_full::launch_as_written" : "";
        // a group's flush (warp/block aggregation in place) launches no grid with holes: no site to pass
        return "klap::kstate* klap_cks = klap::kstate_new(" + plans.stateSize(child)
                + (fromSite ? (mode.isEmpty() ? ", klap::on_full::fail" : mode) + ", klap_ksite" : mode) + "); ";
    }
}
