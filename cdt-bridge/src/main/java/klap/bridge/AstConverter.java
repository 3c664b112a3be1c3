package klap.bridge;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.eclipse.cdt.core.dom.ast.*;
import org.eclipse.cdt.core.dom.ast.cpp.*;

import klap.model.Diagnostic;
import klap.model.Expr;
import klap.model.FunctionDef;
import klap.model.Param;
import klap.model.SourceFile;
import klap.model.SourceRange;
import klap.model.Stmt;
import klap.model.VarDecl;

/**
 * Turns a CDT translation unit of the pre-passed main file into the CUDA model: function
 * definitions with statement and expression trees, kernel launches re-assembled from the
 * {@code (((...)))} shape the {@link Prepass} produced, and launch diagnostics. All ranges index the
 * original text (the pre-pass preserves offsets); text is always sliced from the original.
 */
final class AstConverter {

    /**
     * A launch whose anchor was found in the AST. {@code chevron} is null for a launch written in a
     * macro ({@code inMacro}): its text is not in the main file, {@code [start, end)} is the expansion.
     */
    private record LaunchSite(Prepass.Chevron chevron, IASTUnaryExpression anchor, IASTFunctionCallExpression call,
                              int start, int end, int nameStart, int nameEnd, String kernelName,
                              String templateArgs, boolean inMacro) {
    }

    private final SourceFile src;
    private final String text;
    private final String pp;
    private final String mainPath;
    private final IASTTranslationUnit tu;
    private final Prepass prepass;
    private final List<Diagnostic> diags;
    /** launch sites by call node and by exact [start,end) range. */
    private final Map<IASTNode, LaunchSite> launchByCall = new HashMap<>();
    private final Map<Long, LaunchSite> launchByRange = new HashMap<>();

    AstConverter(SourceFile src, Prepass prepass, String mainPath, IASTTranslationUnit tu, List<Diagnostic> diags) {
        this.src = src;
        this.text = src.text();
        this.pp = new String(prepass.out);
        this.prepass = prepass;
        this.mainPath = mainPath;
        this.tu = tu;
        this.diags = diags;
    }

    // ------------------------------------------------------------------------------------------
    // Launch discovery

    /** Finds the AST anchor of every pre-passed launch of the main file; reports the ones it cannot use. */
    void findLaunches(List<SourceRange> macroExpansions) {
        Map<Integer, Prepass.Chevron> byAnchorStart = new HashMap<>();
        for (Prepass.Chevron c : prepass.chevrons) {
            byAnchorStart.put(c.open() + 1, c);
        }
        Set<Prepass.Chevron> anchored = new HashSet<>();
        tu.accept(new ASTVisitor() {
            {
                shouldVisitExpressions = true;
            }

            @Override
            public int visit(IASTExpression e) {
                if (e instanceof IASTUnaryExpression u && u.getOperator() == IASTUnaryExpression.op_bracketedPrimary) {
                    // the (((/))) characters are literal text: a node spanning exactly them is the launch
                    IASTFileLocation l = u.getFileLocation();
                    Prepass.Chevron c = l == null || !mainPath.equals(l.getFileName()) ? null
                        : byAnchorStart.get(l.getNodeOffset());
                    if (c != null && l.getNodeOffset() + l.getNodeLength() == c.close() + 2 && !anchored.contains(c)) {
                        anchored.add(c);
                        site(c, u);
                    }
                }
                return PROCESS_CONTINUE;
            }
        });
        for (Prepass.Chevron c : prepass.chevrons) {
            if (anchored.contains(c) || c.inDirective()) {
                continue;
            }
            for (SourceRange m : macroExpansions) {
                if (m.contains(c.open())) {
                    launchInMacro(m);
                    break;
                }
            }
        }
    }

    /** Expansions of the main file that hold a launch written in the macro's body or argument, by offset. */
    private final Map<Integer, SourceRange> launchExpansions = new java.util.TreeMap<>();

    /** Notes that the macro expansion {@code expansion} (main file) holds a launch; see {@link #modelMacroLaunches}. */
    void launchInMacro(SourceRange expansion) {
        launchExpansions.putIfAbsent(expansion.offset(), expansion);
    }

    /**
     * Models the launches written in macros ({@link #launchInMacro}) as launch sites with
     * {@code inMacro} set: no pass can edit text that a macro produces, so each is left as written,
     * and the passes still see it as a launch of its kernel (launch order, kernels launched from
     * kernels, recursion). In the expanded text the pre-pass made {@code k(((g, b)))(args)} of the
     * launch; it is found by that shape, inside the expansion's range, and its kernel by the name CDT
     * read. An expansion in which no such launch (or no plain kernel name) is found is an error
     * {@code launch-in-macro} at the expansion, as before: klap cannot tell what it launches.
     */
    void modelMacroLaunches() {
        if (launchExpansions.isEmpty()) {
            return;
        }
        Set<Integer> found = new HashSet<>();
        Set<Integer> unnamed = new HashSet<>();
        tu.accept(new ASTVisitor() {
            {
                shouldVisitExpressions = true;
            }

            @Override
            public int visit(IASTExpression e) {
                if (!(e instanceof IASTFunctionCallExpression outer) || launchByCall.containsKey(outer)
                        || !(outer.getFunctionNameExpression() instanceof IASTFunctionCallExpression inner)) {
                    return PROCESS_CONTINUE;
                }
                IASTInitializerClause[] a = inner.getArguments();
                if (a.length != 1 || !(a[0] instanceof IASTUnaryExpression u) || !bracketed(u) || !bracketed(u.getOperand())) {
                    return PROCESS_CONTINUE;
                }
                IASTFileLocation l = outer.getFileLocation();
                if (l == null || !mainPath.equals(l.getFileName())) {
                    return PROCESS_CONTINUE;
                }
                SourceRange at = SourceRange.of(l.getNodeOffset(), l.getNodeOffset() + l.getNodeLength());
                SourceRange expansion = null;
                for (SourceRange m : launchExpansions.values()) {
                    if (m.contains(at.offset()) && at.end() <= m.end()) {
                        expansion = m;
                    }
                }
                if (expansion == null) {
                    return PROCESS_CONTINUE;
                }
                String name = inner.getFunctionNameExpression() instanceof IASTIdExpression id
                    ? id.getName().toString().replaceAll("\\s+", "") : null;
                if (name == null || name.isEmpty() || !name.matches("(::)?[A-Za-z_][A-Za-z0-9_:]*(<.*>)?")) {
                    unnamed.add(expansion.offset());
                    return PROCESS_CONTINUE;
                }
                int lt = name.indexOf('<');
                found.add(expansion.offset());
                LaunchSite s = new LaunchSite(null, u, outer, expansion.offset(), expansion.end(), expansion.offset(),
                    expansion.offset(), lt < 0 ? name : name.substring(0, lt), lt < 0 ? null : name.substring(lt), true);
                launchByCall.put(outer, s);
                return PROCESS_CONTINUE;
            }
        });
        for (SourceRange m : launchExpansions.values()) {
            if (!found.contains(m.offset()) || unnamed.contains(m.offset())) {
                diags.add(Diagnostic.at(Diagnostic.Severity.ERROR, src, m.offset(),
                    "kernel launch inside a macro expansion that klap cannot read (no kernel name it can resolve); "
                        + "write the launch outside the macro", "launch-in-macro"));
            }
        }
    }

    private static boolean bracketed(IASTNode n) {
        return n instanceof IASTUnaryExpression u && u.getOperator() == IASTUnaryExpression.op_bracketedPrimary;
    }

    private void site(Prepass.Chevron c, IASTUnaryExpression anchor) {
        int afterClose = c.closeEnd();
        IASTFunctionCallExpression call = null;
        for (IASTNode n = anchor.getParent(); n != null && !(n instanceof IASTStatement); n = n.getParent()) {
            if (n instanceof IASTFunctionCallExpression fc) {
                IASTFileLocation fl = fc.getFunctionNameExpression() == null ? null
                    : fc.getFunctionNameExpression().getFileLocation();
                if (fl != null && fl.getNodeOffset() + fl.getNodeLength() == afterClose) {
                    call = fc;
                    break;
                }
            }
        }
        if (call == null || call.getFileLocation() == null) {
            diags.add(Diagnostic.at(Diagnostic.Severity.ERROR, src, c.open(),
                "syntax error: malformed kernel launch (expected an argument list after '>>>')", "parse"));
            return;
        }
        // the kernel name: scan back from <<< over template arguments and a qualified name
        int i = c.open();
        int nameEnd = skipSpaceBack(i);
        String templateArgs = null;
        int idEnd = nameEnd;
        if (nameEnd > 0 && text.charAt(nameEnd - 1) == '>') {
            int lt = matchAngleBack(nameEnd - 1);
            if (lt >= 0) {
                templateArgs = text.substring(lt, nameEnd);
                idEnd = skipSpaceBack(lt);
            }
        }
        int nameStart = idEnd;
        while (true) {
            int b = nameStart;
            while (b > 0 && isIdent(text.charAt(b - 1))) {
                b--;
            }
            if (b == nameStart) {
                break;
            }
            nameStart = b;
            int q = skipSpaceBack(b);
            if (q >= 2 && text.startsWith("::", q - 2)) {
                int r = skipSpaceBack(q - 2);
                if (r > 0 && isIdent(text.charAt(r - 1))) {
                    nameStart = r;
                    continue;
                }
                nameStart = q - 2; // leading ::
            }
            break;
        }
        IASTFileLocation cl = call.getFileLocation();
        int end = cl.getNodeOffset() + cl.getNodeLength();
        if (nameStart == idEnd) {
            // no identifier before <<<: fall back on the call's own start (`(*fp)<<<...>>>`, `k[i]<<<...>>>`)
            nameStart = cl.getNodeOffset();
            if (nameStart >= c.open()) {
                // nothing at all before <<< (`<<<1, 32>>>(p)`): the call starts at the configuration
                diags.add(Diagnostic.at(Diagnostic.Severity.ERROR, src, c.open(),
                    "syntax error: kernel launch without a kernel before '<<<'", "parse"));
                return;
            }
        }
        String kernelName = text.substring(nameStart, idEnd).replaceAll("\\s+", "");
        String expanded = templateArgs == null ? macroKernelName(call, kernelName) : null;
        if (expanded != null) {
            // `K<<<g, b>>>(...)` with `#define K ns::child<int>`: the kernel is what the macro expands to
            int lt = expanded.indexOf('<');
            kernelName = lt < 0 ? expanded : expanded.substring(0, lt);
            templateArgs = lt < 0 ? null : expanded.substring(lt);
        }
        int start = Math.min(nameStart, cl.getNodeOffset());
        LaunchSite s = new LaunchSite(c, anchor, call, start, end, nameStart, nameEnd, kernelName, templateArgs, false);
        launchByCall.put(call, s);
        launchByRange.put(key(start, end), s);
    }

