package klap.np;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import klap.model.CudaUnit;
import klap.model.Diagnostic;
import klap.model.Expr;
import klap.model.FunctionDef;
import klap.model.Pragma;
import klap.model.SourceFile;
import klap.model.Stmt;
import klap.np.NpPlanner.NpPlan;
import klap.transform.EditSet;
import klap.transform.TemplateDeduction;
import klap.transform.TemplateParams;
import klap.transform.Trees;

/**
 * The CUDA-NP transform over one translation unit (Yang and Zhou, PPoPP 2014; issue 13). Input: a
 * parsed unit without errors, whose kernels may hold {@code #pragma np parallel for} loops. Output:
 * the unit's text with {@code #include "klap/np.cuh"} first and, after each kernel {@code K} that
 * {@link NpPlanner} proves transformable, one or two new kernels ({@code K_klap_npi}, intra-warp;
 * {@code K_klap_npw}, inter-warp; {@link NpKernel}). {@code K} itself stays as written (device-side
 * launches and fallbacks use it). Every host-side launch statement {@code K<<<g, b, shm, st>>>(args);}
 * becomes a run-time choice:
 * <pre>
 * { const dim3 klap_np_b = (b); ... M = b.x * b.y * b.z
 *   if (klap::np::fits(M, S) &amp;&amp; klap::np::launch_memory(K_klap_npi, ..., budget, st, mem)) {
 *       K_klap_npi&lt;&lt;&lt;g, M * S, mem.dyn, st&gt;&gt;&gt;(args, klap_np_b, userShm, mem.global);
 *       klap::np::release(mem, st); }
 *   else K&lt;&lt;&lt;g, klap_np_b, shm, st&gt;&gt;&gt;(args); }
 * </pre>
 * so a block that would exceed 1024 threads runs the original kernel, and local arrays that do not
 * fit the shared-memory budget go to global memory (CUDA-NP section 3.3). With {@link NpMode#ALL} the choice also reads {@code klap::np::chosen("K", ...)}
 * (environment {@code KLAP_NP_K}, {@code KLAP_NP}, or {@code klap::np::select}). Loops and kernels
 * klap cannot prove get a {@code klap-np} warning with the reason and stay as written.
 */
public final class NpPass {
    private NpPass() {
    }

    /** The default number of threads per group (master and slaves). */
    public static final int DEFAULT_SLAVES = 8;
    /** The default budget of klap's dynamic shared memory per block, in bytes (the 48 KiB static limit). */
    public static final long DEFAULT_SHARED_BUDGET = 48 * 1024;

    /**
     * The options.
     *
     * @param mode         which variants to emit
     * @param slaves       S, threads per group (master included): 2..32, a power of two for the
     *                     intra-warp layout; a {@code num_slaves(N)} clause overrides it per kernel
     * @param sharedBudget the most dynamic shared memory (bytes) a transformed launch may use; a launch
     *                     that needs more runs the original kernel
     */
    public record Options(NpMode mode, int slaves, long sharedBudget) {
        public Options {
            if (slaves < 2 || slaves > 32) {
                throw new IllegalArgumentException("the number of slaves must be between 2 and 32, got " + slaves);
            }
            if (mode.intra() && Integer.bitCount(slaves) != 1) {
                throw new IllegalArgumentException("the intra-warp layout needs a power of two slaves (2, 4, 8, 16, 32), got "
                        + slaves);
            }
            if (sharedBudget < 0) {
                throw new IllegalArgumentException("the shared-memory budget must not be negative");
            }
        }
    }

    /**
     * The result.
     *
     * @param text        the transformed text (the input text if nothing was transformed)
     * @param diagnostics warnings and notes (a loop or kernel that cannot be transformed stays as written)
     * @param transformed the names of the transformed kernels, in source order
     * @param summary     one line for the user, or ""
     */
    public record Result(String text, List<Diagnostic> diagnostics, List<String> transformed, String summary) {
        /** @return true if the output includes {@code klap/np.cuh} */
        public boolean usesRuntime() {
            return !transformed.isEmpty();
        }
    }

