package klap.aggregation;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import klap.model.Expr;
import klap.model.FunctionDef;
import klap.model.Param;
import klap.model.SourceRange;
import klap.model.Stmt;
import klap.model.VarDecl;
import klap.transform.Trees;

/**
 * Decides whether klap can build the aggregated variant of a launch's child kernel (KLAP II-A: the
 * child's body, run by the aggregated grid with the original indices, {@link ChildVariants}), and
 * if not, why: the launch is then left as written, with a warning ({@link SitePlanner}).
 * <h2>Input</h2>
 * <pre>
 * __device__ int g(int i = threadIdx.x) { return i; }
 * __global__ void child(float* p) { p[g()] = 0; }
 * __global__ void parent(float* p) { child&lt;&lt;&lt;1, 32&gt;&gt;&gt;(p); ext&lt;&lt;&lt;1, 1&gt;&gt;&gt;(p); }   // ext is only declared
 * </pre>
 * A launch and its child kernel's {@link FunctionDef} (null where the file does not define it); the
 * unit, its text and its device functions through {@link AggregationContext}.
 * <h2>Output</h2>
 * <pre>
 * child: Refusal("child kernel 'child' calls 'g', whose default argument ... reads the built-in indices ...",
 *                "child-default-builtins")
 * ext:   Refusal("child kernel 'ext' is not defined in this file; ...", "child-not-defined")
 * </pre>
 * A {@link Refusal} (the warning's message and id), or null where the variant can be built. The
 * checks run in a fixed order, and the first that fails names the warning: the launch's kernel
 * name is ambiguous or not defined, the child (or a device function it calls) uses cooperative
 * groups of the hardware block or grid, then the child's own checks ({@code childRefusal}: a
 * cluster shape, a signature (its own, or an index-reading callee's) naming what is declared after
 * the point where klap declares the variant or clone ({@link AggregationContext#lateSignature}),
 * an over-aligned parameter taken by value, a capture-less lambda or a local class
 * reading the indices, a static local, a default argument reading them, code klap cannot see, a
 * member function reading them), a device call through a macro, and last the launch's own: a
 * template child whose template arguments the launch leaves to a deduction klap cannot prove
 * ({@link TemplateDeduction}), a parameter pack, the argument count and the
 * default arguments. What depends on the child only is computed once per child and cached (a file
 * may launch one child from many sites), as are the unit-wide facts (over-aligned classes,
 * index-reading functions, function-pointer targets). The checks come from the reviews of
 * 2026-11-25 and 2026-11-27 (see each method).
 */
final class ChildRefusals {

    /** Cooperative-groups calls whose results depend on the hardware block or grid. */
    private static final Set<String> BLOCK_GROUPS = Set.of("this_thread_block", "this_grid", "this_cluster",
            "this_multi_grid");

    private final AggregationContext ctx;

    /** Decides for the launches of the unit of {@code ctx}. */
    ChildRefusals(AggregationContext ctx) {
        this.ctx = ctx;
    }

