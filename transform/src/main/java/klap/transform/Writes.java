package klap.transform;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import klap.model.CudaUnit;
import klap.model.Expr;
import klap.model.FunctionDef;
import klap.model.ImplicitCall;
import klap.model.Param;
import klap.model.Stmt;
import klap.model.VarDecl;

/**
 * The writes to a function's variables (locals and parameters) that are not plain definitions
 * ({@code x = e}, {@code ++x}): the fact {@link Uniformity} needs so that it never calls a value
 * uniform that some thread may change behind its back (issue: a row range written through
 * {@code int& b, int& e} out-parameters was scalarized, an illegal memory access on the GPU).
 *
 * <p>Input: a function body. Output: the names of variables that may be written other than by a
 * definition, whatever the value:
 * <ul>
 *   <li>arrays, references, {@code static} and {@code __shared__} locals;</li>
 *   <li>a variable whose address is taken ({@code &x}, {@code &x.f}) or that a non-const reference
 *       is bound to ({@code int& r = x;}, {@code auto& [a, b] = x});</li>
 *   <li>a variable passed by name (or as a {@code .} member path) to a call where the parameter is a
 *       non-const reference of a function of the unit, or to a function the unit does not define
 *       and that is not a known by-value CUDA built-in ({@link #BY_VALUE_NAME}); where CDT resolved
 *       the callee (defined in a header, only declared, a typedef'd reference), its declared
 *       parameter types decide ({@link Expr.Call#paramModes});</li>
 *   <li>the object of a member call {@code x.f(...)} (a non-const member may change it);</li>
 *   <li>an object a non-const conversion function ({@code operator int()}) may be applied to;</li>
 *   <li>an operand of an overloaded operator that takes it by non-const reference or is a non-const
 *       member of it ({@code acc << v} with {@code Acc& Acc::operator<<(int)}, {@code v >> acc} with
 *       {@code void operator>>(int, Acc&)}), and the object of an overloaded {@code operator->}
 *       (what it returns may point into it), from the unit's implicit calls;</li>
 *   <li>every identifier in an {@code asm} statement (its output operands);</li>
 *   <li>every variable a by-reference lambda writes in its body (by the rules above, and any
 *       assignment or increment).</li>
 * </ul>
 */
final class Writes {
    /**
     * Callees that take every argument by value: the CUDA math library and intrinsics
     * ({@code __shfl_sync}, {@code __ldg}, ...), atomics (pointer by value), the runtime API (takes
     * {@code void**} by value: a write needs {@code &p}, caught as address-taken), printf.
     */
    static final List<String> BY_VALUE_PREFIXES = List.of("__", "atomic", "cuda", "make_", "printf", "assert",
            "memcpy", "memset", "malloc", "free", "static_cast", "reinterpret_cast", "const_cast");

    /**
     * The names of {@link #BY_VALUE_PREFIXES} as a pattern, for a callee CDT did not resolve (a
     * declaration klap does not see): reserved identifiers ({@code __shfl_sync}: C++ [lex.name]
     * reserves names with a double underscore for the implementation), the runtime API and atomics
     * in their camel case ({@code cudaMalloc}, {@code atomicAdd}, not {@code cuda_swap}), the vector
     * constructors ({@code make_int2}) and the C library functions by their exact names.
     */
    static final Pattern BY_VALUE_NAME = Pattern.compile("__\\w*|cuda[A-Z]\\w*|atomic[A-Z]\\w*"
            + "|make_(u?(char|short|int|long|longlong)|float|double|half|bfloat16|nv_bfloat16)[1-4]?|printf|assert"
            + "|memcpy|memset|malloc|free|static_cast|reinterpret_cast|const_cast");

    private static final Pattern IDENT = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    private final CudaUnit unit;

    /** true if the unit applies a conversion function anywhere (most programs write none) */
    private final boolean hasConversions;
    /** the names of the functions the unit defines (computed once) */
    private Set<String> definedNames;

