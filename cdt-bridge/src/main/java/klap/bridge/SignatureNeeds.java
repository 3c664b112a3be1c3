package klap.bridge;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import klap.model.FunctionDef;
import org.eclipse.cdt.core.dom.ast.*;
import org.eclipse.cdt.core.dom.ast.cpp.*;

/**
 * Computes {@link FunctionDef#signatureNeeds}: the last declarations in the main file that the text of
 * a function definition's signature (template header, return type, parameter list with default
 * arguments, attributes) needs.
 *
 * <p>The transforms copy that text to an earlier point of the file: aggregation declares a child's
 * argument record and variants, and a parent's twins, where the function is first declared (or before
 * the first function that uses it); CUDA-NP declares a kernel's variant right after its prototype.
 * Where a need comes after that point, both declare later, before the first function that uses the
 * function (or its definition), and refuse only where a use comes before the need.
 * Found 2026-11-30: a kernel prototyped before {@code typedef float real;} and defined with {@code
 * real*} got a record {@code real* out;} before the typedef ("identifier real is undefined", nvcc 13),
 * and a child taking {@code Node} by value, prototyped after {@code struct Node;} and before its
 * definition, a record member of incomplete type. What counts, each at the main-file offset where it
 * is declared (a header's declaration at its {@code #include} in the main file):
 * <ul>
 * <li>each name the signature uses, at its earliest declaration (C++ [basic.lookup]: a name must be
 * declared before it is used), or, for an unqualified name of another namespace's member, at the
 * using-directive or using-declaration that makes it visible where that is later; except template
 * parameters, function parameters, namespaces (not namespace aliases), the function's own name and a
 * class named with its class-key ({@code struct Node*} declares it, [basic.scope.pdecl]/7);</li>
 * <li>each class a parameter takes by value, at its earliest definition (a member of class type must
 * be complete, [class.mem]); a class template's specialization at the template's definition;</li>
 * <li>each identifier in an attribute's arguments ({@code __launch_bounds__(kB)}, {@code cfg::kB}):
 * tokens, looked up by name from the function's scope outwards, a class they go through at its
 * definition;</li>
 * <li>each macro the signature expands, at its definition (nested expansions too).</li>
 * </ul>
 * Reviewed 2026-11-30 (a helper's adversarial review): template parameters in launch bounds, using
 * directives, namespace aliases, qualified attribute names and elaborated class names were added then.
 * Names CDT cannot resolve, and declarations outside the translation unit's files (the CUDA prelude,
 * system headers, which klap reads without content), do not count: they come before any user code.
 */
final class SignatureNeeds {
    private final IASTTranslationUnit tu;
    private final String mainPath;
    /** main-file macro expansions as {start offset, needed offset}, by start; computed once */
    private List<int[]> expansions;
    private List<String> expansionNames;

    SignatureNeeds(IASTTranslationUnit tu, String mainPath) {
        this.tu = tu;
        this.mainPath = mainPath;
    }