    /** @return why klap cannot build the aggregated variant {@code l} needs, or null if it can */
    Refusal refusal(Expr.Launch l, FunctionDef child) {
        if (ctx.ambiguous(l.kernelName())) {
            // the variant would be built from one of them, whichever the launch calls (a silent miscompile)
            return new Refusal("more than one kernel is named '" + AggregationContext.simpleName(l.kernelName())
                    + "' (in different namespaces, overloaded, or declared in another namespace than the one this file "
                    + "defines it in); klap does not tell which one this launch calls, "
                    + "so it is not aggregated; give the kernels different names to aggregate it", "child-ambiguous");
        }
        if (child == null) {
            java.nio.file.Path header = ctx.unit.kernelHeaders().get(l.kernelName().replaceFirst("^::", ""));
            if (header != null) {
                java.nio.file.Path self = ctx.unit.file().path().getFileName();
                return new Refusal("child kernel '" + l.kernelName() + "' is defined in the included file " + header
                        + ", not in this file; its launch is not aggregated (klap builds aggregated variants only of "
                        + "kernels defined in the file it transforms; move '" + l.kernelName() + "' into " + self
                        + " to aggregate it)",
                        "child-not-defined");
            }
            return new Refusal("child kernel '" + l.kernelName() + "' is not defined in this file; its launch is not "
                    + "aggregated (klap needs the child's body to build its aggregated variant)", "child-not-defined");
        }
        String cg = blockGroupUses.computeIfAbsent(child, c -> java.util.Optional.ofNullable(blockGroupUse(c, new HashSet<>())))
                .orElse(null);
        if (cg != null) {
            return new Refusal("child kernel '" + l.kernelName() + "' uses cooperative groups (" + cg + "), which "
                    + "would see the aggregated grid's block and thread indices, not the original ones; its launch is "
                    + "not aggregated", "child-cooperative-groups");
        }
        Refusal ofChild = childRefusals.computeIfAbsent(child, c -> java.util.Optional.ofNullable(childRefusal(c, true)))
                .orElse(null);
        if (ofChild != null) {
            return ofChild;
        }
        String viaMacro = macroCalls.computeIfAbsent(child, c -> java.util.Optional.ofNullable(deviceCallViaMacro(c, new HashSet<>())))
                .orElse(null);
        if (viaMacro != null) {
            return new Refusal("child kernel '" + l.kernelName() + "' calls '" + viaMacro + "' through a macro; klap "
                    + "cannot rewrite the call to pass the original indices, so its launch is not aggregated",
                    "child-call-in-macro");
        }
        FunctionDef holder = ctx.holder(l);
        if (holder != null && holder.range().offset() < ctx.declarationsAt(child)) {
            // klap's record and variants go where the child is first declared in this file, or before the
            // outermost declaration of the first function that uses it (AggregationContext.declarationsAt);
            // a launch before that point, which declarationsAt did not count as a use, could not name them
            // (review 2026-11-30: identifier "klap_args_child" is undefined)
            return new Refusal("this launch is in '" + holder.name() + "', before line " + ctx.unit.file().line(ctx.declarationsAt(child))
                    + ", where klap must declare the aggregated variant and argument record of child kernel '" + l.kernelName()
                    + "' (it is first declared in a header); "
                    + "the launch is not aggregated; declare '" + l.kernelName() + "' in this file before '" + holder.name()
                    + "' to aggregate it", "child-declared-later");
        }
        String macro = parameterMacro(child, l);
        if (macro != null) {
            return new Refusal("the object-like macro '" + macro + "', defined before this launch, has the name of a "
                    + "parameter of child kernel '" + l.kernelName() + "'; klap's code at the launch names the parameters "
                    + "(as members of its argument record), where the macro would replace them, so the launch is not "
                    + "aggregated; #undef the macro before the launch, or rename it, to aggregate it", "child-param-macro");
        }
        String partial = child.templateHeader() == null || ctx.templateArgs(l) == null ? null : partialTemplateArgs(child, l);
        if (partial != null) {
            return new Refusal("launch of template kernel '" + l.kernelName() + "' writes " + ctx.templateArgs(l)
                    + ", fewer template arguments than the kernel has, and " + partial + "; klap would take the default "
                    + "in its own declarations instead, so the launch is not aggregated; write every template argument ("
                    + l.kernelName() + "<...><<<...>>>(...)) to aggregate it", "template-args");
        }
        if (child.templateHeader() != null && ctx.templateArgs(l) == null) {
            return new Refusal("launch of template kernel '" + l.kernelName() + "' without explicit template arguments "
                    + "is not aggregated: klap deduces a type parameter P only from a child parameter written P, cv P "
                    + "or cv P* whose argument is a parameter of the launching function (as it is, or a pointer plus an "
                    + "offset), and it found none for at least one of them; write " + l.kernelName()
                    + "<...><<<...>>>(...)", "template-args");
        }
        for (Param q : child.params()) {
            if (ctx.slice(q.range()).contains("...")) {
                // one record member per parameter: a pack has no fixed number of members
                return new Refusal("child kernel '" + l.kernelName() + "' has a function parameter pack ('"
                        + ctx.slice(q.range()).strip() + "'); its launch is not aggregated", "argument-count");
            }
        }
        if (l.args().size() > child.params().size()) {
            return new Refusal("launch of '" + l.kernelName() + "' passes " + l.args().size() + " arguments for "
                    + child.params().size() + " parameters; it is not aggregated", "argument-count");
        }
        for (int i = l.args().size(); i < child.params().size(); i++) {
            // the record's constructor repeats the default arguments, the definition's or a prototype's
            // (CudaText.argsStruct)
            String def = child.defaultArgument(i, ctx.text);
            if (def.isEmpty()) {
                return new Refusal("launch of '" + l.kernelName() + "' passes " + l.args().size() + " arguments for "
                        + child.params().size() + " parameters, and klap finds no default for parameter " + (i + 1)
                        + " of '" + l.kernelName() + "'; it is not aggregated", "argument-count");
            }
            String call = klap.transform.TemplateDeduction.callIn(def);
            if (call != null) {
                // the record repeats it where klap declares, where other overloads of the function may be
                // visible than where the default was written (off(0) chose off(long) at the prototype,
                // off(int) declared later at the record: a different argument; review 2026-11-30)
                return new Refusal("launch of '" + l.kernelName() + "' leaves parameter " + (i + 1) + " to its default "
                        + "argument, which calls '" + call + "': klap's record would repeat the call elsewhere, where it may "
                        + "choose another overload; it is not aggregated; pass the argument to aggregate it", "argument-count");
            }
            for (Param q : child.params()) {
                if (!q.name().isEmpty() && Pattern.compile("(?<![A-Za-z0-9_])" + Pattern.quote(q.name())
                        + "(?![A-Za-z0-9_])").matcher(def).find()) {
                    // in the record's constructor, class scope would find the record's member of that name
                    return new Refusal("launch of '" + l.kernelName() + "' leaves parameter " + (i + 1)
                            + " to its default argument, which names '" + q.name() + "', also a parameter of '"
                            + l.kernelName() + "'; it is not aggregated", "argument-count");
                }
            }
        }
        return null;
    }