    /**
     * @return the kernel name (qualified, with template arguments) that the object-like macro
     *         {@code written} before {@code <<<} expands to, as CDT read it in {@code call}
     *         ({@code k(((g, b)))(args)} after the chevron pre-pass); null if {@code written} is not
     *         a macro, or its expansion is not a (qualified, template) name
     */
    private static String macroKernelName(IASTFunctionCallExpression call, String written) {
        if (!written.matches("[A-Za-z_][A-Za-z0-9_]*")
                || !(call.getFunctionNameExpression() instanceof IASTFunctionCallExpression cfg)
                || !(cfg.getFunctionNameExpression() instanceof IASTIdExpression id)) {
            return null;
        }
        IASTNodeLocation[] locs = id.getName().getNodeLocations();
        if (locs.length == 0 || !(locs[0] instanceof IASTMacroExpansionLocation)) {
            return null;
        }
        String name = id.getName().toString().replaceAll("\\s+", "");
        return !name.equals(written) && name.matches("(::)?[A-Za-z_][A-Za-z0-9_:]*(<.*>)?") ? name : null;
    }

    private static long key(int start, int end) {
        return ((long) start << 32) | end;
    }

    private int skipSpaceBack(int i) {
        while (i > 0 && Character.isWhitespace(text.charAt(i - 1))) {
            i--;
        }
        return i;
    }

    /** @return the offset of the {@code <} matching the {@code >} at {@code gt}, or -1 */
    private int matchAngleBack(int gt) {
        int depth = 0;
        for (int i = gt; i >= 0; i--) {
            char ch = text.charAt(i);
            if (ch == '>' || ch == ')' || ch == ']') {
                depth++;
            } else if (ch == '<' || ch == '(' || ch == '[') {
                depth--;
                if (depth == 0) {
                    return ch == '<' ? i : -1;
                }
            } else if (ch == ';' || ch == '{' || ch == '}') {
                return -1;
            }
        }
        return -1;
    }

    private static boolean isIdent(char c) {
        return Character.isLetterOrDigit(c) || c == '_';
    }

    // ------------------------------------------------------------------------------------------
    // Declarations and functions

    /**
     * Context of a declaration walk.
     *
     * @param outerStart main-file offset of the file-scope declaration the walk is in (a namespace
     *                   definition, a class, a template; inside an {@code extern "C" { }} block at
     *                   file scope, the block's declaration), or -1
     */
    private record Ctx(String namespace, boolean externC, String memberOf, int linkageStart, int outerStart) {
    }

    /** @return the function definitions of the main file, in source order */
    List<FunctionDef> functions() {
        List<FunctionDef> out = new ArrayList<>();
        for (IASTDeclaration d : tu.getDeclarations()) {
            IASTFileLocation l = d.getFileLocation();
            visitDecl(d, new Ctx("", false, null, -1, l != null && d.isPartOfTranslationUnitFile() ? l.getNodeOffset() : -1), null, out);
        }
        out.sort((a, b) -> Integer.compare(a.range().offset(), b.range().offset()));
        return out;
    }

    private void visitDecl(IASTDeclaration d, Ctx ctx, ICPPASTTemplateDeclaration templ, List<FunctionDef> out) {
        try {
            if (d instanceof ICPPASTNamespaceDefinition ns) {
                String name = ns.getName().toString();
                String q = name.isEmpty() ? ctx.namespace()
                    : ctx.namespace().isEmpty() ? name : ctx.namespace() + "::" + name;
                for (IASTDeclaration c : ns.getDeclarations(true)) {
                    visitDecl(c, new Ctx(q, ctx.externC(), null, -1, ctx.outerStart()), null, out);
                }
            } else if (d instanceof ICPPASTLinkageSpecification ls) {
                boolean c = "\"C\"".equals(ls.getLiteral());
                int single = -1;
                IASTFileLocation l = ls.getFileLocation();
                if (l != null && ls.isPartOfTranslationUnitFile() && !hasBraceAfterLiteral(l.getNodeOffset())) {
                    single = l.getNodeOffset();
                }
                for (IASTDeclaration x : ls.getDeclarations(true)) {
                    // an extern "C" { } block at file scope holds file-scope declarations: each of its
                    // declarations is outermost itself (review 2026-11-30: klap's declarations went to the
                    // top of the block, before what the block declares; Linkage.cpp keeps them C++ inside)
                    IASTFileLocation xl = x.getFileLocation();
                    int outer = l != null && ctx.outerStart() == l.getNodeOffset() && xl != null && x.isPartOfTranslationUnitFile()
                            ? xl.getNodeOffset() : ctx.outerStart();
                    visitDecl(x, new Ctx(ctx.namespace(), ctx.externC() || c, ctx.memberOf(), single, outer), null, out);
                }
            } else if (d instanceof ICPPASTTemplateDeclaration td) {
                visitDecl(td.getDeclaration(), ctx, td, out);
            } else if (d instanceof IASTFunctionDefinition fd) {
                if (fd.isPartOfTranslationUnitFile()) {
                    FunctionDef f = function(fd, ctx, templ);
                    if (f != null) {
                        out.add(f);
                    }
                }
            } else if (d instanceof IASTSimpleDeclaration sd
                    && sd.getDeclSpecifier() instanceof ICPPASTCompositeTypeSpecifier cs) {
                String cls = cs.getName().getLastName().toString();
                for (IASTDeclaration m : cs.getDeclarations(true)) {
                    visitDecl(m, new Ctx(ctx.namespace(), ctx.externC(), cls, -1, ctx.outerStart()), null, out);
                }
            }
        } catch (RuntimeException e) {
            IASTFileLocation l = d.getFileLocation();
            if (l != null && d.isPartOfTranslationUnitFile()) {
                diags.add(Diagnostic.at(Diagnostic.Severity.ERROR, src, l.getNodeOffset(),
                    "internal error while reading this declaration: " + e, "parse"));
            }
        }
    }

    /** true if the linkage specification at {@code off} uses the block form {@code extern "C" { ... }}. */
    private boolean hasBraceAfterLiteral(int off) {
        int q = pp.indexOf('"', off);
        if (q < 0) {
            return false;
        }
        int q2 = pp.indexOf('"', q + 1);
        int j = skipSpaceFwd(q2 + 1);
        return j < pp.length() && pp.charAt(j) == '{';
    }

    private int skipSpaceFwd(int j) {
        while (j < pp.length()) {
            int s = Prepass.skipLexical(pp, j);
            if (s > j && (pp.startsWith("//", j) || pp.startsWith("/*", j))) {
                j = s;
            } else if (Character.isWhitespace(pp.charAt(j))) {
                j++;
            } else {
                break;
            }
        }
        return j;
    }

    private FunctionDef function(IASTFunctionDefinition fd, Ctx ctx, ICPPASTTemplateDeclaration templ) {
        SourceRange own = range(fd);
        if (own == null || !(fd.getBody() instanceof IASTCompoundStatement body)) {
            return null;
        }
        int start = own.offset();
        SourceRange header = null;
        if (templ != null) {
            ICPPASTTemplateDeclaration outer = templ;
            while (outer.getParent() instanceof ICPPASTTemplateDeclaration p) {
                outer = p;
            }
            SourceRange tr = range(outer);
            if (tr != null) {
                start = tr.offset();
                header = templateHeader(templ);
            }
        }
        if (ctx.linkageStart() >= 0) {
            start = Math.min(start, ctx.linkageStart());
        }
        IASTFunctionDeclarator decl = fd.getDeclarator();
        IASTDeclarator inner = innermost(decl);
        IASTName fullName = inner.getName();
        IASTName last = fullName instanceof ICPPASTQualifiedName q ? q.getLastName() : fullName;
        String name = stripTemplateArgs(last.toString());
        SourceRange nameRange = range(last);
        if (nameRange == null) {
            nameRange = new SourceRange(own.offset(), 0);
        }
        String memberOf = ctx.memberOf();
        if (memberOf == null && fullName instanceof ICPPASTQualifiedName q) {
            ICPPASTNameSpecifier[] qual = q.getQualifier();
            if (qual.length > 0) {
                try {
                    IBinding b = fullName.resolveBinding();
                    if (b instanceof ICPPMethod) {
                        memberOf = stripTemplateArgs(qual[qual.length - 1].toString());
                    }
                } catch (RuntimeException e) {
                    // leave memberOf null
                }
            }
        }
        Set<String> attrs = attributes(fd, fd.getDeclSpecifier(), decl);
        if (templ != null) {
            attrs.addAll(attributes(templ));
        }
        FunctionDef.Kind kind = kindOf(attrs);
        List<Param> params = new ArrayList<>();
        SourceRange paramsRange = null;
        if (decl instanceof IASTStandardFunctionDeclarator sfd) {
            IASTParameterDeclaration[] ps = sfd.getParameters();
            for (IASTParameterDeclaration p : ps) {
                SourceRange pr = range(p);
                if (pr == null) {
                    continue;
                }
                params.add(param(p, pr));
            }
            if (params.size() == 1 && params.get(0).name().isEmpty() && ps.length == 1
                    && ps[0].getDeclSpecifier() instanceof IASTSimpleDeclSpecifier ss
                    && ss.getType() == IASTSimpleDeclSpecifier.t_void
                    && ps[0].getDeclarator().getPointerOperators().length == 0) {
                params.clear(); // (void)
            }
            int open = skipSpaceFwd(nameRange.end());
            if (open < pp.length() && pp.charAt(open) == '(') {
                int close = matchParenFwd(open);
                if (close > open) {
                    paramsRange = SourceRange.of(open + 1, close);
                }
            }
        }
        if (paramsRange == null) {
            paramsRange = new SourceRange(nameRange.end(), 0);
        }
        boolean isStatic = fd.getDeclSpecifier().getStorageClass() == IASTDeclSpecifier.sc_static;
        SourceRange whole = SourceRange.of(start, own.end());
        SourceRange first = firstDeclaration(fullName, start);
        Stmt.Block b = block(body);
        // C linkage is the first declaration's ([dcl.link]/5): extern "C" on a prototype, or a prototype in
        // an extern "C" { } block, gives it to a definition written without
        boolean externC = ctx.externC() || (bindingOf(fullName) instanceof ICPPFunction cf && cf.isExternC());
        int outer = ctx.outerStart() >= 0 && ctx.outerStart() <= start ? ctx.outerStart() : start;
        return new FunctionDef(name, kind, whole, header, nameRange, params, paramsRange, b, first, isStatic,
            externC, ctx.namespace(), memberOf, outer, bounded(attrs) || declaredBounded(fullName),
            declaredDefaults(fullName, params), declaredTemplateDefaults(fullName, templateOf(fd)),
            signatureNeeds().needs(fd, templ, new int[] {start, body.getFileLocation() == null ? own.end()
                    : Math.max(start, body.getFileLocation().getNodeOffset())}, first == null),
            scalarTypes(fd));
    }