    /** One emitted variant of a kernel. */
    private record Variant(NpKernel kernel, boolean inter, int slaves) {
    }

    /**
     * Runs the pass.
     *
     * @param unit a parsed unit without errors
     * @param opt  the options
     * @return the result; never throws on user input
     */
    public static Result run(CudaUnit unit, Options opt) {
        List<Diagnostic> diags = new ArrayList<>();
        SourceFile src = unit.file();
        List<Pragma> np = unit.pragmas().stream().filter(p -> NpPragma.isNp(p.text())).toList();
        if (np.isEmpty()) {
            return new Result(src.text(), diags, List.of(), "");
        }
        NpPlanner planner = new NpPlanner(unit, diags);
        Map<FunctionDef, List<Variant>> done = new LinkedHashMap<>();
        // where each kernel's variant prototypes go (prototypesAt), found once for its check and its emission
        Map<FunctionDef, Integer> protoAt = new java.util.HashMap<>();
        List<Pragma> claimed = new ArrayList<>();
        for (FunctionDef f : unit.functions()) {
            List<Pragma> mine = np.stream().filter(p -> f.body().range().contains(p.range())).toList();
            claimed.addAll(mine);
            if (mine.isEmpty()) {
                continue;
            }
            if (f.kind() != FunctionDef.Kind.KERNEL) {
                diags.add(Diagnostic.at(Diagnostic.Severity.WARNING, src, mine.get(0).range().offset(),
                        "#pragma np ignored: '" + f.name() + "' is not a __global__ kernel (klap grows the "
                                + "thread block of a kernel)", "np"));
                continue;
            }
            if (src.slice(f.paramsRange()).contains("=")
                    || (f.firstDeclaration() != null && src.slice(f.firstDeclaration()).matches("(?s)[^(]*\\(.*=.*"))) {
                diags.add(Diagnostic.at(Diagnostic.Severity.WARNING, src, f.nameRange().offset(), "kernel '"
                        + f.name() + "' is left as written: default arguments are not supported", "np"));
                continue;
            }
            if (unit.functions().stream().filter(g -> g.name().equals(f.name())).count() > 1
                    || unit.kernelsDeclaredElsewhere().contains(f.name())) {
                diags.add(Diagnostic.at(Diagnostic.Severity.WARNING, src, f.nameRange().offset(), "kernel '"
                        + f.name() + "' is left as written: it is overloaded, and klap rewrites launches by name", "np"));
                continue;
            }
            if (src.text().substring(0, f.nameRange().offset()).stripTrailing().endsWith("::")) {
                // its variant would be declared, qualified, where no namespace declares it
                diags.add(Diagnostic.at(Diagnostic.Severity.WARNING, src, f.nameRange().offset(), "kernel '"
                        + f.name() + "' is left as written: its definition names it with a qualifier (defined outside "
                        + "its namespace), which klap does not repeat for the CUDA-NP variant", "np"));
                continue;
            }
            // (a prototype needs no class complete: a class taken by value may be defined later)
            int at = f.firstDeclaration() == null ? -1 : prototypesAt(unit, f);
            protoAt.put(f, at);
            FunctionDef.Need late = at < 0 ? null : f.lateNeed(at, false);
            if (late != null) {
                // the variant's prototype copies the definition's signature (2026-11-30: a typedef between
                // the first declaration and the definition, "identifier real is undefined")
                diags.add(Diagnostic.at(Diagnostic.Severity.WARNING, src, f.nameRange().offset(), "kernel '" + f.name()
                        + "' is left as written: its definition's signature " + late.says(src) + ", after line "
                        + src.line(at) + ", where klap must declare the CUDA-NP variant (" + (f.namespace().isEmpty() && f.memberOf() == null
                        ? "before the first function that launches the kernel" : "after the kernel's first declaration")
                        + "); " + late.fix() + " before that line to transform it", "np"));
                continue;
            }
            NpPlan plan = planner.plan(f, mine);
            if (plan == null) {
                continue;
            }
            List<Variant> vs = variants(plan, opt, src, diags);
            if (!vs.isEmpty()) {
                done.put(f, vs);
            }
        }
        for (Pragma p : np) {
            if (!claimed.contains(p)) {
                diags.add(Diagnostic.at(Diagnostic.Severity.WARNING, src, p.range().offset(),
                        "#pragma np ignored: it is not inside a kernel", "np"));
            }
        }
        if (done.isEmpty()) {
            return new Result(src.text(), diags, List.of(), "no kernel transformed (--np=" + opt.mode().cliName()
                    + "): see the warnings");
        }
        EditSet out = new EditSet(src.text());
        out.insert(0, "#include \"klap/np.cuh\" /* added by klap --np=" + opt.mode().cliName() + " */\n"
                + src.lineDirective(0));
        List<String> names = new ArrayList<>();
        int launches = 0;
        for (Map.Entry<FunctionDef, List<Variant>> e : done.entrySet()) {
            FunctionDef k = e.getKey();
            StringBuilder defs = new StringBuilder();
            StringBuilder protos = new StringBuilder();
            // a host launch that leaves template arguments to deduction (or defaults) names the variant
            // through the deduction helper (NpKernel.deduction), unless klap cannot repeat the defaults
            // or checked the variant only with the template arguments the file writes out
            java.util.Set<String> consulted = planner.consultedTemplateParameters(k);
            List<Expr.Launch> hosts = hostLaunches(unit, k);
            List<String> checked = List.of();
            if (consulted.size() == 1 && hosts.stream().anyMatch(l -> l.templateArgs() == null)) {
                checked = checkedTypes(unit, k, consulted.iterator().next(), np, e.getValue(), opt);
            }
            Kept kept = new Kept(k, src, k.templateHeader() == null ? null
                    : TemplateDeduction.redeclaredWithItsDefaults(k, src.text()), consulted, checked);
            boolean deduce = hosts.stream().anyMatch(l -> kept.leaves(l) && kept.why(l) == null);
            String condition = checked.isEmpty() ? null : checked.stream().map(t -> "::cuda::std::is_same<"
                    + consulted.iterator().next() + ", " + t + ">::value").collect(java.util.stream.Collectors.joining(" || "));
            for (Variant v : e.getValue()) {
                defs.append(v.kernel().emit());
                protos.append(v.kernel().prototype());
                if (deduce && k.firstDeclaration() != null) {
                    protos.append(v.kernel().deduction(condition));
                } else if (deduce) {
                    defs.append(v.kernel().deduction(condition)).append(src.lineDirective(k.range().end()));
                }
            }
            int next = protoAt.get(k);
            // (C++ linkage: a kernel defined in an extern "C" { } block after its prototype outside it
            // gave the variant's definition C linkage, its prototype C++ linkage; nvcc error)
            if (next == k.range().end()) {
                // no launch before the definition needs them: declared with the definitions
                out.insert(next, klap.transform.Linkage.cpp(k, protos + defs.toString()));
            } else {
                out.insert(k.range().end(), klap.transform.Linkage.cpp(k, defs.toString()));
                if (next >= 0) {
                    out.insert(next, klap.transform.Linkage.cpp(k, protos.toString()) + src.lineDirective(next));
                }
            }
            names.add(k.name());
            launches += rewriteLaunches(unit, k, hosts, e.getValue(), opt, kept, out, diags);
        }
        StringBuilder sum = new StringBuilder();
        sum.append(names.size()).append(names.size() == 1 ? " kernel" : " kernels").append(" transformed (--np=")
                .append(opt.mode().cliName()).append("): ");
        List<String> parts = new ArrayList<>();
        for (Map.Entry<FunctionDef, List<Variant>> e : done.entrySet()) {
            List<String> v = e.getValue().stream().map(x -> (x.inter() ? "inter-warp" : "intra-warp") + " S=" + x.slaves())
                    .toList();
            parts.add(e.getKey().name() + " (" + String.join(", ", v) + ")");
        }
        sum.append(String.join(", ", parts)).append("; ").append(launches).append(" host launch")
                .append(launches == 1 ? "" : "es").append(" rewritten");
        return new Result(out.render(), diags, List.copyOf(names), sum.toString());
    }