    /**
     * @return true if the main file defines a function named {@code simple} (a user's {@code max} may
     *         read the indices: it is not the math library's)
     */
    boolean defines(String simple) {
        if (unit == null) {
            return false;
        }
        if (definedNames == null) {
            definedNames = new java.util.HashSet<>();
            unit.functions().forEach(f -> definedNames.add(f.name()));
        }
        return definedNames.contains(simple);
    }

    /** @param unit the translation unit whose functions' parameter types are consulted, or null */
    Writes(CudaUnit unit) {
        this.unit = unit;
        this.hasConversions = unit != null && unit.implicitCalls().stream().anyMatch(ImplicitCall::isConversion);
    }

    /** @return the variable (local or parameter) that {@code e} names, or null */
    static String variable(Expr e) {
        return e instanceof Expr.Name n && (n.kind() == Expr.NameKind.LOCAL || n.kind() == Expr.NameKind.PARAM)
                ? n.name() : null;
    }

    /**
     * @return every variable the lvalue {@code e} may designate: {@link #root} of each of its
     *         {@link #lvalueLeaves}; empty if none is a variable
     */
    static Set<String> roots(Expr e) {
        Set<String> out = new java.util.LinkedHashSet<>();
        lvalueLeaves(e, List.of(), (leaf, choices) -> {
            String r = root(leaf);
            if (r != null) {
                out.add(r);
            }
            out.addAll(callArguments(leaf));
        });
        return out;
    }

    /**
     * @return the variables passed by name to {@code leaf} if it is a call: a function that returns
     *         a reference usually returns into its argument ({@code cuda::std::get<0>(t) = v},
     *         {@code int& r = get<0>(t);}), so an lvalue call may write them (review 2026-11-27)
     */
    static Set<String> callArguments(Expr leaf) {
        Set<String> out = new java.util.LinkedHashSet<>();
        if (leaf instanceof Expr.Call c) {
            for (Expr a : c.args()) {
                String r = root(a);
                if (r != null) {
                    out.add(r);
                }
            }
            if (c.callee() instanceof Expr.Member m && !m.arrow() && root(m.owner()) != null) {
                out.add(root(m.owner())); // v.at(0) = x
            }
        }
        return out;
    }

    /**
     * Calls {@code f} with each expression the lvalue {@code e} may designate and the conditions
     * that choose it: both arms of {@code c ? a : b} (chosen by {@code c}), the right operand of a
     * comma, the target of an assignment or prefix {@code ++}/{@code --} ({@code (a = b) = t}), the
     * inside of parentheses; any other expression is a leaf itself.
     *
     * @param choices the conditions that chose {@code e} so far
     */
    static void lvalueLeaves(Expr e, List<Expr> choices, java.util.function.BiConsumer<Expr, List<Expr>> f) {
        if (e instanceof Expr.Conditional c) {
            List<Expr> more = new ArrayList<>(choices);
            more.add(c.cond());
            lvalueLeaves(c.then(), more, f);
            lvalueLeaves(c.otherwise(), more, f);
        } else if (e instanceof Expr.Binary b && (b.op().equals(",") || b.isAssignment())) {
            lvalueLeaves(b.op().equals(",") ? b.rhs() : b.lhs(), choices, f);
        } else if (e instanceof Expr.Unary u && (u.op().equals("++pre") || u.op().equals("--pre") || u.op().equals("()"))) {
            lvalueLeaves(u.operand(), choices, f);
        } else if (e instanceof Expr.Cast c && c.typeText() != null && c.typeText().contains("&")) {
            // reinterpret_cast<unsigned&>(i) = v writes i (review 2026-11-27)
            lvalueLeaves(c.operand(), choices, f);
        } else {
            f.accept(e, choices);
        }
    }

