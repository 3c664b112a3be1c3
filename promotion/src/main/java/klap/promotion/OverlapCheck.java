package klap.promotion;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import klap.model.CudaUnit;
import klap.model.Diagnostic;
import klap.model.Expr;
import klap.model.FunctionDef;
import klap.model.Pragma;
import klap.model.SourceFile;
import klap.model.Stmt;
import klap.model.VarDecl;
import klap.transform.Mutations;
import klap.transform.Trees;

/**
 * The overlap check of launch promotion (KLAP section III-C, PO and PAO), for one kernel that
 * {@link PromotionPlanner} is planning. Input: the kernel, its {@code #pragma klap overlap}, its
 * launch site and the classified arguments. Output: the pragma if the statements before it (the
 * independent prologue P<sub>i</sub>) may run before the acquire, or null with a warning
 * {@code klap-overlap} that says why not.
 *
 * <p>P<sub>i</sub> may run before its predecessor released it, in descendants that the original
 * program would launch (the existence chain guarantees that), so it must not depend on the
 * predecessor: it uses no postponed parameter (condition 1), contains no return, launch or jump out
 * of itself, writes nothing but block-local memory and calls nothing with a visible effect; every
 * memory it reads is traced to a parameter or a global (through local copies of pointers), and the
 * dependent prologue P<sub>d</sub> (from the pragma through the launch's own arguments) writes to
 * none of them by any means klap can see, and to nothing klap cannot trace (condition 2). Different
 * pointer parameters are assumed not to overlap; {@code klap-overlap-alias} says so.
 */
final class OverlapCheck {
    /** Calls allowed in an overlapped prologue: no visible effect besides their own results and shared memory. */
    private static final Set<String> OVERLAP_CALLS = Set.of("__syncthreads", "__syncwarp", "__shfl_sync",
            "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync", "__ballot_sync", "__any_sync", "__all_sync",
            "__activemask", "__ldg", "__syncthreads_count", "__syncthreads_and", "__syncthreads_or");

    /**
     * Methods of CUB block collectives (BlockLoad, BlockReduce, BlockScan, BlockExchange,
     * BlockDiscontinuity, BlockRadixSort, BlockHistogram) that write only their reference arguments
     * and their temp storage; BlockStore's Store is not among them.
     */
    static final Set<String> BLOCK_COLLECTIVES = Set.of("Load", "Reduce", "Sum", "ExclusiveSum",
            "InclusiveSum", "ExclusiveScan", "InclusiveScan", "BlockedToStriped", "StripedToBlocked",
            "BlockedToWarpStriped", "WarpStripedToBlocked", "ScatterToBlocked", "ScatterToStriped", "FlagHeads",
            "FlagTails", "FlagHeadsAndTails", "Sort", "SortDescending", "SortBlockedToStriped",
            "SortDescendingBlockedToStriped", "Histogram", "Composite", "InitHistogram");


    private final CudaUnit unit;
    private final SourceFile src;
    private final PromoteMode mode;
    private final List<Diagnostic> diags;
    /** the names declared in the kernel's body, its parameters, those declared as pointers or integers */
    private final Set<String> locals;
    private final Set<String> allParams;
    private final Set<String> pointerParams;
    private final Set<String> integralParams;