    /**
     * @return where the variants' prototypes of kernel {@code k}, first declared before its
     *         definition, go: the line after that declaration ({@link #prototypesAt(SourceFile,
     *         FunctionDef)}) where the definition's signature text is valid there. Otherwise, for a
     *         kernel at file scope (2026-11-30, an eighth session; it was left as written): where the
     *         first function that launches it before its definition begins at file scope ({@link
     *         FunctionDef#fileScopeStart}), or, with no such launch, the end of the definition. Only the
     *         host launches klap rewrites ({@link #hostLaunches}) name the variants.
     */
    private static int prototypesAt(CudaUnit unit, FunctionDef k) {
        int at = prototypesAt(unit.file(), k);
        if (k.lateNeed(at, false) == null || !k.namespace().isEmpty() || k.memberOf() != null) {
            return at;
        }
        int first = k.range().end();
        for (Expr.Launch l : hostLaunches(unit, k)) {
            for (FunctionDef h : unit.functions()) {
                if (h.kind() == FunctionDef.Kind.HOST && h.body().range().contains(l.range()) && l.range().offset() < k.range().offset()) {
                    first = Math.min(first, h.fileScopeStart());
                }
            }
        }
        return first;
    }

    /** @return where the variants' prototypes of kernel {@code k}, first declared before its definition, go: the line after that declaration */
    private static int prototypesAt(SourceFile src, FunctionDef k) {
        return src.line(k.firstDeclaration().end()) < lineCount(src)
                ? src.lineStart(src.line(k.firstDeclaration().end()) + 1) : src.text().length();
    }

