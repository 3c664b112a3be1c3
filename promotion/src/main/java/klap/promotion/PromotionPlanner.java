package klap.promotion;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import klap.model.CudaUnit;
import klap.model.Diagnostic;
import klap.model.Expr;
import klap.model.FunctionDef;
import klap.model.Param;
import klap.model.Pragma;
import klap.model.SourceFile;
import klap.model.SourceRange;
import klap.model.Stmt;
import klap.model.VarDecl;
import klap.transform.Builtins;
import klap.transform.Mutations;
import klap.transform.TemplateDeduction;
import klap.transform.Trees;

/**
 * Decides which kernels launch promotion applies to (KLAP section III) and proves the facts the
 * rewrite relies on. Input: a kernel of the unit. Output: a {@link PromotionPlan}, or a warning that
 * says why the kernel is left as written, or nothing for a kernel that does not launch itself.
 *
 * <p>A kernel K is promoted only when all of these hold (each is what makes the rewritten chain
 * equivalent to the CDP one under CDP2's rules; PLATFORM.md):
 * <ol>
 *   <li>K is not a member, {@code extern "C"} or overloaded function (a template launches exactly its
 *       own instantiation: {@code K<B, T><<<...>>>} in {@code template <int B, typename T>}), its parameters are
 *       named values (no references, no arrays, not {@code __restrict__}), it does not call
 *       {@code __ldg} (a descendant runs while its predecessor writes; non-coherent reads may miss
 *       that), and its body has no {@code goto}. For PA/PAO, no function it calls and no lambda in it
 *       reads {@code blockIdx}, {@code gridDim} or a cooperative group (only the body's own text can
 *       be given block 0 of a grid of 1);</li>
 *   <li>its only device launch is one statement {@code K<<<1, B[, S[, stream]]>>>(args);}
 *       written out in the source (not by a macro), outside every loop, with grid 1, the stream
 *       absent, 0 or {@code cudaStreamFireAndForget}, and B and S integers built only from values
 *       every descendant has (integer pass-through parameters, integer constants declared outside
 *       the kernel, or exactly {@code blockDim}/{@code blockDim.x});</li>
 *   <li>only thread 0 can reach it: it lies in the then-branch of an {@code if} whose condition
 *       has a top-level conjunct {@code threadIdx.x == 0} (or a local that holds
 *       {@code threadIdx.x} and is never written). Descendants get one-dimensional blocks; unless
 *       the guard also has {@code threadIdx.y == 0} and {@code threadIdx.z == 0}, the generated host
 *       instance fails loudly at run time if it is launched with a block that is not
 *       one-dimensional. Each block of a multi-block host launch starts a chain of its own, as
 *       each block's thread 0 did;</li>
 *   <li>each argument is classified (PASS, INDUCTION, POSTPONED, see {@link PromotionPlan.ArgKind}):
 *       only parameters that no statement of K writes ({@link Mutations}) are PASS or INDUCTION, and
 *       an induction step is an integer built like B.</li>
 * </ol>
 * For PO and PAO, the statements before a top-level {@code #pragma klap overlap} run before the
 * acquire (KLAP III-C). The planner requires a launch condition computable at the start and leaves
 * the paper's two conditions to {@link OverlapCheck}, which keeps the overlap only if: the part uses no postponed parameter and contains no
 * return, launch or jump; it writes nothing but locals and {@code __shared__} arrays and calls
 * nothing that may have a visible effect; every memory it reads is traced to a parameter or a
 * global, and none of them is written (by a store, an atomic or a call) between the pragma and the
 * launch (the parent's dependent prologue); the launch condition can be evaluated at the start
 * (it drives the existence chain, so that no descendant past the end runs the part). Pointers that
 * are different parameters are assumed not to overlap, and the warning {@code klap-overlap-alias}
 * says so.
 */
public final class PromotionPlanner {
    private static final Set<String> GRID_ONE = Set.of("1", "1u", "1U", "dim3(1)", "dim3(1,1)", "dim3(1,1,1)");
    private static final Set<String> STREAM_OK = Set.of("0", "NULL", "nullptr", "cudaStreamFireAndForget",
            "(cudaStream_t)0");
    private static final Set<String> BLOCK_DIM = Set.of("blockDim", "blockDim.x");
    private static final Pattern INTEGRAL_OR_POINTER = Pattern.compile(
            "(?s)(\\s|const|volatile|unsigned|signed|int|long|short|char|size_t|ptrdiff_t|u?int(8|16|32|64)_t|__restrict__)*");
    private static final Pattern INTEGER_LITERAL = Pattern.compile("(0[xX][0-9a-fA-F']+|[0-9][0-9']*)[uUlL]*");
    private static final Pattern INTEGRAL_TYPE = Pattern.compile(
            "(?s)(\\s|const|volatile|unsigned|signed|int|long|short|char|size_t|ptrdiff_t|u?int(8|16|32|64)_t)*");

    private final CudaUnit unit;
    private final SourceFile src;
    /** The names declared in the body of the kernel being planned (a CONSTANT among them is local). */
    private Set<String> locals = Set.of();
    /** The integral types of the kernel's parameters, by name. */
    private Set<String> integralParams = Set.of();
    /** The kernel's parameters, and those declared as pointers. */
    private Set<String> allParams = Set.of();
    private Set<String> pointerParams = Set.of();
    /** The kernel's integral non-type template parameters ({@code int B} of {@code template <int B>}). */
    private Set<String> templateValues = Set.of();
    /** the kernel being planned: its body's text (comments and literals blanked) and where its names are used */
    private FunctionDef planned;
    private String plannedBody;
    private Set<Integer> nameUses = Set.of();
    /** the launch's block size is {@code blockDim.x} or {@code blockDim}: every descendant has the parent's {@code blockDim.x} */
    private boolean sameBlockDim;
    private final PromoteMode mode;
    private final int depth;
    private final List<Diagnostic> diags;

    /**
     * @param unit  the parsed unit
     * @param mode  the variant asked for
     * @param depth the n of PA-n/PAO-n (ignored for P and PO)
     * @param diags where warnings go
     */
    public PromotionPlanner(CudaUnit unit, PromoteMode mode, int depth, List<Diagnostic> diags) {
        this.unit = unit;
        this.src = unit.file();
        this.mode = mode;
        this.depth = depth;
        this.diags = diags;
    }

    /** A refusal: the kernel stays as written. */
    private static final class Refusal extends Exception {
        final int offset;

        Refusal(int offset, String message) {
            super(message, null, false, false);
            this.offset = offset;
        }
    }

    /**
     * @param k a function of the unit
     * @return the plan, or null if {@code k} is not a kernel that launches itself, or cannot be
     *         promoted (then a warning {@code klap-promote} was added)
     */
    public PromotionPlan plan(FunctionDef k) {
        if (k.kind() != FunctionDef.Kind.KERNEL) {
            return null;
        }
        List<Expr.Launch> launches = new ArrayList<>();
        Trees.walkExprs(k.body(), e -> {
            if (e instanceof Expr.Launch l) {
                launches.add(l);
            }
        });
        List<Expr.Launch> self = launches.stream().filter(l -> simple(l.kernelName()).equals(k.name())).toList();
        if (self.isEmpty()) {
            return null;
        }
        try {
            return planSelfLaunch(k, launches, self.get(0));
        } catch (Refusal r) {
            warn(r.offset, "kernel '" + k.name() + "' is not promoted: " + r.getMessage(), "promote");
            return null;
        }
    }