    /**
     * Computes the kernel's memory facts (block-local arrays, reference and pointer locals, local
     * aliases of pointer parameters).
     *
     * @param unit           the unit
     * @param mode           PO or PAO (for the warnings' wording)
     * @param diags          where warnings go
     * @param k              the kernel
     * @param locals         the names declared in its body
     * @param allParams      its parameters
     * @param pointerParams  its parameters declared as pointers
     * @param integralParams its parameters of integer type
     */
    OverlapCheck(CudaUnit unit, PromoteMode mode, List<Diagnostic> diags, FunctionDef k, Set<String> locals,
                 Set<String> allParams, Set<String> pointerParams, Set<String> integralParams) {
        this.unit = unit;
        this.src = unit.file();
        this.mode = mode;
        this.diags = diags;
        this.locals = locals;
        this.allParams = allParams;
        this.pointerParams = pointerParams;
        this.integralParams = integralParams;
        kernelArrays = new HashSet<>();
        refLocals = new HashSet<>();
        pointerLocals = new HashSet<>();
        scalarLocals = new HashSet<>();
        Set<String> declaredTwice = new HashSet<>();
        for (Stmt.Decl d : Trees.collect(k.body(), Stmt.Decl.class)) {
            String type = src.text().substring(d.range().offset(), Math.max(d.range().offset(),
                    d.vars().get(0).nameRange().offset()));
            for (VarDecl v : d.vars()) {
                if (!scalarLocals.add(v.name()) || !SCALAR_TYPE.matcher(type).matches() || v.array() || v.reference()
                        || pointerDecl(d, v)) {
                    declaredTwice.add(v.name());
                }
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
        scalarLocals.removeAll(declaredTwice);
        aliases = pointerAliases(k);
        templateKernel = k.templateHeader() != null;
    }

    /** true for a template kernel, whose dependent members' types klap does not know (Member.pointer is false) */
    private final boolean templateKernel;

    /** Declared types of arithmetic scalars (a declaration's text before its first name). */
    private static final java.util.regex.Pattern SCALAR_TYPE = java.util.regex.Pattern.compile(
            "\\s*(?:(?:const|constexpr|register|signed|unsigned|long|short)\\s+)*(?:bool|char|short|int|long|float|double"
            + "|size_t|ptrdiff_t|u?int(?:8|16|32|64)_t|unsigned|signed)\\s*(?:const\\s*)?");

    /** The locals of the kernel that are arithmetic scalars under one declaration of their name. */
    private final Set<String> scalarLocals;

    /** @return the local and {@code __shared__} arrays (of non-pointers) of the kernel */
    Set<String> kernelArrays() {
        return kernelArrays;
    }

    /**
     * Finds the overlap pragma of {@code k} and checks the independent prologue before it
     * (KLAP III-C). Returns null, with a warning, if the overlap cannot be kept.
     */
    Pragma overlap(FunctionDef k, Stmt.ExprStmt site, List<PromotionPlan.Arg> args) {
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
                    if (x instanceof Stmt.Other o && o.asmText(src.slice(o.range())) != null
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

    Pragma noOverlap(int offset, FunctionDef k, String why) {
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
            if (x instanceof Stmt.Other o && o.asmText(src.slice(o.range())) != null) {
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
            } else if (c.callee() instanceof Expr.Name n && n.kind() == Expr.NameKind.TYPE) {
                // a constructor may store through its arguments (review 2026-11-27: Put w(out + t, x))
                ok = constructsOnlyLocally(c) || localObject(c, localArrays);
            } else {
                String name = c.calleeName();
                ok = name != null && (Mutations.pureCall(c, unit) || OVERLAP_CALLS.contains(name)
                        || harmless(name, new HashSet<>()));
            }
            if (!ok) {
                return "the part before the pragma calls '" + src.slice(c.callee().range())
                        + "', which may have an effect outside the block";
            }
            for (Expr a : c.args()) {
                String root = pointerRoot(a);
                if (root != null && pointerLike(root)) {
                    read.add(memoryRoot(a));
                } else if (!plainValue(a) && !localArray(a, localArrays)) {
                    // b.out + k, a local struct or pointer holding an address: the callee may read memory klap
                    // cannot trace (review 2026-11-27: such reads were dropped)
                    read.add("");
                }
            }
        }
        if (e instanceof Expr.Lambda) {
            // its body is not walked here, and it may name a postponed parameter (review 2026-11-27)
            return "the part before the pragma defines a lambda";
        }
        return null;
    }

    /** Types whose construction stores nothing: {@code dim3} and the CUDA vector types. */
    private static final java.util.regex.Pattern VALUE_TYPE = java.util.regex.Pattern.compile(
            "(?:::)?(?:dim3|(?:u?char|u?short|u?int|u?long|u?longlong|float|double)[1-4])");

    /** @return true for {@code dim3(...)}, a vector type, or a constructor given only plain values */
    private boolean constructsOnlyLocally(Expr.Call c) {
        String name = c.calleeName() == null ? "" : c.calleeName();
        return VALUE_TYPE.matcher(name).matches() || Mutations.pureCall(c, unit);
    }

    /**
     * @return true if {@code a} is a plain arithmetic value built from literals and non-pointer
     *         scalar parameters and locals (no memory access, no address, no object that may hold one)
     */
    private boolean plainValue(Expr a) {
        if (a instanceof Expr.Cast c) {
            return plainValue(c.operand());
        }
        if (a instanceof Expr.Literal) {
            return true;
        }
        if (a instanceof Expr.Name n) {
            return n.kind() == Expr.NameKind.CONSTANT || n.kind() == Expr.NameKind.BUILTIN
                    || (n.kind() == Expr.NameKind.PARAM && integralParams.contains(n.name()))
                    || (n.kind() == Expr.NameKind.LOCAL && scalarLocals.contains(n.name()))
                    || (n.kind() == Expr.NameKind.UNKNOWN && VALUE_MACROS.contains(n.name()));
        }
        if (a instanceof Expr.Member m && !m.arrow() && m.owner() instanceof Expr.Name n && n.kind() == Expr.NameKind.BUILTIN) {
            return true; // threadIdx.x
        }
        if (a instanceof Expr.Member m && !m.arrow() && !m.pointer() && !m.array() && !templateKernel
                && m.member().matches("[xyzw]")
                && m.owner() instanceof Expr.Name n && (n.kind() == Expr.NameKind.LOCAL || n.kind() == Expr.NameKind.PARAM)
                && !pointerLocals.contains(n.name()) && !refLocals.contains(n.name())
                && !pointerParams.contains(n.name())) {
            // p.y of a float2: a vector component (another member may be a struct that holds a pointer)
            return true;
        }
        if (a instanceof Expr.Call c) {
            if (!c.args().stream().allMatch(this::plainValue)) {
                return false;
            }
            if (c.callee() instanceof Expr.Name n && n.kind() == Expr.NameKind.TYPE) {
                return true; // float2(x, y): a value built from plain values
            }
            String name = c.calleeName();
            return name != null && (Mutations.pureCall(c, unit) || OVERLAP_CALLS.contains(name) || harmless(name, new HashSet<>()));
        }
        if (a instanceof Expr.Binary b && !b.isAssignment() && !b.op().equals(",")) {
            return plainValue(b.lhs()) && plainValue(b.rhs());
        }
        if (a instanceof Expr.Unary u && (u.op().equals("-") || u.op().equals("+") || u.op().equals("!")
                || u.op().equals("~") || u.op().startsWith("sizeof"))) {
            return u.operand() == null || plainValue(u.operand());
        }
        if (a instanceof Expr.Conditional c) {
            return plainValue(c.cond()) && plainValue(c.then()) && plainValue(c.otherwise());
        }
        if (a instanceof Expr.Other o) {
            // parentheses, a braced temporary such as cuda::maximum<float>{}: plain if all it holds is
            return o.children().stream().allMatch(this::plainValue);
        }
        return false;
    }

    /** Value macros of the C and CUDA headers klap does not read (they stay unresolved names). */
    private static final Set<String> VALUE_MACROS = Set.of("INFINITY", "NAN", "HUGE_VAL", "HUGE_VALF", "FLT_MAX",
            "FLT_MIN", "FLT_EPSILON", "DBL_MAX", "DBL_MIN", "DBL_EPSILON", "INT_MAX", "INT_MIN", "UINT_MAX", "LONG_MAX",
            "LONG_MIN", "ULONG_MAX", "LLONG_MAX", "LLONG_MIN", "ULLONG_MAX", "SHRT_MAX", "SHRT_MIN", "CHAR_BIT",
            "M_PI", "M_E", "CUDART_INF_F", "CUDART_INF", "CUDART_NAN_F", "CUDART_NAN", "CUDART_PI_F", "CUDART_PI");

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
                if (x instanceof Stmt.Other o && o.asmText(src.slice(o.range())) != null) {
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
                        && (c.calleeName() == null || !(Mutations.pureCall(c, unit) || harmless(c.calleeName(), seen)))) {
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
    static boolean localObject(Expr o, Set<String> localArrays) {
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
                } else {
                    // a collective writes its reference arguments: Scan(temp).InclusiveSum(x, out[i]) stores to out
                    // (review 2026-11-27)
                    for (Expr a : c.args()) {
                        if (!plainValue(a)) {
                            out.add(storeRoot(a));
                        }
                    }
                }
            } else if (c.callee() instanceof Expr.Name n && n.kind() == Expr.NameKind.TYPE) {
                if (!constructsOnlyLocally(c)) {
                    out.add(""); // a constructor may store through its pointer arguments (review 2026-11-27)
                }
            } else if (name != null && name.startsWith("atomic") && !c.args().isEmpty()) {
                out.add(memoryRoot(c.args().get(0)));
            } else if (!(name != null && (Mutations.pureCall(c, unit) || OVERLAP_CALLS.contains(name)
                    || harmless(name, new HashSet<>())))) {
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
    private final Set<String> kernelArrays;
    /** The reference locals of the kernel ({@code int& slot = buf[i];}): a write to one writes memory. */
    private final Set<String> refLocals;
    /** The locals declared with a pointer type ({@code int* p}, {@code __shared__ int* dst}, {@code int* bufs[2]}). */
    private final Set<String> pointerLocals;

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
                && p.type(src.text()).contains("*"));
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

    private void warn(int offset, String message, String id) {
        diags.add(Diagnostic.at(Diagnostic.Severity.WARNING, src, offset, message, id));
    }
}