    /**
     * @param fd               the definition
     * @param templ            its innermost template declaration, or null
     * @param signature        the main-file range of the signature: from the start of the template header
     *                         (or the definition) to the body's opening brace
     * @param withTemplateDefaults whether default template arguments count (the transforms repeat the
     *                         first prototype's defaults where there is one, and the definition's only
     *                         where there is none: TemplateParams.declarationHeader)
     * @return the last declaration the signature needs of each {@link FunctionDef.NeedKind}, latest
     *         first; empty if it needs none of the main file
     */
    List<FunctionDef.Need> needs(IASTFunctionDefinition fd, ICPPASTTemplateDeclaration templ, int[] signature,
            boolean withTemplateDefaults) {
        enclosing = new java.util.HashSet<>();
        try {
            IBinding own = AstConverter.innermost(fd.getDeclarator()).getName().resolveBinding();
            for (IBinding o = own == null ? null : own.getOwner(); o != null; o = o.getOwner()) {
                enclosing.add(o);
            }
        } catch (RuntimeException e) {
            // no binding: no enclosing namespace known
        }
        java.util.Map<FunctionDef.NeedKind, FunctionDef.Need> last = new java.util.EnumMap<>(FunctionDef.NeedKind.class);
        java.util.function.Consumer<FunctionDef.Need> add = n -> {
            if (n != null) {
                last.merge(n.kind(), n, SignatureNeeds::later);
            }
        };
        Set<IASTName> own = Collections.newSetFromMap(new IdentityHashMap<>());
        IASTDeclarator inner = AstConverter.innermost(fd.getDeclarator());
        if (inner.getName() != null) {
            inner.getName().accept(new ASTVisitor() {
                {
                    shouldVisitNames = true;
                }

                @Override
                public int visit(IASTName n) {
                    own.add(n);
                    return PROCESS_CONTINUE;
                }
            });
        }
        ASTVisitor names = new ASTVisitor() {
            {
                shouldVisitNames = true;
            }

            @Override
            public int visit(IASTName n) {
                if (!own.contains(n) && !(n instanceof ICPPASTQualifiedName)) {
                    add.accept(nameNeed(n));
                }
                return PROCESS_CONTINUE;
            }
        };
        fd.getDeclSpecifier().accept(names);
        fd.getDeclarator().accept(names);
        for (IASTNode t = templ; t instanceof ICPPASTTemplateDeclaration td; t = t.getParent()) {
            for (ICPPASTTemplateParameter p : td.getTemplateParameters()) {
                if (withTemplateDefaults) {
                    p.accept(names);
                } else if (p instanceof ICPPASTParameterDeclaration pd) {
                    pd.getDeclSpecifier().accept(names); // the type of a non-type parameter, not its default
                }
            }
        }
        if (fd.getDeclarator() instanceof IASTStandardFunctionDeclarator sfd) {
            for (IASTParameterDeclaration p : sfd.getParameters()) {
                add.accept(byValueClassNeed(p));
            }
        }
        // an attribute's arguments are tokens, not names: __launch_bounds__(kBlock) of a constexpr kBlock
        // declared after the prototype (the variants' prototypes repeat the definition's bounds)
        for (IASTNode owner : new IASTNode[] {fd, fd.getDeclSpecifier(), fd.getDeclarator(), templ}) {
            AstConverter.forEachAttribute(owner, a -> tokenNeeds(a.getArgumentClause(), fd, add));
        }
        add.accept(macroNeed(signature[0], signature[1]));
        List<FunctionDef.Need> out = new ArrayList<>(last.values());
        out.sort((a, b) -> Integer.compare(b.offset(), a.offset()));
        return out;
    }

    private void tokenNeeds(IASTToken t, IASTFunctionDefinition fd, java.util.function.Consumer<FunctionDef.Need> add) {
        List<IASTToken> flat = new ArrayList<>();
        flatten(t, flat);
        // identifier chains a::b::c: the first looked up from the function's scope outwards, each
        // next one in the namespace or class the previous one names (a class must then be complete)
        for (int i = 0; i < flat.size(); i++) {
            if (flat.get(i).getTokenType() != org.eclipse.cdt.core.parser.IToken.tIDENTIFIER
                    || i > 0 && flat.get(i - 1).getTokenType() == org.eclipse.cdt.core.parser.IToken.tCOLONCOLON) {
                continue;
            }
            List<String> chain = new ArrayList<>(List.of(new String(flat.get(i).getTokenCharImage())));
            while (i + 2 < flat.size() && flat.get(i + 1).getTokenType() == org.eclipse.cdt.core.parser.IToken.tCOLONCOLON
                    && flat.get(i + 2).getTokenType() == org.eclipse.cdt.core.parser.IToken.tIDENTIFIER) {
                chain.add(new String(flat.get(i + 2).getTokenCharImage()));
                i += 2;
            }
            chainNeeds(chain, fd, add);
        }
    }

    private static void flatten(IASTToken t, List<IASTToken> out) {
        if (t instanceof IASTTokenList tl) {
            for (IASTToken x : tl.getTokens()) {
                flatten(x, out);
            }
        } else if (t != null) {
            out.add(t);
        }
    }