    private PromotionPlan planSelfLaunch(FunctionDef k, List<Expr.Launch> launches, Expr.Launch l) throws Refusal {
        int at = l.range().offset();
        for (Expr.Launch m : launches) {
            if (m.inMacro()) {
                throw new Refusal(m.range().offset(), "it makes a launch written in a macro ('" + m.kernelName()
                        + "'), which klap cannot rewrite");
            }
        }
        templateValues = Set.of();
        if (k.templateHeader() != null) {
            List<String> tps = PromotedKernel.templateParams(k, src);
            if (tps == null) {
                throw new Refusal(at, "its template has a parameter pack or an unnamed parameter");
            }
            String own = "<" + String.join(",", tps) + ">";
            templateValues = new HashSet<>();
            for (String part : src.slice(k.templateHeader()).split("[<,>]")) {
                String d = part.contains("=") ? part.substring(0, part.indexOf('=')) : part;
                java.util.regex.Matcher m = Pattern.compile("^\\s*(.*\\S)\\s+([A-Za-z_][A-Za-z0-9_]*)\\s*$").matcher(d);
                if (m.find() && INTEGRAL_TYPE.matcher(m.group(1)).matches()) {
                    templateValues.add(m.group(2));
                }
            }
            // without arguments: what C++ deduces ([temp.deduct.call]) names the own instantiation where
            // a parameter T* passes a T* of this kernel for every T (TemplateDeduction's exact forms)
            String args = l.templateArgs() != null ? l.templateArgs()
                    : TemplateDeduction.deduce(k, l, k, src.text(), unit.implicitCalls());
            if (args == null || !compactText(args).equals(own)) {
                throw new Refusal(at, l.templateArgs() != null ? "the launch names '" + l.templateArgs()
                        + "', not the kernel's own '" + own + "': it starts another instantiation, not the next "
                        + "link of this chain" : "the launch names no template arguments, and klap cannot prove that "
                        + "C++ deduces the kernel's own '" + own + "' (it proves it from a parameter T* passed a T* of "
                        + "the kernel, for each T); write " + k.name() + own + "<<<...>>>(...) if that is the "
                        + "instantiation it starts");
            }
        }
        if (k.memberOf() != null || k.externC()) {
            throw new Refusal(at, "member and extern \"C\" kernels are not promoted");
        }
        if (unit.functions().stream().filter(f -> f.name().equals(k.name()) && f.memberOf() == null
                && f.namespace().equals(k.namespace())).count() > 1 || declaredOverload(k)) {
            throw new Refusal(at, "it is overloaded; promotion needs to know which '" + k.name() + "' the launch calls");
        }
        for (Param p : k.params()) {
            if (src.slice(p.range()).contains("(")) {
                throw new Refusal(p.range().offset(), "parameter '" + src.slice(p.range()).strip()
                        + "' is a function pointer");
            }
        }
        if (launches.size() != 1) {
            throw new Refusal(at, "it has " + launches.size() + " device launch sites; promotion applies to a kernel "
                    + "whose only launch is one launch of itself (KLAP III, Fig. 5a)");
        }
        Trees trees = new Trees(k.body());
        Stmt owner = trees.owner(l);
        if (!(owner instanceof Stmt.ExprStmt site) || !site.expr().range().equals(l.range())) {
            throw new Refusal(at, "the launch is part of a larger expression; write it as a statement of its own");
        }
        if (!src.startsWithWord(l.range(), k.name())) {
            String written = l.inMacro() ? "" : src.slice(l.calleeRange()).strip();
            throw new Refusal(at, l.inMacro() ? "the launch is written by a macro"
                    : "the launch names the kernel '" + written + "'" + (written.matches("\\w+") ? " (a macro)" : "")
                    + "; klap promotes a launch written '" + k.name() + "<<<...>>>(...)'");
        }
        if (trees.enclosingLoop(site) != null) {
            throw new Refusal(at, "the launch is inside a loop, so one kernel may launch several successors");
        }
        if (Trees.collect(k.body(), Stmt.Jump.class).stream().anyMatch(j -> j.kind() == Stmt.JumpKind.GOTO)) {
            throw new Refusal(at, "its body uses goto");
        }
        for (Param p : k.params()) {
            String decl = src.slice(p.range());
            if (p.name().isEmpty() || decl.contains("&") || decl.contains("[")) {
                throw new Refusal(p.range().offset(), "parameter '" + decl.strip()
                        + "' is unnamed, a reference or an array");
            }
            if (decl.contains("__restrict__") || decl.contains("__restrict ")) {
                // the compiler may read a const __restrict__ pointer through the non-coherent cache, which
                // does not see what an earlier link of the chain wrote while this grid already ran
                throw new Refusal(p.range().offset(), "parameter '" + decl.strip() + "' is __restrict__: a "
                        + "promoted descendant runs while its predecessor writes, and restrict reads may bypass "
                        + "the coherent cache; remove __restrict__ to promote it");
            }
        }
        for (Param p : k.params()) {
            for (String alias : restrictAliases()) {
                if (Pattern.compile("\\b" + Pattern.quote(alias) + "\\b").matcher(src.slice(p.range())).find()) {
                    throw new Refusal(p.range().offset(), "parameter '" + src.slice(p.range()).strip() + "' is __restrict__ "
                            + "(through '" + alias + "'); remove __restrict__ to promote it");
                }
            }
        }
        String nonCoherent = nonCoherentRead(k, l);
        if (nonCoherent != null) {
            throw new Refusal(at, nonCoherent);
        }
        locals = new HashSet<>();
        for (Stmt.Decl d : Trees.collect(k.body(), Stmt.Decl.class)) {
            d.vars().forEach(v -> locals.add(v.name()));
        }
        String bodyText = blanked().substring(k.body().range().offset(),
                k.body().range().end());
        locals.addAll(declaredTypesAndEnumerators(bodyText));
        planned = k;
        plannedBody = bodyText;
        nameUses = new HashSet<>();
        Trees.walkExprsAndLambdas(k.body(), e -> {
            if (e instanceof Expr.Name n) {
                nameUses.add(n.range().offset());
            }
        });
        java.util.regex.Matcher using = Pattern.compile("\\busing\\s+(?!namespace\\b)[\\w\\s:<>,]*::\\s*(\\w+)\\s*;").matcher(bodyText);
        while (using.find()) {
            if (using.group(1).equals(k.name())) {
                throw new Refusal(k.body().range().offset() + using.start(), "its body declares 'using ..." + k.name()
                        + ";', so its launch of '" + k.name() + "' may start another kernel of that name");
            }
            locals.add(using.group(1));
        }
        // anywhere in the file: a macro may bring one into the kernel (#define STRIDE klap_j)
        java.util.regex.Matcher ours = Pattern.compile("\\bklap_\\w*").matcher(blanked());
        if (ours.find()) {
            throw new Refusal(ours.start(), "the file names '" + ours.group() + "': names that begin with 'klap_' are "
                    + "klap's own in the code it generates, where they would mean something else");
        }
        if (Pattern.compile("\\busing\\s+namespace\\b").matcher(bodyText).find()) {
            throw new Refusal(k.body().range().offset(), "its body has a using-directive, which may make its launch of '"
                    + k.name() + "' start another kernel or its constants mean others");
        }
        pointerParams = new HashSet<>();
        allParams = new HashSet<>();
        for (Param p : k.params()) {
            allParams.add(p.name());
            if (p.type(src.text()).contains("*")) {
                pointerParams.add(p.name());
            }
        }
        integralParams = new HashSet<>();
        for (Param p : k.params()) {
            if (INTEGRAL_TYPE.matcher(p.type(src.text())).matches()) {
                integralParams.add(p.name());
            }
        }
        OverlapCheck oc = new OverlapCheck(unit, mode, diags, k, locals, allParams, pointerParams, integralParams);
        if (mode.aggregates()) {
            String why = indexUse(k, oc.kernelArrays());
            if (why != null) {
                throw new Refusal(at, why + ": in a pool of descendants (--promote=" + mode.name() + ") each block "
                        + "must see blockIdx 0 and gridDim 1; use --promote=" + (mode.overlaps() ? "PO" : "P"));
            }
        }
        if (l.args().size() != k.params().size()) {
            throw new Refusal(at, "the launch passes " + l.args().size() + " arguments for " + k.params().size()
                    + " parameters");
        }
        if (!GRID_ONE.contains(compact(l.grid()))) {
            throw new Refusal(l.grid().range().offset(), "the grid of the launch is '" + src.slice(l.grid().range())
                    + "', not 1: promotion applies to single-block kernels (KLAP III)");
        }
        if (l.stream() != null && !STREAM_OK.contains(compact(l.stream()))) {
            throw new Refusal(l.stream().range().offset(), "the launch names the stream '"
                    + src.slice(l.stream().range()) + "'; promoted descendants run in cudaStreamFireAndForget");
        }
        if (!threadZeroGuarded(k, trees, site)) {
            throw new Refusal(at, "cannot prove that only one thread runs the launch: put it under "
                    + "'if (threadIdx.x == 0 ...)'");
        }
        sameBlockDim = BLOCK_DIM.contains(compact(l.block()));
        Set<String> written = Mutations.of(k, unit);
        List<PromotionPlan.Arg> args = classify(k, l, written);
        Set<String> pass = new HashSet<>();
        for (PromotionPlan.Arg a : args) {
            if (a.kind() == PromotionPlan.ArgKind.PASS) {
                pass.add(a.param().name());
            }
        }
        if (!BLOCK_DIM.contains(compact(l.block())) && (compact(l.block()).contains("dim3")
                || !invariant(l.block(), pass, true))) {
            throw new Refusal(l.block().range().offset(), "the block size '" + src.slice(l.block().range())
                    + "' is not the same one-dimensional size for every descendant (use blockDim.x, an integer "
                    + "constant, or an integer parameter passed on unchanged)");
        }
        if (l.sharedMem() != null && !invariant(l.sharedMem(), pass, true)) {
            throw new Refusal(l.sharedMem().range().offset(), "the dynamic shared memory size '"
                    + src.slice(l.sharedMem().range()) + "' is not the same for every descendant");
        }
        List<Expr> condition = mode.overlaps() ? condition(k, trees, site, args, oc) : null;
        Pragma overlap = condition != null ? oc.overlap(k, site, args) : null;
        return new PromotionPlan(k, site, l, args, overlap, overlap == null ? null : condition,
                mode.aggregates() ? depth : 1,
                guardedOn(trees, site, "threadIdx.y"), guardedOn(trees, site, "threadIdx.z"));
    }