    private static int lineCount(SourceFile src) {
        return src.line(src.text().length());
    }

    private static List<Variant> variants(NpPlan plan, Options opt, SourceFile src, List<Diagnostic> diags) {
        FunctionDef k = plan.kernel();
        int at = k.nameRange().offset();
        boolean intra = opt.mode().intra();
        boolean inter = opt.mode().inter();
        if (plan.type() != null && opt.mode() == NpMode.ALL) {
            intra = plan.type().equals("intra_warp");
            inter = !intra;
        } else if (plan.type() != null && !plan.type().equals(opt.mode() == NpMode.INTRA_WARP ? "intra_warp" : "inter_warp")) {
            diags.add(Diagnostic.at(Diagnostic.Severity.WARNING, src, at, "kernel '" + k.name() + "': type("
                    + plan.type() + ") ignored, --np=" + opt.mode().cliName() + " decides the layout", "np"));
        }
        if (inter && plan.interReason() != null) {
            boolean fallback = opt.mode() == NpMode.ALL;
            diags.add(Diagnostic.at(Diagnostic.Severity.WARNING, src, at, "kernel '" + k.name() + "': no inter-warp "
                    + "variant: " + plan.interReason() + (fallback ? "; the intra-warp variant is emitted" : ""), "np"));
            inter = false;
            intra |= fallback;
        }
        List<Variant> out = new ArrayList<>();
        String header = src.text().substring(k.range().offset(), k.body().range().offset());
        int[] lb = NpKernel.launchBoundsAt(header);
        String first = lb == null ? "" : header.substring(lb[1], lb[2]).replaceAll("[\\s()]", "");
        int bound = first.matches("\\d{1,9}") ? Integer.parseInt(first) : 0;
        if (lb == null && k.bounded() && (inter || intra)) {
            // CDT read bounds (or a register limit) that the definition's text does not spell: a
            // macro writes them, or another declaration gives them; the variant cannot scale them
            diags.add(Diagnostic.at(Diagnostic.Severity.WARNING, src, at, "kernel '" + k.name() + "': its launch "
                    + "bounds or register limit are written by a macro or given on another declaration, which klap "
                    + "cannot multiply by the threads per group: a launch of the CUDA-NP variant with more threads per "
                    + "block than it can take runs the original kernel instead (at run time, with a warning); write "
                    + "__launch_bounds__(N) in the kernel's definition", "np"));
        }
        for (boolean lay : new boolean[] {false, true}) {
            if (lay ? !inter : !intra) {
                continue;
            }
            int s = plan.slaves() != 0 ? plan.slaves() : opt.slaves();
            if (!lay && Integer.bitCount(s) != 1) {
                diags.add(Diagnostic.at(Diagnostic.Severity.WARNING, src, at, "kernel '" + k.name() + "': num_slaves("
                        + s + ") is not a power of two, which the intra-warp layout needs; using " + opt.slaves(), "np"));
                s = opt.slaves();
            }
            if (bound > 0 && (long) bound * s > 1024) {
                diags.add(Diagnostic.at(Diagnostic.Severity.WARNING, src, at, "kernel '" + k.name() + "': no "
                        + (lay ? "inter" : "intra") + "-warp variant: __launch_bounds__(" + bound + ") times " + s
                        + " threads per group exceeds 1024", "np"));
                continue;
            }
            out.add(new Variant(new NpKernel(plan, src, lay, s), lay, s));
        }
        return out;
    }