    /** Adds the needs of the qualified name {@code chain} written in an attribute argument of {@code fd}. */
    private void chainNeeds(List<String> chain, IASTFunctionDefinition fd, java.util.function.Consumer<FunctionDef.Need> add) {
        try {
            IBinding own = AstConverter.innermost(fd.getDeclarator()).getName().resolveBinding();
            IBinding[] found = new IBinding[0];
            for (IScope sc = own == null ? tu.getScope() : own.getScope(); sc != null && found.length == 0; sc = sc.getParent()) {
                found = sc.find(chain.get(0), tu);
            }
            for (int k = 0; found.length > 0; k++) {
                if (Arrays.stream(found).anyMatch(b -> b instanceof ICPPTemplateParameter || b instanceof IParameter)) {
                    return; // the function's own template parameter (__launch_bounds__(B)) or parameter
                }
                int at = -1;
                for (IBinding b : found) {
                    int e = earliest(b instanceof ICPPNamespace && !(b instanceof ICPPNamespaceAlias) ? List.of() : declarations(b));
                    at = e >= 0 && (at < 0 || e < at) ? e : at;
                }
                if (at >= 0) {
                    add.accept(new FunctionDef.Need(chain.get(k), at, FunctionDef.NeedKind.NAME));
                }
                if (k + 1 >= chain.size()) {
                    return;
                }
                IBinding b = found[0];
                IScope next = null;
                if (b instanceof ICPPNamespace ns) {
                    next = ns.getNamespaceScope();
                } else if (b instanceof ICPPClassType c) {
                    int def = earliest(definitions(c instanceof ICPPSpecialization sp && sp.getSpecializedBinding() != null
                            ? sp.getSpecializedBinding() : c));
                    if (def >= 0) {
                        // Cfg::kB needs Cfg complete
                        add.accept(new FunctionDef.Need(c.getName(), def, FunctionDef.NeedKind.CLASS_BY_VALUE));
                    }
                    next = c.getCompositeScope();
                }
                if (next == null) {
                    return;
                }
                found = next.find(chain.get(k + 1), tu);
                if (found.length == 0) {
                    // not declared at all as CDT reads it: the name's declaration is unknown, so count
                    // it where the function is defined (the text cannot move before it)
                    add.accept(new FunctionDef.Need(chain.get(k + 1), mainOffset(fd), FunctionDef.NeedKind.NAME));
                    return;
                }
            }
        } catch (RuntimeException | DOMException e) {
            // unresolvable: does not count
        }
    }

    private static FunctionDef.Need later(FunctionDef.Need a, FunctionDef.Need b) {
        return a == null || (b != null && b.offset() > a.offset()) ? b : a;
    }

    /** @return the earliest main-file declaration of what {@code n} names, or null if that does not count */
    private FunctionDef.Need nameNeed(IASTName n) {
        IBinding b;
        try {
            b = n.resolveBinding();
        } catch (RuntimeException e) {
            return null;
        }
        if (b == null || b instanceof IProblemBinding || b instanceof ICPPTemplateParameter || b instanceof IParameter
                || b instanceof ICPPNamespace && !(b instanceof ICPPNamespaceAlias) || b instanceof IMacroBinding) {
            return null;
        }
        if (n.getParent() instanceof IASTElaboratedTypeSpecifier) {
            // struct Node* p: the class-key introduces the name wherever it is written (C++
            // [basic.scope.pdecl]/7); a class taken by value needs its definition (byValueClassNeed)
            return null;
        }
        int at = earliest(declarations(b));
        if (at >= 0 && !(n.getParent() instanceof ICPPASTQualifiedName)) {
            // an unqualified name of a namespace member is visible from the using-directive or
            // using-declaration that brings it in, where that is later (review 2026-11-30); where klap
            // finds none that it can place (one through another namespace's using-directive), from
            // where the signature uses it (eighth session of 2026-11-30: a using inside another
            // namespace had counted as one at file scope, "identifier real is undefined")
            int u = usingFor(b, mainOffset(n));
            at = Math.max(at, u == UNSEEN ? mainOffset(n) : u);
        }
        return at < 0 ? null : new FunctionDef.Need(n.toString(), at, FunctionDef.NeedKind.NAME);
    }

    /** the namespaces (and classes) around the function whose signature {@link #needs} reads */
    private Set<IBinding> enclosing = Set.of();

    /** the main file's using-directives and using-declarations: {offset, nominated namespace or declared binding}, by offset */
    private List<Object[]> usings;

    /** {@link #usingFor}: a using is needed, and klap found none that makes the name visible where it declares */
    private static final int UNSEEN = -2;