    /** Classifies every argument of the self-launch (PASS first, then INDUCTION, which needs PASS). */
    private List<PromotionPlan.Arg> classify(FunctionDef k, Expr.Launch l, Set<String> written) {
        Set<String> pass = new HashSet<>();
        for (int i = 0; i < k.params().size(); i++) {
            Param p = k.params().get(i);
            if (!written.contains(p.name()) && isParam(l.args().get(i), p.name())) {
                pass.add(p.name());
            }
        }
        List<PromotionPlan.Arg> out = new ArrayList<>();
        for (int i = 0; i < k.params().size(); i++) {
            Param p = k.params().get(i);
            Expr a = l.args().get(i);
            if (pass.contains(p.name())) {
                out.add(new PromotionPlan.Arg(p, PromotionPlan.ArgKind.PASS, a, false, null));
                continue;
            }
            PromotionPlan.Arg ind = null;
            if (!written.contains(p.name()) && inductionType(p) && a instanceof Expr.Binary b
                    && (b.op().equals("+") || b.op().equals("-"))) {
                if (isParam(b.lhs(), p.name()) && invariant(b.rhs(), pass, true)) {
                    ind = new PromotionPlan.Arg(p, PromotionPlan.ArgKind.INDUCTION, a, b.op().equals("-"), b.rhs());
                } else if (b.op().equals("+") && isParam(b.rhs(), p.name()) && invariant(b.lhs(), pass, true)) {
                    ind = new PromotionPlan.Arg(p, PromotionPlan.ArgKind.INDUCTION, a, false, b.lhs());
                }
            }
            out.add(ind != null ? ind : new PromotionPlan.Arg(p, PromotionPlan.ArgKind.POSTPONED, a, false, null));
        }
        return out;
    }

    /** @return true if the parameter's type is integral or a pointer (exact induction arithmetic) */
    private boolean inductionType(Param p) {
        String type = p.type(src.text());
        return type.contains("*") || INTEGRAL_OR_POINTER.matcher(type).matches();
    }

    /**
     * @return true if {@code e} has the same value in every descendant: literals, constants declared
     *         outside the kernel, parameters passed on unchanged, and operators on them (no loads,
     *         calls or writes); with {@code integral}, also of an integer type (an induction step, a
     *         block size: floating point would round differently from link to link)
     */
    private boolean invariant(Expr e, Set<String> pass, boolean integral) {
        if (e instanceof Expr.Literal) {
            String t = compact(e);
            // a literal written by an object-like macro (#define TB 64) carries the macro's name as its text
            return !integral || INTEGER_LITERAL.matcher(t).matches() || Pattern.compile("(?m)^\\s*#\\s*define\\s+"
                    + Pattern.quote(t) + "\\s+\\(?\\s*" + INTEGER_LITERAL.pattern() + "\\s*\\)?\\s*(//.*)?$")
                    .matcher(src.text()).find();
        }
        if (e instanceof Expr.Name n) {
            if (templateValues.contains(n.name()) && !locals.contains(n.name())) {
                return true; // an integral template parameter: the same in every descendant (one instantiation)
            }
            if (n.kind() == Expr.NameKind.CONSTANT) {
                return !locals.contains(n.name()) && !bodyMayDeclare(n.name(), n.range())
                        && (!integral || integralConstant(n.name()));
            }
            return n.kind() == Expr.NameKind.PARAM && pass.contains(n.name())
                    && (!integral || integralParams.contains(n.name()));
        }
        if (e instanceof Expr.Unary u && u.op().equals("sizeof")) {
            return sizeofInvariant(u);
        }
        if (e instanceof Expr.Member m && !m.arrow() && m.owner() instanceof Expr.Name n && n.name().equals("blockDim")
                && n.kind() == Expr.NameKind.BUILTIN && m.member().equals("x")) {
            // the launch's block is blockDim.x (or blockDim): every descendant has this blockDim.x (review
            // 2026-12-01: a dynamic shared memory size blockDim.x * sizeof(int) was refused)
            return sameBlockDim && !locals.contains("blockDim");
        }
        if (e instanceof Expr.Unary u) {
            return Set.of("-", "+", "~", "!").contains(u.op()) && invariant(u.operand(), pass, integral);
        }
        if (e instanceof Expr.Binary b) {
            return !b.isAssignment() && !b.op().equals(",") && invariant(b.lhs(), pass, integral)
                    && invariant(b.rhs(), pass, integral);
        }
        if (e instanceof Expr.Cast c) {
            return (!integral || INTEGRAL_TYPE.matcher(c.typeText()).matches()) && invariant(c.operand(), pass, integral);
        }
        if (e instanceof Expr.Conditional c) {
            return invariant(c.cond(), pass, false) && invariant(c.then(), pass, integral)
                    && invariant(c.otherwise(), pass, integral);
        }
        return false;
    }

    /**
     * @return true if the file declares a kernel of the same name with a different number of
     *         parameters (an overload that is only declared here, e.g. in a prototype)
     */
    private boolean declaredOverload(FunctionDef k) {
        String own = typeList(src.text().substring(k.paramsRange().offset(), k.paramsRange().end()));
        var m = Pattern.compile("__global__[^;{}]*?\\b" + Pattern.quote(k.name()) + "\\s*\\(([^;{]*?)\\)\\s*[;{]")
                .matcher(src.text());
        while (m.find()) {
            if (!typeList(m.group(1)).equals(own)) {
                return true;
            }
        }
        return false;
    }

    private static final Set<String> TYPE_WORDS = Set.of("int", "long", "short", "char", "float", "double", "bool",
            "void", "unsigned", "signed", "size_t", "const", "volatile");

    /** @return the parameter types of a parameter list, names and default arguments dropped: "int*,int,long" */
    private static String typeList(String params) {
        List<String> out = new ArrayList<>();
        for (String p : params.split(",")) {
            String t = p.contains("=") ? p.substring(0, p.indexOf('=')) : p;
            t = t.strip();
            var m = Pattern.compile("^(.*[\\s*&])([A-Za-z_][A-Za-z0-9_]*)$").matcher(t);
            if (m.find() && !TYPE_WORDS.contains(m.group(2)) && !m.group(1).isBlank()) {
                t = m.group(1);
            }
            out.add(t.replaceAll("\\s+", ""));
        }
        return String.join(",", out);
    }