    /**
     * @return true if kernel {@code k}'s code can run with other block indices than the hardware's,
     *         given as the original ones the way an aggregated child variant gets them (shadows of the
     *         built-ins around its body, {@code klap_v} passed to the clones of the functions it calls
     *         that read them): the checks of {@link #refusal} that concern the kernel alone, not a
     *         launch of it (no cooperative groups of the hardware block or grid, none of
     *         {@link #childRefusal}'s reasons, no index-reading call through a macro). Used for a
     *         parent's chunk twin ({@link ChunkTwins}); cached with those checks.
     */
    boolean indicesReplaceable(FunctionDef k) {
        return blockGroupUses.computeIfAbsent(k, c -> java.util.Optional.ofNullable(blockGroupUse(c, new HashSet<>()))).isEmpty()
                && twinRefusals.computeIfAbsent(k, c -> java.util.Optional.ofNullable(childRefusal(c, false))).isEmpty()
                && macroCalls.computeIfAbsent(k, c -> java.util.Optional.ofNullable(deviceCallViaMacro(c, new HashSet<>()))).isEmpty();
    }

    /**
     * @return the first cooperative-groups name in {@code f} or the device functions it calls that
     *         reads the hardware block or grid (what an aggregated child must not rely on), or null
     */
    private String blockGroupUse(FunctionDef f, Set<FunctionDef> seen) {
        if (!seen.add(f)) {
            return null;
        }
        String[] found = {null};
        Trees.walkExprs(f.body(), e -> {
            if (found[0] == null && e instanceof Expr.Name n && BLOCK_GROUPS.contains(AggregationContext.simpleName(n.name()))) {
                found[0] = n.name();
            }
        });
        if (found[0] != null) {
            return found[0];
        }
        Set<String> callees = new HashSet<>();
        Trees.walkExprs(f.body(), e -> {
            if (e instanceof Expr.Call c && c.calleeName() != null) {
                callees.add(AggregationContext.simpleName(c.calleeName()));
            }
        });
        for (FunctionDef g : ctx.deviceFunctionsNamed(callees)) {
            String r = blockGroupUse(g, seen);
            if (r != null) {
                return r;
            }
        }
        return null;
    }

    /**
     * @return the name of a {@code __device__} function of the unit that reads the built-in indices
     *         (directly or through its calls: the variant calls its clone, with {@code klap_v}) and that
     *         {@code f} (or a device function it calls) calls through a macro (the call's callee is not
     *         written out where the call is, e.g. {@code #define G gid()} used as {@code a[G]}), or
     *         null. The variant would have to rewrite that call to pass {@code klap_v}, inside the
     *         macro's expansion. A function that reads no index needs no rewrite, so a call of it
     *         through a macro is fine (a Perlin-noise generator's {@code lerp(t, grad1(..), grad1(..))},
     *         public code, 2026-11-29: the launch was left as written).
     */
    private String deviceCallViaMacro(FunctionDef f, Set<FunctionDef> seen) {
        if (!seen.add(f)) {
            return null;
        }
        Set<String> reading = ctx.indexReaders(ChildVariants.builtins());
        String[] found = {null};
        Set<String> callees = new HashSet<>();
        Trees.walkExprs(f.body(), e -> {
            if (e instanceof Expr.Call c && c.calleeName() != null && c.callee() instanceof Expr.Name
                    && !ctx.deviceFunctionsNamed(Set.of(AggregationContext.simpleName(c.calleeName()))).isEmpty()) {
                String name = AggregationContext.simpleName(c.calleeName());
                callees.add(name);
                if (found[0] == null && reading.contains(name) && !ChildVariants.writtenOut(ctx, c)) {
                    found[0] = name;
                }
            }
        });
        if (found[0] != null) {
            return found[0];
        }
        for (FunctionDef g : ctx.deviceFunctionsNamed(callees)) {
            String r = deviceCallViaMacro(g, seen);
            if (r != null) {
                return r;
            }
        }
        return null;
    }

    /**
     * @return the name of a function of {@code readers} that a lambda in {@code f}'s body calls, or
     *         null (a call outside every lambda is rewritten to the clone; one inside is not)
     */
    private static String readerCalledInLambda(FunctionDef f, Set<String> readers) {
        Set<Expr> outside = ChildVariants.outsideLambdas(f);
        String[] found = {null};
        Trees.walkExprsAndLambdas(f.body(), e -> {
            if (found[0] == null && !outside.contains(e) && e instanceof Expr.Call c && AggregationContext.calleeSimpleName(c) != null
                    && readers.contains(AggregationContext.calleeSimpleName(c))) {
                found[0] = AggregationContext.calleeSimpleName(c);
            }
        });
        return found[0];
    }