    /**
     * @return the offset of the first using-directive (of {@code b}'s namespace) or using-declaration
     *         (of {@code b}) in the main file before {@code before}, at file scope or in a namespace around
     *         the function (there klap declares), if {@code b} is a member of a named namespace that does
     *         not enclose the function; -1 if it needs none; {@link #UNSEEN} if it needs one and klap
     *         finds none (one in another namespace, reached through that namespace's using-directive)
     */
    private int usingFor(IBinding b, int before) {
        IBinding owner;
        try {
            owner = b.getOwner();
            while (owner instanceof ICPPNamespace ns && ns.isInline() && !enclosing.contains(owner)) {
                owner = owner.getOwner(); // an inline namespace's members are its parent's
            }
        } catch (RuntimeException e) {
            return -1;
        }
        if (!(owner instanceof ICPPNamespace) || owner.getName().isEmpty() || enclosing.contains(owner)) {
            return -1; // global, or visible from the function's own namespace without a using
        }
        if (usings == null) {
            usings = new ArrayList<>();
            tu.accept(new ASTVisitor() {
                {
                    shouldVisitDeclarations = true;
                    shouldVisitNamespaces = true;
                }

                @Override
                public int visit(IASTDeclaration d) {
                    IASTName named = d instanceof ICPPASTUsingDirective ud ? ud.getQualifiedName()
                            : d instanceof ICPPASTUsingDeclaration ud ? ud.getName() : null;
                    int at = named == null ? -1 : mainOffset(d);
                    // where it applies: file scope (null), a named namespace, or a class (not at all for klap)
                    IASTNode scope = d.getParent();
                    IBinding in = null;
                    while (true) {
                        if (scope instanceof ICPPASTLinkageSpecification
                                || scope instanceof ICPPASTNamespaceDefinition nd && nd.getName().toString().isEmpty()) {
                            scope = scope.getParent(); // transparent: extern "C" { }, an unnamed namespace
                        } else {
                            break;
                        }
                    }
                    if (scope instanceof ICPPASTNamespaceDefinition nd) {
                        in = nd.getName().resolveBinding();
                    } else if (!(scope instanceof IASTTranslationUnit)) {
                        at = -1;
                    }
                    if (at >= 0) {
                        try {
                            IBinding nb = named.resolveBinding();
                            if (nb != null) {
                                usings.add(new Object[] {at, nb, in});
                            }
                        } catch (RuntimeException e) {
                            // unresolvable: does not count
                        }
                    }
                    return d instanceof IASTFunctionDefinition ? PROCESS_SKIP : PROCESS_CONTINUE;
                }
            });
            usings.sort((x, y) -> Integer.compare((Integer) x[0], (Integer) y[0]));
        }
        for (Object[] u : usings) {
            int at = (Integer) u[0];
            if (at >= before) {
                break;
            }
            IBinding nb = (IBinding) u[1];
            if (u[2] != null && !enclosing.contains(u[2])) {
                continue; // in another namespace: not where klap declares
            }
            if (nb.equals(owner) || nb.equals(b)
                    || nb instanceof ICPPUsingDeclaration ud && Arrays.asList(ud.getDelegates()).contains(b)) {
                return at;
            }
        }
        return UNSEEN;
    }

    /** @return the earliest main-file definition of the class parameter {@code p} takes by value, or null */
    private FunctionDef.Need byValueClassNeed(IASTParameterDeclaration p) {
        IASTName n = AstConverter.innermost(p.getDeclarator()).getName();
        IType t;
        try {
            IBinding b = n == null ? null : n.resolveBinding();
            t = b instanceof IVariable v ? v.getType() : null;
        } catch (RuntimeException e) {
            return null;
        }
        for (int i = 0; i < 64 && (t instanceof ITypedef || t instanceof IQualifierType); i++) {
            t = t instanceof ITypedef td ? td.getType() : ((IQualifierType) t).getType();
        }
        if (!(t instanceof ICompositeType c) || t instanceof ICPPTemplateParameter) {
            return null; // a pointer, reference, arithmetic type, enumeration or dependent type
        }
        IBinding cls = c;
        if (cls instanceof ICPPSpecialization s && s.getSpecializedBinding() != null) {
            cls = s.getSpecializedBinding();
        }
        int at = earliest(definitions(cls));
        return at < 0 ? null : new FunctionDef.Need(c.getName(), at, FunctionDef.NeedKind.CLASS_BY_VALUE);
    }

    /** @return the names that define {@code b} (a class: its definition, not a forward declaration) */
    private List<IASTNode> definitions(IBinding b) {
        try {
            if (b instanceof org.eclipse.cdt.internal.core.dom.parser.cpp.ICPPInternalBinding ib) {
                return ib.getDefinition() == null ? List.of() : List.of(ib.getDefinition());
            }
            return Arrays.asList(tu.getDefinitionsInAST(b));
        } catch (RuntimeException e) {
            return List.of();
        }
    }