    /** @return the macros, typedefs and aliases of the file whose definition contains {@code __restrict__} */
    private List<String> restrictAliases() {
        List<String> out = new ArrayList<>();
        var m = Pattern.compile("(?m)^\\s*#\\s*define\\s+(\\w+)[^\\n]*__restrict").matcher(src.text());
        while (m.find()) {
            out.add(m.group(1));
        }
        m = Pattern.compile("typedef[^;]*__restrict__[^;]*?(\\w+)\\s*;").matcher(src.text());
        while (m.find()) {
            out.add(m.group(1));
        }
        m = Pattern.compile("using\\s+(\\w+)\\s*=[^;]*__restrict").matcher(src.text());
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }

    /** Reads through the non-coherent cache: {@code __ldg}, texture and surface fetches, {@code ld.global.nc}. */
    private static final Pattern NON_COHERENT_CALL = Pattern.compile("__ldg\\w*|tex(1D|2D|3D|Cubemap)\\w*|tex1Dfetch"
            + "|tex\\w*Lod|tex\\w*Grad|tex\\w*Layered|texture\\w*|surf\\w*");
    private static final Pattern NON_COHERENT_TEXT = Pattern.compile("ld\\.global[.\\w:]*?\\.nc\\b|\\bLOAD_LDG\\b|\\bLDG\\b"
            + "|\\bTex(?:Obj|Ref)InputIterator\\b");
    /** What may choose a non-coherent load for a template's instantiation (cub::CacheLoadModifier(5) is LOAD_LDG) */
    private static final Pattern NON_COHERENT_CHOICE = Pattern.compile(NON_COHERENT_TEXT.pattern()
            + "|\\bCacheLoadModifier\\b|\\bCacheModifiedInputIterator\\b|\\bThreadLoad\\b");
    /** Raw device launches, which the kernel's successor would not wait for once promoted. */
    private static final Set<String> RAW_LAUNCH = Set.of("cudaLaunchDevice", "cudaLaunchDeviceV2", "cudaGetParameterBuffer",
            "cudaGetParameterBufferV2");

    /**
     * @return why the kernel, or code it calls, may read global memory through a cache that does not
     *         see an earlier link's writes (a promoted descendant already runs while its predecessor
     *         writes; in the original, the child grid started after them, and the CUDA programming
     *         guide's coherence rule for texture memory is "at the invocation of a child grid"), or
     *         why klap cannot know (a call of a function whose body it does not see); or why the
     *         successor would no longer wait for work the kernel orders before its launch (review
     *         2026-11-27): a stream operation ({@code cudaMemcpyAsync}, ...), a raw launch, a CUB
     *         device-wide algorithm (review 2026-11-29), or a launch other than {@code self} in a function
     *         it calls or in a lambda; null if none
     */
    private String nonCoherentRead(FunctionDef k, Expr.Launch self) {
        if (NON_COHERENT_TEXT.matcher(outsideFunctions()).find()) {
            // a constexpr cub::CacheLoadModifier or a typedef of a CacheModifiedInputIterator: klap cannot tie
            // it to its uses (review 2026-11-27)
            return "the file defines, outside functions, a non-coherent load modifier or a texture iterator "
                    + "(cub::LOAD_LDG, ld.global.nc, cub::TexObjInputIterator), which klap cannot tie to its uses";
        }
        if (endsThreads()) {
            // the promoted link hands over to (or aborts) its successor after its body: a thread that ends
            // with exit (or returns from the kernel with ret) never gets there, and the successor waits
            // forever (review 2026-12-01). Anywhere in the file: a destructor, a constructor, an operator or
            // a lambda may run it where klap's model shows no call
            return "the file's device code ends threads with asm exit or ret, so a promoted link may never reach the "
                    + "end where it releases or aborts its early-launched successor";
        }
        java.util.Map<String, String> operatorClasses = operatorConcerns();
        if (k.templateHeader() != null) {
            // a template kernel's type parameter may be a CUB iterator that loads through ld.global.nc or a
            // texture, or a class of the file whose operator does, chosen where the kernel is instantiated
            // (in main, say): klap cannot tell which instantiation gets it (review 2026-12-01)
            java.util.regex.Matcher anywhere = NON_COHERENT_CHOICE.matcher(blanked());
            if (anywhere.find()) {
                return "it is a template, and the file names '" + anywhere.group() + "' (a non-coherent load modifier, "
                        + "a cache-modified or texture iterator), which one of its instantiations may get through a type parameter";
            }
            if (!operatorClasses.isEmpty()) {
                String cls = operatorClasses.keySet().iterator().next();
                return "it is a template, and the file's class '" + cls + "' has an operator ('" + operatorClasses.get(cls)
                        + "') that reads blockIdx, reads through the non-coherent cache or launches, which one of its "
                        + "instantiations may get through a type parameter";
            }
        }
        Set<String> lambdaLocals = Trees.lambdaLocals(k.body()).keySet();
        String[] why = {null};
        Set<String> seen = new HashSet<>();
        java.util.ArrayDeque<FunctionDef> todo = new java.util.ArrayDeque<>(List.of(k));
        while (!todo.isEmpty() && why[0] == null) {
            FunctionDef f = todo.poll();
            if (!seen.add(f.name() + "@" + f.range().offset())) {
                continue;
            }
            String text = src.slice(f.range()) + " " + asmText(f.body());
            if (NON_COHERENT_TEXT.matcher(text).find()) {
                why[0] = "it (or a function it calls) reads through the non-coherent cache (ld.global.nc, cub::LOAD_LDG)";
                break;
            }
            for (java.util.Map.Entry<String, String> oc : operatorClasses.entrySet()) {
                if (Pattern.compile("\\b" + Pattern.quote(oc.getKey()) + "\\b").matcher(text).find()) {
                    why[0] = "it (or a function it calls) uses '" + oc.getKey() + "', whose '" + oc.getValue()
                            + "' reads blockIdx, reads through the non-coherent cache or launches (klap does not see "
                            + "where an operator runs)";
                }
            }
            if (why[0] != null) {
                break;
            }
            Trees.walkExprsAndLambdas(f.body(), e -> {
                if (why[0] == null && e instanceof Expr.Launch x && x != self) {
                    why[0] = "it launches '" + x.kernelName() + "' (in a function it calls or a lambda) into the stream "
                            + "that orders it before its successor; promoted, the successor would not wait for it";
                    return;
                }
                if (why[0] == null && e instanceof Expr.Call mc && mc.callee() instanceof Expr.Member m
                        && !OverlapCheck.BLOCK_COLLECTIVES.contains(m.member()) && !m.member().equals("Store")) {
                    // a member function may launch, make stream operations or read through __ldg (review
                    // 2026-11-27): follow the file's definitions of that name, or give up on one it lacks
                    List<FunctionDef> members = unit.functions().stream()
                            .filter(g -> g.memberOf() != null && g.name().equals(m.member())).toList();
                    if (members.isEmpty() && !LIBRARY_MEMBERS.contains(m.member())) {
                        why[0] = "it calls the member function '" + m.member() + "', whose body klap does not see";
                        return;
                    }
                    todo.addAll(members);
                    return;
                }
                if (why[0] == null && e instanceof Expr.Call lc && lc.callee() instanceof Expr.Name n
                        && n.kind() == Expr.NameKind.LOCAL && !lambdaLocals.contains(n.name())) {
                    why[0] = "it calls through '" + n.name() + "' (a function pointer or a functor), which klap cannot "
                            + "follow";
                    return;
                }
                if (why[0] == null && e instanceof Expr.Call pc && pc.callee() instanceof Expr.Name n
                        && n.kind() == Expr.NameKind.PARAM) {
                    why[0] = "it calls through its parameter '" + n.name() + "' (a function pointer or a functor), which "
                            + "klap cannot follow";
                    return;
                }
                if (why[0] == null && e instanceof Expr.Call pc && pc.calleeName() == null && !(stripParens(pc.callee())
                        instanceof Expr.Lambda) && !(pc.callee() instanceof Expr.Member)) {
                    // (*fp)(...), table[i](...), (fp)(...): a launch or a non-coherent read behind it would not be
                    // seen (review 2026-12-01)
                    why[0] = "it calls through '" + src.slice(pc.callee().range()).strip() + "' (a function pointer or a "
                            + "functor), which klap cannot follow";
                    return;
                }
                if (why[0] == null && e instanceof Expr.Call ac) {
                    // a function handed to a call (cuda::std::invoke(spawn, ...), a callback) runs there: follow it
                    // (review 2026-12-01: a launch in it was not waited for)
                    for (Expr a : ac.args()) {
                        Expr x = a;
                        while (x instanceof Expr.Cast || x instanceof Expr.Unary u && (u.op().equals("()") || u.op().equals("&"))) {
                            x = x instanceof Expr.Cast cast ? cast.operand() : ((Expr.Unary) x).operand();
                        }
                        if (x instanceof Expr.Name fn && fn.kind() == Expr.NameKind.FUNCTION) {
                            if (isKernel(simpleName(fn.name()))) {
                                why[0] = "it hands the kernel '" + fn.name() + "' to a call, which may launch it";
                                return;
                            }
                            todo.addAll(deviceDefinitions(simpleName(fn.name())));
                        }
                    }
                }
                if (why[0] != null || !(e instanceof Expr.Call c) || c.calleeName() == null) {
                    return;
                }
                String simple = simpleName(c.calleeName());
                if (klap.model.LibraryCalls.launches(unit.libraries(), c)) {
                    why[0] = "it (or a function it calls) calls " + c.calleeName() + ", a CUB device-wide algorithm that "
                            + "launches its kernels from device code into the stream that orders them before its successor; "
                            + "promoted, the successor would not wait for them";
                    return;
                }
                if (klap.transform.SyncSites.STREAM_OPERATIONS.contains(simple) || RAW_LAUNCH.contains(simple)) {
                    why[0] = "it (or a function it calls) makes the stream operation " + c.calleeName() + ", which "
                            + "the launch of its successor is ordered after; promoted, the successor would not wait for it";
                    return;
                }
                if (NON_COHERENT_CALL.matcher(simple).matches()) {
                    why[0] = "it reads with " + c.calleeName() + ", through the non-coherent (texture) cache, which does not "
                            + "see what an earlier link of the chain wrote while this grid already ran";
                    return;
                }
                List<FunctionDef> defs = deviceDefinitions(simple);
                if (defs.isEmpty() && !Builtins.known(c.calleeName()) && !isKernel(simple) && !typeName(simple)
                        && !LIBRARY.matcher(c.calleeName()).lookingAt()
                        && !(c.callee() instanceof Expr.Name n && (n.kind() == Expr.NameKind.TYPE
                                || n.kind() == Expr.NameKind.LOCAL))) { // a local lambda: its body is walked
                    why[0] = "it calls '" + c.calleeName() + "', whose body klap does not see (a header or another file): "
                            + "it may read through the non-coherent cache or read blockIdx";
                }
                todo.addAll(defs);
            });
        }
        return why[0];
    }

