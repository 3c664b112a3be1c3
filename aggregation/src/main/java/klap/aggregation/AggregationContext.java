package klap.aggregation;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import klap.model.CudaUnit;
import klap.model.Diagnostic;
import klap.model.Expr;
import klap.model.Diagnostic.Severity;
import klap.model.FunctionDef;
import klap.model.SourceFile;
import klap.model.SourceRange;
import klap.transform.SyncSites;
import klap.transform.TemplateDeduction;
import klap.transform.TemplateParams;
import klap.transform.Trees;
import klap.transform.Uniformity;

/**
 * What every part of one run of {@link AggregationPass} shares: the unit and its text, the
 * options, the diagnostics in the order they are reported, the unit's kernels by name, and the
 * facts computed once per function ({@link Uniformity} per block/warp and per grid,
 * {@link SyncSites} for the unit). The planner and the emitters read the facts here instead of
 * deriving them again from text.
 */
final class AggregationContext {
    final CudaUnit unit;
    final SourceFile src;
    /** the original text of the unit: every offset refers to it */
    final String text;
    final AggregationPass.Options opt;
    /** diagnostics in the order they are reported */
    final List<Diagnostic> diags = new ArrayList<>();
    /** the unit's kernels by unqualified name (the first definition of a name) */
    final Map<String, FunctionDef> kernels = new LinkedHashMap<>();
    final SyncSites syncs;
    private final Map<FunctionDef, Uniformity> uniformity = new HashMap<>();
    private final Map<FunctionDef, Uniformity> gridUniformity = new HashMap<>();

    /** Prepares a run on {@code unit}: finds its kernels and synchronization sites. */
    AggregationContext(CudaUnit unit, AggregationPass.Options opt) {
        this.unit = unit;
        this.src = unit.file();
        this.text = src.text();
        this.opt = opt;
        this.syncs = new SyncSites(unit);
        for (FunctionDef f : unit.functions()) {
            if (f.kind() == FunctionDef.Kind.KERNEL) {
                if (kernels.putIfAbsent(f.name(), f) != null || unit.kernelsDeclaredElsewhere().contains(f.name())) {
                    // also a kernel of that name declared (not defined here) in another namespace
                    ambiguous.add(f.name());
                }
            }
        }
    }

    /**
     * the unqualified names that more than one kernel has: definitions of the unit (namespaces,
     * overloads), or a definition here and a declaration in another namespace
     */
    private final java.util.Set<String> ambiguous = new java.util.HashSet<>();

    /**
     * @return true if more than one kernel is named {@code name} (defined here in different
     *         namespaces, overloaded, or declared in another namespace than the one that defines it
     *         here): klap matches launches to kernels by name, so it cannot tell which one a launch calls
     */
    boolean ambiguous(String name) {
        return ambiguous.contains(simpleName(name));
    }

    /** @return which values of {@code f} are uniform across a warp or block (computed once) */
    Uniformity uni(FunctionDef f) {
        return uniformity.computeIfAbsent(f, x -> new Uniformity(x, false, unit));
    }

    /** @return which values of {@code f} are uniform across the whole grid (computed once) */
    Uniformity gridUni(FunctionDef f) {
        return gridUniformity.computeIfAbsent(f, x -> new Uniformity(x, true, unit));
    }

    /** @return the kernel that a (possibly qualified) kernel name refers to, or null */
    FunctionDef kernel(String name) {
        return kernels.get(simpleName(name));
    }

    private final Map<klap.model.Expr.Launch, java.util.Optional<String>> templateArgs = new java.util.IdentityHashMap<>();

    /**
     * @return the template arguments of launch {@code l} as generated code must write them: those
     *         written ({@code child<int><<<...>>>}), or, where the launch leaves them to deduction and
     *         its child is a template of this unit, those {@link TemplateDeduction} proves
     *         ({@code <Type>}); null for a child that is no template, or arguments klap cannot prove
     */
    String templateArgs(klap.model.Expr.Launch l) {
        if (l.templateArgs() != null && !l.templateArgs().substring(1, l.templateArgs().length() - 1).isBlank()) {
            return l.templateArgs();
        }
        // child<><<<...>>>(...): every argument deduced, as without the brackets
        return templateArgs.computeIfAbsent(l, x -> {
            FunctionDef child = kernel(x.kernelName());
            if (child == null || child.templateHeader() == null || ambiguous(x.kernelName())) {
                return java.util.Optional.empty();
            }
            return java.util.Optional.ofNullable(TemplateDeduction.deduce(child, x, holder(x), text, unit.implicitCalls()));
        }).orElse(null);
    }