    /** @return the name of a {@code static} (not {@code __shared__}) local of {@code f}, or null */
    static String staticLocal(FunctionDef f) {
        for (Stmt.Decl d : Trees.collect(f.body(), Stmt.Decl.class)) {
            for (VarDecl v : d.vars()) {
                if (v.isStatic() && !v.shared()) {
                    return v.name();
                }
            }
        }
        return null;
    }

    /**
     * @return what {@code child} (or a {@code __device__} function of the unit it calls) runs that klap
     *         cannot read, as a phrase ("calls 'f', whose body is in another file"): a call of a
     *         {@code __device__} function defined in another file, a call through a function pointer,
     *         or an {@code asm} statement that reads a special register of the hardware grid
     *         ({@code %tid}, {@code %ctaid}, ...); null if none
     */
    private String unseenCallee(FunctionDef child) {
        String[] found = {null};
        for (FunctionDef g : ctx.deviceClosure(child)) {
            // locals initialized with a lambda: calling them runs a body klap sees (walked below)
            Set<String> lambdas = Trees.lambdaLocals(g.body()).keySet();
            Trees.walkExprsAndLambdas(g.body(), e -> {
                if (found[0] != null || !(e instanceof Expr.Call c)) {
                    return;
                }
                if (c.callee() instanceof Expr.Name n && n.kind() == Expr.NameKind.LOCAL && lambdas.contains(n.name())) {
                    return;
                }
                String callee = AggregationContext.calleeSimpleName(c);
                if (c.calleeName() != null
                        && ctx.unit.deviceFunctionsWithoutBody().contains(AggregationContext.simpleName(c.calleeName()))) {
                    found[0] = "calls '" + c.calleeName() + "', whose body is in another file or does what klap cannot "
                            + "follow";
                } else if (callee != null && ctx.unit.headerIndexReaders().contains(callee)) {
                    found[0] = "calls '" + callee + "', which a header defines and which reads the built-in indices "
                            + "(klap can give the original indices only to functions of this file)";
                } else if (callee != null && klap.model.LibraryCalls.readsIndices(ctx.unit.libraries(), c)) {
                    found[0] = "calls '" + (c.calleeName() != null ? c.calleeName() : callee) + "', a library function "
                            + "that reads the hardware grid's indices (a special register, blockIdx or gridDim)";
                } else if (c.callee() instanceof Expr.Name n
                        && (n.kind() == Expr.NameKind.LOCAL || n.kind() == Expr.NameKind.PARAM
                                || n.kind() == Expr.NameKind.GLOBAL) && !pointerTargetsKnown()) {
                    boolean object = ctx.unit.implicitCallsIn(c.range()).stream()
                            .anyMatch(x -> x.name().equals("operator ()") && !n.range().contains(x.offset()));
                    found[0] = object ? "calls the function object '" + n.name() + "' (its operator())"
                            : "calls through the function pointer '" + n.name() + "'";
                }
            });
            if (found[0] == null) {
                found[0] = implicitIndexReader(g);
            }
            Trees.walkStmts(g.body(), st -> {
                if (found[0] == null && st instanceof Stmt.Other o
                        && SPECIAL_REGISTER.matcher(ctx.slice(o.range()) + "\n" + (o.asm() == null ? "" : o.asm())).find()) {
                    found[0] = "has an asm statement that reads a special register of the hardware grid";
                }
            });
            // the body's text once, for the two scans of class names below
            String body = found[0] == null ? klap.transform.Lexical.blankCommentsAndLiterals(ctx.slice(g.body().range())) : "";
            if (found[0] == null) {
                // an object of a class of this file whose conversion function reads the indices: C++ applies it
                // without a call, and CDT names no such call (so it is not an ImplicitCall)
                for (var conv : conversionReaders().entrySet()) {
                    if (Pattern.compile("(?<![A-Za-z0-9_.>:~])" + Pattern.quote(conv.getKey()) + "\\b").matcher(body).find()) {
                        found[0] = "uses the class '" + conv.getKey() + "', whose conversion function '" + conv.getValue()
                                + "' reads the built-in indices and is applied without a call expression";
                        break;
                    }
                }
            }
            if (found[0] == null) {
                // a header class whose constructor reads the indices, constructed without a call (Idx i;)
                for (String r : ctx.unit.headerIndexReaders()) {
                    if (!r.startsWith("operator") && Pattern.compile("(?<![A-Za-z0-9_.>:])" + Pattern.quote(r) + "\\b")
                            .matcher(body).find()) {
                        found[0] = "uses '" + r + "', which a header defines and which reads the built-in indices "
                                + "(klap can give the original indices only to functions of this file)";
                        break;
                    }
                }
            }
        }
        return found[0];
    }