    /**
     * @return the variable at the root of a {@code .} member path ({@code x}, {@code x.a.b}), also
     *         through an element of a member array ({@code x.c[i]}, {@code x.a.c[i][j]}: the array is
     *         part of {@code x}'s value; so is a member of unknown type, which errs on the safe
     *         side), or null ({@code p[i]}, {@code x->a}, {@code x.p[i]} through a pointer member:
     *         memory elsewhere)
     */
    static String root(Expr e) {
        while (true) {
            if (e instanceof Expr.Member m && !m.arrow()) {
                e = m.owner();
                continue;
            }
            if (e instanceof Expr.Unary u && u.op().equals("()")) {
                e = u.operand();
                continue;
            }
            Expr base = e;
            while (base instanceof Expr.Subscript || base instanceof Expr.Unary u && u.op().equals("()")) {
                base = base instanceof Expr.Subscript s ? s.array() : ((Expr.Unary) base).operand();
            }
            if (base != e && base instanceof Expr.Member m && !m.arrow() && !m.pointer()) {
                e = m;
                continue;
            }
            return variable(e);
        }
    }

    /**
     * Adds to {@code out} the variables of {@code body} written other than by a definition.
     *
     * @param inLambda true inside a by-reference lambda: then every assignment target counts too
     */
    void collect(Stmt body, boolean inLambda, Set<String> out) {
        Trees.walkStmts(body, s -> {
            if (s instanceof Stmt.Decl d) {
                for (VarDecl v : d.vars()) {
                    if (v.array() || v.reference() || v.isStatic() || v.shared()) {
                        out.add(v.name());
                    }
                    if (v.reference() && v.init() != null && !constReference(v)) {
                        out.addAll(roots(v.init()));
                    }
                    if (!v.reference() && v.init() != null) {
                        constructorArguments(d, v, out);
                    }
                }
            }
            if (s instanceof Stmt.Loop lp && lp.kind() == Stmt.LoopKind.RANGE_FOR && lp.init() instanceof Stmt.Decl d
                    && d.vars().stream().anyMatch(v -> v.reference() && !constReference(v))) {
                // for (int& x : s.c) x = ...: the loop variable is a writable alias into the range
                out.addAll(roots(lp.cond()));
            }
            for (Expr top : Trees.ownExprs(s)) {
                // the range of a range-for is not decayed: for (int x : s.c) reads s.c's elements
                boolean range = s instanceof Stmt.Loop lp && lp.kind() == Stmt.LoopKind.RANGE_FOR && top == lp.cond();
                decayedArrayMembers(top, !range, out);
            }
            if (s instanceof Stmt.Other o && isAsm(o)) {
                // the operands as written and, for asm written by a macro, as expanded
                Matcher m = IDENT.matcher(text(o.range().offset(), o.range().end()) + " " + (o.asm() == null ? "" : o.asm()));
                while (m.find()) {
                    out.add(m.group());
                }
            }
            for (Expr top : Trees.ownExprs(s)) {
                Trees.walk(top, e -> expr(e, inLambda, out));
            }
        });
    }

    /** Types whose constructors take their arguments by value (arithmetic, CUDA vector types, handles). */
    private static final Pattern BY_VALUE_TYPE = Pattern.compile("auto|bool|char|short|int|long|float|double|unsigned|signed"
            + "|size_t|ptrdiff_t|u?int(8|16|32|64)_t|dim3|u?(char|short|int|long|longlong)[1-4]|(float|double)[1-4]"
            + "|__half2?|__nv_bfloat162?|half2?|cudaStream_t|cudaEvent_t|cudaError_t");