    /**
     * Calls into libcu++ ({@code cuda::atomic_ref}, {@code cuda::std::min}), the C++ library and CUB
     * by qualified name: their device code reads no built-in index and loads through the coherent
     * cache unless told otherwise ({@code cub::LOAD_LDG} is found by its name, {@link #NON_COHERENT_TEXT}).
     */
    private static final Pattern LIBRARY = Pattern.compile("(::)?(cuda::(?!ptx::)|std::|cub::)");

    /** Member functions of libcu++ atomics that promotion's own code and the benchmarks call. */
    private static final Set<String> LIBRARY_MEMBERS = Set.of("load", "store", "fetch_add", "fetch_sub", "fetch_or",
            "fetch_and", "fetch_max", "fetch_min", "exchange", "compare_exchange_strong", "compare_exchange_weak");

    private String blanked;
    private List<String[]> defines;

    /** @return the file's text with comments and literals blanked (computed once) */
    private String blanked() {
        if (blanked == null) {
            blanked = klap.transform.Lexical.blankCommentsAndLiterals(src.text());
        }
        return blanked;
    }

    /** @return the file's {@code #define}s as {name, replacement text} (continuation lines included; computed once) */
    private List<String[]> defines() {
        if (defines == null) {
            defines = new ArrayList<>();
            java.util.regex.Matcher d = Pattern.compile("(?m)^\\s*#\\s*define\\s+(\\w+)(.*(?:\\\\\\n.*)*)").matcher(src.text());
            while (d.find()) {
                defines.add(new String[] {d.group(1), d.group(2)});
            }
        }
        return defines;
    }

    private Boolean endsThreads;

    /**
     * @return true if some {@code asm} of the file (its text, or a function's macro-expanded asm) has
     *         the PTX instruction {@code exit} or {@code ret}
     */
    private boolean endsThreads() {
        if (endsThreads == null) {
            Pattern end = Pattern.compile("\\b(exit|ret)\\b");
            boolean found = unit.functions().stream().anyMatch(f -> end.matcher(asmText(f.body())).find());
            String code = blanked();
            java.util.regex.Matcher asm = Pattern.compile("\\b(asm|__asm__|__asm)\\b").matcher(code);
            while (!found && asm.find()) {
                int semi = code.indexOf(';', asm.end());
                found = end.matcher(src.text().substring(asm.end(), semi < 0 ? src.text().length() : semi)).find();
            }
            endsThreads = found;
        }
        return endsThreads;
    }

    private static Expr stripParens(Expr e) {
        while (e instanceof Expr.Unary u && u.op().equals("()")) {
            e = u.operand();
        }
        return e;
    }

    /** @return the file's text with every function body blanked (comments and literals too) */
    private String outsideFunctions() {
        StringBuilder b = new StringBuilder(blanked());
        for (FunctionDef f : unit.functions()) {
            for (int i = f.body().range().offset(); i < f.body().range().end(); i++) {
                if (b.charAt(i) != '\n') {
                    b.setCharAt(i, ' ');
                }
            }
        }
        return b.toString();
    }

    /**
     * @return the classes of the file with an operator (member, or free and taking the class) that
     *         reads blockIdx or gridDim (with PA and PAO), reads through the non-coherent cache or
     *         launches, each with that operator's name: operators are not calls in klap's model, so
     *         klap cannot see where they run, only which functions name their class (review 2026-11-27)
     */
    private java.util.Map<String, String> operatorConcerns() {
        java.util.Map<String, String> out = new java.util.LinkedHashMap<>();
        for (FunctionDef f : unit.functions()) {
            if (!f.name().startsWith("operator")) {
                continue;
            }
            String body = klap.transform.Lexical.blankCommentsAndLiterals(src.slice(f.range()));
            // blockIdx/gridDim matter only in a pool (PA, PAO): under P and PO each descendant is a grid of one block
            boolean concern = mode.aggregates() && (INDEX_TEXT.matcher(body).find() || INDEX_ASM.matcher(asmText(f.body())).find())
                    || NON_COHERENT_TEXT.matcher(body).find() || klap.bridge.CudaParser.mayHoldLaunch(body)
                    || Pattern.compile("\\b(?:__ldg\\w*|tex\\w+|surf\\w+)\\s*[(<]").matcher(body).find();
            if (!concern) {
                continue;
            }
            if (f.memberOf() != null) {
                out.put(f.memberOf(), f.name());
            } else {
                java.util.regex.Matcher id = Pattern.compile("[A-Za-z_]\\w*").matcher(src.slice(f.paramsRange()));
                while (id.find()) {
                    if (typeName(id.group())) {
                        out.put(id.group(), f.name());
                    }
                }
            }
        }
        return out;
    }

