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
import klap.model.Stmt;
import klap.model.VarDecl;
import klap.transform.Mutations;
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
 * acquire (KLAP III-C). The planner checks the paper's two conditions as far as the source shows
 * them, and keeps the overlap only if: the part uses no postponed parameter and contains no
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
    /** Calls allowed in an overlapped prologue: no visible effect besides their own results and shared memory. */
    private static final Set<String> OVERLAP_CALLS = Set.of("__syncthreads", "__syncwarp", "__shfl_sync",
            "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync", "__ballot_sync", "__any_sync", "__all_sync",
            "__activemask", "__ldg", "__syncthreads_count", "__syncthreads_and", "__syncthreads_or");

    /**
     * Methods of CUB block collectives (BlockLoad, BlockReduce, BlockScan, BlockExchange,
     * BlockDiscontinuity, BlockRadixSort, BlockHistogram) that write only their reference arguments
     * and their temp storage; BlockStore's Store is not among them.
     */
    private static final Set<String> BLOCK_COLLECTIVES = Set.of("Load", "Reduce", "Sum", "ExclusiveSum",
            "InclusiveSum", "ExclusiveScan", "InclusiveScan", "BlockedToStriped", "StripedToBlocked",
            "BlockedToWarpStriped", "WarpStripedToBlocked", "ScatterToBlocked", "ScatterToStriped", "FlagHeads",
            "FlagTails", "FlagHeadsAndTails", "Sort", "SortDescending", "SortBlockedToStriped",
            "SortDescendingBlockedToStriped", "Histogram", "Composite", "InitHistogram");

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
            if (l.templateArgs() == null || !compactText(l.templateArgs()).equals(own)) {
                throw new Refusal(at, "the launch names " + (l.templateArgs() == null ? "no template arguments"
                        : "'" + l.templateArgs() + "'") + ", not the kernel's own '" + own + "': it starts another "
                        + "instantiation, not the next link of this chain");
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
            throw new Refusal(at, "the launch is written by a macro");
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
        String[] ldg = {null};
        Set<String> seenLdg = new HashSet<>();
        Trees.walkExprs(k.body(), e -> {
            if (e instanceof Expr.Call c && c.calleeName() != null
                    && (c.calleeName().startsWith("__ldg") || callsLdg(c.calleeName(), seenLdg))) {
                ldg[0] = c.calleeName();
            }
        });
        if (ldg[0] == null && src.text().contains("LOAD_LDG")) {
            ldg[0] = "cub::LOAD_LDG";
        }
        if (ldg[0] != null) {
            throw new Refusal(at, "it reads with " + ldg[0] + ", through the non-coherent cache, which does not see "
                    + "what an earlier link of the chain wrote while this grid already ran");
        }
        locals = new HashSet<>();
        for (Stmt.Decl d : Trees.collect(k.body(), Stmt.Decl.class)) {
            d.vars().forEach(v -> locals.add(v.name()));
        }
        kernelArrays = new HashSet<>();
        refLocals = new HashSet<>();
        pointerLocals = new HashSet<>();
        for (Stmt.Decl d : Trees.collect(k.body(), Stmt.Decl.class)) {
            for (VarDecl v : d.vars()) {
                if ((v.array() || v.shared()) && !pointerDecl(d, v)) {
                    kernelArrays.add(v.name());
                }
                if (v.reference()) {
                    refLocals.add(v.name());
                }
                if (pointerDecl(d, v)) {
                    pointerLocals.add(v.name());
                }
            }
        }

        pointerParams = new HashSet<>();
        allParams = new HashSet<>();
        for (Param p : k.params()) {
            allParams.add(p.name());
            if (src.text().substring(p.range().offset(), p.nameRange().offset()).contains("*")) {
                pointerParams.add(p.name());
            }
        }
        integralParams = new HashSet<>();
        for (Param p : k.params()) {
            if (INTEGRAL_TYPE.matcher(src.text().substring(p.range().offset(), p.nameRange().offset())).matches()) {
                integralParams.add(p.name());
            }
        }
        aliases = pointerAliases(k);
        if (mode.aggregates()) {
            String why = indexUse(k);
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
        List<Expr> condition = mode.overlaps() ? condition(k, trees, site, args) : null;
        Pragma overlap = condition != null ? overlap(k, site, args) : null;
        return new PromotionPlan(k, site, l, args, overlap, overlap == null ? null : condition,
                mode.aggregates() ? depth : 1,
                guardedOn(trees, site, "threadIdx.y") && guardedOn(trees, site, "threadIdx.z"));
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
        String type = src.text().substring(p.range().offset(), p.nameRange().offset());
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
                return !locals.contains(n.name()) && (!integral || integralConstant(n.name()));
            }
            return n.kind() == Expr.NameKind.PARAM && pass.contains(n.name())
                    && (!integral || integralParams.contains(n.name()));
        }
        if (e instanceof Expr.Unary u) {
            return u.op().equals("sizeof") || (Set.of("-", "+", "~", "!").contains(u.op())
                    && invariant(u.operand(), pass, integral));
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

    /** @return true if device function {@code name} of the unit calls {@code __ldg}, directly or through its callees */
    private boolean callsLdg(String name, Set<String> seen) {
        if (!seen.add(name)) {
            return false;
        }
        for (FunctionDef f : unit.functions()) {
            if (f.name().equals(name) && f.kind().onDevice()) {
                boolean[] r = {false};
                Trees.walkExprs(f.body(), e -> {
                    if (e instanceof Expr.Call c && c.calleeName() != null
                            && (c.calleeName().startsWith("__ldg") || callsLdg(c.calleeName(), seen))) {
                        r[0] = true;
                    }
                });
                if (r[0]) {
                    return true;
                }
            }
        }
        return false;
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
    private String indexUse(FunctionDef k) {
        String[] why = {null};
        Set<String> seen = new HashSet<>();
        Trees.walkExprs(k.body(), e -> {
            if (why[0] != null) {
                return;
            }
            if (e instanceof Expr.Lambda lam && readsIndices(lam.body())) {
                why[0] = "a lambda in it reads blockIdx or gridDim";
            } else if (e instanceof Expr.Call c && c.callee() instanceof Expr.Member m
                    && !((BLOCK_COLLECTIVES.contains(m.member()) || m.member().equals("Store"))
                    && localObject(m.owner(), kernelArrays))) {
                why[0] = "it calls the member function '" + m.member() + "', which klap cannot check for blockIdx";
            } else if (e instanceof Expr.Call c && c.calleeName() == null && !(c.callee() instanceof Expr.Member)
                    && !(c.callee() instanceof Expr.Name n && n.kind() == Expr.NameKind.TYPE)) {
                why[0] = "it calls '" + src.slice(c.callee().range()) + "', which klap cannot check for blockIdx";
            } else if (e instanceof Expr.Call c && c.calleeName() != null && calleeReadsIndices(c.calleeName(), seen)) {
                why[0] = "it calls '" + c.calleeName() + "', which reads blockIdx, gridDim or a cooperative group";
            }
        });
        if (why[0] == null && src.slice(k.body().range()).matches("(?s).*\\b(this_grid|group_index|this_thread_block)\\b.*")) {
            why[0] = "it uses cooperative groups";
        }
        if (why[0] == null && src.slice(k.body().range()).matches("(?s).*%n?ctaid.*")) {
            why[0] = "its asm reads %ctaid or %nctaid";
        }
        return why[0];
    }

    private boolean calleeReadsIndices(String name, Set<String> seen) {
        if (!seen.add(name)) {
            return false;
        }
        for (FunctionDef f : unit.functions()) {
            if (f.name().equals(name) && f.kind() != FunctionDef.Kind.KERNEL && f.kind() != FunctionDef.Kind.HOST) {
                if (readsIndices(f.body())
                        || src.slice(f.body().range()).matches("(?s).*(\\b(this_grid|group_index)\\b|%n?ctaid).*")) {
                    return true;
                }
                boolean[] inner = {false};
                Trees.walkExprs(f.body(), e -> {
                    if (e instanceof Expr.Call c && c.calleeName() != null && calleeReadsIndices(c.calleeName(), seen)) {
                        inner[0] = true;
                    }
                });
                if (inner[0]) {
                    return true;
                }
            }
        }
        return false;
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
    private List<Expr> condition(FunctionDef k, Trees trees, Stmt site, List<PromotionPlan.Arg> args) {
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
                        noOverlap(c.range().offset(), k, "the launch condition '" + src.slice(c.range())
                                + "' uses a value computed in the kernel, so a descendant cannot know early that it "
                                + "will run (KLAP III-A: the condition must be promotable)");
                        return null;
                    }
                    out.add(c);
                }
            } else if (!(s instanceof Stmt.Block)) {
                noOverlap(s.range().offset(), k, "the launch is inside a statement other than if and { }");
                return null;
            }
        }
        for (Stmt.Jump j : Trees.collect(k.body(), Stmt.Jump.class)) {
            if (j.kind() == Stmt.JumpKind.RETURN && j.range().offset() < site.range().offset()) {
                noOverlap(j.range().offset(), k, "a return before the launch may skip it even when its condition holds");
                return null;
            }
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
            return n.kind() == Expr.NameKind.CONSTANT ? !locals.contains(n.name())
                    : n.kind() == Expr.NameKind.PARAM && avail.contains(n.name());
        }
        if (e instanceof Expr.Call c) {
            return Mutations.pure(c.calleeName()) && c.args().stream().allMatch(a -> availableAtStart(a, avail));
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
                if (v.init() != null && compact(v.init()).equals("threadIdx.x") && !v.reference() && !v.array()
                        && !v.shared() && !v.isStatic() && !written.contains(v.name()) && !out.contains(v.name())) {
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

    private boolean threadZero(Expr c, Set<String> aliases) {
        String t = compact(c);
        for (String x : aliases(aliases)) {
            if (t.equals(x + "==0") || t.equals("0==" + x) || t.equals("!" + x) || t.equals("!(" + x + ")")) {
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

    /**
     * Finds the overlap pragma of {@code k} and checks the independent prologue before it
     * (KLAP III-C). Returns null, with a warning, if the overlap cannot be kept.
     */
    private Pragma overlap(FunctionDef k, Stmt.ExprStmt site, List<PromotionPlan.Arg> args) {
        List<Pragma> ps = unit.pragmas().stream()
                .filter(p -> k.body().range().contains(p.range()) && compactText(p.text()).equals("klapoverlap"))
                .toList();
        if (ps.isEmpty()) {
            warn(k.nameRange().offset(), "kernel '" + k.name() + "' has no '#pragma klap overlap': promoted without "
                    + "overlap (as " + (mode.aggregates() ? "PA" : "P") + ")", "overlap");
            return null;
        }
        Pragma p = ps.get(0);
        if (ps.size() > 1) {
            warn(ps.get(1).range().offset(), "only the first '#pragma klap overlap' of '" + k.name() + "' counts",
                    "overlap");
        }
        int at = p.range().offset();
        List<Stmt> before = new ArrayList<>();
        for (Stmt s : k.body().stmts()) {
            if (s.range().contains(at)) {
                return noOverlap(at, k, "the pragma must be at the top level of the kernel body, not inside a statement");
            }
            if (s.range().end() <= at) {
                before.add(s);
            }
        }
        if (site.range().offset() < at) {
            return noOverlap(at, k, "the launch comes before the pragma");
        }
        Set<String> postponed = new HashSet<>();
        for (PromotionPlan.Arg a : args) {
            if (a.kind() == PromotionPlan.ArgKind.POSTPONED) {
                postponed.add(a.param().name());
            }
        }
        Set<String> localArrays = new HashSet<>();
        Set<String> read = new HashSet<>();
        for (Stmt s : before) {
            String why = independent(s, postponed, localArrays, read);
            if (why != null) {
                return noOverlap(s.range().offset(), k, why);
            }
        }
        // the parent's dependent prologue (from the pragma to the launch) must not write what this part reads
        Set<String> writtenAfter = new HashSet<>();
        int launchAt = site.range().offset();
        for (Stmt s : k.body().stmts()) {
            if (s.range().offset() >= at && s.range().offset() <= launchAt) {
                Trees.walkExprs(s, y -> {
                    if (y.range().end() <= site.range().end()) { // the launch's arguments too: evaluated before the release
                        storedThrough(y, writtenAfter);
                    }
                });
                Trees.walkStmts(s, x -> {
                    if (x instanceof Stmt.Other o && src.slice(o.range()).strip().startsWith("asm")
                            && o.range().offset() < launchAt) {
                        writtenAfter.add("");
                    }
                });

            }
        }
        if (read.contains("")) {
            return noOverlap(at, k, "the part before the pragma reads memory through a pointer that klap cannot trace "
                    + "to a parameter or a global, so it cannot prove that the dependent prologue leaves it alone "
                    + "(KLAP III-C, condition 2)");
        }
        Set<String> both = new HashSet<>(read);
        both.retainAll(writtenAfter);
        if (!both.isEmpty() || (writtenAfter.contains("") && !read.isEmpty())) {
            return noOverlap(at, k, "the prologue after the pragma writes " + (both.isEmpty() ? "through a pointer klap "
                    + "cannot trace" : "through '" + String.join("', '", both) + "'")
                    + ", which the part before it reads (KLAP III-C, condition 2)");
        }
        if (!read.isEmpty() && !writtenAfter.isEmpty()) {
            warn(at, "overlap in '" + k.name() + "' assumes that '" + String.join("', '", new java.util.TreeSet<>(read))
                    + "' and '" + String.join("', '", new java.util.TreeSet<>(writtenAfter))
                    + "' do not point into the same memory", "overlap-alias");
        }
        return p;
    }

    private Pragma noOverlap(int offset, FunctionDef k, String why) {
        warn(offset, "no overlap for '" + k.name() + "' (promoted as " + (mode.aggregates() ? "PA" : "P") + "): "
                + why, "overlap");
        return null;
    }

    /**
     * Checks one top-level statement of the independent prologue; collects the local arrays it
     * declares and the pointers it reads through. Returns why it is not independent, or null.
     */
    private String independent(Stmt s, Set<String> postponed, Set<String> localArrays, Set<String> read) {
        String[] why = {null};
        Trees.walkStmts(s, x -> {
            if (x instanceof Stmt.Jump j && j.kind() != Stmt.JumpKind.BREAK && j.kind() != Stmt.JumpKind.CONTINUE) {
                why[0] = "the part before the pragma has a " + j.kind().name().toLowerCase() + " statement";
            }
            if (x instanceof Stmt.Jump j && j.kind() != Stmt.JumpKind.RETURN && new Trees(s).jumpTarget(j) == null) {
                why[0] = "the part before the pragma jumps out of itself";
            }
            if (x instanceof Stmt.Other o && src.slice(o.range()).strip().startsWith("asm")) {
                why[0] = "the part before the pragma has an asm statement";
            }
            if (x instanceof Stmt.Decl d) {
                for (VarDecl v : d.vars()) {
                    if ((v.array() || v.shared()) && !pointerDecl(d, v)) {
                        localArrays.add(v.name());
                    }
                    if (v.isStatic() && !v.shared()) {
                        why[0] = "the part before the pragma declares a static variable";
                    }
                }
            }
            for (Expr top : Trees.ownExprs(x)) {
                Trees.walk(top, e -> {
                    String w = effect(e, postponed, localArrays, read);
                    if (w != null && why[0] == null) {
                        why[0] = w;
                    }
                });
            }
        });
        return why[0];
    }

    /** One expression of the independent prologue: null if harmless, else the reason. */
    private String effect(Expr e, Set<String> postponed, Set<String> localArrays, Set<String> read) {
        if (e instanceof Expr.Name n && n.kind() == Expr.NameKind.PARAM && postponed.contains(n.name())) {
            return "the part before the pragma uses '" + n.name() + "', whose value comes from the parent (postponed)";
        }
        if (e instanceof Expr.Launch) {
            return "the part before the pragma launches a kernel";
        }
        if (e instanceof Expr.Subscript sub && !localArray(sub.array(), localArrays)) {
            read.add(memoryRoot(sub.array()));
        }
        if (e instanceof Expr.Unary u && u.op().equals("*")) {
            read.add(memoryRoot(u.operand()));
        }
        if (e instanceof Expr.Member m && m.arrow()) {
            read.add(memoryRoot(m.owner()));
        }
        if (e instanceof Expr.Name n && n.kind() == Expr.NameKind.GLOBAL) {
            read.add(n.name()); // a __device__ variable or array read by name
        }
        Expr target = e instanceof Expr.Binary b && b.isAssignment() ? b.lhs()
                : e instanceof Expr.Unary u && (u.op().contains("++") || u.op().contains("--")) ? u.operand() : null;
        if (target != null && !localStore(target, localArrays)) {
            return "the part before the pragma writes '" + src.slice(target.range())
                    + "', which may be global memory (a speculative descendant would leave it changed)";
        }
        if (e instanceof Expr.Call c) {
            boolean ok;
            if (c.callee() instanceof Expr.Member m) {
                // a CUB block collective on a temporary built from block-local storage, e.g.
                // cub::BlockScan<...>(temp).ExclusiveSum(x, y): writes only its reference arguments and
                // the temp storage; pointer arguments (BlockLoad's input) are read
                ok = BLOCK_COLLECTIVES.contains(m.member()) && localObject(m.owner(), localArrays);
            } else {
                String name = c.calleeName();
                ok = name != null && (Mutations.pure(name) || OVERLAP_CALLS.contains(name)
                        || harmless(name, new HashSet<>()))
                        || c.callee() instanceof Expr.Name n && n.kind() == Expr.NameKind.TYPE;
            }
            if (!ok) {
                return "the part before the pragma calls '" + src.slice(c.callee().range())
                        + "', which may have an effect outside the block";
            }
            for (Expr a : c.args()) {
                String root = pointerRoot(a);
                if (root != null && pointerLike(root)) {
                    read.add(memoryRoot(a));
                }
            }
        }
        return null;
    }

    /**
     * @return true if every definition of device function {@code name} in the unit takes values only
     *         (no pointer or reference parameter) and changes nothing but its own locals: no store
     *         through a pointer or to a global, no asm, no launch, and calls only functions that are
     *         themselves harmless (a predicate such as {@code __device__ bool keep(int x)})
     */
    private boolean harmless(String name, Set<String> seen) {
        if (!seen.add(name)) {
            return true; // recursion: the other calls decide
        }
        List<FunctionDef> defs = unit.functions().stream().filter(f -> f.name().equals(name)).toList();
        if (defs.isEmpty()) {
            return false;
        }
        for (FunctionDef f : defs) {
            if (f.kind() == FunctionDef.Kind.KERNEL || f.kind() == FunctionDef.Kind.HOST
                    || f.params().stream().anyMatch(p -> src.slice(p.range()).matches("(?s).*[*&\\[].*"))) {
                return false;
            }
            boolean[] ok = {true};
            Trees.walkStmts(f.body(), x -> {
                if (x instanceof Stmt.Other o && src.slice(o.range()).strip().startsWith("asm")) {
                    ok[0] = false;
                }
                if (x instanceof Stmt.Decl d && d.vars().stream().anyMatch(v -> v.isStatic() || v.shared())) {
                    ok[0] = false;
                }
            });
            Trees.walkExprs(f.body(), e -> {
                Expr target = e instanceof Expr.Binary b && b.isAssignment() ? b.lhs()
                        : e instanceof Expr.Unary u && (u.op().contains("++") || u.op().contains("--")) ? u.operand() : null;
                if (target != null && !(target instanceof Expr.Name n && n.kind() == Expr.NameKind.LOCAL
                        || target instanceof Expr.Name p && p.kind() == Expr.NameKind.PARAM)) {
                    ok[0] = false;
                }
                if (e instanceof Expr.Launch || e instanceof Expr.Lambda) {
                    ok[0] = false;
                }
                if (e instanceof Expr.Name n && n.kind() == Expr.NameKind.GLOBAL) {
                    ok[0] = false; // a read of a global would escape the dependence check of the overlap
                }
                if (e instanceof Expr.Call c && !(c.callee() instanceof Expr.Name n && n.kind() == Expr.NameKind.TYPE)
                        && (c.calleeName() == null || !(Mutations.pure(c.calleeName()) || harmless(c.calleeName(), seen)))) {
                    ok[0] = false;
                }
            });
            if (!ok[0]) {
                return false;
            }
        }
        return true;
    }

    /** @return true for a temporary built only from block-local storage ({@code BlockScan(temp)}, {@code BlockLoad(sm.load)}) */
    private static boolean localObject(Expr o, Set<String> localArrays) {
        if (o instanceof Expr.Call c && c.callee() instanceof Expr.Name n && n.kind() == Expr.NameKind.TYPE) {
            return c.args().stream().allMatch(a -> {
                Expr r = a;
                while (r instanceof Expr.Member m && !m.arrow()) {
                    r = m.owner();
                }
                return r instanceof Expr.Name x && (x.kind() == Expr.NameKind.LOCAL || localArrays.contains(x.name()));
            });
        }
        return false;
    }

    /** @return true if assigning to {@code target} changes only a local variable or a local/shared array */
    private boolean localStore(Expr target, Set<String> localArrays) {
        Expr t = target;
        while (t instanceof Expr.Member m && !m.arrow()) {
            t = m.owner();
        }
        if (t instanceof Expr.Name n) {
            return n.kind() == Expr.NameKind.LOCAL && !refLocals.contains(n.name());
        }
        if (t instanceof Expr.Subscript s) {
            Expr a = s.array();
            while (a instanceof Expr.Subscript inner) {
                a = inner.array();
            }
            while (a instanceof Expr.Member m && !m.arrow()) {
                a = m.owner();
            }
            return a instanceof Expr.Name n && localArrays.contains(n.name());
        }
        return false;
    }

    /**
     * Adds what an expression of the dependent prologue may write: the parameter or global at the
     * root of the memory it stores to, or "" when klap cannot trace it (a reference local, a
     * pointer it cannot follow, a call that may write through its arguments or to globals). Stores
     * to the thread's own locals, parameter copies and block-local arrays add nothing.
     */
    private void storedThrough(Expr e, Set<String> out) {
        Expr target = e instanceof Expr.Binary b && b.isAssignment() ? b.lhs()
                : e instanceof Expr.Unary u && (u.op().contains("++") || u.op().contains("--")) ? u.operand() : null;
        if (target != null) {
            out.add(storeRoot(target));
        }
        if (e instanceof Expr.Call c) {
            String name = c.calleeName();
            if (c.callee() instanceof Expr.Member m) {
                if (!(BLOCK_COLLECTIVES.contains(m.member()) && localObject(m.owner(), kernelArrays))) {
                    out.add(""); // a member function may write anything its object points to
                }
            } else if (name != null && name.startsWith("atomic") && !c.args().isEmpty()) {
                out.add(memoryRoot(c.args().get(0)));
            } else if (!(name != null && (Mutations.pure(name) || OVERLAP_CALLS.contains(name)
                    || harmless(name, new HashSet<>())))
                    && !(c.callee() instanceof Expr.Name n && n.kind() == Expr.NameKind.TYPE)) {
                out.add(""); // may write through its pointer or reference arguments, or to globals
            }
        }
        out.remove("local");
    }

    /** @return what a store to {@code target} writes: "local" for the thread's own storage, a root, or "" */
    private String storeRoot(Expr target) {
        Expr t = target;
        while (t instanceof Expr.Cast c) {
            t = c.operand();
        }
        while (t instanceof Expr.Member m && !m.arrow()) {
            t = m.owner();
        }
        if (t instanceof Expr.Name n) {
            return switch (n.kind()) {
                case LOCAL -> refLocals.contains(n.name()) ? "" : "local";
                case PARAM -> "local"; // the thread's copy of the argument
                case GLOBAL -> n.name();
                default -> "";
            };
        }
        if (t instanceof Expr.Subscript sub) {
            return localArray(sub.array(), kernelArrays) ? "local" : memoryRoot(sub.array());
        }
        if (t instanceof Expr.Unary u && u.op().equals("*")) {
            return memoryRoot(u.operand());
        }
        if (t instanceof Expr.Member m && m.arrow()) {
            return memoryRoot(m.owner());
        }
        return "";
    }

    /** The local and {@code __shared__} arrays (of non-pointers) declared anywhere in the kernel's body. */
    private Set<String> kernelArrays = Set.of();
    /** The reference locals of the kernel ({@code int& slot = buf[i];}): a write to one writes memory. */
    private Set<String> refLocals = Set.of();
    /** The locals declared with a pointer type ({@code int* p}, {@code __shared__ int* dst}, {@code int* bufs[2]}). */
    private Set<String> pointerLocals = Set.of();

    /** @return true if {@code v} of {@code d} is declared with a {@code *} before its name */
    private boolean pointerDecl(Stmt.Decl d, VarDecl v) {
        return src.text().substring(d.range().offset(), v.nameRange().offset()).contains("*");
    }

    /** Local pointers declared from a parameter or global and never written: name -> that root. */
    private java.util.Map<String, String> aliases = java.util.Map.of();

    private java.util.Map<String, String> pointerAliases(FunctionDef k) {
        Set<String> written = Mutations.of(k, unit);
        java.util.Map<String, String> out = new java.util.HashMap<>();
        java.util.Map<String, Integer> decls = new java.util.HashMap<>();
        for (Stmt.Decl d : Trees.collect(k.body(), Stmt.Decl.class)) {
            for (VarDecl v : d.vars()) {
                decls.merge(v.name(), 1, Integer::sum);
                String r = v.init() == null || v.array() || v.reference() || written.contains(v.name()) ? null
                        : pointerRoot(v.init());
                if (r != null && (isPointerParam(k, r) || globalName(v.init()))) {
                    out.put(v.name(), r);
                }
            }
        }
        out.keySet().removeIf(n -> decls.get(n) > 1);
        return out;
    }

    private boolean isPointerParam(FunctionDef k, String name) {
        return k.params().stream().anyMatch(p -> p.name().equals(name) && p.nameRange() != null
                && src.text().substring(p.range().offset(), p.nameRange().offset()).contains("*"));
    }

    /** @return true for a parameter or local declared as a pointer, an alias of one, or a global (type unknown) */
    private boolean isPointerName(String name) {
        return pointerParams.contains(name) || pointerLocals.contains(name) || aliases.containsKey(name)
                || !locals.contains(name) && !integralParams.contains(name) && !allParams.contains(name);
    }

    private static boolean globalName(Expr e) {
        boolean[] g = {false};
        Trees.walk(e, x -> g[0] |= x instanceof Expr.Name n && n.kind() == Expr.NameKind.GLOBAL);
        return g[0];
    }

    /**
     * @return the parameter or global that the memory reached through pointer expression {@code e}
     *         belongs to ({@code p}, {@code p + i}, {@code &p[i]}, {@code s.ptr} of a parameter {@code s},
     *         a local alias of {@code p}), or "" if klap cannot tell
     */
    private String memoryRoot(Expr e) {
        String r = pointerRoot(e);
        if (r == null) {
            Expr o = e;
            while (o instanceof Expr.Member m && !m.arrow()) {
                o = m.owner();
            }
            r = o instanceof Expr.Name n && (n.kind() == Expr.NameKind.PARAM || n.kind() == Expr.NameKind.GLOBAL)
                    ? n.name() : null;
        }
        if (r == null) {
            return "";
        }
        if (aliases.containsKey(r)) {
            return aliases.get(r);
        }
        return locals.contains(r) ? "" : r;
    }

    /** @return true for a parameter or global that may hold or be an address (not a local scalar) */
    private boolean pointerLike(String root) {
        return !locals.contains(root) || aliases.containsKey(root);
    }

    /** @return true if {@code a} names a local or {@code __shared__} array declared in the kernel */
    private static boolean localArray(Expr a, Set<String> localArrays) {
        while (a instanceof Expr.Subscript inner) {
            a = inner.array();
        }
        while (a instanceof Expr.Member m && !m.arrow()) {
            a = m.owner();
        }
        return a instanceof Expr.Name n && (localArrays.contains(n.name()));
    }

    /** @return the parameter or local at the root of a pointer expression ({@code p}, {@code p + i}), or null */
    private String pointerRoot(Expr e) {
        if (e instanceof Expr.Name n && (n.kind() == Expr.NameKind.PARAM || n.kind() == Expr.NameKind.LOCAL
                || n.kind() == Expr.NameKind.GLOBAL)) {
            return n.name();
        }
        if (e instanceof Expr.Binary b && (b.op().equals("+") || b.op().equals("-"))) {
            // the operand that is the pointer: in t + buf it is buf
            String l = pointerRoot(b.lhs());
            String r = pointerRoot(b.rhs());
            if (r != null && isPointerName(r) && (l == null || !isPointerName(l))) {
                return r;
            }
            return l != null ? l : r;
        }
        if (e instanceof Expr.Unary u && u.op().equals("&") && u.operand() instanceof Expr.Subscript s) {
            return pointerRoot(s.array());
        }
        if (e instanceof Expr.Cast c) {
            return pointerRoot(c.operand());
        }
        return null;
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