    /**
     * Adds the variables that the constructor of a class-type declaration may bind to a non-const
     * reference ({@code Ref r(x); r.set(t);} writes {@code x}): the arguments of {@code Ref r(x)},
     * {@code Ref r{x}}, {@code Ref r = x} where a constructor of the class defined in the unit takes
     * a non-const reference in that position; for a class without constructors in the unit (an
     * aggregate whose reference member may bind, or a library class), every argument a variable
     * names, unless the type takes its arguments by value ({@link #BY_VALUE_TYPE}).
     */
    private void constructorArguments(Stmt.Decl d, VarDecl v, Set<String> out) {
        if (unit == null || d.vars().get(0).nameRange() == null) {
            return;
        }
        String type = text(d.range().offset(), d.vars().get(0).nameRange().offset());
        String cls = className(type);
        if (cls == null || type.contains("*") || type.contains("&") || BY_VALUE_TYPE.matcher(cls).matches()) {
            return;
        }
        List<Expr> args = v.init() instanceof Expr.Other o ? o.children() : List.of(v.init());
        List<FunctionDef> ctors = unit.functions().stream().filter(f -> f.name().equals(cls) && cls.equals(f.memberOf()))
                .toList();
        for (int i = 0; i < args.size(); i++) {
            int k = i;
            if (ctors.isEmpty() || ctors.stream().anyMatch(f -> k < f.params().size() && referenceParam(f.params().get(k)))) {
                out.addAll(roots(args.get(i)));
            }
        }
    }

    /** @return the class a declaration's type text names ({@code const ns::Ref<int> } -> {@code Ref}), or null */
    static String className(String type) {
        StringBuilder b = new StringBuilder();
        int depth = 0;
        for (char c : type.toCharArray()) {
            if (c == '<') {
                depth++;
            } else if (c == '>') {
                depth--;
            } else if (depth == 0) {
                b.append(c);
            }
        }
        String last = null;
        Matcher m = IDENT.matcher(b);
        while (m.find()) {
            String w = m.group();
            if (!QUALIFIERS.contains(w)) {
                last = w;
            }
        }
        return last;
    }

    private static final Set<String> QUALIFIERS = Set.of("const", "volatile", "static", "constexpr", "register", "struct",
            "class", "typename", "__shared__", "__device__", "__constant__", "__restrict__", "extern", "thread_local");

    /**
     * Adds the variables whose array member {@code e} lets decay to a pointer ({@code int* q = s.c;},
     * {@code fill(s.c, v)}, {@code s.c + 1}): a store through that pointer changes the variable.
     * A subscript ({@code s.c[i]}), {@code &} and {@code sizeof} do not decay the array.
     *
     * @param decays true if {@code e}'s value is used where an array decays to a pointer
     */
    private static void decayedArrayMembers(Expr e, boolean decays, Set<String> out) {
        if (e == null) {
            return;
        }
        if (e instanceof Expr.Member m) {
            if (decays && m.array() && !m.arrow()) {
                out.addAll(roots(m.owner()));
            }
            decayedArrayMembers(m.owner(), false, out);
        } else if (e instanceof Expr.Subscript sub) {
            decayedArrayMembers(sub.array(), false, out);
            decayedArrayMembers(sub.index(), true, out);
        } else if (e instanceof Expr.Unary u) {
            boolean keeps = u.op().equals("&") || u.op().equals("sizeof") || u.op().equals("alignof");
            decayedArrayMembers(u.operand(), u.op().equals("()") ? decays : !keeps, out);
        } else {
            for (Expr c : e.children()) {
                decayedArrayMembers(c, true, out);
            }
        }
    }

    /**
     * @return the overloaded operators that {@code e} itself calls, not its operands ({@code a << b}
     *         with {@code Acc& Acc::operator<<(int)}; C++ [over.oper]): the unit's implicit calls of an
     *         operator in {@code e}'s range outside every operand's (an operand as long as {@code e}
     *         comes from the same macro expansion and hides nothing); empty without the unit, and for an
     *         expression other than a unary, binary, subscript or {@code ->} one or a (user-defined) literal
     */
    List<ImplicitCall> ownOperatorCalls(Expr e) {
        if (unit == null || unit.implicitCalls().isEmpty() || !(e instanceof Expr.Binary || e instanceof Expr.Unary
                || e instanceof Expr.Subscript || e instanceof Expr.Literal || e instanceof Expr.Member m && m.arrow())) {
            return List.of();
        }
        List<ImplicitCall> own = new ArrayList<>();
        List<Expr> ops = operands(e);
        for (ImplicitCall c : unit.implicitCallsIn(e.range())) {
            // an operand with e's own range comes from the same macro expansion: its calls may be e's
            if (c.isOperator() && ops.stream().noneMatch(x -> x != null && x.range().contains(c.offset())
                    && x.range().length() < e.range().length())) {
                own.add(c);
            }
        }
        return own;
    }

