package klap.transform;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import klap.model.Expr;
import klap.model.FunctionDef;
import klap.model.Param;
import klap.model.Stmt;
import klap.model.VarDecl;

/**
 * Spells out the template arguments that a launch of a template kernel leaves to deduction, for the
 * forms where klap can prove what C++ deduces ([temp.deduct.call]): the aggregated variant and its
 * argument record are templates that need their arguments written ({@code child_klap_agg_v<T>},
 * {@code klap_args_child<T>}), so a launch without them used to be left as written
 * ({@code klap-template-args}).
 * <h2>Input</h2>
 * <pre>
 * template &lt;typename Type&gt; __global__ void sort(Type* __restrict__ a, int n);
 * template &lt;typename Type&gt; __global__ void reset(Type* __restrict__ data, int* n) {
 *   if (threadIdx.x == 0) sort&lt;&lt;&lt;n[0], 256&gt;&gt;&gt;(data, n[1]);
 * }
 * </pre>
 * A launch without explicit template arguments, the child's template header and parameters, and
 * the function that holds the launch.
 * <h2>Output</h2>
 * <pre>
 * "&lt;Type&gt;"
 * </pre>
 * The argument list, or null where klap cannot prove it (the launch is then left as written with the
 * warning, as before). Every template parameter of the child must be a type parameter (not a pack)
 * that one of the child's parameters deduces from its argument; from the first one that is not, every
 * template parameter must be one (of any kind) with a default argument that the child's first
 * declaration in the file gives (where klap repeats it; {@link #templateParameters}) and that no
 * child parameter's type names, so that nothing deduces it and C++ takes its default
 * ({@code template <int N = 4> __global__ void child(int*)} launched {@code child<<<...>>>(p)} gives
 * {@code <>}; the list names the deduced prefix, the variant's header repeats the defaults). The
 * deduced parameters are those where
 * <ul>
 * <li>the child's parameter has the type {@code P}, {@code cv P}, {@code cv P*} or {@code cv P* cv}
 * (cv: {@code const}/{@code volatile}; {@code __restrict__} and {@code __grid_constant__} do not take
 * part in deduction); a parameter that names a template parameter in any other way (a reference,
 * {@code Vec<P>}, {@code P**}, a non-deduced context such as {@code typename Box<P>::Vec}) deduces
 * nothing here: in a program nvcc accepts, every parameter deduces the same {@code P} or none
 * ([temp.deduct.type]/2), so the others suffice where they deduce every {@code P} (until
 * 2026-11-29 such a parameter made the whole launch undeducible: a public physics code passes a
 * {@code PlainStruct<typename HardCore<T, E>::DeviceVector>} beside a {@code T});</li>
 * <li>the argument is a plain name of a parameter of the function that holds the launch (CDT's
 * binding: {@link Expr.NameKind#PARAM}), declared without array or function type, whose name no
 * local of that function redeclares and whose launch is not inside a lambda: its declared type
 * (as written in that function, so the text names the same type at the launch) is then the
 * argument's type, less a reference ([expr.type]/1); or such a name declared as a pointer plus an
 * offset ({@code p + i}, {@code i + p}, in parentheses or not), which has the pointer's type;</li>
 * <li>{@code P} is the argument's type without its top-level cv ([temp.deduct.call]/2); for
 * {@code cv P*}, the argument's type must be a pointer, and {@code P} is its pointee less the cv of
 * the parameter ([temp.deduct.call]/4, qualification conversion). Where the text shows every
 * qualifier that drops (a pointer level written after the name, or a name made of type keywords),
 * {@code P} is written as text ({@code float}, {@code const Type}); where the type is a name that
 * may stand for a cv-qualified, reference or array type (a typedef, the parent's own template
 * parameter), as the type traits that compute it from the declared type
 * ({@code cuda::std::decay_t<Type>}, {@code cuda::std::remove_const_t<cuda::std::remove_pointer_t<
 * cuda::std::decay_t<const real*>>>}).</li>
 * </ul>
 * Arguments of other forms ({@code p - i}, a local, a call) deduce nothing here; a program nvcc
 * accepts deduces the same {@code P} from every argument, so one argument of the forms above
 * suffices for each {@code P} (a text spelling before a traits one). Two text spellings that differ
 * (a typedef and its type) make the launch undeducible here. Aggregation's generated code has the
 * compiler check every deduction klap made (aggregation's {@code CudaText.checked}: a
 * {@code static_assert} against a never-defined function template of the child's parameters), so a
 * wrong one is a build error at the launch. Promotion takes a deduction only where it is the
 * text of the kernel's own template parameters ({@code <T>} from {@code T* a} passing {@code a}),
 * the one form that names the launching instantiation for every {@code T}
 * ({@code PromotionPlanner}).
 */