    /** @return the function of the unit whose body holds {@code l} (the innermost one), or null */
    FunctionDef holder(klap.model.Expr.Launch l) {
        return holder(l.range());
    }

    /** @return the function of the unit whose body holds range {@code r} (the innermost one), or null */
    FunctionDef holder(klap.model.SourceRange r) {
        FunctionDef best = null;
        for (FunctionDef f : unit.functions()) {
            if (f.body() != null && f.body().range().contains(r)
                    && (best == null || best.body().range().contains(f.body().range()))) {
                best = f;
            }
        }
        return best;
    }

    private final Map<FunctionDef, java.util.Set<FunctionDef>> closures = new HashMap<>();

    /**
     * @return {@code f} and every {@code __device__} function of the unit that it calls, directly or
     *         through others, lambda bodies included (matched by unqualified name, so overloads and
     *         namespaces give a superset); in discovery order, computed once per function
     */
    java.util.Set<FunctionDef> deviceClosure(FunctionDef f) {
        return closures.computeIfAbsent(f, x -> {
            java.util.Set<FunctionDef> out = new java.util.LinkedHashSet<>();
            java.util.ArrayDeque<FunctionDef> todo = new java.util.ArrayDeque<>(List.of(x));
            while (!todo.isEmpty()) {
                FunctionDef g = todo.poll();
                if (!out.add(g)) {
                    continue;
                }
                java.util.Set<String> callees = new java.util.HashSet<>();
                klap.transform.Trees.walkExprsAndLambdas(g.body(), e -> {
                    if (e instanceof klap.model.Expr.Call c && c.calleeName() != null) {
                        callees.add(simpleName(c.calleeName()));
                    }
                });
                // the operators, constructors and destructors of the file that g calls without a call expression
                for (klap.model.ImplicitCall c : unit.implicitCallsIn(g.range())) {
                    if (c.origin() == klap.model.ImplicitCall.Origin.MAIN) {
                        callees.add(c.name());
                    }
                }
                todo.addAll(deviceFunctionsNamed(callees));
            }
            return out;
        });
    }

    private Map<String, List<FunctionDef>> deviceByName;
    /** each device function's position in {@code unit.functions()} */
    private final Map<FunctionDef, Integer> sourceOrder = new java.util.IdentityHashMap<>();

    /**
     * @param names function names as {@link FunctionDef#name()} gives them (callees are matched by
     *              their unqualified name)
     * @return the {@code __device__} functions (not kernels) of the unit with one of those names, in
     *         source order; from an index built once, so that following calls is not a scan of every
     *         function of the unit per call
     */
    List<FunctionDef> deviceFunctionsNamed(java.util.Collection<String> names) {
        if (deviceByName == null) {
            deviceByName = new HashMap<>();
            for (FunctionDef h : unit.functions()) {
                if (h.kind().onDevice() && h.kind() != FunctionDef.Kind.KERNEL) {
                    sourceOrder.put(h, sourceOrder.size());
                    deviceByName.computeIfAbsent(h.name(), k -> new java.util.ArrayList<>()).add(h);
                }
            }
        }
        List<FunctionDef> out = new java.util.ArrayList<>();
        for (String n : new java.util.HashSet<>(names)) {
            out.addAll(deviceByName.getOrDefault(n, List.of()));
        }
        out.sort(java.util.Comparator.comparingInt(sourceOrder::get));
        return out;
    }

    /**
     * The static shared memory one block may use, in bytes: 48 KiB on every architecture (CUDA C++
     * Programming Guide, "Technical Specifications per Compute Capability": "Maximum amount of
     * shared memory per thread block" without opt-in; only dynamic shared memory can go beyond it).
     */
    static final long STATIC_SHARED_LIMIT = 48 * 1024;

    /**
     * The most static shared memory that klap's block-wide collectives ({@code klap/group.cuh}:
     * the warp totals of {@code group_inclusive_scan} and the slot of {@code group_broadcast}, one
     * per element type: launch records' scan, cudaMalloc's scan, pointers) add to a parent kernel,
     * in bytes, rounded up (nvlink reported 816 bytes for one aggregated launch site).
     */
    static final long BLOCK_SCRATCH_BYTES = 2 * 1024;