    /**
     * @return true if a conversion function ({@code operator int()}) may be applied to {@code e} or to
     *         an expression in it ({@link ImplicitCall#isConversion}): its value is then that function's
     *         result (review 2026-11-29: {@code int v = lane;} with an index-reading {@code operator int})
     */
    boolean converts(Expr e) {
        if (unit == null || !hasConversions) {
            return false;
        }
        for (ImplicitCall c : unit.implicitCallsIn(e.range())) {
            if (c.isConversion()) {
                return true;
            }
        }
        return false;
    }

    /**
     * @return the operands of a unary, binary or subscript expression, in the order they are written;
     *         the object of {@code p->f}; none of a literal (a user-defined literal's operator)
     */
    private static List<Expr> operands(Expr e) {
        if (e instanceof Expr.Binary b) {
            return java.util.Arrays.asList(b.lhs(), b.rhs());
        }
        if (e instanceof Expr.Subscript s) {
            return java.util.Arrays.asList(s.array(), s.index());
        }
        if (e instanceof Expr.Member m) {
            return java.util.Collections.singletonList(m.owner());
        }
        if (e instanceof Expr.Literal) {
            return List.of();
        }
        return java.util.Collections.singletonList(((Expr.Unary) e).operand());
    }

    /**
     * Adds the variables that an overloaded operator of {@code e} may write: each operand passed by
     * name where the operator takes it by non-const reference or is a non-const member of it
     * ({@link ImplicitCall#operandModes}); every operand where the modes are unknown.
     */
    private void operatorOperands(Expr e, Set<String> out) {
        List<ImplicitCall> own = ownOperatorCalls(e);
        List<Expr> ops = own.isEmpty() ? List.of() : operands(e);
        for (ImplicitCall c : own) {
            String modes = c.operandModes();
            // what an operator-> returns may point into its object (return this;), const or not
            boolean arrow = e instanceof Expr.Member;
            for (int i = 0; i < ops.size(); i++) {
                if (ops.get(i) != null && (arrow || modes == null || i >= modes.length() || modes.charAt(i) == 'w')) {
                    out.addAll(roots(ops.get(i)));
                }
            }
        }
    }

    private void expr(Expr e, boolean inLambda, Set<String> out) {
        operatorOperands(e, out);
        if (hasConversions && e.range().length() > 0) {
            // a non-const conversion function applied to x may change x
            for (ImplicitCall c : unit.implicitCallsIn(new klap.model.SourceRange(e.range().offset(), 1))) {
                if (c.isConversion() && !"r".equals(c.operandModes())) {
                    out.addAll(roots(e));
                }
            }
        }
        if (e instanceof Expr.Unary u && u.op().equals("&")) {
            out.addAll(roots(u.operand()));
        } else if (e instanceof Expr.Call c) {
            if (c.callee() instanceof Expr.Member m && !m.arrow()) {
                out.addAll(roots(m.owner()));
            }
            if (c.callee() instanceof Expr.Name n && (n.kind() == Expr.NameKind.LOCAL || n.kind() == Expr.NameKind.PARAM)) {
                out.add(n.name()); // a functor's call may change the functor (review 2026-11-27: s(tid) accumulated)
            }
            for (int i = 0; i < c.args().size(); i++) {
                if (writesArgument(c, i)) {
                    out.addAll(roots(c.args().get(i)));
                }
            }
        } else if (e instanceof Expr.Lambda l && l.capturesByReference()) {
            Set<String> inner = new java.util.HashSet<>();
            collect(l.body(), true, inner);
            for (String v : inner) {
                if (l.refInitCaptures().containsKey(v)) {
                    out.addAll(roots(l.refInitCaptures().get(v))); // [&b = base]: b is base
                } else if (l.captureAllByRef() || l.refCaptures().contains(v)) {
                    out.add(v);
                }
            }
        } else if (inLambda && e instanceof Expr.Binary b && b.isAssignment()) {
            out.addAll(roots(b.lhs()));
        } else if (inLambda && e instanceof Expr.Unary u && (u.op().contains("++") || u.op().contains("--"))) {
            out.addAll(roots(u.operand()));
        }
    }