    /**
     * @return the launches of {@code k} that klap rewrites: statements of their own in host functions
     *         (lambda bodies included), written outside macros, naming {@code k} unqualified or with
     *         {@code ::}
     */
    private static List<Expr.Launch> hostLaunches(CudaUnit unit, FunctionDef k) {
        List<Expr.Launch> out = new ArrayList<>();
        for (FunctionDef f : unit.functions()) {
            if (f.kind() != FunctionDef.Kind.HOST) {
                continue;
            }
            List<Stmt> stmts = new ArrayList<>();
            collect(f.body(), stmts);
            for (Stmt s : stmts) {
                if (s instanceof Stmt.ExprStmt es && unparen(es.expr()) instanceof Expr.Launch l && !l.inMacro()
                        && l.kernelName().replaceFirst("^::", "").equals(k.name())) {
                    out.add(l);
                }
            }
        }
        return out;
    }

    /**
     * Which host launches of kernel {@code k} keep running the original kernel, and why.
     *
     * @param k          the kernel
     * @param src        the unit's file
     * @param noDefaults null, or why klap cannot repeat a default template argument of {@code k}
     *                   ({@link TemplateDeduction#redeclaredWithItsDefaults})
     * @param consulted  the template type parameters whose written arguments the plan was checked with
     *                   ({@link NpPlanner#consultedTemplateParameters})
     * @param checked    where one was, the types with which klap would have emitted the same variants
     *                   ({@link #checkedTypes}): a deduced launch runs the variant for those only (the
     *                   deduction helper's condition), else the original kernel
     */
    private record Kept(FunctionDef k, SourceFile src, String noDefaults, java.util.Set<String> consulted,
                        List<String> checked) {
        /** @return true if {@code l} writes fewer template arguments than template {@code k} has */
        boolean leaves(Expr.Launch l) {
            return k.templateHeader() != null && leavesToDefaults(l, k, src);
        }

        /** @return why launch {@code l} runs the original kernel, or null if it runs the variant */
        String why(Expr.Launch l) {
            int declared = k.firstDeclaration() != null ? k.firstDeclaration().end() : k.range().end();
            if (l.range().offset() < declared) {
                return "it comes before the kernel's first declaration in this file, where klap declares the CUDA-NP "
                        + "variant; declare the kernel before it";
            }
            if (!leaves(l)) {
                return null;
            }
            String give = "; give every template argument explicitly (" + k.name() + "<...><<<...>>>)";
            if (noDefaults != null) {
                return "klap cannot name the variant's instantiation that C++ picks: " + noDefaults + give;
            }
            if (l.templateArgs() == null && !consulted.isEmpty() && checked.isEmpty()) {
                return "klap checked the variant's uses of " + String.join(", ", consulted) + " only with the template "
                        + "arguments this file writes out (k<...>), not with what C++ deduces here" + give;
            }
            if (holdsLambda(l)) {
                return "an argument holds a lambda, which C++17 does not allow where klap's deduction reads the "
                        + "arguments (decltype)" + give;
            }
            return null;
        }
    }

    /** The arithmetic types a deduced template type parameter is checked with ({@link #checkedTypes}). */
    private static final List<String> CANDIDATE_TYPES = List.of("bool", "char", "signed char", "unsigned char", "short",
            "unsigned short", "int", "unsigned int", "long", "unsigned long", "long long", "unsigned long long", "float",
            "double");