    /**
     * @return {@link FunctionDef#scalarTypes} of {@code fd}: each declarator of its parameters and
     *         body whose variable has an arithmetic type once typedefs are resolved (macros are
     *         expanded in the AST already), by the main-file offset of its name
     */
    private Map<Integer, String> scalarTypes(IASTFunctionDefinition fd) {
        Map<Integer, String> out = new HashMap<>();
        Set<Integer> twice = new HashSet<>();
        fd.accept(new ASTVisitor() {
            {
                shouldVisitDeclarators = true;
            }

            @Override
            public int visit(IASTDeclarator d) {
                IASTName n = d.getNestedDeclarator() == null ? d.getName() : null;
                SourceRange nr = n == null ? null : range(n);
                if (nr == null || n.getLookupKey().length == 0) {
                    return PROCESS_CONTINUE;
                }
                if (!text.startsWith(n.toString(), nr.offset()) || !twice.add(nr.offset())) {
                    // a name a macro writes: every declarator of one expansion has the expansion's offset
                    // (review 2026-11-30: #define DECLS int isum = 0; float fpad = 0.0f; gave isum float's type);
                    // an offset met twice is dropped for good
                    out.remove(nr.offset());
                    twice.add(nr.offset());
                    return PROCESS_CONTINUE;
                }
                IType t;
                try {
                    t = n.resolveBinding() instanceof IVariable v ? v.getType() : null;
                } catch (RuntimeException e) {
                    return PROCESS_CONTINUE;
                }
                IType core = t;
                boolean alias = false;
                for (int i = 0; i < 64 && (core instanceof ITypedef || core instanceof IQualifierType); i++) {
                    alias |= core instanceof ITypedef;
                    core = core instanceof ITypedef td ? td.getType() : ((IQualifierType) core).getType();
                }
                if (alias && archConditionals()) {
                    // a typedef may be chosen by #ifdef __CUDA_ARCH__: klap reads the host's (review 2026-11-30)
                    return PROCESS_CONTINUE;
                }
                if (core instanceof IBasicType b && b.getKind() != IBasicType.Kind.eVoid
                        && b.getKind() != IBasicType.Kind.eUnspecified && !(core instanceof ICPPTemplateParameter)) {
                    out.put(nr.offset(), ASTTypeUtil.getType(t, true));
                }
                return PROCESS_CONTINUE;
            }
        });
        return out;
    }

    private SignatureNeeds signatureNeeds;

    private Boolean archConditionals;

    /**
     * @return true if a file of the unit has a conditional directive on {@code __CUDA_ARCH__}
     *         (computed once): its typedefs may differ in the device compilation, which klap does not read
     */
    private boolean archConditionals() {
        if (archConditionals == null) {
            archConditionals = java.util.Arrays.stream(tu.getAllPreprocessorStatements()).anyMatch(CudaParser::archConditional);
        }
        return archConditionals;
    }

    /** @return the unit's {@link SignatureNeeds}, made once */
    private SignatureNeeds signatureNeeds() {
        if (signatureNeeds == null) {
            signatureNeeds = new SignatureNeeds(tu, mainPath);
        }
        return signatureNeeds;
    }

    /** @return the range of {@code template<...>} of {@code td} (from {@code template} to the closing {@code >}) */
    private SourceRange templateHeader(ICPPASTTemplateDeclaration td) {
        SourceRange r = range(td);
        if (r == null) {
            return null;
        }
        int lt = pp.indexOf('<', r.offset());
        if (lt < 0 || lt >= r.end()) {
            return null;
        }
        // the '>' that closes the list: a '>' in parentheses is a comparison (bool B = (3 > 2))
        int gt = Brackets.topLevelIndex(pp, lt + 1, r.end(), '>');
        return gt < 0 ? null : SourceRange.of(r.offset(), gt + 1);
    }

    /** @return the offset of the {@code )} matching the {@code (} at {@code open} in the pre-passed text, or -1 */
    private int matchParenFwd(int open) {
        int depth = 0;
        for (int i = open; i < pp.length(); i++) {
            int s = Prepass.skipLexical(pp, i);
            if (s > i) {
                i = s - 1;
                continue;
            }
            char c = pp.charAt(i);
            if (c == '(' || c == '[' || c == '{') {
                depth++;
            } else if (c == ')' || c == ']' || c == '}') {
                depth--;
                if (depth == 0) {
                    return c == ')' ? i : -1;
                }
            }
        }
        return -1;
    }

    /** Earliest prototype range of the main file, by the function's binding; built on first use. */
    private Map<IBinding, SourceRange> prototypes;

    /** @return true if {@code attrs} give launch bounds or a register limit */
    private static boolean bounded(Set<String> attrs) {
        return attrs.contains("launch_bounds") || attrs.contains("maxnreg");
    }

    /** the functions (bindings) that a declaration without body bounds, in the main file or a header (computed once) */
    private Set<IBinding> boundedPrototypes;

    /**
     * @return true if a declaration of the function that {@code name} defines (in the main file or
     *         a header) gives launch bounds or a register limit (its attributes, macros expanded).
     *         One pass over the declarations for all functions (a lookup of each function's
     *         declarations would walk the AST once per function: 5.7 s became 199 s on a 48k-line
     *         file, BadInputTest.enormousFile)
     */
    private boolean declaredBounded(IASTName name) {
        if (boundedPrototypes == null) {
            boundedPrototypes = collectBoundedPrototypes();
        }
        if (boundedPrototypes.isEmpty()) {
            return false;
        }
        try {
            IBinding b = name.resolveBinding();
            return b != null && boundedPrototypes.contains(b);
        } catch (RuntimeException e) {
            return false; // unresolved: the text check of the aggregation still reads the written-out forms
        }
    }

    /** the default arguments that declarations without body give, per function (binding), computed once */
    private Map<IBinding, List<String>> prototypeDefaults;

    /**
     * @return for each of {@code params} (the definition's), the default argument with its {@code =}
     *         that a declaration without body of the same function gives (the main file's or a
     *         header's, as written there), or empty where none does or the definition gives its own
     */
    private List<String> declaredDefaults(IASTName name, List<Param> params) {
        return inherited(name, false, params.size(), i -> params.get(i).hasDefault());
    }

    /** the default template arguments that declarations without body give, per function template, computed once */
    private Map<IBinding, List<String>> prototypeTemplateDefaults;

    /**
     * @return for each template parameter of the definition's header {@code header} (null: no
     *         template), the default that a declaration without body gives, where the definition's
     *         header gives none; empty list for a function that is no template
     */
    private List<String> declaredTemplateDefaults(IASTName name, IASTNode header) {
        if (!(header instanceof ICPPASTTemplateDeclaration td)) {
            return List.of();
        }
        ICPPASTTemplateParameter[] own = td.getTemplateParameters();
        return inherited(name, true, own.length, i -> !defaultOf(own[i]).isEmpty());
    }

    /**
     * @param template   the template parameters' defaults, else the function parameters'
     * @param n          the number of the definition's parameters
     * @param ownDefault whether the definition gives parameter {@code i} a default itself
     * @return for each of the {@code n} parameters, the default the prototypes of the function that
     *         {@code name} defines give it (empty where none does, the definition gives its own, or
     *         CDT does not resolve the name)
     */
    private List<String> inherited(IASTName name, boolean template, int n, java.util.function.IntPredicate ownDefault) {
        List<String> out = new ArrayList<>(java.util.Collections.nCopies(n, ""));
        if (prototypeDefaults == null) {
            prototypeDefaults = collectPrototypeDefaults();
        }
        Map<IBinding, List<String>> all = template ? prototypeTemplateDefaults : prototypeDefaults;
        IBinding b = all.isEmpty() ? null : bindingOf(name);
        List<String> given = b == null ? null : all.get(b);
        for (int i = 0; given != null && i < n && i < given.size(); i++) {
            if (!ownDefault.test(i)) {
                out.set(i, given.get(i));
            }
        }
        return out;
    }

    /**
     * @return the default argument of template or function parameter {@code p} (a function
     *         parameter is an {@link ICPPASTParameterDeclaration}, as is a non-type template
     *         parameter) with its {@code =}, as written, or empty
     */
    private static String defaultOf(ICPPASTTemplateParameter p) {
        IASTNode d = null;
        if (p instanceof ICPPASTSimpleTypeTemplateParameter t) {
            d = t.getDefaultType();
        } else if (p instanceof ICPPASTTemplatedTypeTemplateParameter t) {
            d = t.getDefaultValue();
        } else if (p instanceof ICPPASTParameterDeclaration pd) {
            for (IASTDeclarator dd = pd.getDeclarator(); dd != null; dd = dd.getNestedDeclarator()) {
                if (dd.getInitializer() instanceof IASTEqualsInitializer ei && ei.getInitializerClause() != null) {
                    d = ei.getInitializerClause();
                }
            }
        }
        return d == null ? "" : "= " + d.getRawSignature().strip();
    }

    /** merges {@code defaults} into {@code out}'s list for {@code b}: each position keeps the first default given */
    private static void merge(Map<IBinding, List<String>> out, IBinding b, List<String> defaults) {
        List<String> merged = out.computeIfAbsent(b, k -> new ArrayList<>(java.util.Collections.nCopies(defaults.size(), "")));
        for (int i = 0; i < defaults.size() && i < merged.size(); i++) {
            if (merged.get(i).isEmpty()) {
                merged.set(i, defaults.get(i));
            }
        }
    }

    private Map<IBinding, List<String>> collectPrototypeDefaults() {
        Map<IBinding, List<String>> out = new HashMap<>();
        prototypeTemplateDefaults = new HashMap<>();
        forEachSimpleDeclaration(sd -> {
            for (IASTDeclarator dd : sd.getDeclarators()) {
                if (!(dd instanceof ICPPASTFunctionDeclarator fd) || dd.getNestedDeclarator() != null) {
                    continue;
                }
                ICPPASTParameterDeclaration[] ps = fd.getParameters();
                List<String> defaults = new ArrayList<>();
                boolean any = false;
                for (ICPPASTParameterDeclaration p : ps) {
                    String d = defaultOf(p);
                    any |= !d.isEmpty();
                    defaults.add(d);
                }
                List<String> tdefaults = new ArrayList<>();
                if (templateOf(sd) instanceof ICPPASTTemplateDeclaration td) {
                    for (ICPPASTTemplateParameter tp : td.getTemplateParameters()) {
                        tdefaults.add(defaultOf(tp));
                    }
                }
                boolean anyTemplate = tdefaults.stream().anyMatch(t -> !t.isEmpty());
                IBinding b = any || anyTemplate ? bindingOf(dd.getName()) : null;
                if (b == null) {
                    continue;
                }
                // each parameter's default is given once, by one of the declarations ([dcl.fct.default]/4,
                // [temp.param]/10)
                if (any) {
                    merge(out, b, defaults);
                }
                if (anyTemplate) {
                    merge(prototypeTemplateDefaults, b, tdefaults);
                }
            }
        });
        return out;
    }