    /**
     * @return the static shared memory that {@code f} and the device functions it calls declare, in
     *         bytes (the {@code __shared__} variables whose size the front end knows; unknown sizes
     *         count 0, so this is a lower bound)
     */
    long staticSharedBytes(FunctionDef f) {
        long sum = 0;
        for (FunctionDef g : deviceClosure(f)) {
            for (klap.model.Stmt.Decl d : klap.transform.Trees.collect(g.body(), klap.model.Stmt.Decl.class)) {
                for (klap.model.VarDecl v : d.vars()) {
                    sum += Math.max(0, v.sharedBytes());
                }
            }
        }
        return sum;
    }

    /**
     * @return a reason why {@code f} cannot use klap's block-wide collectives, or null: with them its
     *         static shared memory would exceed {@link #STATIC_SHARED_LIMIT} and nvlink would reject
     *         the program ("uses too much shared data")
     */
    String blockScratchDoesNotFit(FunctionDef f) {
        long bytes = staticSharedBytes(f);
        if (bytes + BLOCK_SCRATCH_BYTES <= STATIC_SHARED_LIMIT) {
            return null;
        }
        return "'" + f.name() + "' declares " + bytes + " bytes of static shared memory, and a block-wide aggregation "
                + "needs up to " + BLOCK_SCRATCH_BYTES + " more within the " + STATIC_SHARED_LIMIT + "-byte limit";
    }

    private final Map<java.util.Set<String>, java.util.Set<String>> indexReaders = new HashMap<>();
    /** the member functions among {@link #indexReaders}, per set of built-ins (computed once) */
    private final Map<java.util.Set<String>, java.util.Set<String>> memberIndexReaders = new HashMap<>();

    /**
     * @return the names of the unit's {@code __device__} (and {@code __host__ __device__}) functions
     *         that read one of {@code builtins} ({@code threadIdx}, ...), directly or through calls of
     *         such functions (by unqualified name); computed once per set of builtins
     */
    java.util.Set<String> indexReaders(java.util.Set<String> builtins) {
        return indexReaders.computeIfAbsent(java.util.Set.copyOf(builtins), this::computeIndexReaders);
    }

    private java.util.Set<String> computeIndexReaders(java.util.Set<String> builtins) {
        return callersClosure((f, reading) -> {
            boolean[] r = {false};
            klap.transform.Trees.walkExprs(f.body(), e -> r[0] |= e instanceof klap.model.Expr.Name n
                    && n.kind() == klap.model.Expr.NameKind.BUILTIN && builtins.contains(n.name()));
            return r[0] || initializersRead(f, builtins, reading);
        });
    }

    /** {@link #sharedHolders}, computed once */
    private java.util.Set<String> sharedHolders;

    /**
     * @return the names of the unit's {@code __device__} (and {@code __host__ __device__}) functions
     *         that declare a {@code __shared__} variable in their body, directly or through calls of
     *         such functions (by unqualified name); computed once. nvlink gives such a variable one
     *         offset in every kernel that reaches it (ChildVariants: why variants call clones of them).
     */
    java.util.Set<String> sharedHolders() {
        if (sharedHolders == null) {
            sharedHolders = callersClosure((f, holding) -> declaresShared(f));
        }
        return sharedHolders;
    }

    /** @return true if the body of {@code f} declares a {@code __shared__} variable (static or {@code extern}) */
    static boolean declaresShared(FunctionDef f) {
        return f.body() != null && klap.transform.Trees.collect(f.body(), klap.model.Stmt.Decl.class).stream()
                .anyMatch(d -> d.vars().stream().anyMatch(klap.model.VarDecl::shared));
    }