    /**
     * @return the names that declare or define {@code b}: from the binding itself where CDT keeps them
     *         (its parser's bindings do; asking the unit walks the whole AST, once per binding, which a
     *         file of thousands of kernels with types of their own would make quadratic)
     */
    private List<IASTNode> declarations(IBinding b) {
        List<IASTNode> out = new ArrayList<>();
        try {
            if (b instanceof org.eclipse.cdt.internal.core.dom.parser.cpp.ICPPInternalBinding ib) {
                if (ib.getDefinition() != null) {
                    out.add(ib.getDefinition());
                }
                if (ib.getDeclarations() != null) {
                    for (IASTNode d : ib.getDeclarations()) {
                        if (d != null) {
                            out.add(d);
                        }
                    }
                }
                if (!out.isEmpty()) {
                    return out;
                }
            }
            out.addAll(Arrays.asList(tu.getDeclarationsInAST(b)));
            out.addAll(Arrays.asList(tu.getDefinitionsInAST(b)));
        } catch (RuntimeException e) {
            // unresolvable: nothing counts
        }
        return out;
    }

    /** @return the smallest {@link #mainOffset} of {@code names} that counts, or -1 */
    private int earliest(List<? extends IASTNode> names) {
        int best = -1;
        for (IASTNode d : names) {
            int at = mainOffset(d);
            if (at >= 0 && (best < 0 || at < best)) {
                best = at;
            }
        }
        return best;
    }

    /**
     * @return where {@code node} is in the main file: its own offset there, or for a node of a header
     *         the offset of the main file's {@code #include} that reads it (through other headers); -1
     *         where it is in neither (the prelude, no location)
     */
    private int mainOffset(IASTNode node) {
        IASTFileLocation l = node.getFileLocation();
        for (int i = 0; i < 256 && l != null; i++) {
            if (CudaPrelude.PATH.equals(l.getFileName())) {
                return -1; // the forced include: its directive reads as offset 0 of the main file
            }
            if (mainPath.equals(l.getFileName())) {
                return l.getNodeOffset();
            }
            IASTPreprocessorIncludeStatement inc = l.getContextInclusionStatement();
            l = inc == null ? null : inc.getFileLocation();
        }
        return -1;
    }

    /** @return the last macro definition that an expansion in {@code [from, to)} of the main file needs, or null */
    private FunctionDef.Need macroNeed(int from, int to) {
        if (expansions == null) {
            collectExpansions();
        }
        int lo = 0;
        int hi = expansions.size();
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (expansions.get(mid)[0] < from) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        FunctionDef.Need best = null;
        for (int i = lo; i < expansions.size() && expansions.get(i)[0] < to; i++) {
            best = later(best, new FunctionDef.Need(expansionNames.get(i), expansions.get(i)[1], FunctionDef.NeedKind.MACRO));
        }
        return best;
    }

    /** Lists the main file's macro expansions with the latest definition each needs (its own macro's and nested ones'). */
    private void collectExpansions() {
        List<Object[]> found = new ArrayList<>();
        for (IASTPreprocessorMacroExpansion m : tu.getMacroExpansions()) {
            IASTFileLocation l = m.getFileLocation();
            if (l == null || !mainPath.equals(l.getFileName())) {
                continue;
            }
            int need = -1;
            String name = m.getMacroReference() == null ? "" : m.getMacroReference().toString();
            IASTPreprocessorMacroDefinition def = m.getMacroDefinition();
            if (def != null && def.getName() != null) {
                need = mainOffset(def.getName());
            }
            for (IASTName nested : m.getNestedMacroReferences()) {
                int at = -1;
                try {
                    IBinding b = nested.resolveBinding();
                    for (IASTNode d : b == null ? List.<IASTNode>of() : declarations(b)) {
                        int o = mainOffset(d);
                        at = o >= 0 && o < l.getNodeOffset() ? Math.max(at, o) : at;
                    }
                } catch (RuntimeException e) {
                    // unresolvable: does not count
                }
                if (at > need) {
                    need = at;
                    name = nested.toString();
                }
            }
            if (need >= 0) {
                found.add(new Object[] {l.getNodeOffset(), need, name});
            }
        }
        found.sort((a, b) -> Integer.compare((Integer) a[0], (Integer) b[0]));
        expansions = new ArrayList<>();
        expansionNames = new ArrayList<>();
        for (Object[] f : found) {
            expansions.add(new int[] {(Integer) f[0], (Integer) f[1]});
            expansionNames.add((String) f[2]);
        }
    }
}