    /**
     * @return why {@code g} reads the hardware grid's indices through a call it does not write as one
     *         ({@link klap.model.ImplicitCall}: an operator, a functor's {@code operator()}, a constructor
     *         or a destructor), or null. klap gives a function of the file the child's original indices
     *         by passing them at each call it rewrites; such a call has no text to rewrite.
     */
    private String implicitIndexReader(FunctionDef g) {
        Set<String> readers = builtinReaders();
        for (klap.model.ImplicitCall c : ctx.unit.implicitCallsIn(g.range())) {
            boolean reads = switch (c.origin()) {
                case MAIN -> readers.contains(c.name());
                case HEADER, INITIALIZER -> c.readsIndices();
                case UNSEEN -> true;
            };
            if (reads) {
                String what = c.origin() == klap.model.ImplicitCall.Origin.INITIALIZER
                    ? "the default member initializers of '" + c.name() + "'"
                    : c.name().startsWith("operator") ? "the operator '" + c.name() + "'"
                    : c.name().startsWith("~") ? "the destructor '" + c.name() + "'" : "the constructor '" + c.name() + "'";
                return "calls " + what + " (line " + ctx.unit.file().line(c.offset()) + ") without a call expression, "
                    + (c.origin() == klap.model.ImplicitCall.Origin.UNSEEN ? "whose body klap cannot follow (in another "
                        + "file, or doing what klap does not follow)" : "which reads the built-in indices") + " (klap can give the original indices only to functions "
                    + "this file calls by name)";
            }
        }
        return null;
    }

    /**
     * @return why the template parameters that launch {@code l}'s explicit template arguments leave out
     *         do not all take their defaults in klap's record and variant, which are written with the
     *         arguments as written ({@link klap.transform.TemplateDeduction#notLeftToDefaults}): the child's
     *         parameters name one, so C++ deduces it from the launch's arguments ({@code child<float><<<...>>>(p, x)}
     *         of {@code template <typename T, typename U = int> __global__ void child(T* p, U x)} has U =
     *         decltype(x), review 2026-11-29), its default is one klap cannot repeat where it declares them
     *         (given by a later declaration, naming the parameters otherwise, or holding {@code __LINE__}:
     *         review 2026-11-30, the output did not build), or one left out is a pack; null if the
     *         arguments written name every parameter, or the ones left out take their defaults
     */
    private String partialTemplateArgs(FunctionDef child, Expr.Launch l) {
        String written = ctx.templateArgs(l);
        String names = klap.transform.TemplateParams.argumentList(ctx.slice(child.templateHeader()));
        if (names.length() < 2 || written.length() < 2) {
            return null;
        }
        List<String> params = klap.transform.TemplateParams.splitTopLevel(names.substring(1, names.length() - 1));
        int given = klap.transform.TemplateParams.splitTopLevel(written.substring(1, written.length() - 1)).size();
        return given >= params.size() ? null : klap.transform.TemplateDeduction.notLeftToDefaults(child, given, ctx.text);
    }

    /**
     * @return the name of a child parameter that an object-like macro of the file names at launch
     *         {@code l}: a {@code #define NAME ...} before the launch with no {@code #undef NAME} after
     *         it (review 2026-11-29: {@code #define p dq} in the parent turned klap's {@code klap_a.p} into
     *         {@code klap_a.dq}, and the output did not build); null if none. A macro of a header is not seen.
     */
    private String parameterMacro(FunctionDef child, Expr.Launch l) {
        if (macroDirectives == null) {
            // once per file: every #define of an object-like macro and every #undef, by name and offset
            macroDirectives = new HashMap<>();
            Matcher m = Pattern.compile("(?m)^[ \\t]*#[ \\t]*(define|undef)[ \\t]+([A-Za-z_][A-Za-z0-9_]*)(?![A-Za-z0-9_(])")
                    .matcher(ctx.text);
            while (m.find()) {
                macroDirectives.computeIfAbsent(m.group(2), k -> new java.util.TreeMap<>()).put(m.start(), m.group(1).equals("define"));
            }
        }
        for (Param q : child.params()) {
            var byOffset = q.name() == null ? null : macroDirectives.get(q.name());
            var last = byOffset == null ? null : byOffset.lowerEntry(l.range().offset());
            if (last != null && last.getValue()) {
                return q.name();
            }
        }
        return null;
    }

    /** {@link #parameterMacro}'s index of the file's object-like macro directives: name to offset to "is a #define" */
    private Map<String, java.util.TreeMap<Integer, Boolean>> macroDirectives;

    private Map<String, String> conversionReaders;

    /**
     * @return the classes of this file that have a conversion function ({@code operator unsigned()})
     *         reading the built-in indices, to that function's name
     */
    private Map<String, String> conversionReaders() {
        if (conversionReaders == null) {
            Map<String, String> out = new java.util.LinkedHashMap<>();
            for (FunctionDef f : ctx.unit.functions()) {
                if (f.memberOf() != null && FunctionDef.isConversionName(f.name()) && builtinReaders().contains(f.name())) {
                    out.putIfAbsent(f.memberOf(), f.name());
                }
            }
            conversionReaders = out;
        }
        return conversionReaders;
    }

    private Boolean pointerTargetsKnown;