    /**
     * @param direct whether a function has the property itself, given the names found so far (a
     *               constructor's member initializers may call one of them)
     * @return the names of the unit's {@code __device__} and {@code __host__ __device__} functions
     *         that have the property directly or call one that has it (a call by unqualified name,
     *         a member call, or an implicit call such as a constructor's), to a fixed point
     */
    private java.util.Set<String> callersClosure(java.util.function.BiPredicate<FunctionDef, java.util.Set<String>> direct) {
        Map<String, List<FunctionDef>> device = new HashMap<>();
        for (FunctionDef f : unit.functions()) {
            if (f.kind() == FunctionDef.Kind.DEVICE || f.kind() == FunctionDef.Kind.HOST_DEVICE) {
                device.computeIfAbsent(f.name(), k -> new ArrayList<>()).add(f);
            }
        }
        java.util.Set<String> found = new java.util.HashSet<>();
        boolean changed = true;
        while (changed) {
            changed = false;
            for (var entry : device.entrySet()) {
                if (found.contains(entry.getKey())) {
                    continue;
                }
                for (FunctionDef f : entry.getValue()) {
                    boolean[] r = {direct.test(f, found)};
                    klap.transform.Trees.walkExprs(f.body(), e -> r[0] |= e instanceof klap.model.Expr.Call c
                            && calleeSimpleName(c) != null && found.contains(calleeSimpleName(c)));
                    for (klap.model.ImplicitCall c : unit.implicitCallsIn(f.range())) {
                        r[0] |= c.origin() == klap.model.ImplicitCall.Origin.MAIN && found.contains(c.name());
                    }
                    if (r[0]) {
                        found.add(entry.getKey());
                        changed = true;
                        break;
                    }
                }
            }
        }
        return java.util.Set.copyOf(found);
    }