    private Set<IBinding> collectBoundedPrototypes() {
        Set<IBinding> out = new HashSet<>();
        forEachSimpleDeclaration(sd -> {
            for (IASTDeclarator dd : sd.getDeclarators()) {
                if (dd instanceof IASTFunctionDeclarator
                        && bounded(attributes(sd, sd.getDeclSpecifier(), dd, templateOf(sd)))) {
                    try {
                        IBinding b = innermost(dd).getName().resolveBinding();
                        if (b != null && !(b instanceof IProblemBinding)) {
                            out.add(b);
                        }
                    } catch (RuntimeException e) {
                        // unresolved: not counted
                    }
                }
            }
        });
        return out;
    }

    /** Runs {@code action} on every simple declaration of the unit (headers included), not entering function bodies. */
    private void forEachSimpleDeclaration(java.util.function.Consumer<IASTSimpleDeclaration> action) {
        tu.accept(new ASTVisitor() {
            {
                shouldVisitDeclarations = true;
            }

            @Override
            public int visit(IASTDeclaration d) {
                if (d instanceof IASTFunctionDefinition) {
                    return PROCESS_SKIP;
                }
                if (d instanceof IASTSimpleDeclaration sd) {
                    action.accept(sd);
                }
                return PROCESS_CONTINUE;
            }
        });
    }

    /** @return the range of the earliest prototype of the function named {@code name} before {@code defStart}, or null */
    private SourceRange firstDeclaration(IASTName name, int defStart) {
        IBinding b;
        try {
            b = name.resolveBinding();
        } catch (RuntimeException e) {
            return null;
        }
        if (b == null || b instanceof IProblemBinding) {
            return null;
        }
        if (prototypes == null) {
            prototypes = collectPrototypes();
        }
        SourceRange r = prototypes.get(b);
        return r != null && r.offset() < defStart ? r : null;
    }

    /**
     * Collects the function prototypes (declarations without body) of the main file: template
     * header and terminating semicolon included, and a single-declaration {@code extern "C"} too.
     */
    private Map<IBinding, SourceRange> collectPrototypes() {
        Map<IBinding, SourceRange> out = new HashMap<>();
        forEachSimpleDeclaration(sd -> {
            if (!sd.isPartOfTranslationUnitFile()) {
                return;
            }
            for (IASTDeclarator dd : sd.getDeclarators()) {
                if (!(dd instanceof IASTFunctionDeclarator) || dd.getNestedDeclarator() != null) {
                    continue;
                }
                IBinding b;
                try {
                    b = dd.getName().resolveBinding();
                } catch (RuntimeException e) {
                    continue;
                }
                if (b == null || b instanceof IProblemBinding) {
                    continue;
                }
                IASTNode top = sd;
                while (top.getParent() instanceof ICPPASTTemplateDeclaration) {
                    top = top.getParent();
                }
                IASTNode scope = top.getParent();
                if (!(scope instanceof IASTTranslationUnit || scope instanceof ICPPASTNamespaceDefinition
                        || scope instanceof ICPPASTLinkageSpecification)) {
                    continue; // member declarations in a class are not prototypes
                }
                SourceRange r = range(top);
                if (top.getParent() instanceof ICPPASTLinkageSpecification ls
                        && ls.getDeclarations(true).length == 1) {
                    SourceRange lr = range(ls);
                    if (lr != null && !hasBraceAfterLiteral(lr.offset())) {
                        r = lr;
                    }
                }
                SourceRange prev = out.get(b);
                if (r != null && (prev == null || r.offset() < prev.offset())) {
                    out.put(b, r);
                }
            }
        });
        return out;
    }

    /** @return the attribute names found on the given nodes and on all their nested declarators */
    static Set<String> attributes(IASTNode... nodes) {
        Set<String> out = new HashSet<>();
        for (IASTNode n : nodes) {
            forEachAttribute(n, a -> out.add(new String(a.getName())));
        }
        return out;
    }

    /**
     * Gives {@code each} every attribute written on {@code n} (if it owns attributes) and, for a
     * declarator, on its nested declarators and pointer operators; nothing for null.
     */
    static void forEachAttribute(IASTNode n, java.util.function.Consumer<IASTAttribute> each) {
        if (n == null) {
            return;
        }
        if (n instanceof IASTAttributeOwner ao) {
            for (IASTAttributeSpecifier spec : ao.getAttributeSpecifiers()) {
                if (spec instanceof IASTAttributeList al) {
                    for (IASTAttribute a : al.getAttributes()) {
                        each.accept(a);
                    }
                }
            }
        }
        if (n instanceof IASTDeclarator d) {
            forEachAttribute(d.getNestedDeclarator(), each);
            for (IASTPointerOperator po : d.getPointerOperators()) {
                forEachAttribute(po, each);
            }
        }
    }

    static FunctionDef.Kind kindOf(Set<String> attrs) {
        if (attrs.contains("global")) {
            return FunctionDef.Kind.KERNEL;
        }
        if (attrs.contains("device")) {
            return attrs.contains("host") ? FunctionDef.Kind.HOST_DEVICE : FunctionDef.Kind.DEVICE;
        }
        return FunctionDef.Kind.HOST;
    }

    /**
     * The model of one parameter declaration: its name (or where a name would go), where its
     * default argument starts, and whether its declared array or function type is adjusted to a
     * pointer (C++ [dcl.fct]/5).
     */
    private Param param(IASTParameterDeclaration p, SourceRange pr) {
        List<IASTDeclarator> chain = new ArrayList<>();
        for (IASTDeclarator d = p.getDeclarator(); d != null; d = d.getNestedDeclarator()) {
            chain.add(d);
        }
        IASTDeclarator in = chain.get(chain.size() - 1);
        String pname = in.getName().toString();
        SourceRange pnr = pname.isEmpty() ? null : range(in.getName());
        int declEnd = pr.end();
        for (IASTDeclarator d : chain) {
            SourceRange ir = d.getInitializer() == null ? null : range(d.getInitializer());
            if (ir != null && pr.contains(ir.offset())) {
                int e = ir.offset();
                while (e > pr.offset() && Character.isWhitespace(src.text().charAt(e - 1))) {
                    e--;
                }
                if (e > pr.offset() && src.text().charAt(e - 1) == '=') {
                    e--;
                }
                declEnd = e;
            }
        }
        Param.Decay decay = Param.Decay.NONE;
        SourceRange bound = null;
        for (int i = chain.size() - 1; i >= 0; i--) {
            IASTDeclarator d = chain.get(i);
            if (d instanceof IASTArrayDeclarator ad && ad.getArrayModifiers().length > 0) {
                bound = range(ad.getArrayModifiers()[0]);
                decay = bound != null ? Param.Decay.ARRAY : Param.Decay.NONE;
                break;
            }
            if (d instanceof IASTFunctionDeclarator) {
                decay = Param.Decay.FUNCTION;
                break;
            }
            if (d.getPointerOperators().length > 0) {
                break;
            }
        }
        int nameOffset = pnr != null ? pnr.offset() : unnamedNameOffset(p, in, declEnd);
        if (nameOffset < pr.offset() || nameOffset > declEnd || (bound != null && bound.offset() < nameOffset)) {
            // a form this reader does not place: keep the declared text (the name goes at the end)
            return new Param(pname, pr, pnr, pnr != null ? pnr.offset() : declEnd, declEnd, Param.Decay.NONE, null);
        }
        return new Param(pname, pr, pnr, nameOffset, declEnd, decay, bound);
    }

    /**
     * @return where the name of an unnamed parameter would go: after its last pointer operator
     *         ({@code void (*)(int)}, {@code int&}), before its first array bound ({@code float[2]}),
     *         else after its declaration specifier ({@code int})
     */
    private int unnamedNameOffset(IASTParameterDeclaration p, IASTDeclarator in, int declEnd) {
        IASTPointerOperator[] ops = in.getPointerOperators();
        SourceRange r = ops.length > 0 ? range(ops[ops.length - 1]) : null;
        if (r != null) {
            return r.end();
        }
        if (in instanceof IASTArrayDeclarator ad && ad.getArrayModifiers().length > 0
                && (r = range(ad.getArrayModifiers()[0])) != null) {
            return r.offset();
        }
        r = range(p.getDeclSpecifier());
        return r != null ? r.end() : declEnd;
    }

    /** @return the type of the member {@code fr} names, typedefs and qualifiers removed; null if unresolved */
    private static IType fieldType(IASTFieldReference fr) {
        try {
            if (fr.getFieldName().resolveBinding() instanceof IField f) {
                IType t = f.getType();
                while (t instanceof ITypedef || t instanceof IQualifierType) {
                    t = t instanceof ITypedef td ? td.getType() : ((IQualifierType) t).getType();
                }
                return t;
            }
        } catch (RuntimeException e) {
            // an unresolved member: its type is unknown
        }
        return null;
    }

    static IASTDeclarator innermost(IASTDeclarator d) {
        while (d.getNestedDeclarator() != null) {
            d = d.getNestedDeclarator();
        }
        return d;
    }