    /**
     * @return true if a call through a function pointer can only reach device functions that do not
     *         read the built-in indices: the unit declares no {@code __device__} function of another
     *         file, and no device function of the unit or of a project header whose address it takes
     *         ({@link klap.transform.AddressTaken}) reads them ({@link AggregationContext#indexReaders},
     *         {@code headerIndexReaders}) or does what klap cannot follow. A pointer made in another
     *         file that declares nothing here is not seen (assumed absent).
     */
    private boolean pointerTargetsKnown() {
        if (pointerTargetsKnown == null) {
            Set<String> readers = new HashSet<>(ctx.indexReaders(ChildVariants.builtins()));
            readers.addAll(ctx.unit.headerIndexReaders());
            readers.addAll(ctx.unit.headerOpaqueFunctions());
            Set<String> declaredOnly = new HashSet<>(ctx.unit.deviceFunctionsWithoutBody());
            declaredOnly.removeAll(ctx.unit.headerOpaqueFunctions());
            pointerTargetsKnown = declaredOnly.isEmpty() && klap.transform.AddressTaken.of(ctx.unit, readers).isEmpty();
        }
        return pointerTargetsKnown;
    }

    /** A C++ identifier (also {@link SitePlanner}'s names in template arguments). */
    static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    /** {@code struct alignas(32) Name}, {@code class __align__(64) Name}, ...: group 1 is the name */
    private static final Pattern OVER_ALIGNED_DECL = Pattern.compile("\\b(?:struct|class|union)\\s+"
            + "(?:alignas|__align__|__builtin_align__)\\s*\\(\\s*(?:32|64|128|256|512|1024|2048|4096)\\s*\\)\\s+"
            + "([A-Za-z_][A-Za-z0-9_]*)");

    private Set<String> overAlignedTypes;

    /** @return the names of the file's classes declared with more than 16-byte alignment (one scan of the text) */
    private Set<String> overAlignedTypes() {
        if (overAlignedTypes == null) {
            overAlignedTypes = new HashSet<>();
            java.util.regex.Matcher m = OVER_ALIGNED_DECL.matcher(ctx.text);
            while (m.find()) {
                overAlignedTypes.add(m.group(1));
            }
        }
        return overAlignedTypes;
    }

    /** CUDA 13's 32-byte aligned vector types ({@code double4_32a}, ...) and {@code alignas(32)} and more. */
    private static final Pattern OVER_ALIGNED_TYPE = Pattern.compile(
            "\\b[a-z]+4_32a\\b|\\b(?:alignas|__align__)\\s*\\(\\s*(?:32|64|128|256|512|1024|2048|4096)\\s*\\)");

    /** A lambda whose capture list starts with a default capture ({@code [=]}, {@code [&, x]}). */
    private static final Pattern DEFAULT_CAPTURE = Pattern.compile("\\[\\s*[=&]\\s*[,\\]]");

    /**
     * @return the built-in index that a lambda of {@code child} without a default capture ({@code []},
     *         {@code [n]}, {@code [&n]}: review 2026-12-01) reads, or null
     */
    private String capturelessLambdaReadingIndices(FunctionDef child) {
        String[] found = {null};
        for (FunctionDef g : ctx.deviceClosure(child)) {
            // in a function the child calls, any lambda: klap finds the functions to clone with the original
            // indices by their own reads, not their lambdas' (review 2026-12-01: gid() { auto f = [] { return
            // blockIdx.x * blockDim.x + threadIdx.x; }; return f(); } was called as written)
            boolean any = g != child;
            Trees.walkExprsAndLambdas(g.body(), e -> {
                if (found[0] == null && e instanceof Expr.Lambda lam
                        && (any || !DEFAULT_CAPTURE.matcher(ctx.slice(lam.range())).lookingAt())) {
                    Trees.walkExprsAndLambdas(lam.body(), x -> {
                        if (found[0] == null && x instanceof Expr.Name n && n.kind() == Expr.NameKind.BUILTIN
                                && ChildVariants.builtins().contains(n.name())) {
                            found[0] = n.name() + (any ? " (in '" + g.name() + "', which it calls)" : "");
                        }
                    });
                }
            });
        }
        return found[0];
    }

    /** The head of a class defined in a function body: {@code struct Idx {}, {@code class A : B {}. */
    private static final Pattern LOCAL_CLASS = Pattern.compile("\\b(struct|class|union)\\s+([A-Za-z_][A-Za-z0-9_]*)?"
            + "\\s*(final\\s*)?(:[^;{()]*)?\\{");

    /**
     * @return the name of a class defined in the body of {@code child} (or of a device function it
     *         calls) whose text names a built-in index ({@code threadIdx}, ...), or null: the variant
     *         shadows the built-ins with locals of the enclosing function, which a member function of a
     *         local class may not use (nvcc: "reference to local variable of enclosing function is not
     *         allowed"; review 2026-11-27)
     */
    private String localClassReadingIndices(FunctionDef child) {
        for (FunctionDef g : ctx.deviceClosure(child)) {
            String body = ctx.slice(g.body().range());
            java.util.regex.Matcher m = LOCAL_CLASS.matcher(body);
            while (m.find()) {
                int depth = 0;
                int end = m.end() - 1;
                for (int i = end; i < body.length(); i++) {
                    char c = body.charAt(i);
                    if (c == '{') {
                        depth++;
                    } else if (c == '}' && --depth == 0) {
                        end = i;
                        break;
                    }
                }
                if (BUILTIN_NAME.matcher(body.substring(m.end(), end)).find()) {
                    return m.group(2) == null ? "(unnamed)" : m.group(2);
                }
            }
        }
        return null;
    }