public final class TemplateDeduction {
    private TemplateDeduction() {
    }

    private static final Pattern TOKEN = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*|::|&&|\\S");
    private static final Set<String> CV = Set.of("const", "volatile");
    /** qualifiers that do not take part in deduction (pointer restrict; a kernel parameter's grid constant) */
    private static final Set<String> IGNORED = Set.of("__restrict__", "__restrict", "__grid_constant__");
    /** the type specifiers that are keywords: a core of these alone hides no qualifier */
    private static final Set<String> KEYWORD_TYPES = Set.of("void", "bool", "char", "wchar_t", "char8_t", "char16_t",
            "char32_t", "short", "int", "long", "signed", "unsigned", "float", "double");
    /** tokens a simple type's core must not hold: declarators, packs, placeholder and computed types */
    private static final Set<String> NOT_SIMPLE = Set.of("*", "&", "&&", "(", ")", "[", "]", "...", ".", "auto",
            "decltype", "typeof", "__typeof__", "=");

    /**
     * @param child       the child: its template header (e.g. {@code template <typename T>}), first
     *                    declaration and parameters (no parameter declared {@code auto}: C++20 makes it a
     *                    template parameter that the header does not show)
     * @param launch      the launch, without explicit template arguments
     * @param holder      the function whose body holds the launch
     * @param text        the unit's text (every range refers to it)
     * @param implicit    the unit's {@link klap.model.ImplicitCall}s: a {@code p + i} whose {@code +} is an
     *                    overloaded operator has the operator's result type, not {@code p}'s, so it
     *                    deduces nothing (review 2026-11-29: where no static_assert could check it, the
     *                    arguments holding a lambda, the variant was instantiated for the wrong type)
     * @return the template argument list, e.g. {@code <Type>}, or null (see the class comment)
     */
    public static String deduce(FunctionDef child, Expr.Launch launch, FunctionDef holder, String text,
                                List<klap.model.ImplicitCall> implicit) {
        if (child.templateHeader() == null) {
            return null;
        }
        List<Param> childParams = child.params();
        for (Param q : childParams) {
            if (tokens(q.type(text)).contains("auto")) {
                return null;  // C++20: a parameter declared auto is a template parameter the header does not show
            }
        }
        List<TemplateParam> params = templateParameters(child, text);
        if (params == null || params.isEmpty() || holder == null || holder.body() == null || insideLambda(holder, launch)) {
            return null;
        }
        List<String> names = new ArrayList<>();
        for (TemplateParam tp : params) {
            if (tp.type()) {
                names.add(tp.name());
            }
        }
        Set<String> locals = new java.util.HashSet<>();
        for (Stmt.Decl d : Trees.collect(holder.body(), Stmt.Decl.class)) {
            for (VarDecl v : d.vars()) {
                locals.add(v.name());
            }
        }
        Map<String, String> exact = new LinkedHashMap<>();
        Map<String, String> traits = new LinkedHashMap<>();
        for (int i = 0; i < childParams.size(); i++) {
            String childType = childParams.get(i).type(text);
            Shape c = Shape.of(childType);
            boolean dependent = c == null ? mentionsAny(childType, names)
                    : c.core.stream().anyMatch(names::contains);
            if (!dependent) {
                continue;
            }
            if (c == null || c.ref || c.stars > 1 || c.core.size() != 1 || !names.contains(c.core.get(0))) {
                // P in a form whose deduction klap does not model (P&, Vec<P>, a non-deduced
                // typename Box<P>::Vec): it deduces nothing here; in a program nvcc accepts, what it
                // deduces, if anything, agrees with the other parameters ([temp.deduct.type]/2)
                continue;
            }
            if (i >= launch.args().size()) {
                continue;  // a default argument deduces nothing ([temp.deduct.call]/1: only arguments do)
            }
            Param decl = argumentParam(launch.args().get(i), holder, locals, text, implicit);
            Shape a = decl == null ? null : Shape.of(decl.type(text));
            if (a == null || a.core.isEmpty()) {
                continue;
            }
            String name = c.core.get(0);
            // exact: the text shows every qualifier deduction drops (a pointer level written after the
            // name, or a name that is a keyword); else the traits compute it from the declared type
            List<String> p = c.stars == 0 ? (a.stars > 0 || a.keywordsOnly() ? a.withoutTopLevelCv() : null)
                    : a.stars > 0 && (c.cv.isEmpty() || a.keywordsOnly()) ? a.pointeeLess(c.cv) : null;
            if (p != null) {
                String before = exact.putIfAbsent(name, spell(p));
                if (before != null && !before.equals(spell(p))) {
                    return null;  // two spellings of one type (a typedef and its type), or a program nvcc rejects
                }
            } else if (a.stars <= 1 && !(a.stars == 0 && a.keywordsOnly())) {
                traits.putIfAbsent(name, traitSpelling(c, decl.type(text)));
            }
        }
        List<String> out = new ArrayList<>();
        for (TemplateParam tp : params) {
            String p = !tp.type() ? null : exact.containsKey(tp.name()) ? exact.get(tp.name()) : traits.get(tp.name());
            if (p == null) {
                // the rest must take their defaults: the list names a prefix
                return notLeftToDefaults(child, out.size(), text) == null ? "<" + String.join(", ", out) + ">" : null;
            }
            out.add(p);
        }
        return "<" + String.join(", ", out) + ">";
    }