    /** @return the {@code __device__} (and {@code __host__ __device__}) definitions of the unit named {@code simple} */
    private List<FunctionDef> deviceDefinitions(String simple) {
        return unit.functions().stream()
                .filter(f -> f.name().equals(simple) && f.kind() != FunctionDef.Kind.KERNEL && f.kind() != FunctionDef.Kind.HOST)
                .toList();
    }

    /**
     * @return true if the main file declares {@code simple} as a type ({@code using T = ...;}, {@code
     *         typedef ... T;}, {@code struct T}, {@code class T}): {@code T(args)} constructs an object
     *         (a library class such as {@code cub::BlockScan}, whose headers klap does not parse)
     */
    private boolean typeName(String simple) {
        String q = Pattern.quote(simple);
        return Pattern.compile("\\busing\\s+" + q + "\\s*=|\\btypedef\\b[^;{}]*\\b" + q + "\\s*;|\\b(struct|class)\\s+" + q + "\\b")
                .matcher(src.text()).find();
    }

    private boolean isKernel(String simple) {
        return unit.functions().stream().anyMatch(f -> f.name().equals(simple) && f.kind() == FunctionDef.Kind.KERNEL);
    }

    private static String simpleName(String name) {
        return name.contains("::") ? name.substring(name.lastIndexOf("::") + 2) : name;
    }

    /** @return the operand text of every {@code asm} statement in {@code body}, macro-expanded ({@link Stmt.Other#asm}) */
    private static String asmText(Stmt body) {
        StringBuilder b = new StringBuilder();
        for (Stmt.Other o : Trees.collect(body, Stmt.Other.class)) {
            if (o.asm() != null) {
                b.append(o.asm()).append('\n');
            }
        }
        return b.toString();
    }

    /** @return true if the file declares {@code name} outside functions as an integral const/constexpr variable */
    private boolean integralConstant(String name) {
        Pattern decl = Pattern.compile("\\b(?:constexpr|const)\\b[^;=(){}*&]*?\\b(?:int|long|short|char|unsigned|size_t"
                + "|u?int(?:8|16|32|64)_t)\\b[^;=(){}*&]*?\\b" + Pattern.quote(name) + "\\s*[={(]");
        var m = decl.matcher(src.text());
        while (m.find()) {
            int at = m.start();
            if (m.group().matches("(?s).*\\b(double|float|half|__half|__nv_bfloat16|auto)\\b.*")) {
                continue; // const long double STEP: not an integer
            }
            if (unit.functions().stream().noneMatch(f -> f.body().range().contains(at))) {
                return true;
            }
        }
        return false;
    }

    /**
     * @return why the kernel's code may read the hardware block index or grid size where the
     *         promoted body cannot shadow them (a called function, a lambda, cooperative groups), or null
     */
    private String indexUse(FunctionDef k, Set<String> kernelArrays) {
        String[] why = {null};
        Set<String> seen = new HashSet<>();
        Trees.walkExprs(k.body(), e -> {
            if (why[0] != null) {
                return;
            }
            if (e instanceof Expr.Lambda lam && readsIndices(lam.body())) {
                why[0] = "a lambda in it reads blockIdx or gridDim";
            } else if (e instanceof Expr.Call c && c.callee() instanceof Expr.Member m
                    && !((OverlapCheck.BLOCK_COLLECTIVES.contains(m.member()) || m.member().equals("Store"))
                    && OverlapCheck.localObject(m.owner(), kernelArrays))) {
                why[0] = "it calls the member function '" + m.member() + "', which klap cannot check for blockIdx";
            } else if (e instanceof Expr.Call c && c.calleeName() == null && !(c.callee() instanceof Expr.Member)
                    && !(c.callee() instanceof Expr.Name n && n.kind() == Expr.NameKind.TYPE)) {
                why[0] = "it calls '" + src.slice(c.callee().range()) + "', which klap cannot check for blockIdx";
            } else if (e instanceof Expr.Call c && c.calleeName() != null && calleeReadsIndices(c.calleeName(), seen)) {
                why[0] = "it calls '" + c.calleeName() + "', which reads blockIdx, gridDim or a cooperative group";
            } else if (e instanceof Expr.Call c && c.callee() instanceof Expr.Name n && n.kind() == Expr.NameKind.TYPE
                    && classReadsIndices(n.name())) {
                why[0] = "it constructs a '" + n.name() + "', whose class reads blockIdx or gridDim";
            }
        });
        if (why[0] == null) {
            for (Stmt.Decl d : Trees.collect(k.body(), Stmt.Decl.class)) {
                String cls = declaredClass(d);
                if (cls != null && classReadsIndices(cls)) {
                    why[0] = "it declares a '" + cls + "', whose class reads blockIdx or gridDim (a constructor or member initializer)";
                    break;
                }
            }
        }
        if (why[0] == null && INDEX_ASM.matcher(asmText(k.body())).find()) {
            why[0] = "its asm reads %ctaid, %nctaid, a cluster index or %gridid";
        }
        if (why[0] == null && Pattern.compile("\\b(this_grid|group_index|this_thread_block|this_cluster|cluster_group)\\b")
                .matcher(src.slice(k.body().range())).find()) {
            why[0] = "it uses cooperative groups";
        }
        if (why[0] == null && Pattern.compile("\\b(for_each_canceled_block|clusterlaunchcontrol\\w*)\\b").matcher(
                src.slice(k.body().range())).find()) {
            why[0] = "it hands the block index to a library (cuda::for_each_canceled_block, cluster launch control)";
        }
        if (why[0] == null && Pattern.compile("\\b__cluster\\w*").matcher(src.slice(k.body().range())).find()) {
            why[0] = "it reads a cluster index or size (__clusterIdx(), ...): without clusters a block is its own cluster";
        }
        if (why[0] == null && INDEX_ASM.matcher(src.slice(k.body().range())).find()) {
            why[0] = "its asm reads %ctaid, %nctaid, a cluster index or %gridid";
        }
        return why[0];
    }

    // (review 2026-12-01: the cluster indices and %gridid too; without clusters a block is its own
    // cluster, so %clusterid is the block index)
    private static final Pattern INDEX_TEXT = Pattern.compile("\\b(blockIdx|gridDim|this_grid|group_index|this_thread_block"
            + "|this_cluster|cluster_group|__cluster\\w*|for_each_canceled_block|clusterlaunchcontrol\\w*)\\b|%n?ctaid|%n?clusterid|%cluster_n?ctaid|%cluster_n?ctarank|%gridid");
    private static final Pattern INDEX_ASM = Pattern.compile("%n?ctaid|%n?clusterid|%cluster_n?ctaid|%cluster_n?ctarank|%gridid");

    /**
     * @return true if the device function {@code name} (by its simple name: every overload, every
     *         namespace) may read the block index or grid size: its definition's text names them
     *         (default arguments and constructor initializers included), its macro-expanded asm reads
     *         {@code %ctaid}, or a function or class it uses does; the unit's kernels (launched, not
     *         called) excepted. A callee defined nowhere in the unit is caught by {@link #nonCoherentRead}
     */
    private boolean calleeReadsIndices(String name, Set<String> seen) {
        String simple = simpleName(name);
        if (!seen.add(simple)) {
            return false;
        }
        for (FunctionDef f : deviceDefinitions(simple)) {
            if (readsIndices(f.body()) || INDEX_TEXT.matcher(src.slice(f.range())).find()
                    || INDEX_ASM.matcher(asmText(f.body())).find()) {
                return true;
            }
            boolean[] inner = {false};
            Trees.walkExprsAndLambdas(f.body(), e -> {
                if (e instanceof Expr.Call c && c.calleeName() != null && calleeReadsIndices(c.calleeName(), seen)) {
                    inner[0] = true;
                }
            });
            for (Stmt.Decl d : Trees.collect(f.body(), Stmt.Decl.class)) {
                String cls = declaredClass(d);
                inner[0] |= cls != null && classReadsIndices(cls);
            }
            if (inner[0]) {
                return true;
            }
        }
        return false;
    }