    private static final Pattern BUILTIN_NAME = Pattern.compile("(?<![A-Za-z0-9_.>:])(threadIdx|blockIdx|blockDim|gridDim)\\b");
    /** PTX special registers of the hardware grid, block and thread indices. */
    private static final Pattern SPECIAL_REGISTER = Pattern.compile("%(tid|ntid|ctaid|nctaid|laneid|warpid|smid)\\b");

    private Set<String> builtinReaders;

    /**
     * @return the device functions of the unit and of project headers that read the built-in indices
     *         (computed once: a copy per child was quadratic in large files)
     */
    private Set<String> builtinReaders() {
        if (builtinReaders == null) {
            Set<String> readers = new HashSet<>(ctx.indexReaders(ChildVariants.builtins()));
            readers.addAll(ctx.unit.headerIndexReaders());
            builtinReaders = Set.copyOf(readers);
        }
        return builtinReaders;
    }

    /** {@link #blockGroupUse} and {@link #deviceCallViaMacro} of each child, computed once per child */
    private final Map<FunctionDef, java.util.Optional<String>> blockGroupUses = new HashMap<>();
    private final Map<FunctionDef, java.util.Optional<String>> macroCalls = new HashMap<>();

    /** {@link #childRefusal} of each child, computed once per child (a file may launch one child from many sites) */
    private final Map<FunctionDef, java.util.Optional<Refusal>> childRefusals = new HashMap<>();
    /** {@link #childRefusal} of each chunk-twinned parent, which needs no argument record (computed once) */
    private final Map<FunctionDef, java.util.Optional<Refusal>> twinRefusals = new HashMap<>();