    /**
     * @param child a template kernel
     * @param from  how many of its template parameters a launch names (written or deduced)
     * @param text  the unit's text
     * @return null if every template parameter of {@code child} from index {@code from} on takes its
     *         default at a launch that names the ones before, in the declarations klap writes too: it
     *         has a default that klap may repeat ({@link #templateParameters}: given by the child's first
     *         declaration, naming no parameter if that declaration names them otherwise, and holding no
     *         {@code __LINE__} or {@code __COUNTER__}) and no child parameter's type names it (nothing
     *         deduces it, [temp.deduct.type]/5, [temp.arg.explicit]/4; a type written with a macro of
     *         the file may name any); else why not, naming the first such parameter (e.g.
     *         {@code C++ deduces 'U' from the arguments}). Also for a pack, a template template
     *         parameter or an unnamed parameter
     */
    public static String notLeftToDefaults(FunctionDef child, int from, String text) {
        List<TemplateParam> params = templateParameters(child, text);
        if (params == null) {
            return "it has a parameter pack, a template template parameter or an unnamed parameter";
        }
        for (TemplateParam tp : params.subList(Math.min(from, params.size()), params.size())) {
            if (namedByAny(tp.name(), child.params(), text)) {
                return "C++ deduces '" + tp.name() + "' from the arguments";
            }
            if (!tp.hasDefault()) {
                return "'" + tp.name() + "' takes a default that the kernel's first declaration in this file does not "
                        + "give, that names a parameter by another name than the definition's, that holds __LINE__ "
                        + "or __COUNTER__, or that calls a function (klap repeats the defaults in its own declarations, "
                        + "elsewhere)";
            }
        }
        return null;
    }

    /**
     * Whether a new function template with {@code f}'s parameters, declared with
     * {@link TemplateParams#declarationHeader} where {@code f}'s first declaration is, deduces at every
     * call what a call of {@code f} with the same arguments deduces: C++ does the deduction of both
     * ([temp.deduct.call]), so they agree where the two have the same template parameters, function
     * parameter types and default template arguments. The defaults are the ones klap may repeat
     * ({@link #templateParameters}); a default that only a later declaration, a header or a
     * renaming prototype gives, or one that holds {@code __LINE__}, would be missing or differ.
     *
     * @param f    a function template
     * @param text the unit's text
     * @return null if so; else why not (for a header klap cannot read, or a default it cannot repeat,
     *         naming the parameter)
     */
    public static String redeclaredWithItsDefaults(FunctionDef f, String text) {
        if (f.templateHeader() == null) {
            return null;
        }
        String header = text.substring(f.templateHeader().offset(), f.templateHeader().end());
        List<String> parts = TemplateParams.inner(header);
        List<TemplateParam> params = templateParameters(f, text);
        if (parts == null || params == null || params.size() != parts.size()) {
            return "it has a parameter pack, a template template parameter or an unnamed parameter";
        }
        for (int i = 0; i < params.size(); i++) {
            boolean given = TemplateParams.topLevelIndex(parts.get(i), '=') >= 0
                    || i < f.declaredTemplateDefaults().size() && !f.declaredTemplateDefaults().get(i).isEmpty();
            if (given && !params.get(i).hasDefault()) {
                return "the default of '" + params.get(i).name() + "' is given by a declaration after its first one "
                        + "in this file or by a header, names a parameter by another name, or holds __LINE__ or "
                        + "__COUNTER__ (klap repeats the defaults in its own declarations)";
            }
        }
        return null;
    }