    /** @return the class a non-{@code __shared__} local declaration constructs, or null (scalars, pointers, references) */
    private String declaredClass(Stmt.Decl d) {
        VarDecl first = d.vars().get(0);
        if (first.nameRange() == null || first.shared()) {
            return null; // a __shared__ variable has no dynamic initialization
        }
        String type = src.text().substring(d.range().offset(), Math.max(d.range().offset(), first.nameRange().offset()));
        String cls = Builtins.className(type);
        return cls == null || type.contains("*") || type.contains("&") ? null : cls;
    }

    /**
     * @return true if the class {@code cls}, defined in the main file ({@code struct cls { ... }} or
     *         {@code class cls ...}), names blockIdx or gridDim anywhere in its definition (constructors,
     *         default member initializers, member functions) or in out-of-class member definitions. A
     *         class defined in a header is not checked (docs/promotion.md)
     */
    private boolean classReadsIndices(String cls) {
        var m = Pattern.compile("\\b(struct|class)\\s+" + Pattern.quote(cls) + "\\b[^;{]*\\{").matcher(src.text());
        while (m.find()) {
            int depth = 0;
            int end = m.end() - 1;
            for (int i = end; i < src.text().length(); i++) {
                char ch = src.text().charAt(i);
                if (ch == '{') {
                    depth++;
                } else if (ch == '}' && --depth == 0) {
                    end = i;
                    break;
                }
            }
            if (INDEX_TEXT.matcher(src.text().substring(m.start(), end + 1)).find()) {
                return true;
            }
        }
        return unit.functions().stream().anyMatch(f -> cls.equals(f.memberOf())
                && INDEX_TEXT.matcher(src.slice(f.range())).find());
    }

    private static boolean readsIndices(Stmt body) {
        boolean[] r = {false};
        Trees.walkExprs(body, e -> {
            if (e instanceof Expr.Name n && n.kind() == Expr.NameKind.BUILTIN
                    && (n.name().equals("blockIdx") || n.name().equals("gridDim"))) {
                r[0] = true;
            }
            if (e instanceof Expr.Lambda lam && readsIndices(lam.body())) {
                r[0] = true;
            }
        });
        return r[0];
    }

    private static boolean isParam(Expr e, String name) {
        return e instanceof Expr.Name n && n.kind() == Expr.NameKind.PARAM && n.name().equals(name);
    }