    /**
     * For a template kernel whose plan read the template arguments the file writes for its type
     * parameter {@code param} (a reduction variable or local of that type): the types for which klap
     * would have emitted exactly the variants {@code vs} had the file also written {@code k<type>}
     * (each of {@link #CANDIDATE_TYPES} is planned again). A launch that leaves the arguments to
     * deduction runs the variant only when C++ deduces one of them (a compile-time condition of the
     * deduction helper), else the original kernel: the variant is then proven by the same rules as
     * for an explicit {@code k<type>}.
     *
     * @return those types, in {@link #CANDIDATE_TYPES}' order
     */
    private static List<String> checkedTypes(CudaUnit unit, FunctionDef k, String param, List<Pragma> np, List<Variant> vs,
                                             Options opt) {
        List<Pragma> mine = np.stream().filter(p -> k.body().range().contains(p.range())).toList();
        List<String> out = new ArrayList<>();
        for (String type : CANDIDATE_TYPES) {
            List<Diagnostic> scratch = new ArrayList<>();
            NpPlan plan = new NpPlanner(unit, scratch, k, param, type).plan(k, mine);
            List<Variant> again = plan == null ? List.of() : variants(plan, opt, unit.file(), scratch);
            boolean same = again.size() == vs.size();
            for (int i = 0; same && i < vs.size(); i++) {
                same = again.get(i).inter() == vs.get(i).inter() && again.get(i).slaves() == vs.get(i).slaves()
                        && again.get(i).kernel().emit().equals(vs.get(i).kernel().emit());
            }
            if (same) {
                out.add(type);
            }
        }
        return out;
    }

    /**
     * @param mine the launches of {@code k} klap rewrites ({@link #hostLaunches})
     * @param kept which launches run the original kernel
     * @return the number of host launches of {@code k} rewritten
     */
    private static int rewriteLaunches(CudaUnit unit, FunctionDef k, List<Expr.Launch> mine, List<Variant> vs, Options opt,
                                       Kept kept, EditSet out, List<Diagnostic> diags) {
        SourceFile src = unit.file();
        int n = 0;
        for (FunctionDef f : unit.functions()) {
            if (f.kind() != FunctionDef.Kind.HOST) {
                continue;
            }
            List<Stmt> stmts = new ArrayList<>();
            collect(f.body(), stmts);
            List<Expr.Launch> rewritten = new ArrayList<>();
            for (Stmt s : stmts) {
                if (s instanceof Stmt.ExprStmt es && unparen(es.expr()) instanceof Expr.Launch l && mine.contains(l)) {
                    String why = kept.why(l);
                    if (why == null && configurationSharesText(l)) {
                        // #define CFG 4, 128 ... k<<<CFG>>>: grid and block are the same text, which klap would
                        // copy into both (review 2026-12-01: both became the comma operator, 128 and 128)
                        why = "a macro writes more than one part of its launch configuration, which klap cannot split";
                    }
                    if (why != null) {
                        diags.add(Diagnostic.at(Diagnostic.Severity.WARNING, src, l.range().offset(), "this launch "
                                + "of '" + k.name() + "' runs the original kernel: " + why, "np"));
                        rewritten.add(l);
                        continue;
                    }
                    out.replace(s.range().offset(), s.range().end(), launch(src, k, l, vs, opt, kept.leaves(l),
                            qualifier(k, f)));
                    rewritten.add(l);
                    n++;
                }
            }
            for (Stmt s : stmts) {
                for (Expr e : Trees.ownExprs(s)) {
                    Trees.walk(e, x -> {
                        if (x instanceof Expr.Launch l && l.kernelName().replaceFirst("^::", "").equals(k.name())
                                && !rewritten.contains(l)) {
                            diags.add(Diagnostic.at(Diagnostic.Severity.WARNING, src, l.range().offset(), "this launch "
                                    + "of '" + k.name() + "' runs the original kernel: klap rewrites launches that are "
                                    + (l.inMacro() ? "written outside macros" : "statements of their own"), "np"));
                        } else if (x instanceof Expr.Launch l && l.kernelName().endsWith("::" + k.name())
                                && !l.kernelName().replaceFirst("^::", "").equals(k.name())) {
                            diags.add(Diagnostic.at(Diagnostic.Severity.WARNING, src, l.range().offset(), "this launch "
                                    + "of '" + l.kernelName() + "' runs the original kernel: klap rewrites launches "
                                    + "that name a kernel without a namespace qualifier (or with ::)", "np"));
                        }
                    });
                }
            }
        }
        return n;
    }