    /**
     * @return true if call {@code c} may write the variable passed by name as argument {@code i}:
     *         a parameter of non-const reference type in some overload defined in the unit, or a
     *         callee the unit does not define that is not a known by-value built-in
     */
    boolean writesArgument(Expr.Call c, int i) {
        String name = c.calleeName();
        if (name == null) {
            // a member call CDT resolved has known parameter types; any other call through an
            // expression (a function pointer, a lambda) has unknown ones
            return c.paramModes() == null || i >= c.paramModes().length() || c.paramModes().charAt(i) == 'w';
        }
        String simple = name.contains("::") ? name.substring(name.lastIndexOf("::") + 2) : name;
        if ((Uniformity.PURE.contains(name) || Uniformity.PURE.contains(simple)) && !defines(simple)) {
            // (review 2026-12-01: a user's max(int& a, int b) that writes a was taken for the math max, and
            // the divergent a it wrote was scalarized)
            return false;
        }
        if (c.paramModes() != null && i < c.paramModes().length()) {
            return c.paramModes().charAt(i) == 'w'; // CDT resolved the callee: its declared parameter types
        }
        List<FunctionDef> defs = new ArrayList<>();
        if (unit != null) {
            for (FunctionDef f : unit.functions()) {
                if (f.name().equals(simple)) {
                    defs.add(f);
                }
            }
        }
        if (defs.isEmpty()) {
            return !BY_VALUE_NAME.matcher(simple).matches();
        }
        for (FunctionDef f : defs) {
            if (i < f.params().size() && referenceParam(f.params().get(i))) {
                return true;
            }
        }
        return false;
    }

    /** @return true if {@code p} is declared as a non-const lvalue or forwarding reference */
    private boolean referenceParam(Param p) {
        String decl = p.nameRange() == null ? text(p.range().offset(), p.range().end())
                : text(p.range().offset(), p.nameRange().offset());
        int eq = decl.indexOf('=');
        if (eq >= 0) {
            decl = decl.substring(0, eq);
        }
        int amp = decl.indexOf('&');
        if (amp < 0) {
            return false;
        }
        String before = decl.substring(0, amp);
        // "const T&" and "T const&" are read-only; "const T*&" is a reference to a pointer (writable)
        return !(before.matches("(?s).*\\bconst\\b.*") && !before.contains("*"));
    }

    private boolean constReference(VarDecl v) {
        if (unit == null || v.nameRange() == null) {
            return false;
        }
        // the declaration's type precedes the name on the same statement
        int from = Math.max(0, v.nameRange().offset() - 120);
        String head = text(from, v.nameRange().offset());
        int semi = Math.max(head.lastIndexOf(';'), Math.max(head.lastIndexOf('{'), head.lastIndexOf('}')));
        head = head.substring(semi + 1);
        return head.matches("(?s).*\\bconst\\b[^*]*&\\s*$");
    }

    private boolean isAsm(Stmt.Other o) {
        return o.asmText(text(o.range().offset(), Math.min(o.range().end(), o.range().offset() + 12))) != null;
    }

    private String text(int from, int to) {
        if (unit == null) {
            return "";
        }
        String t = unit.file().text();
        return t.substring(Math.max(0, Math.min(from, t.length())), Math.max(0, Math.min(to, t.length())));
    }
}