    /**
     * A parameter of a template header.
     *
     * @param name       its name
     * @param type       a type parameter ({@code typename T}, {@code class T}), else a non-type one
     * @param hasDefault the child's first declaration gives it a default argument that klap may repeat
     *                   (see {@link #templateParameters})
     */
    record TemplateParam(String name, boolean type, boolean hasDefault) {
    }

    /**
     * @return {@link #templateParameters(String, String)} of template {@code child}'s definition header
     *         and the header of its first declaration in the file ({@link FunctionDef#firstDeclaration}:
     *         the definition's own where it is the first)
     */
    private static List<TemplateParam> templateParameters(FunctionDef child, String text) {
        String header = text.substring(child.templateHeader().offset(), child.templateHeader().end());
        String first = child.firstDeclaration() == null ? header
                : TemplateParams.headerOf(text.substring(child.firstDeclaration().offset(), child.firstDeclaration().end()));
        return templateParameters(header, first);
    }

    /** a call {@code name(} or {@code a::name(} in a default (the operators and casts of C++ aside) */
    private static final Pattern CALL = Pattern.compile("(?<![A-Za-z0-9_.>])((?:[A-Za-z_]\\w*\\s*::\\s*)*[A-Za-z_]\\w*)\\s*(?:<[^<>()]*>\\s*)?\\(");

    /** what is not a function call though written {@code word(} */
    private static final Set<String> NOT_CALLS = Set.of("sizeof", "alignof", "decltype", "noexcept", "static_cast",
            "const_cast", "reinterpret_cast", "dynamic_cast", "int", "unsigned", "float", "double", "char", "short",
            "long", "bool", "signed", "void", "dim3", "__alignof__");

    /**
     * @param defaultArgument a default (template) argument as written, with or without its {@code =}
     * @return the first function it calls ({@code off} of {@code = off(0)}), or null. klap repeats a
     *         default in its own declarations, elsewhere than where it was written; a call there may
     *         choose another overload (names in a default are bound where it is written, C++
     *         [dcl.fct.default]/5, [temp.param]), so launches that leave such a parameter to its default
     *         are left as written (review 2026-11-30: {@code off(long)} at the prototype, {@code
     *         off(int)} declared after it, a silently different argument). Functional casts of a
     *         fundamental type or {@code dim3} and the operators written like calls do not count; a
     *         class's constructor does (conservatively: klap cannot tell it from a function)
     */
    public static String callIn(String defaultArgument) {
        Matcher m = CALL.matcher(Lexical.blankCommentsAndLiterals(defaultArgument));
        while (m.find()) {
            String name = m.group(1).replaceAll("\\s+", "");
            if (!NOT_CALLS.contains(name)) {
                return name;
            }
        }
        return null;
    }

    /** tokens whose value depends on where they are written: a default holding one changes where klap repeats it */
    private static final Set<String> POSITIONAL = Set.of("__LINE__", "__COUNTER__");

    /**
     * @param header a template header, e.g. {@code template <typename T, int N = 4>}: the definition's
     * @param first  the header of the function's first declaration in the file (where klap writes the
     *               declarations that repeat the defaults: {@link FunctionDef#firstDeclaration}), the
     *               same as {@code header} when the definition is the first, or null
     * @return its parameters, or null where one is a pack, a template template parameter or unnamed. A
     *         parameter has a default klap may use where the first declaration gives it one
     *         ({@link TemplateParams#defaultsFrom}: naming no parameter where that declaration names them
     *         otherwise) that holds no {@code __LINE__} or {@code __COUNTER__} (a default from a later
     *         declaration or a header may name what klap's earlier declarations do not see, or a
     *         parameter by another name: review 2026-11-30)
     */
    static List<TemplateParam> templateParameters(String header, String first) {
        List<String> parts = TemplateParams.inner(header);
        if (parts == null) {
            return null;
        }
        List<String> defaults = TemplateParams.defaultsFrom(header, first);
        List<TemplateParam> out = new ArrayList<>();
        for (int i = 0; i < parts.size(); i++) {
            String part = parts.get(i);
            int eq = TemplateParams.topLevelIndex(part, '=');
            List<String> t = tokens(eq >= 0 ? part.substring(0, eq) : part);
            if (t.size() < 2 || !isWord(t.get(t.size() - 1)) || t.contains("...") || t.contains("template")
                    || KEYWORD_TYPES.contains(t.get(t.size() - 1))) {
                return null;  // a pack, a template template parameter, an unnamed one
            }
            boolean type = t.size() == 2 && (t.get(0).equals("typename") || t.get(0).equals("class"));
            String d = defaults.get(i);
            boolean usable = !d.isEmpty() && tokens(d).stream().noneMatch(POSITIONAL::contains) && callIn(d) == null;
            out.add(new TemplateParam(t.get(t.size() - 1), type, usable));
        }
        return out;
    }