    /**
     * @return true if launch {@code l} of template kernel {@code k} writes fewer template arguments
     *         than {@code k} has parameters (the others are deduced or take their defaults)
     */
    private static boolean leavesToDefaults(Expr.Launch l, FunctionDef k, SourceFile src) {
        List<String> params = TemplateParams.inner(src.slice(k.templateHeader()));
        if (l.templateArgs() == null) {
            return true;
        }
        List<String> written = TemplateParams.inner(l.templateArgs());
        return params == null || written == null || written.size() < params.size();
    }

    /** @return true if an argument of {@code l} holds a lambda expression */
    private static boolean holdsLambda(Expr.Launch l) {
        boolean[] found = {false};
        for (Expr a : l.args()) {
            Trees.walk(a, x -> found[0] |= x instanceof Expr.Lambda);
        }
        return found[0];
    }

    /** Collects the statements of a host function, those of lambda bodies included. */
    private static void collect(Stmt root, List<Stmt> out) {
        Trees.walkStmts(root, s -> {
            out.add(s);
            for (Expr e : Trees.ownExprs(s)) {
                Trees.walk(e, x -> {
                    if (x instanceof Expr.Lambda lam) {
                        collect(lam.body(), out);
                    }
                });
            }
        });
    }

    /** @return true if two parts of {@code l}'s configuration (grid, block, shared memory, stream) share source text */
    private static boolean configurationSharesText(Expr.Launch l) {
        List<klap.model.SourceRange> parts = new ArrayList<>();
        for (Expr e : new Expr[] {l.grid(), l.block(), l.sharedMem(), l.stream()}) {
            if (e != null) {
                parts.add(e.range());
            }
        }
        for (int i = 0; i < parts.size(); i++) {
            for (int j = i + 1; j < parts.size(); j++) {
                if (parts.get(i).offset() < parts.get(j).end() && parts.get(j).offset() < parts.get(i).end()) {
                    return true;
                }
            }
        }
        return false;
    }

    private static Expr unparen(Expr e) {
        while (e instanceof Expr.Other o && o.children().size() == 1) {
            e = o.children().get(0);
        }
        return e;
    }

    /**
     * @return the qualifier of the names klap declares beside kernel {@code k} where host function
     *         {@code where} launches it unqualified: empty inside {@code k}'s namespace, else
     *         {@code ::a::b::} (the launch found {@code k} through a using-declaration, which does not
     *         bring klap's names along)
     */
    private static String qualifier(FunctionDef k, FunctionDef where) {
        String ns = k.namespace() == null ? "" : k.namespace();
        String at = where.namespace() == null ? "" : where.namespace();
        return ns.isEmpty() || at.equals(ns) || at.startsWith(ns + "::") ? "" : "::" + ns + "::";
    }