    /** Removes every template argument list from a name: {@code ns::f<int>} becomes {@code ns::f}. */
    static String stripTemplateArgs(String s) {
        if (s.startsWith("operator") || s.indexOf('<') < 0) {
            return s;
        }
        StringBuilder b = new StringBuilder();
        int depth = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '<') {
                depth++;
            } else if (c == '>') {
                depth = Math.max(0, depth - 1);
            } else if (depth == 0) {
                b.append(c);
            }
        }
        return b.toString().trim();
    }

    /**
     * The kernels that an included header defines (filled by {@link #kernelsDeclaredElsewhere}): simple
     * and namespace-qualified name to the header's path as CDT read it.
     */
    final Map<String, String> kernelsInHeaders = new java.util.LinkedHashMap<>();

    /**
     * @return names of kernels declared or defined anywhere (headers included) but not defined in the
     *         main file: the simple name, and the qualified one for a kernel in a namespace; a kernel
     *         declared in one namespace and defined here in another counts (its simple name then names
     *         two kernels), and so does a declaration of another function of a name the main file
     *         defines a kernel of (an overload declared only, a template next to a plain kernel, an
     *         explicit specialization defined in another file: review 2026-11-29, where a launch that
     *         C++ resolves to the declared one was aggregated with the defined one's body)
     */
    Set<String> kernelsDeclaredElsewhere(List<FunctionDef> defs) {
        Set<String> definedHere = new HashSet<>();
        for (FunctionDef f : defs) {
            if (f.kind() == FunctionDef.Kind.KERNEL) {
                definedHere.add(f.namespace().isEmpty() ? f.name() : f.namespace() + "::" + f.name());
            }
        }
        // the functions the main file's kernel definitions define, by CDT binding
        Set<IBinding> definedBindings = new HashSet<>();
        tu.accept(new ASTVisitor() {
            {
                shouldVisitDeclarations = true;
            }

            @Override
            public int visit(IASTDeclaration d) {
                if (d instanceof IASTFunctionDefinition fd && fd.isPartOfTranslationUnitFile()
                        && kindOf(attributes(fd, fd.getDeclSpecifier(), fd.getDeclarator(), templateOf(fd)))
                        == FunctionDef.Kind.KERNEL) {
                    IBinding b = bindingOf(innermost(fd.getDeclarator()).getName());
                    if (b != null) {
                        definedBindings.add(b);
                    }
                }
                return d instanceof IASTFunctionDefinition ? PROCESS_SKIP : PROCESS_CONTINUE;
            }
        });
        Set<String> out = new LinkedHashSet<>();
        tu.accept(new ASTVisitor() {
            {
                shouldVisitDeclarations = true;
            }

            @Override
            public int visit(IASTDeclaration d) {
                if (d instanceof IASTSimpleDeclaration sd) {
                    for (IASTDeclarator dd : sd.getDeclarators()) {
                        if (dd instanceof IASTFunctionDeclarator
                                && kindOf(attributes(sd, sd.getDeclSpecifier(), dd, templateOf(sd))) == FunctionDef.Kind.KERNEL) {
                            add(innermost(dd).getName(), sd);
                        }
                    }
                } else if (d instanceof IASTFunctionDefinition fd && !fd.isPartOfTranslationUnitFile()
                        && kindOf(attributes(fd, fd.getDeclSpecifier(), fd.getDeclarator(), templateOf(fd)))
                        == FunctionDef.Kind.KERNEL) {
                    IASTName n = innermost(fd.getDeclarator()).getName();
                    add(n, fd);
                    IASTFileLocation l = fd.getFileLocation();
                    if (l != null) {
                        IASTName last = n instanceof ICPPASTQualifiedName q ? q.getLastName() : n;
                        String simple = stripTemplateArgs(last.toString());
                        String ns = namespaceOf(fd);
                        kernelsInHeaders.putIfAbsent(simple, l.getFileName());
                        if (!ns.isEmpty()) {
                            kernelsInHeaders.putIfAbsent(ns + "::" + simple, l.getFileName());
                        }
                    }
                }
                return d instanceof IASTFunctionDefinition ? PROCESS_SKIP : PROCESS_CONTINUE;
            }

            private void add(IASTName n, IASTNode where) {
                IASTName last = n instanceof ICPPASTQualifiedName q ? q.getLastName() : n;
                String simple = stripTemplateArgs(last.toString());
                String ns = namespaceOf(where);
                String qualified = ns.isEmpty() ? simple : ns + "::" + simple;
                // a kernel of the same name defined here in another namespace is another kernel: a launch
                // that names it by its simple name may mean either (review 2026-11-25); so is another function
                // of the same qualified name (an overload, an explicit specialization). Compared by binding where
                // CDT resolves it (void ns::k() {...} defines the k declared in ns), else by name; an explicit
                // instantiation (template __global__ void k<float>(float*);) declares no other function.
                boolean instantiation = where.getParent() instanceof ICPPASTExplicitTemplateInstantiation;
                IBinding b = instantiation ? null : bindingOf(n);
                if (b != null && !definedBindings.isEmpty() ? !definedBindings.contains(b)
                        : !definedHere.contains(qualified) && !instantiation) {
                    out.add(simple);
                    if (!ns.isEmpty()) {
                        out.add(qualified);
                    }
                }
            }
        });
        return out;
    }

    /** @return the function {@code n} declares or defines, or null where CDT does not resolve it */
    private static IBinding bindingOf(IASTName n) {
        try {
            IBinding b = n.resolveBinding();
            return b instanceof IProblemBinding ? null : b;
        } catch (RuntimeException e) {
            return null;
        }
    }

    /**
     * @return simple names of {@code __device__} (or {@code __host__ __device__}) functions declared
     *         in the main file or a header, not in klap's prelude, that no function definition of the
     *         translation unit (headers included) defines: defined in another file
     */
    Set<String> deviceFunctionsWithoutBody() {
        // each declaration in order: its simple name and the function CDT resolves it to (or null)
        List<Map.Entry<String, IBinding>> declared = new ArrayList<>();
        Set<String> defined = new HashSet<>();
        Set<IBinding> definedFunctions = new HashSet<>();
        Set<String> definedUnresolved = new HashSet<>();
        tu.accept(new ASTVisitor() {
            {
                shouldVisitDeclarations = true;
            }

            @Override
            public int visit(IASTDeclaration d) {
                IASTFileLocation l = d.getFileLocation();
                if (l == null || CudaPrelude.PATH.equals(l.getFileName())) {
                    return PROCESS_SKIP;
                }
                if (d instanceof IASTSimpleDeclaration sd) {
                    for (IASTDeclarator dd : sd.getDeclarators()) {
                        if (dd instanceof IASTFunctionDeclarator) {
                            FunctionDef.Kind k = kindOf(attributes(sd, sd.getDeclSpecifier(), dd, templateOf(sd)));
                            if (k == FunctionDef.Kind.DEVICE || k == FunctionDef.Kind.HOST_DEVICE) {
                                IASTName n = innermost(dd).getName();
                                declared.add(new java.util.AbstractMap.SimpleEntry<>(simpleOf(n), bindingOf(n)));
                            }
                        }
                    }
                } else if (d instanceof IASTFunctionDefinition fd) {
                    IASTName n = innermost(fd.getDeclarator()).getName();
                    IBinding fb = bindingOf(n);
                    defined.add(simpleOf(n));
                    if (fb != null) {
                        definedFunctions.add(fb);
                    } else {
                        definedUnresolved.add(simpleOf(n));
                    }
                    return PROCESS_SKIP;
                }
                return PROCESS_CONTINUE;
            }
        });
        // by function where CDT resolves the declaration and every definition of its name: an
        // overload declared and defined nowhere in the unit keeps its name here even where another
        // overload of the name is defined (gid(float, int) beside a defined gid(int): klap's clone
        // gid(klap_v, int) took the call gid(2.5f), a silent wrong call, 2026-11-30); by name otherwise
        Set<String> out = new LinkedHashSet<>();
        for (Map.Entry<String, IBinding> e : declared) {
            String name = e.getKey();
            boolean byFunction = e.getValue() != null && !definedUnresolved.contains(name);
            if (byFunction ? !definedFunctions.contains(e.getValue()) : !defined.contains(name)) {
                out.add(name);
            }
        }
        return out;
    }

    private static String simpleOf(IASTName n) {
        IASTName last = n instanceof ICPPASTQualifiedName q ? q.getLastName() : n;
        return stripTemplateArgs(last.toString());
    }

    private static IASTNode templateOf(IASTNode d) {
        return d.getParent() instanceof ICPPASTTemplateDeclaration t ? t : null;
    }

    private static String namespaceOf(IASTNode n) {
        StringBuilder b = new StringBuilder();
        for (IASTNode p = n.getParent(); p != null; p = p.getParent()) {
            if (p instanceof ICPPASTNamespaceDefinition ns && !ns.getName().toString().isEmpty()) {
                b.insert(0, b.length() == 0 ? ns.getName().toString() : ns.getName() + "::");
            }
        }
        return b.toString();
    }

    // ------------------------------------------------------------------------------------------
    // Statements

    private Stmt.Block block(IASTCompoundStatement cs) {
        List<Stmt> l = new ArrayList<>();
        for (IASTStatement s : cs.getStatements()) {
            l.add(stmt(s, range(cs)));
        }
        return new Stmt.Block(rangeOr(cs, null), l);
    }

    private Stmt stmt(IASTStatement s, SourceRange fallback) {
        if (s == null) {
            return new Stmt.Other(fallback == null ? new SourceRange(0, 0) : new SourceRange(fallback.end(), 0),
                List.of());
        }
        SourceRange r = rangeOr(s, fallback);
        if (s instanceof IASTCompoundStatement cs) {
            return block(cs);
        }
        if (s instanceof IASTExpressionStatement es) {
            return es.getExpression() == null ? new Stmt.Other(r, List.of())
                : new Stmt.ExprStmt(r, expr(es.getExpression(), r));
        }
        if (s instanceof IASTDeclarationStatement ds) {
            Stmt.Decl d = decl(ds.getDeclaration(), r);
            if (d != null) {
                return d;
            }
            return new Stmt.Other(r, exprChildren(ds, r),
                ds.getDeclaration() instanceof IASTASMDeclaration asm ? asm.getAssembly() : null);
        }
        if (s instanceof IASTIfStatement is) {
            ICPPASTIfStatement cis = is instanceof ICPPASTIfStatement c ? c : null;
            Header h = header(cis == null ? null : initStatement(cis.getInitializerStatement(), r),
                is.getConditionExpression(), cis == null ? null : cis.getConditionDeclaration(), r,
                new Expr.Other(r, List.of()));
            return new Stmt.If(r, h.cond(), stmt(is.getThenClause(), r),
                is.getElseClause() == null ? null : stmt(is.getElseClause(), r), h.init());
        }
        if (s instanceof ICPPASTRangeBasedForStatement rf) {
            SourceRange dr = rangeOr(rf.getDeclaration(), r);
            Stmt.Decl d = decl(rf.getDeclaration(), dr);
            return new Stmt.Loop(r, Stmt.LoopKind.RANGE_FOR, d != null ? d : new Stmt.Other(dr, List.of()),
                clause(rf.getInitializerClause(), r), null, stmt(rf.getBody(), r));
        }
        if (s instanceof IASTForStatement fs) {
            // for (init; T x = e; step): x is declared anew in every round; its declaration counts as
            // part of the init, so that analyses see how x is defined (also while (T x = e))
            IASTStatement init = fs.getInitializerStatement();
            Header h = header(init == null || init instanceof IASTNullStatement ? null : stmt(init, r),
                fs.getConditionExpression(), fs instanceof ICPPASTForStatement cfs ? cfs.getConditionDeclaration() : null,
                r, null);
            Expr step = fs.getIterationExpression() == null ? null : expr(fs.getIterationExpression(), r);
            return new Stmt.Loop(r, Stmt.LoopKind.FOR, h.init(), h.cond(), step, stmt(fs.getBody(), r));
        }
        if (s instanceof IASTWhileStatement ws) {
            Header h = header(null, ws.getCondition(),
                ws instanceof ICPPASTWhileStatement cws ? cws.getConditionDeclaration() : null, r,
                new Expr.Other(r, List.of()));
            return new Stmt.Loop(r, Stmt.LoopKind.WHILE, h.init(), h.cond(), null, stmt(ws.getBody(), r));
        }
        if (s instanceof IASTDoStatement dw) {
            Expr cond = dw.getCondition() != null ? expr(dw.getCondition(), r) : new Expr.Other(r, List.of());
            return new Stmt.Loop(r, Stmt.LoopKind.DO, null, cond, null, stmt(dw.getBody(), r));
        }
        if (s instanceof IASTSwitchStatement sw) {
            ICPPASTSwitchStatement csw = sw instanceof ICPPASTSwitchStatement c ? c : null;
            Header h = header(csw == null ? null : initStatement(csw.getInitializerStatement(), r),
                sw.getControllerExpression(), csw == null ? null : csw.getControllerDeclaration(), r,
                new Expr.Other(r, List.of()));
            return new Stmt.Switch(r, h.cond(), stmt(sw.getBody(), r), h.init());
        }
        if (s instanceof IASTReturnStatement rs) {
            return new Stmt.Jump(r, Stmt.JumpKind.RETURN,
                rs.getReturnArgument() == null ? null : clause(rs.getReturnArgument(), r));
        }
        if (s instanceof IASTBreakStatement) {
            return new Stmt.Jump(r, Stmt.JumpKind.BREAK, null);
        }
        if (s instanceof IASTContinueStatement) {
            return new Stmt.Jump(r, Stmt.JumpKind.CONTINUE, null);
        }
        if (s instanceof IASTGotoStatement) {
            return new Stmt.Jump(r, Stmt.JumpKind.GOTO, null);
        }
        if (s instanceof IASTCaseStatement || s instanceof IASTDefaultStatement) {
            return new Stmt.Label(r, null);
        }
        if (s instanceof IASTLabelStatement ls) {
            return new Stmt.Label(r, ls.getNestedStatement() == null ? null : stmt(ls.getNestedStatement(), r));
        }
        return new Stmt.Other(r, exprChildren(s, r));
    }

    /** What klap models of a statement's header: what runs before the condition (may be null), and the condition. */
    private record Header(Stmt init, Expr cond) {
    }

    /**
     * @return the header of an if, switch, while or for: {@code init} (an init-statement, may be
     *         null) and the condition, from expression {@code e}, else from condition declaration
     *         {@code d} (its declaration joins the init, the condition is the variable's name), else
     *         {@code none}
     */
    private Header header(Stmt init, IASTExpression e, IASTDeclaration d, SourceRange r, Expr none) {
        if (e != null) {
            return new Header(init, expr(e, r));
        }
        if (d == null) {
            return new Header(init, none);
        }
        Stmt.Decl decl = conditionDeclaration(d, r);
        return new Header(both(init, decl), decl != null ? conditionName(decl) : conditionDecl(d, r));
    }

    /** @return the C++17 init-statement of an {@code if} or {@code switch} ({@code if (init; cond)}), or null */
    private Stmt initStatement(IASTStatement init, SourceRange r) {
        return init == null || init instanceof IASTNullStatement ? null : stmt(init, r);
    }

    /**
     * @return a condition declaration ({@code T x = e} in {@code if (T x = e)}, {@code while},
     *         {@code for}, {@code switch}) as a declaration statement of its one variable, or null if it
     *         is not one (then the caller keeps it as an opaque expression)
     */
    private Stmt.Decl conditionDeclaration(IASTDeclaration d, SourceRange fallback) {
        Stmt.Decl decl = decl(d, rangeOr(d, fallback));
        return decl != null && decl.vars().size() == 1 ? decl : null;
    }

    /** @return the condition that a condition declaration's variable stands for: its name */
    private static Expr conditionName(Stmt.Decl d) {
        VarDecl v = d.vars().get(0);
        return new Expr.Name(v.nameRange(), v.name(), Expr.NameKind.LOCAL);
    }

    /**
     * @return what runs before a condition: {@code first} (an init-statement, may be null) and then
     *         {@code second} (a condition declaration, may be null), in a {@link Stmt.Block} whose
     *         range spans both when there are two
     */
    private static Stmt both(Stmt first, Stmt second) {
        if (first == null || second == null) {
            return first != null ? first : second;
        }
        return new Stmt.Block(new SourceRange(first.range().offset(), second.range().end() - first.range().offset()),
            List.of(first, second));
    }

    /** A condition declaration ({@code if (T x = e)}) as an expression: an Other holding the initializers. */
    private Expr conditionDecl(IASTDeclaration d, SourceRange fallback) {
        SourceRange r = rangeOr(d, fallback);
        return new Expr.Other(r, exprChildren(d, r));
    }

    /** @return a declaration statement for a simple declaration of variables, or null */
    private Stmt.Decl decl(IASTDeclaration d, SourceRange r) {
        if (!(d instanceof IASTSimpleDeclaration sd)) {
            return null;
        }
        IASTDeclSpecifier spec = sd.getDeclSpecifier();
        if (spec.getStorageClass() == IASTDeclSpecifier.sc_typedef) {
            return null;
        }
        List<VarDecl> vars = new ArrayList<>();
        if (sd instanceof ICPPASTStructuredBindingDeclaration sb) {
            // auto& [lo, hi] = r: each name is a variable initialized from r; with & or && an alias of
            // r's members, so a write through it writes r (review 2026-11-27: r was taken as unchanged)
            Expr init = initializer(sb.getInitializer(), r);
            for (IASTName n : sb.getNames()) {
                vars.add(new VarDecl(n.toString(), rangeOr(n, r), init, false,
                    spec.getStorageClass() == IASTDeclSpecifier.sc_static, false, sb.getRefQualifier() != null));
            }
            return vars.isEmpty() ? null : new Stmt.Decl(r, vars);
        }
        for (IASTDeclarator dd : sd.getDeclarators()) {
            if (dd instanceof IASTFunctionDeclarator && dd.getNestedDeclarator() == null) {
                continue; // local function prototype
            }
            IASTDeclarator in = innermost(dd);
            IASTName n = in.getName();
            SourceRange nr = rangeOr(n, r);
            Set<String> attrs = attributes(sd, spec, dd);
            boolean array = dd instanceof IASTArrayDeclarator || in instanceof IASTArrayDeclarator;
            boolean ref = false;
            for (IASTPointerOperator po : dd.getPointerOperators()) {
                ref |= po instanceof ICPPASTReferenceOperator;
            }
            boolean shared = attrs.contains("shared");
            vars.add(new VarDecl(n.toString(), nr, initializer(dd.getInitializer(), r), shared,
                spec.getStorageClass() == IASTDeclSpecifier.sc_static, array, ref,
                shared ? sharedBytes(n, spec.getStorageClass() == IASTDeclSpecifier.sc_extern) : 0,
                !ref && !array && runsUserConstructor(n)));
        }
        return vars.isEmpty() ? null : new Stmt.Decl(r, vars);
    }

    /**
     * @return true if the variable {@code n} is of a class type (typedefs and cv removed) that has a
     *         user-provided constructor, or a data member with a default member initializer: making
     *         it runs code of the unit (review 2026-11-27: a constructor that read threadIdx left the
     *         object uniform)
     */
    private boolean runsUserConstructor(IASTName n) {
        try {
            if (!(n.resolveBinding() instanceof IVariable v)) {
                return false;
            }
            IType t = v.getType();
            for (int i = 0; i < 16 && (t instanceof ITypedef || t instanceof IQualifierType); i++) {
                t = t instanceof ITypedef td ? td.getType() : ((IQualifierType) t).getType();
            }
            if (!(t instanceof ICPPClassType c)) {
                return false;
            }
            // once per class: the searches below visit the whole translation unit
            return classRunsCode.computeIfAbsent(c, k -> constructionRunsCode(c, n.getTranslationUnit()));
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** {@link #constructionRunsCode} of each class type met in a declaration, by binding */
    private final Map<ICPPClassType, Boolean> classRunsCode = new java.util.IdentityHashMap<>();

    /**
     * @return true if making an object of class {@code c} runs code of the unit: a user-provided
     *         constructor, or a data member with a default member initializer (not for the classes of
     *         klap's CUDA prelude)
     */
    private static boolean constructionRunsCode(ICPPClassType c, IASTTranslationUnit unit) {
        try {
            for (IASTName d : unit.getDefinitionsInAST(c)) {
                IASTFileLocation l = d.getFileLocation();
                if (l != null && CudaPrelude.PATH.equals(l.getFileName())) {
                    return false; // dim3 and the vector types: their constructors read no index
                }
            }
            for (ICPPConstructor k : c.getConstructors()) {
                if (!k.isImplicit()) {
                    return true;
                }
            }
            for (ICPPField f : c.getDeclaredFields()) {
                for (IASTName d : unit.getDeclarationsInAST(f)) {
                    if (d.getParent() instanceof IASTDeclarator dd && dd.getInitializer() != null) {
                        return true;
                    }
                }
            }
            return false;
        } catch (RuntimeException e) {
            return false;
        }
    }

    /**
     * @return the static shared memory that the {@code __shared__} variable {@code n} occupies, in
     *         bytes ({@code sizeof} of its type, by CDT's size calculator with the LP64 sizes that
     *         nvcc uses on Linux); 0 for {@code extern} (dynamic shared memory); -1 if the type or an
     *         array extent is not known (template-dependent, unresolved)
     */
    private org.eclipse.cdt.internal.core.dom.parser.SizeofCalculator sizeof;

    private long sharedBytes(IASTName n, boolean isExtern) {
        if (isExtern) {
            return 0;
        }
        try {
            if (!(n.resolveBinding() instanceof IVariable v)) {
                return -1;
            }
            IType t = v.getType();
            if (t instanceof IArrayType at && !at.hasSize()) {
                return 0; // extern-like unsized array: dynamic shared memory
            }
            if (sizeof == null) {
                sizeof = new org.eclipse.cdt.internal.core.dom.parser.SizeofCalculator(tu);
            }
            var sa = sizeof.sizeAndAlignment(t);
            return sa == null ? -1 : sa.size;
        } catch (RuntimeException e) {
            return -1; // CDT could not evaluate the type: unknown, never a guess
        }
    }

    private Expr initializer(IASTInitializer init, SourceRange fallback) {
        if (init == null) {
            return null;
        }
        SourceRange r = rangeOr(init, fallback);
        if (init instanceof IASTEqualsInitializer eq) {
            return clause(eq.getInitializerClause(), r);
        }
        if (init instanceof ICPPASTConstructorInitializer ci) {
            IASTInitializerClause[] args = ci.getArguments();
            if (args.length == 1) {
                return clause(args[0], r);
            }
            List<Expr> l = new ArrayList<>();
            for (IASTInitializerClause a : args) {
                l.add(clause(a, r));
            }
            return new Expr.Other(r, l);
        }
        if (init instanceof ICPPASTInitializerList il) {
            return clause(il, r);
        }
        return new Expr.Other(r, exprChildren(init, r));
    }

    // ------------------------------------------------------------------------------------------
    // Expressions

    private Expr clause(IASTInitializerClause c, SourceRange fallback) {
        if (c == null) {
            return new Expr.Other(fallback == null ? new SourceRange(0, 0) : fallback, List.of());
        }
        if (c instanceof IASTExpression e) {
            return expr(e, fallback);
        }
        SourceRange r = rangeOr(c, fallback);
        if (c instanceof ICPPASTInitializerList il) {
            List<Expr> l = new ArrayList<>();
            for (IASTInitializerClause x : il.getClauses()) {
                l.add(clause(x, r));
            }
            return new Expr.Other(r, l);
        }
        return new Expr.Other(r, exprChildren(c, r));
    }

    private Expr expr(IASTExpression e, SourceRange fallback) {
        if (e == null) {
            return new Expr.Other(fallback == null ? new SourceRange(0, 0) : fallback, List.of());
        }
        SourceRange r = rangeOr(e, fallback);
        LaunchSite ls = launchByCall.get(e);
        if (ls == null) {
            ls = launchByRange.get(key(r.offset(), r.end()));
        }
        if (ls != null) {
            return launch(ls);
        }
        if (e instanceof ICPPASTLambdaExpression le) {
            return lambda(le, r);
        }
        if (e instanceof IASTIdExpression id) {
            return name(id.getName(), r);
        }
        if (e instanceof IASTLiteralExpression) {
            return new Expr.Literal(r);
        }
        if (e instanceof IASTFieldReference fr) {
            return new Expr.Member(r, expr(fr.getFieldOwner(), r), fr.getFieldName().toString(),
                fr.isPointerDereference(), fieldType(fr) instanceof IPointerType, fieldType(fr) instanceof IArrayType);
        }
        if (e instanceof IASTArraySubscriptExpression as) {
            return new Expr.Subscript(r, expr(as.getArrayExpression(), r), clause(as.getArgument(), r));
        }
        if (e instanceof IASTUnaryExpression u) {
            String op = switch (u.getOperator()) {
                case IASTUnaryExpression.op_star -> "*";
                case IASTUnaryExpression.op_amper -> "&";
                case IASTUnaryExpression.op_minus -> "-";
                case IASTUnaryExpression.op_plus -> "+";
                case IASTUnaryExpression.op_not -> "!";
                case IASTUnaryExpression.op_tilde -> "~";
                case IASTUnaryExpression.op_prefixIncr -> "++pre";
                case IASTUnaryExpression.op_prefixDecr -> "--pre";
                case IASTUnaryExpression.op_postFixIncr -> "post++";
                case IASTUnaryExpression.op_postFixDecr -> "post--";
                case IASTUnaryExpression.op_sizeof -> "sizeof";
                case IASTUnaryExpression.op_alignOf -> "alignof";
                case IASTUnaryExpression.op_bracketedPrimary -> "()";
                default -> null;
            };
            if ("()".equals(op)) {
                return expr(u.getOperand(), r); // parentheses are transparent
            }
            if (op == null) {
                return new Expr.Other(r, u.getOperand() == null ? List.of() : List.of(expr(u.getOperand(), r)));
            }
            return new Expr.Unary(r, op, u.getOperand() == null ? null : expr(u.getOperand(), r));
        }
        if (e instanceof IASTBinaryExpression b) {
            Expr.Call call = unresolvedTemplateCall(b, r);
            if (call != null) {
                return call;
            }
            String op = binaryOp(b.getOperator());
            Expr lhs = expr(b.getOperand1(), r);
            Expr rhs = b.getOperand2() != null ? expr(b.getOperand2(), r) : clause(b.getInitOperand2(), r);
            if (op == null) {
                return new Expr.Other(r, List.of(lhs, rhs));
            }
            return new Expr.Binary(r, op, lhs, rhs);
        }
        if (e instanceof IASTConditionalExpression c) {
            Expr cond = expr(c.getLogicalConditionExpression(), r);
            Expr pos = c.getPositiveResultExpression() == null ? cond : expr(c.getPositiveResultExpression(), r);
            return new Expr.Conditional(r, cond, pos, expr(c.getNegativeResultExpression(), r));
        }
        if (e instanceof IASTCastExpression c) {
            SourceRange tr = rangeOr(c.getTypeId(), r);
            return new Expr.Cast(r, text.substring(tr.offset(), tr.end()).trim(), expr(c.getOperand(), r));
        }
        if (e instanceof IASTFunctionCallExpression fc) {
            return call(fc, r);
        }
        if (e instanceof ICPPASTSimpleTypeConstructorExpression tc) {
            SourceRange sr = rangeOr(tc.getDeclSpecifier(), r);
            Expr callee = new Expr.Name(sr, text.substring(sr.offset(), sr.end()).trim(), Expr.NameKind.TYPE);
            List<Expr> args = new ArrayList<>();
            IASTInitializer init = tc.getInitializer();
            SourceRange ir = rangeOr(init, r);
            if (init instanceof ICPPASTConstructorInitializer ci) {
                for (IASTInitializerClause a : ci.getArguments()) {
                    args.add(clause(a, ir));
                }
            } else if (init instanceof ICPPASTInitializerList il) {
                for (IASTInitializerClause a : il.getClauses()) {
                    args.add(clause(a, ir));
                }
            }
            SourceRange argsRange = ir.length() >= 2 ? new SourceRange(ir.offset() + 1, ir.length() - 2) : ir;
            return new Expr.Call(r, callee, stripTemplateArgs(callee instanceof Expr.Name n ? n.name() : ""), args,
                argsRange);
        }
        if (e instanceof IASTExpressionList el) {
            IASTExpression[] xs = el.getExpressions();
            if (xs.length == 0) {
                return new Expr.Other(r, List.of());
            }
            Expr acc = expr(xs[0], r);
            for (int i = 1; i < xs.length; i++) {
                Expr next = expr(xs[i], r);
                acc = new Expr.Binary(SourceRange.of(acc.range().offset(), next.range().end()), ",", acc, next);
            }
            return acc;
        }
        if (e instanceof IASTTypeIdExpression t) {
            if (t.getOperator() == IASTTypeIdExpression.op_sizeof) {
                return new Expr.Unary(r, "sizeof", null);
            }
            if (t.getOperator() == IASTTypeIdExpression.op_alignof) {
                return new Expr.Unary(r, "alignof", null);
            }
            return new Expr.Other(r, List.of());
        }
        return new Expr.Other(r, exprChildren(e, r));
    }

    /**
     * A call of a function template that no header klap reads declares, with explicit template
     * arguments ({@code cub::ShuffleIndex<32>(v, 0, m)}, {@code cg::wait_prior<1>(block)}): with no
     * declaration, nothing tells CDT that the name is a template, so it reads comparisons,
     * {@code (f < 32) > (v, 0, m)}. Such an expression (a {@code >} whose left operand is a {@code <} of an
     * unresolved name, and whose right operand is parenthesized) is taken for the call it is: an unknown
     * call whose arguments are the parenthesized ones (the template argument is a constant and dropped).
     * A call with more than one template argument ({@code f<1, 2>(x)}, read as a comma expression) is not
     * recognized. The same for a member function template of an object of a class klap cannot see
     * ({@code BS(t).ExclusiveScan<Op>(x, y, 0, Op())}: review 2026-11-29). Library collectives called
     * this way synchronize ({@link klap.model.LibraryCalls}).
     *
     * @return the call, or null if {@code b} is not of that form
     */
    private Expr.Call unresolvedTemplateCall(IASTBinaryExpression b, SourceRange r) {
        if (b.getOperator() != IASTBinaryExpression.op_greaterThan
                || !(b.getOperand1() instanceof IASTBinaryExpression lt) || lt.getOperator() != IASTBinaryExpression.op_lessThan
                || !(lt.getOperand1() instanceof IASTIdExpression || lt.getOperand1() instanceof IASTFieldReference)
                || !(b.getOperand2() instanceof IASTUnaryExpression paren)
                || paren.getOperator() != IASTUnaryExpression.op_bracketedPrimary || paren.getOperand() == null) {
            return null;
        }
        // a member function template of an object of a class klap cannot see: BS(t).ExclusiveScan<Op>(x, y, 0, Op())
        IASTName fname = lt.getOperand1() instanceof IASTIdExpression id ? id.getName()
            : ((IASTFieldReference) lt.getOperand1()).getFieldName();
        if (nameKind(fname) != Expr.NameKind.UNKNOWN) {
            return null;
        }
        Expr callee = lt.getOperand1() instanceof IASTIdExpression id ? name(id.getName(), rangeOr(id, r))
            : expr(lt.getOperand1(), r);
        List<Expr> args = new ArrayList<>();
        if (paren.getOperand() instanceof IASTExpressionList el) {
            for (IASTExpression x : el.getExpressions()) {
                args.add(expr(x, r));
            }
        } else {
            args.add(expr(paren.getOperand(), r));
        }
        SourceRange pr = rangeOr(paren, r);
        return new Expr.Call(r, callee, callee instanceof Expr.Name ? stripTemplateArgs(fname.toString()) : null, args,
            pr.length() >= 2 ? new SourceRange(pr.offset() + 1, pr.length() - 2) : pr);
    }

    /** A lambda: its capture mode and by-reference captures from the AST, its body as a statement tree. */
    private Expr lambda(ICPPASTLambdaExpression le, SourceRange r) {
        boolean allByRef = le.getCaptureDefault() == ICPPASTLambdaExpression.CaptureDefault.BY_REFERENCE;
        List<String> refs = new ArrayList<>();
        Map<String, Expr> refInits = new HashMap<>();
        if (le.getCaptures() != null) {
            for (ICPPASTCapture c : le.getCaptures()) {
                if (c.isByReference() && c.getIdentifier() != null) {
                    refs.add(c.getIdentifier().toString());
                    if (c instanceof ICPPASTInitCapture ic && ic.getDeclarator() != null
                            && ic.getDeclarator().getInitializer() != null) {
                        // [&b = base]: b is an alias of base
                        refInits.put(c.getIdentifier().toString(), initializer(ic.getDeclarator().getInitializer(), r));
                    }
                }
            }
        }
        Stmt body = le.getBody() == null ? null : stmt(le.getBody(), r);
        Stmt.Block b = body instanceof Stmt.Block blk ? blk : new Stmt.Block(r, body == null ? List.of() : List.of(body));
        return new Expr.Lambda(r, allByRef, List.copyOf(refs), Map.copyOf(refInits), b);
    }

    private Expr call(IASTFunctionCallExpression fc, SourceRange r) {
        IASTExpression fn = fc.getFunctionNameExpression();
        Expr callee = expr(fn, r);
        String calleeName = null;
        if (fn instanceof IASTIdExpression id) {
            calleeName = stripTemplateArgs(id.getName().toString());
        }
        List<Expr> args = new ArrayList<>();
        for (IASTInitializerClause a : fc.getArguments()) {
            args.add(clause(a, r));
        }
        return new Expr.Call(r, callee, calleeName, args, argsRange(callee.range().end(), r), paramModes(fn, args.size()));
    }

    /**
     * @return {@link Expr.Call#paramModes} for a call of {@code fn} with {@code n} arguments, or null
     *         if CDT does not resolve {@code fn} to one function with known parameter types
     */
    private static String paramModes(IASTExpression fn, int n) {
        IASTName name = fn instanceof IASTIdExpression id ? id.getName()
            : fn instanceof IASTFieldReference fr ? fr.getFieldName() : null;
        if (name == null) {
            return null;
        }
        try {
            if (!(name.resolveBinding() instanceof IFunction f) || f instanceof IProblemBinding) {
                return null;
            }
            IFunctionType ft = f.getType();
            if (ft == null) {
                return null;
            }
            IType[] params = ft.getParameterTypes();
            if (n > params.length && !f.takesVarArgs()) {
                return null;
            }
            StringBuilder b = new StringBuilder(n);
            for (int i = 0; i < n; i++) {
                b.append(i < params.length && mayWrite(params[i]) ? 'w' : 'r');
            }
            return b.toString();
        } catch (RuntimeException e) {
            return null; // CDT could not resolve the call: its parameters stay unknown, never a guess
        }
    }

    /** @return true if a parameter of type {@code t} binds a non-const reference to its argument */
    static boolean mayWrite(IType t) {
        t = unTypedef(t);
        if (t instanceof ICPPReferenceType rt) {
            if (rt.isRValueReference()) {
                return true; // T&& in a template is a forwarding reference: it may bind an lvalue
            }
            IType to = unTypedef(rt.getType());
            return !(to instanceof IQualifierType q && q.isConst());
        }
        return t instanceof IProblemType; // unknown: may write
    }

    /** @return {@code t} without typedefs (and, around a reference, without the ignored cv-qualifiers) */
    private static IType unTypedef(IType t) {
        for (int i = 0; i < 64; i++) {
            if (t instanceof ITypedef td) {
                t = td.getType();
            } else if (t instanceof IQualifierType q && unTypedefOnly(q.getType()) instanceof ICPPReferenceType) {
                t = q.getType(); // const IntRef where IntRef is int&: the parameter is int&
            } else {
                break;
            }
        }
        return t;
    }

    private static IType unTypedefOnly(IType t) {
        for (int i = 0; i < 64 && t instanceof ITypedef td; i++) {
            t = td.getType();
        }
        return t;
    }

    /** @return the range strictly inside the argument parentheses that follow {@code calleeEnd} and end at {@code r}'s end */
    private SourceRange argsRange(int calleeEnd, SourceRange r) {
        int close = r.end() - 1;
        int open = skipSpaceFwd(calleeEnd);
        if (r.length() > 0 && r.end() <= pp.length() && open < close && open < pp.length() && pp.charAt(open) == '(' && close >= 0
                && pp.charAt(close) == ')') {
            return SourceRange.of(open + 1, close);
        }
        return new SourceRange(r.end(), 0);
    }

    private Expr launch(LaunchSite s) {
        SourceRange r = SourceRange.of(s.start(), s.end());
        List<Expr> cfg = new ArrayList<>();
        IASTExpression inner = s.anchor().getOperand();
        if (inner instanceof IASTUnaryExpression u && u.getOperator() == IASTUnaryExpression.op_bracketedPrimary) {
            inner = u.getOperand();
        }
        if (inner instanceof IASTExpressionList el) {
            for (IASTExpression x : el.getExpressions()) {
                cfg.add(expr(x, r));
            }
        } else if (inner != null) {
            cfg.add(expr(inner, r));
        }
        if (cfg.size() < 2 || cfg.size() > 4) {
            diags.add(Diagnostic.at(Diagnostic.Severity.ERROR, src, s.inMacro() ? r.offset() : s.chevron().open(),
                "syntax error: a kernel launch configuration takes 2 to 4 expressions, found " + cfg.size(),
                "parse"));
            while (cfg.size() < 2) {
                cfg.add(new Expr.Other(new SourceRange(s.inMacro() ? r.offset() : s.chevron().openEnd(), 0), List.of()));
            }
        }
        List<Expr> args = new ArrayList<>();
        for (IASTInitializerClause a : s.call().getArguments()) {
            args.add(clause(a, r));
        }
        SourceRange argsRange = s.inMacro() ? new SourceRange(r.end(), 0) : argsRange(s.chevron().closeEnd(), r);
        return new Expr.Launch(r, s.kernelName(), SourceRange.of(s.nameStart(), s.nameEnd()), s.templateArgs(),
            cfg.get(0), cfg.get(1), cfg.size() > 2 ? cfg.get(2) : null, cfg.size() > 3 ? cfg.get(3) : null, args,
            argsRange, s.inMacro());
    }

    private Expr.Name name(IASTName n, SourceRange r) {
        return new Expr.Name(r, n.toString(), nameKind(n));
    }

    /** Resolves what a name refers to through its CDT binding. */
    static Expr.NameKind nameKind(IASTName n) {
        IBinding b;
        try {
            b = n.resolveBinding();
        } catch (RuntimeException e) {
            return Expr.NameKind.UNKNOWN;
        }
        if (b == null) {
            return Expr.NameKind.UNKNOWN;
        }
        if (b instanceof IProblemBinding pb) {
            try {
                for (IBinding c : pb.getCandidateBindings()) {
                    if (c instanceof IFunction) {
                        return Expr.NameKind.FUNCTION;
                    }
                }
            } catch (RuntimeException e) {
                // unresolved
            }
            return Expr.NameKind.UNKNOWN;
        }
        try {
            if (b instanceof IEnumerator || b instanceof ICPPTemplateNonTypeParameter) {
                return Expr.NameKind.CONSTANT;
            }
            if (b instanceof IParameter) {
                return Expr.NameKind.PARAM;
            }
            if (b instanceof IVariable v) {
                boolean local = isLocal(v);
                if (!local && CudaPrelude.BUILTINS.contains(v.getName())) {
                    return Expr.NameKind.BUILTIN;
                }
                // a non-static data member is per object, never a compile-time constant (review 2026-11-27:
                // a const int id member of a per-thread object was scalarized)
                boolean field = v instanceof ICPPField f && !f.isStatic();
                if (!field && isConstArithmetic(v) && (!local || hasConstantValue(v))) {
                    return Expr.NameKind.CONSTANT;
                }
                return local ? Expr.NameKind.LOCAL : Expr.NameKind.GLOBAL;
            }
            if (b instanceof IFunction) {
                return Expr.NameKind.FUNCTION;
            }
            if (b instanceof IType) {
                return Expr.NameKind.TYPE;
            }
        } catch (RuntimeException e) {
            return Expr.NameKind.UNKNOWN;
        }
        return Expr.NameKind.UNKNOWN;
    }

    private static boolean isLocal(IVariable v) {
        if (v instanceof ICPPField) {
            return false;
        }
        try {
            IScope s = v.getScope();
            if (s != null) {
                return s.getKind() == EScopeKind.eLocal;
            }
        } catch (DOMException e) {
            // fall through
        }
        return v.getOwner() instanceof IFunction;
    }

    private static boolean isConstArithmetic(IVariable v) {
        IType t = v.getType();
        boolean isConst = v instanceof ICPPVariable cv && cv.isConstexpr();
        for (int guard = 0; guard < 16 && t != null; guard++) {
            if (t instanceof ITypedef td) {
                t = td.getType();
            } else if (t instanceof IQualifierType q) {
                isConst |= q.isConst();
                t = q.getType();
            } else {
                break;
            }
        }
        boolean arithmetic = t instanceof IBasicType bt && bt.getKind() != IBasicType.Kind.eVoid
            || t instanceof IEnumeration;
        return isConst && arithmetic;
    }

    private static boolean hasConstantValue(IVariable v) {
        if (v instanceof ICPPVariable cv && cv.isConstexpr()) {
            return true;
        }
        IValue val = v.getInitialValue();
        return val != null && val.numberValue() != null;
    }

    private static String binaryOp(int op) {
        return switch (op) {
            case IASTBinaryExpression.op_multiply -> "*";
            case IASTBinaryExpression.op_divide -> "/";
            case IASTBinaryExpression.op_modulo -> "%";
            case IASTBinaryExpression.op_plus -> "+";
            case IASTBinaryExpression.op_minus -> "-";
            case IASTBinaryExpression.op_shiftLeft -> "<<";
            case IASTBinaryExpression.op_shiftRight -> ">>";
            case IASTBinaryExpression.op_lessThan -> "<";
            case IASTBinaryExpression.op_greaterThan -> ">";
            case IASTBinaryExpression.op_lessEqual -> "<=";
            case IASTBinaryExpression.op_greaterEqual -> ">=";
            case IASTBinaryExpression.op_binaryAnd -> "&";
            case IASTBinaryExpression.op_binaryXor -> "^";
            case IASTBinaryExpression.op_binaryOr -> "|";
            case IASTBinaryExpression.op_logicalAnd -> "&&";
            case IASTBinaryExpression.op_logicalOr -> "||";
            case IASTBinaryExpression.op_assign -> "=";
            case IASTBinaryExpression.op_multiplyAssign -> "*=";
            case IASTBinaryExpression.op_divideAssign -> "/=";
            case IASTBinaryExpression.op_moduloAssign -> "%=";
            case IASTBinaryExpression.op_plusAssign -> "+=";
            case IASTBinaryExpression.op_minusAssign -> "-=";
            case IASTBinaryExpression.op_shiftLeftAssign -> "<<=";
            case IASTBinaryExpression.op_shiftRightAssign -> ">>=";
            case IASTBinaryExpression.op_binaryAndAssign -> "&=";
            case IASTBinaryExpression.op_binaryXorAssign -> "^=";
            case IASTBinaryExpression.op_binaryOrAssign -> "|=";
            case IASTBinaryExpression.op_equals -> "==";
            case IASTBinaryExpression.op_notequals -> "!=";
            default -> null;
        };
    }

    /**
     * The sub-expressions of a node the model does not describe: its expression and initializer
     * children, looking through declarators, type ids and initializers but not into statements
     * (lambda bodies).
     */
    private List<Expr> exprChildren(IASTNode n, SourceRange r) {
        List<Expr> out = new ArrayList<>();
        collectExprChildren(n, r, out);
        return out;
    }

    private void collectExprChildren(IASTNode n, SourceRange r, List<Expr> out) {
        for (IASTNode c : n.getChildren()) {
            if (c instanceof IASTExpression e) {
                out.add(expr(e, r));
            } else if (c instanceof ICPPASTInitializerList il) {
                out.add(clause(il, r));
            } else if (c instanceof IASTStatement || c instanceof IASTName || c instanceof IASTProblem) {
                continue;
            } else {
                collectExprChildren(c, r, out);
            }
        }
    }

    // ------------------------------------------------------------------------------------------
    // Locations

    /** @return the range of {@code n} in the main file, or null if it has none there */
    private SourceRange range(IASTNode n) {
        if (n == null) {
            return null;
        }
        IASTFileLocation l = n.getFileLocation();
        if (l == null || !mainPath.equals(l.getFileName())) {
            return null;
        }
        int off = l.getNodeOffset();
        int end = Math.min(text.length(), off + l.getNodeLength());
        if (off < 0 || off > end) {
            return null;
        }
        return SourceRange.of(off, end);
    }

    private SourceRange rangeOr(IASTNode n, SourceRange fallback) {
        SourceRange r = range(n);
        if (r != null) {
            return r;
        }
        return fallback != null ? fallback : new SourceRange(0, 0);
    }
}