    /**
     * @return why no launch of {@code child} can be aggregated, whatever the launch (review
     *         2026-11-25): a cluster shape, a signature naming what is declared later (2026-11-30), an
     *         over-aligned parameter, a capture-less lambda reading
     *         the indices, code klap cannot see, a member function reading the indices; or null
     * @param record whether klap declares an argument record of {@code child} (a launch's
     *        aggregation), whose members need each class {@code child} takes by value complete where
     *        klap declares it; false for a parent's chunk twin, declared by a prototype alone
     */
    private Refusal childRefusal(FunctionDef child, boolean record) {
        String head = ctx.slice(new SourceRange(child.range().offset(), child.nameRange().offset() - child.range().offset()));
        if (head.contains("__cluster_dims__") || head.contains("__block_size__")) {
            return new Refusal("child kernel '" + child.name() + "' is declared with a thread-block cluster "
                    + "shape, which the aggregated grid (of any size) cannot keep; its launch is not aggregated",
                    "child-cluster");
        }
        if (ctx.signatureInMacro(child)) {
            return new Refusal("child kernel '" + child.name() + "': a macro writes its name or parameters, which klap "
                    + "copies to declare its aggregated variant and argument record; its launch is not aggregated",
                    "child-signature-macro");
        }
        // the argument record's members need each class taken by value complete; the prototypes of a
        // variant or a chunk twin, declarations, need its name alone
        FunctionDef.Need late = ctx.lateSignature(child, record);
        if (late != null) {
            return new Refusal("child kernel '" + child.name() + "': its " + ctx.lateSignatureWhy(child, late) + ", where klap must "
                    + "declare its aggregated variant and argument record (before the first function that uses the kernel); "
                    + "its launch is not aggregated; " + late.fix() + " before that line to aggregate it",
                    "child-signature-late");
        }
        for (Param q : child.params()) {
            String type = ctx.slice(q.range());
            java.util.regex.Matcher m = IDENTIFIER.matcher(type);
            boolean overAligned = OVER_ALIGNED_TYPE.matcher(type).find();
            while (!overAligned && m.find()) {
                overAligned = overAlignedTypes().contains(m.group());
            }
            if (overAligned && !type.contains("*") && !type.contains("&")) {
                return new Refusal("child kernel '" + child.name() + "' takes '" + type.strip() + "' by value, "
                        + "which needs more than 16-byte alignment: klap's launch records do not keep that; its "
                        + "launch is not aggregated", "child-over-aligned");
            }
        }
        String lambda = capturelessLambdaReadingIndices(child);
        if (lambda != null) {
            return new Refusal("child kernel '" + child.name() + "' has a lambda without a default capture that reads "
                    + lambda + ": in the aggregated variant the original indices are local constants, which such a "
                    + "lambda cannot use; capture them by default ([=] or [&]) to aggregate the launch", "child-lambda-builtins");
        }
        String stat = staticLocal(child);
        if (stat != null) {
            return new Refusal("child kernel '" + child.name() + "' has a static local ('" + stat + "'): its aggregated "
                    + "variant, a copy of its body, would have one of its own, not shared with the kernel as written; its "
                    + "launch is not aggregated", "child-static-local");
        }
        String local = localClassReadingIndices(child);
        if (local != null) {
            return new Refusal("child kernel '" + child.name() + "' defines a local class '" + local + "' whose members "
                    + "read the built-in indices: in the aggregated variant the original indices are local constants, "
                    + "which a local class cannot use; its launch is not aggregated", "child-local-class-builtins");
        }
        Set<String> readers = builtinReaders();
        for (FunctionDef g : ctx.deviceClosure(child)) {
            for (int qi = 0; g != child && qi < g.params().size(); qi++) {
                String def = g.defaultArgument(qi, ctx.text);
                if (!def.isEmpty() && (BUILTIN_NAME.matcher(def).find() || readers.stream().anyMatch(r -> Pattern.compile(
                        "(?<![A-Za-z0-9_])" + Pattern.quote(r) + "\\s*\\(").matcher(def).find()))) {
                    // a default argument is bound where the function is declared, outside the body in which
                    // the variant shadows the built-ins: it would read the aggregated grid's indices
                    return new Refusal("child kernel '" + child.name() + "' calls '" + g.name() + "', whose default "
                            + "argument '" + def.substring(1).strip() + "' reads the built-in "
                            + "indices, which in an aggregated child would be the aggregated grid's; its launch is not "
                            + "aggregated; pass that argument explicitly to aggregate it", "child-default-builtins");
                }
            }
        }
        for (FunctionDef g : ctx.deviceClosure(child)) {
            // (the clone's prototype is a declaration: a class taken by value may be defined later)
            if (g != child && readers.contains(g.name()) && ctx.signatureInMacro(g)) {
                return new Refusal("child kernel '" + child.name() + "' calls '" + g.name() + "', which reads the built-in "
                        + "indices: a macro writes its name or parameters, which klap copies to declare its copy with the "
                        + "original indices; its launch is not aggregated", "child-signature-macro");
            }
            FunctionDef.Need gLate = g == child || !readers.contains(g.name()) ? null : ctx.lateSignature(g, false);
            if (gLate != null) {
                // the variant calls g's clone, declared where g is first declared or used (ChildVariants.findClones
                // makes none of such a g)
                return new Refusal("child kernel '" + child.name() + "' calls '" + g.name() + "', which reads the built-in "
                        + "indices: its " + ctx.lateSignatureWhy(g, gLate) + ", where klap must declare its copy with the original "
                        + "indices; its launch is not aggregated; " + gLate.fix() + " before that line to aggregate it",
                        "child-signature-late");
            }
            String inLambda = readerCalledInLambda(g, readers);
            if (inLambda != null) {
                // klap rewrites no call inside a lambda body (ChildVariants.retarget): the variant's lambda
                // would call the original, which reads the aggregated grid's indices (review 2026-11-30)
                return new Refusal("child kernel '" + child.name() + "' calls '" + inLambda + "', which reads the "
                        + "built-in indices, inside a lambda: in an aggregated child it would see the aggregated "
                        + "grid's indices; its launch is not aggregated", "child-lambda-calls-index-reader");
            }
            String calleeStatic = g == child || !readers.contains(g.name()) ? null : staticLocal(g);
            if (calleeStatic != null) {
                // the variant calls g's clone, a copy of its body with a static local of its own: launches
                // that run as written (and the kernel's other callers) would no longer share it
                return new Refusal("child kernel '" + child.name() + "' calls '" + g.name() + "', which reads the "
                        + "built-in indices and has a static local ('" + calleeStatic + "'): an aggregated child calls a copy of '"
                        + g.name() + "' with the original indices, whose '" + calleeStatic + "' would not be shared with the "
                        + "function as written; its launch is not aggregated", "child-callee-static-local");
            }
        }
        String unseen = unseenCallee(child);
        if (unseen != null) {
            return new Refusal("child kernel '" + child.name() + "' " + unseen + ": the blockIdx/blockDim/gridDim/"
                    + "threadIdx it may read would be the aggregated grid's in an aggregated child; its launch is not "
                    + "aggregated", "child-calls-unseen");
        }
        String member = ctx.memberIndexReaderCalledBy(child, ChildVariants.builtins());
        if (member != null) {
            return new Refusal("child kernel '" + child.name() + "' calls " + (FunctionDef.isOperatorName(member) && !member.contains("#")
                    ? "the operator function '" : "member function '") + member + "', which "
                    + "reads blockIdx/blockDim/gridDim/threadIdx: in an aggregated child it would see the aggregated "
                    + "grid's values (klap cannot give a member or operator function the original ones); its launch is not "
                    + "aggregated", "child-member-builtins");
        }
        return null;
    }
}