    /**
     * @param deduced the launch leaves template arguments to deduction or defaults: each variant is
     *                named through its deduction helper ({@link NpKernel#deduction}), with the
     *                template arguments the launch writes
     * @param qual    the qualifier of klap's names at the launch ({@link #qualifier})
     */
    private static String launch(SourceFile src, FunctionDef k, Expr.Launch l, List<Variant> vs, Options opt,
                                 boolean deduced, String qual) {
        String targs = l.templateArgs() == null ? "" : l.templateArgs();
        String args = src.slice(l.argsRange()).strip();
        String stream = "klap_np_st";
        String shm = l.sharedMem() == null ? "0" : src.slice(l.sharedMem().range());
        StringBuilder sb = new StringBuilder("{ /* klap --np=" + opt.mode().cliName() + " */ const dim3 klap_np_gd = ("
                + src.slice(l.grid().range()) + "); const dim3 klap_np_b = (" + src.slice(l.block().range())
                + "); const unsigned klap_np_m = klap_np_b.x * klap_np_b.y * klap_np_b.z; "
                + "const size_t klap_np_shm = (size_t)(" + shm + "); const size_t klap_np_base = klap::np::align16(klap_np_shm); "
                + "const cudaStream_t klap_np_st = (" + (l.stream() == null ? "0" : src.slice(l.stream().range())) + "); "
                + "klap::np::LaunchMemory klap_np_mem; ");
        if (deduced) {
            // C++ deduces each variant's template arguments as it does the kernel's (NpKernel.deduction)
            String q = qual.isEmpty() && l.kernelName().startsWith("::") ? "::" : qual;
            for (int i = 0; i < vs.size(); i++) {
                sb.append("const auto klap_np_k").append(i).append(" = ::cuda::std::remove_pointer_t<decltype(").append(q)
                        .append(vs.get(i).kernel().deduceName()).append(targs).append("(").append(args)
                        .append("))>::kernel; ");
            }
        }
        if (opt.mode() == NpMode.ALL) {
            sb.append("const klap::np::Variant klap_np_v = klap::np::chosen(\"").append(k.name())
                    .append("\", klap::np::Variant::").append(vs.get(0).inter() ? "inter_warp" : "intra_warp").append("); ");
        }
        for (Variant v : vs) {
            String name = deduced ? "klap_np_k" + vs.indexOf(v) : qual + v.kernel().name() + targs;
            sb.append("if (");
            if (deduced) {
                sb.append(name).append(" != nullptr && ");  // null where C++ deduces a type klap did not check
            }
            if (opt.mode() == NpMode.ALL) {
                sb.append("klap_np_v == klap::np::Variant::").append(v.inter() ? "inter_warp" : "intra_warp").append(" && ");
            }
            sb.append("klap::np::fits(klap_np_m, ").append(v.slaves()).append(") && klap::np::launch_memory(").append(name)
                    .append(", klap_np_m * ").append(v.slaves()).append(", klap_np_base, ").append(v.kernel().scratchBytes("klap_np_m")).append(", ")
                    .append(v.kernel().arrayBytes("klap_np_m")).append(", klap_np_gd, (size_t)").append(opt.sharedBudget())
                    .append(", ").append(stream).append(", klap_np_mem)) { ")
                    .append(name).append("<<<klap_np_gd, klap_np_m * ").append(v.slaves()).append(", klap_np_mem.dyn, ")
                    .append(stream).append(">>>(").append(args).append(args.isEmpty() ? "" : ", ")
                    .append("klap_np_b, (unsigned)klap_np_base, klap_np_mem.global); klap::np::release(klap_np_mem, ")
                    .append(stream).append("); } else ");
        }
        // the original kernel: as asked (KLAP_NP=original), or because the variant cannot run this
        // launch (a one-time warning says so, so that no one times the original under an np name)
        String missing = "nullptr";
        if (opt.mode() == NpMode.ALL && vs.size() == 1) {
            String absent = vs.get(0).inter() ? "intra_warp" : "inter_warp";
            missing = "klap_np_v == klap::np::Variant::" + absent + " ? \"klap emitted no " + absent.replace('_', '-')
                    + " variant of this kernel (see its klap-np warnings)\" : nullptr";
        }
        if (deduced) {
            missing = "klap_np_k0 == nullptr ? \"klap checked the CUDA-NP variant with other template arguments than "
                    + "this launch deduces\" : " + missing;
        }
        sb.append("{ ").append(opt.mode() == NpMode.ALL ? "if (klap_np_v != klap::np::Variant::original) " : "")
                .append("klap::np::fallback(\"").append(k.name()).append("\", klap_np_m, ").append(missing).append("); ")
                .append(l.kernelName()).append(targs).append("<<<klap_np_gd, klap_np_b, klap_np_shm, ").append(stream)
                .append(">>>(").append(args).append("); } }");
        return sb.toString();
    }
}