    /**
     * @return true if the member initializers of the constructor {@code f} ({@code : v(threadIdx.x)},
     *         text between its parameter list and its body, which the model's body does not hold) name
     *         one of {@code builtins} or call a function of {@code reading}
     */
    private boolean initializersRead(FunctionDef f, java.util.Set<String> builtins, java.util.Set<String> reading) {
        int from = f.paramsRange().end();
        int to = f.body().range().offset();
        if (f.memberOf() == null || to <= from) {
            return false;
        }
        String t = klap.transform.Lexical.blankCommentsAndLiterals(text.substring(from, to));
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?<![A-Za-z0-9_.>:])([A-Za-z_][A-Za-z0-9_]*)\\b").matcher(t);
        while (m.find()) {
            if (builtins.contains(m.group(1)) || reading.contains(m.group(1)) && t.substring(m.end()).stripLeading().startsWith("(")) {
                return true;
            }
        }
        return false;
    }

    /**
     * @return the unqualified name a call names: its callee name, or for a member call
     *         ({@code o.f()}, {@code p->f()}) the member's name; null for other calls
     */
    static String calleeSimpleName(klap.model.Expr.Call c) {
        if (c.calleeName() != null) {
            return simpleName(c.calleeName());
        }
        return c.callee() instanceof klap.model.Expr.Member m ? m.member() : null;
    }

    /**
     * @return the name of a member function or an operator function of the unit that reads the built-in
     *         indices and that {@code f} or a {@code __device__} function it calls calls, or null
     */
    String memberIndexReaderCalledBy(FunctionDef f, java.util.Set<String> builtins) {
        java.util.Set<String> members = memberIndexReaders.computeIfAbsent(builtins, b -> {
            java.util.Set<String> m = new java.util.HashSet<>();
            for (FunctionDef g : unit.functions()) {
                // an operator function cannot be cloned either (an operator+ with a parameter more is ill-formed)
                if ((g.memberOf() != null || FunctionDef.isOperatorName(g.name())) && indexReaders(b).contains(g.name())) {
                    m.add(g.name());
                }
            }
            return m;
        });
        if (members.isEmpty()) {
            return null;
        }
        String[] found = {null};
        for (FunctionDef g : deviceClosure(f)) {
            klap.transform.Trees.walkExprsAndLambdas(g.body(), e -> {
                if (found[0] == null && e instanceof klap.model.Expr.Call c && members.contains(calleeSimpleName(c))) {
                    found[0] = calleeSimpleName(c);
                }
            });
        }
        return found[0];
    }

    private final java.util.Map<FunctionDef, Integer> beforeUses = new java.util.IdentityHashMap<>();

    /**
     * Where the declarations klap adds for {@code f} go (its argument record, the prototypes of its
     * variants, clone and twin): {@link CudaText#declStart}, or earlier, where the first function of
     * the file that launches or calls {@code f} begins (its uses may name them), when {@code f} is
     * first declared only in an included header and defined after that function. Found in public code
     * (2026-11-29): a parent launching a child declared in a header and defined later in the file
     * used klap's record type before its declaration, and a host launch in main before its kernel's
     * definition the kernel-granularity twin (nvcc errors). A user in a namespace or a class counts
     * from where its outermost file-scope declaration begins ({@link FunctionDef#fileScopeStart}: the
     * {@code namespace app {} or {@code struct S {} line): klap's declarations of a file-scope
     * {@code f} must be at file scope (review 2026-11-30: such a launch had been left as written,
     * {@code child-declared-later}). Where {@code f}'s signature names what is declared after its
     * first declaration ({@link FunctionDef#lateNeed}), later: before the first function that uses
     * {@code f}, or before {@code f}'s definition if none does before it (2026-11-30, an eighth
     * session: such a child had been left as written, {@code child-signature-late}, and such a parent
     * had no twins, wherever its users were).
     */
    int declarationsAt(FunctionDef f) {
        return beforeUses.computeIfAbsent(f, k -> {
            int at = CudaText.declStart(k);
            if (!atFileScope(k)) {
                // its declarations go in its own namespace or class, where it is declared
                return at;
            }
            // the users come by where they begin: the first one other than k is the earliest; with none
            // before it, where k begins (in an extern "C" { } block: Linkage.cpp gives klap's code C++ linkage)
            int first = k.fileScopeStart();
            for (FunctionDef h : usersByName().getOrDefault(k.name(), List.of())) {
                if (h != k) {
                    first = Math.min(first, h.fileScopeStart());
                    break;
                }
            }
            return first < at || k.lateNeed(at, true) != null && !hasDefaults(k) ? first : at;
        });
    }

    /**
     * @return true if a macro writes {@code f}'s name or parameter list ({@code #define SIG(n) __global__
     *         void n(float* p, int i)} and {@code SIG(child) {...}}): klap copies the signature's text to
     *         declare its variants, clones and twins, and that text is the macro call (review
     *         2026-11-30: "this declaration has no storage class or type specifier", nvcc 13)
     */
    boolean signatureInMacro(FunctionDef f) {
        // (an operator's name is spelled as CDT prints it: operator unsigned int of operator unsigned)
        if (!FunctionDef.isOperatorName(f.name()) && !slice(f.nameRange()).equals(f.name())) {
            return true;
        }
        int open = f.paramsRange().offset() - 1;
        return open < 0 || text.charAt(open) != '(' || f.paramsRange().end() >= text.length() || text.charAt(f.paramsRange().end()) != ')'
                || f.params().stream().anyMatch(p -> !f.paramsRange().contains(p.range()));
    }

    /**
     * @return true if {@code f} has a default argument or default template argument, from any
     *         declaration. klap's declarations repeat them, and where they move after the declaration
     *         that gives them, names in them may be bound otherwise: {@code int i = off(0)} of a prototype
     *         before {@code __device__ int off(int)} chose {@code off(long)}, klap's record after it
     *         {@code off(int)}, a different argument (review 2026-11-30, eighth session). So such a
     *         function's declarations stay at its first declaration ({@link #declarationsAt})
     */
    private boolean hasDefaults(FunctionDef f) {
        for (int i = 0; i < f.params().size(); i++) {
            if (!f.defaultArgument(i, text).isEmpty()) {
                return true;
            }
        }
        if (f.declaredTemplateDefaults().stream().anyMatch(d -> !d.isEmpty())) {
            return true;
        }
        for (SourceRange r : new SourceRange[] {f.templateHeader(), f.firstDeclaration()}) {
            String header = r == null || f.templateHeader() == null ? null : TemplateParams.headerOf(slice(r));
            List<String> parts = header == null ? null : TemplateParams.inner(header);
            if (parts != null && parts.stream().anyMatch(p -> TemplateParams.topLevelIndex(p, '=') >= 0)) {
                return true;
            }
        }
        return false;
    }

    /** functions by the simple name of each function they launch or call, by where they begin at file scope */
    private java.util.Map<String, List<FunctionDef>> usersByName;

    /**
     * @return for each simple name, the functions that launch or call a function of that name, by
     *         {@link FunctionDef#fileScopeStart}; computed once (one walk over the unit: asking each
     *         function's users by walking every function before it made klap quadratic in the number
     *         of functions, 48 s instead of 5 s for the 47,713-line file of BadInputTest.enormousFile)
     */
    private java.util.Map<String, List<FunctionDef>> usersByName() {
        if (usersByName == null) {
            usersByName = new java.util.HashMap<>();
            List<FunctionDef> inOrder = unit.functions().stream()
                    .sorted(java.util.Comparator.comparingInt(FunctionDef::fileScopeStart)).toList();
            for (FunctionDef h : inOrder) {
                java.util.Set<String> used = new java.util.HashSet<>();
                Trees.walkExprsAndLambdas(h.body(), e -> {
                    if (e instanceof Expr.Launch l) {
                        used.add(simpleName(l.kernelName()));
                    } else if (e instanceof Expr.Call c && c.calleeName() != null) {
                        used.add(simpleName(c.calleeName()));
                    }
                });
                for (String n : used) {
                    usersByName.computeIfAbsent(n, x -> new ArrayList<>()).add(h);
                }
            }
        }
        return usersByName;
    }

    /** @return true if {@code f} is declared at file scope (no namespace, not a class member) */
    private static boolean atFileScope(FunctionDef f) {
        return (f.namespace() == null || f.namespace().isEmpty()) && f.memberOf() == null;
    }

    /**
     * @return the declaration that {@code f}'s signature text needs ({@link FunctionDef#signatureNeeds})
     *         and that is not yet there where klap declares {@code f}'s record, variants, clone or twin
     *         ({@link #declarationsAt}), or null: then that text, copied there, would not compile
     *         (2026-11-30: a typedef between a kernel's prototype and its definition; a class taken by
     *         value, defined after the prototype)
     * @param classesByValue whether the text needs the classes {@code f} takes by value complete (the
     *         argument record's members); prototypes of a clone or twin do not
     */
    FunctionDef.Need lateSignature(FunctionDef f, boolean classesByValue) {
        return f.lateNeed(declarationsAt(f), classesByValue);
    }

    /**
     * @return why {@code f}'s signature cannot be copied where klap declares what it adds for it,
     *         for need {@code n} of {@link #lateSignature}: {@code signature names 'real', declared at
     *         line 3, after line 2}
     */
    String lateSignatureWhy(FunctionDef f, FunctionDef.Need n) {
        return "signature " + n.says(unit.file()) + ", after line " + unit.file().line(declarationsAt(f));
    }

    /** @return the original text of {@code r} */
    String slice(SourceRange r) {
        return text.substring(r.offset(), r.end());
    }

    private String blankText;

    /**
     * @return the text of {@code r} with comments and literals blanked ({@link
     *         klap.transform.Lexical#blankCommentsAndLiterals}; same length), from one blanking of the
     *         whole file
     */
    String blankSlice(SourceRange r) {
        if (blankText == null) {
            blankText = klap.transform.Lexical.blankCommentsAndLiterals(text);
        }
        return blankText.substring(r.offset(), r.end());
    }

    /** @return true if an error was reported */
    boolean hasErrors() {
        return diags.stream().anyMatch(d -> d.severity() == Severity.ERROR);
    }

    /** Reports a warning at {@code offset} of the unit, with id {@code klap-<id>}. */
    void warn(int offset, String msg, String id) {
        diags.add(Diagnostic.at(Severity.WARNING, src, offset, msg, id));
    }

    /**
     * Withdraws the warnings and notes with one of {@code ids} located in {@code r} (reported for a
     * launch that is then left as written after all).
     */
    void withdraw(klap.model.SourceRange r, java.util.Set<String> ids) {
        int fromLine = src.line(r.offset()), fromCol = src.column(r.offset());
        int toLine = src.line(r.end()), toCol = src.column(r.end());
        diags.removeIf(d -> d.severity() != Severity.ERROR && ids.contains(d.id())
                && (d.line() > fromLine || d.line() == fromLine && d.column() >= fromCol)
                && (d.line() < toLine || d.line() == toLine && d.column() < toCol));
    }

    /** Reports a note at {@code offset} of the unit, with id {@code klap-<id>}. */
    void note(int offset, String msg, String id) {
        diags.add(Diagnostic.at(Severity.NOTE, src, offset, msg, id));
    }

    /** Reports an error at {@code offset} of the unit, with id {@code klap-<id>}. */
    void error(int offset, String msg, String id) {
        diags.add(Diagnostic.at(Severity.ERROR, src, offset, msg, id));
    }

    /** @return {@code a::b::name} without its qualifier: {@code name} */
    static String simpleName(String qualified) {
        int q = qualified.lastIndexOf("::");
        return q < 0 ? qualified : qualified.substring(q + 2);
    }
}