    /** @return true if {@code site} lies in the then-branch of an if with a conjunct "thread 0" */
    private boolean threadZeroGuarded(FunctionDef k, Trees trees, Stmt site) {
        Set<String> aliases = threadIdxAliases(k);
        List<Stmt> path = trees.path(site);
        for (int i = 0; i + 1 < path.size(); i++) {
            if (path.get(i) instanceof Stmt.If f && path.get(i + 1) == f.then()) {
                for (Expr c : conjuncts(f.cond())) {
                    if (threadZero(c, aliases)) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    /**
     * The launch condition for the overlap (KLAP III-A, "the launch condition ... promotable"): a
     * descendant runs its independent prologue only once its predecessor knows that it launches it,
     * so the predecessor must be able to evaluate the condition at its start. Returns the conjuncts
     * of the ifs around the launch other than the thread-0 tests (empty: always launched), or null,
     * with a warning, if the condition uses values computed in the kernel or the launch can be
     * skipped in other ways (a return before it, a switch or label around it).
     */
    private List<Expr> condition(FunctionDef k, Trees trees, Stmt site, List<PromotionPlan.Arg> args, OverlapCheck oc) {
        Set<String> avail = new HashSet<>();
        for (PromotionPlan.Arg a : args) {
            if (a.kind() != PromotionPlan.ArgKind.POSTPONED) {
                avail.add(a.param().name());
            }
        }
        Set<String> aliases = threadIdxAliases(k);
        List<Expr> out = new ArrayList<>();
        List<Stmt> path = trees.path(site);
        for (int i = 0; i + 1 < path.size(); i++) {
            Stmt s = path.get(i);
            if (s instanceof Stmt.If f && path.get(i + 1) == f.then()) {
                for (Expr c : conjuncts(f.cond())) {
                    String t = compact(c);
                    if (threadZero(c, aliases) || Set.of("threadIdx.y==0", "threadIdx.z==0", "0==threadIdx.y",
                            "0==threadIdx.z", "!threadIdx.y", "!threadIdx.z").contains(t)) {
                        continue;
                    }
                    if (!availableAtStart(c, avail)) {
                        oc.noOverlap(c.range().offset(), k, "the launch condition '" + src.slice(c.range())
                                + "' uses a value computed in the kernel, so a descendant cannot know early that it "
                                + "will run (KLAP III-A: the condition must be promotable)");
                        return null;
                    }
                    out.add(c);
                }
            } else if (!(s instanceof Stmt.Block)) {
                oc.noOverlap(s.range().offset(), k, "the launch is inside a statement other than if and { }");
                return null;
            }
        }
        for (Stmt.Jump j : Trees.collect(k.body(), Stmt.Jump.class)) {
            if (j.kind() == Stmt.JumpKind.RETURN && j.range().offset() < site.range().offset()) {
                oc.noOverlap(j.range().offset(), k, "a return before the launch may skip it even when its condition holds");
                return null;
            }
        }
        return out;
    }

    /**
     * @return true if {@code sizeof(...)} {@code u} means the same at the start of the kernel and at
     *         file scope as at the launch: no name in it is declared in the kernel's body (a local
     *         variable, a local struct, an enumerator; review 2026-12-01: {@code sizeof(Rec)} of a local
     *         struct was evaluated where the file's {@code Rec} is seen)
     */
    private boolean sizeofInvariant(Expr.Unary u) {
        java.util.regex.Matcher m = Pattern.compile("[A-Za-z_]\\w*").matcher(src.slice(u.range()));
        while (m.find()) {
            if (locals.contains(m.group()) || bodyMayDeclare(m.group(), u.range())) {
                return false;
            }
        }
        return true;
    }

    /**
     * @return true if the kernel's body may declare {@code name} (review 2026-12-01: enumerators after
     *         an attribute or written by a macro, {@code typedef struct {...} Rec;}, which no pattern of
     *         {@link #declaredTypesAndEnumerators} sees): the name appears in the body's text other than
     *         where the kernel's expressions use a name, or than inside {@code under} (the expression
     *         being checked), or the body expands a macro whose definition names it
     */
    private boolean bodyMayDeclare(String name, SourceRange under) {
        if (planned == null || !name.matches("[A-Za-z_]\\w*")) {
            return false;
        }
        int base = planned.body().range().offset();
        java.util.regex.Matcher m = Pattern.compile("\\b" + Pattern.quote(name) + "\\b").matcher(plannedBody);
        while (m.find()) {
            int at = base + m.start();
            if (!nameUses.contains(at) && !(at >= under.offset() && at < under.end()) && declares(plannedBody, m.start(), m.end())) {
                return true;
            }
        }
        for (String[] d : defines()) {
            if (Pattern.compile("\\b" + Pattern.quote(name) + "\\b").matcher(d[1]).find()
                    && Pattern.compile("\\b" + Pattern.quote(d[0]) + "\\b").matcher(plannedBody).find()) {
                return true;
            }
        }
        return false;
    }

    /**
     * @return the names that the kernel body {@code text} (comments and literals blanked) declares
     *         other than variables: struct, class, union and enum names, enumerators, typedef and
     *         alias names. A launch condition, step or block size that names one of them means
     *         something else where klap evaluates it (at the start of the kernel, or at file scope)
     *         (review 2026-12-01: a local {@code enum { LIMIT = 8 }} shadowing a file constant)
     */
    private static final Set<String> NOT_A_TYPE = Set.of("return", "case", "else", "sizeof", "alignof", "throw", "co_return",
            "decltype", "new", "delete", "goto", "do");

    /**
     * @return true if the name at [{@code from}, {@code to}) of {@code text} (comments and literals
     *         blanked) may be declared there: not inside parentheses or brackets, after {@code {},;}]}
     *         or a type word, and before {@code = , ; { } [ : (} (an enumerator, a struct or typedef
     *         name, a declarator); an array bound, a call argument or an operand is a use
     */
    private static boolean declares(String text, int from, int to) {
        int depth = 0;
        char open = 0;
        for (int i = from - 1; i >= 0 && open == 0; i--) {
            char c = text.charAt(i);
            if (c == ')' || c == ']' || c == '}') {
                depth++;
            } else if (c == '(' || c == '[' || c == '{') {
                if (depth == 0) {
                    open = c;
                } else {
                    depth--;
                }
            }
        }
        if (open == '(' || open == '[') {
            return false;
        }
        int p = from - 1;
        while (p >= 0 && Character.isWhitespace(text.charAt(p))) {
            p--;
        }
        int n = to;
        while (n < text.length() && Character.isWhitespace(text.charAt(n))) {
            n++;
        }
        if (n >= text.length() || "=,;{}[:(".indexOf(text.charAt(n)) < 0
                || text.startsWith("==", n) || text.startsWith("::", n)) {
            return false;
        }
        if (p < 0 || "{},;]".indexOf(text.charAt(p)) >= 0) {
            return true;
        }
        if (Character.isJavaIdentifierPart(text.charAt(p))) {
            int w = p;
            while (w >= 0 && Character.isJavaIdentifierPart(text.charAt(w))) {
                w--;
            }
            return !NOT_A_TYPE.contains(text.substring(w + 1, p + 1));
        }
        return false;
    }

    private static Set<String> declaredTypesAndEnumerators(String text) {
        Set<String> out = new HashSet<>();
        java.util.regex.Matcher m = Pattern.compile("\\benum\\b(?:\\s+(?:class|struct)\\b)?\\s*(\\w*)\\s*(?::[^{;]*)?\\{([^}]*)\\}")
                .matcher(text);
        while (m.find()) {
            if (!m.group(1).isEmpty()) {
                out.add(m.group(1));
            }
            for (String item : m.group(2).split(",")) {
                java.util.regex.Matcher id = Pattern.compile("^\\s*([A-Za-z_]\\w*)").matcher(item);
                if (id.find()) {
                    out.add(id.group(1));
                }
            }
        }
        m = Pattern.compile("\\b(?:struct|class|union|enum)\\s+(\\w+)").matcher(text);
        while (m.find()) {
            out.add(m.group(1));
        }
        m = Pattern.compile("\\btypedef\\b[^;]*?(\\w+)\\s*(?:\\[[^\\]]*\\]\\s*)*;").matcher(text);
        while (m.find()) {
            out.add(m.group(1));
        }
        m = Pattern.compile("\\busing\\s+(\\w+)\\s*=").matcher(text);
        while (m.find()) {
            out.add(m.group(1));
        }
        return out;
    }

    /** @return true if {@code e} only uses values a kernel has at its start (never-written available parameters) */
    private boolean availableAtStart(Expr e, Set<String> avail) {
        if (e instanceof Expr.Member m && !m.arrow() && m.owner() instanceof Expr.Name n
                && Set.of("blockDim", "gridDim", "blockIdx").contains(n.name())) {
            return true;
        }
        if (e instanceof Expr.Name n) {
            return n.kind() == Expr.NameKind.CONSTANT ? !locals.contains(n.name()) && !bodyMayDeclare(n.name(), n.range())
                    : n.kind() == Expr.NameKind.PARAM && avail.contains(n.name());
        }
        if (e instanceof Expr.Call c) {
            // (a pointer argument: a user's max(const int*, int) from a header klap does not read, review 2026-12-01)
            return Mutations.pureCall(c, unit) && c.args().stream().allMatch(a -> availableAtStart(a, avail)
                    && !(a instanceof Expr.Name n && pointerParams.contains(n.name())));
        }
        if (e instanceof Expr.Unary u && u.op().equals("sizeof")) {
            return sizeofInvariant(u);
        }
        if (e instanceof Expr.Binary b && (b.isAssignment() || b.op().equals(","))) {
            return false;
        }
        if (e instanceof Expr.Unary u && (u.op().contains("++") || u.op().contains("--") || u.op().equals("*")
                || u.op().equals("&"))) {
            return false;
        }
        if (e instanceof Expr.Literal || e instanceof Expr.Binary || e instanceof Expr.Unary || e instanceof Expr.Cast
                || e instanceof Expr.Conditional) {
            return e.children().stream().allMatch(c -> c == null || availableAtStart(c, avail));
        }
        return false;
    }

    /** @return true if {@code site} lies in the then-branch of an if with a conjunct {@code index == 0} */
    private boolean guardedOn(Trees trees, Stmt site, String index) {
        List<Stmt> path = trees.path(site);
        for (int i = 0; i + 1 < path.size(); i++) {
            if (path.get(i) instanceof Stmt.If f && path.get(i + 1) == f.then()) {
                for (Expr c : conjuncts(f.cond())) {
                    String t = compact(c);
                    if (t.equals(index + "==0") || t.equals("0==" + index) || t.equals("!" + index)) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    /**
     * @return locals declared as exactly {@code threadIdx.x} and never written, whose name no other
     *         declaration of the kernel uses (an inner {@code int tid = threadIdx.x % 32;} shadowing it
     *         would make the test name a different variable)
     */
    private Set<String> threadIdxAliases(FunctionDef k) {
        Set<String> written = Mutations.of(k, unit);
        Set<String> out = new HashSet<>();
        Set<String> other = new HashSet<>();
        for (Stmt.Decl d : Trees.collect(k.body(), Stmt.Decl.class)) {
            for (VarDecl v : d.vars()) {
                String type = src.text().substring(d.range().offset(), Math.max(d.range().offset(),
                        d.vars().get(0).nameRange().offset()));
                if (v.init() != null && compact(v.init()).equals("threadIdx.x") && !v.reference() && !v.array()
                        && !v.shared() && !v.isStatic() && !written.contains(v.name()) && !out.contains(v.name())
                        && WIDE_ENOUGH.matcher(type).matches()) { // a char keeps threadIdx.x % 256 (review 2026-11-27)
                    out.add(v.name());
                } else {
                    other.add(v.name());
                }
            }
        }
        k.params().forEach(p -> other.add(p.name()));
        out.removeAll(other);
        return out;
    }

    /** Declared types that hold every threadIdx.x (at most 1023) unchanged. */
    private static final Pattern WIDE_ENOUGH = Pattern.compile("\\s*(?:const\\s+)?(?:auto|int|unsigned|unsigned\\s+int"
            + "|long|unsigned\\s+long|long\\s+long|unsigned\\s+long\\s+long|short|unsigned\\s+short|size_t|u?int(?:16|32|64)_t"
            + "|signed|signed\\s+int)\\s*(?:const\\s*)?");

    private boolean threadZero(Expr c, Set<String> aliases) {
        String t = compact(c);
        for (String x : aliases(aliases)) {
            if (t.matches(Pattern.quote(x) + "==0[uU]?") || t.matches("0[uU]?==" + Pattern.quote(x)) || t.equals("!" + x)
                    || t.equals("!(" + x + ")")) {
                return true;
            }
        }
        return false;
    }

    private static List<String> aliases(Set<String> locals) {
        List<String> out = new ArrayList<>(locals);
        out.add("threadIdx.x");
        return out;
    }

    private static List<Expr> conjuncts(Expr e) {
        List<Expr> out = new ArrayList<>();
        if (e instanceof Expr.Binary b && b.op().equals("&&")) {
            out.addAll(conjuncts(b.lhs()));
            out.addAll(conjuncts(b.rhs()));
        } else if (e != null) {
            out.add(e);
        }
        return out;
    }

    private String compact(Expr e) {
        return compactText(src.slice(e.range()));
    }

    private static String compactText(String s) {
        return s.replaceAll("\\s+", "");
    }

    private static String simple(String name) {
        return name.contains("::") ? name.substring(name.lastIndexOf("::") + 2) : name;
    }

    private void warn(int offset, String message, String id) {
        diags.add(Diagnostic.at(Diagnostic.Severity.WARNING, src, offset, message, id));
    }
}