    /**
     * @return true if the type of one of {@code childParams} names {@code name} (comments and literals
     *         aside), or may: it names a macro that the file defines ({@code #define ELEM U} and a
     *         parameter {@code ELEM v}, review 2026-11-30; a macro of a header is not seen, and the
     *         generated deduction check stops the build where it hides a name)
     */
    private static boolean namedByAny(String name, List<Param> childParams, String text) {
        Pattern word = Pattern.compile("(?<![A-Za-z0-9_])" + Pattern.quote(name) + "(?![A-Za-z0-9_])");
        for (Param q : childParams) {
            String type = Lexical.blankCommentsAndLiterals(q.type(text));
            if (word.matcher(type).find()) {
                return true;
            }
            for (String t : tokens(type)) {
                if (isWord(t) && Pattern.compile("(?m)^[ \\t]*#[ \\t]*define[ \\t]+" + Pattern.quote(t) + "(?![A-Za-z0-9_])")
                        .matcher(text).find()) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * @return the parameter of {@code holder} that argument {@code e} is a plain name of, where
     *         no local of {@code holder} ({@code locals}) has that name and it has no array or function
     *         type; else null
     */
    private static Param argumentParam(Expr e, FunctionDef holder, Set<String> locals, String text,
                                       List<klap.model.ImplicitCall> implicit) {
        e = unparenthesized(e);
        if (e instanceof Expr.Binary b && b.op().equals("+")) {
            // p + i and i + p have p's type, less top-level cv ([expr.add]/4) for a pointer p and an
            // integral i (a program nvcc accepts has no other built-in form): only where p is declared
            // with a pointer written out, and the + calls no operator of the program
            for (klap.model.ImplicitCall c : implicit) {
                if (b.range().contains(c.offset())) {
                    return null;
                }
            }
            for (Expr side : List.of(b.lhs(), b.rhs())) {
                Param p = argumentParam(side, holder, locals, text, implicit);
                Shape sh = p == null ? null : Shape.of(p.type(text));
                if (sh != null && sh.stars > 0) {
                    return p;
                }
            }
            return null;
        }
        if (!(e instanceof Expr.Name n) || n.kind() != Expr.NameKind.PARAM) {
            return null;
        }
        Param decl = null;
        for (Param q : holder.params()) {
            if (q.name().equals(n.name())) {
                decl = q;
            }
        }
        // a local of that name may be the one the argument names
        return decl == null || decl.decay() != Param.Decay.NONE || locals.contains(n.name()) ? null : decl;
    }

    /**
     * @return P as the type traits compute it from the argument's declared type {@code argType}
     *         (restrict dropped): {@code cuda::std::decay_t<A>} for a child parameter {@code P}
     *         ([temp.deduct.call]/2: array and function to pointer, top-level cv dropped; a
     *         reference's referred type), and for {@code cv P*} the pointee of that, less cv
     *         ({@code cuda::std::remove_const_t<cuda::std::remove_pointer_t<cuda::std::decay_t<A>>>}).
     *         Used where the argument's type is spelled with a name that may stand for a cv-qualified
     *         or reference type (a typedef, a template parameter of the parent), whose qualifiers the
     *         text does not show.
     */
    private static String traitSpelling(Shape child, String argType) {
        List<String> t = new ArrayList<>();
        for (String x : tokens(argType)) {
            if (!IGNORED.contains(x)) {
                t.add(x);
            }
        }
        String decayed = "cuda::std::decay_t<" + spell(t) + ">";
        if (child.stars == 0) {
            return decayed;
        }
        String pointee = "cuda::std::remove_pointer_t<" + decayed + ">";
        if (child.cv.isEmpty()) {
            return pointee;
        }
        String trait = child.cv.size() == 2 ? "remove_cv_t" : child.cv.contains("const") ? "remove_const_t" : "remove_volatile_t";
        return "cuda::std::" + trait + "<" + pointee + ">";
    }

    /** @return {@code e} without the parentheses around it */
    private static Expr unparenthesized(Expr e) {
        while (e instanceof Expr.Unary u && u.op().equals("()") && u.operand() != null) {
            e = u.operand();
        }
        return e;
    }

    private static boolean insideLambda(FunctionDef holder, Expr.Launch launch) {
        boolean[] inside = {false};
        Trees.walkExprsAndLambdas(holder.body(), x -> {
            if (x instanceof Expr.Lambda lam && lam.range().contains(launch.range())) {
                inside[0] = true;
            }
        });
        return inside[0];
    }

    private static boolean mentionsAny(String type, List<String> names) {
        return tokens(type).stream().anyMatch(names::contains);
    }

    static List<String> tokens(String s) {
        List<String> out = new ArrayList<>();
        Matcher m = TOKEN.matcher(s);
        while (m.find()) {
            out.add(m.group());
        }
        return out;
    }

    private static boolean isWord(String t) {
        return Character.isJavaIdentifierStart(t.charAt(0));
    }

    /** @return the tokens as one type name: a space between two words and after a comma, e.g. {@code const ns::Vec<int, 4>*} */
    static String spell(List<String> toks) {
        StringBuilder b = new StringBuilder();
        String prev = null;
        for (String t : toks) {
            if (prev != null && (isWord(prev) && isWord(t) || prev.equals(","))) {
                b.append(' ');
            }
            b.append(t);
            prev = t;
        }
        return b.toString();
    }

    /**
     * A type as written, in the one form klap deduces from: {@code cv core} followed by {@code stars}
     * pointer levels, the last one's cv dropped (it is top level), and an optional reference.
     *
     * @param cv    the cv-qualifiers of the pointee (of the type itself where {@code stars} is 0)
     * @param core  the type's name, e.g. {@code [ns, ::, Vec, <, int, >]}
     * @param stars the number of pointer levels (no cv on inner levels)
     * @param ref   a trailing {@code &} or {@code &&}
     */
    private record Shape(Set<String> cv, List<String> core, int stars, boolean ref) {

        /** @return the shape of type text {@code type}, or null if it is not of the form above */
        static Shape of(String type) {
            List<String> t = new ArrayList<>();
            for (String x : tokens(type)) {
                if (!IGNORED.contains(x)) {
                    t.add(x);
                }
            }
            boolean ref = !t.isEmpty() && (t.get(t.size() - 1).equals("&") || t.get(t.size() - 1).equals("&&"));
            if (ref) {
                t.remove(t.size() - 1);
            }
            Set<String> cv = new TreeSet<>();
            List<String> core = new ArrayList<>();
            int stars = 0;
            boolean levelCv = false;
            for (String x : t) {
                if (x.equals("*")) {
                    if (levelCv) {
                        return null;  // cv on an inner pointer level
                    }
                    stars++;
                } else if (CV.contains(x)) {
                    if (stars == 0) {
                        cv.add(x);
                    } else {
                        levelCv = true;
                    }
                } else if (stars > 0 || NOT_SIMPLE.contains(x)) {
                    return null;
                } else {
                    core.add(x);
                }
            }
            return new Shape(cv, core, stars, ref);
        }

        /**
         * @return true if the core is built-in type keywords only ({@code unsigned long}, {@code
         *         float}): no name that could stand for a cv-qualified, reference or array type
         */
        boolean keywordsOnly() {
            return !core.isEmpty() && KEYWORD_TYPES.containsAll(core);
        }

        /** @return the type without its top-level cv ([temp.deduct.call]/2), as tokens */
        List<String> withoutTopLevelCv() {
            List<String> out = new ArrayList<>();
            if (stars > 0) {
                out.addAll(cv);
            }
            out.addAll(core);
            for (int i = 0; i < stars; i++) {
                out.add("*");
            }
            return out;
        }

        /**
         * @return P for a parameter {@code paramCv P*} and an argument of this (pointer) type: the
         *         pointee less the parameter's cv, as tokens; null if this is not a pointer
         */
        List<String> pointeeLess(Set<String> paramCv) {
            if (stars == 0) {
                return null;
            }
            List<String> out = new ArrayList<>();
            if (stars == 1) {
                for (String q : cv) {
                    if (!paramCv.contains(q)) {
                        out.add(q);
                    }
                }
            } else if (!paramCv.isEmpty()) {
                return null;  // P* const from X** : the pointee X* is not const, no qualification conversion modelled
            } else {
                out.addAll(cv);
            }
            out.addAll(core);
            for (int i = 1; i < stars; i++) {
                out.add("*");
            }
            return out;
        }
    }
}
