package klap.bridge;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.eclipse.cdt.core.dom.ast.ASTVisitor;
import org.eclipse.cdt.core.dom.ast.IASTFileLocation;
import org.eclipse.cdt.core.dom.ast.IASTFunctionDefinition;
import org.eclipse.cdt.core.dom.ast.IASTImplicitName;
import org.eclipse.cdt.core.dom.ast.IASTName;
import org.eclipse.cdt.core.dom.ast.IASTNode;
import org.eclipse.cdt.core.dom.ast.IASTTranslationUnit;
import org.eclipse.cdt.core.dom.ast.IArrayType;
import org.eclipse.cdt.core.dom.ast.IASTCompoundStatement;
import org.eclipse.cdt.core.dom.ast.IASTDeclarator;
import org.eclipse.cdt.core.dom.ast.IASTExpression;
import org.eclipse.cdt.core.dom.ast.IBinding;
import org.eclipse.cdt.core.dom.ast.IQualifierType;
import org.eclipse.cdt.core.dom.ast.IType;
import org.eclipse.cdt.core.dom.ast.ITypedef;
import org.eclipse.cdt.core.dom.ast.cpp.ICPPBase;
import org.eclipse.cdt.core.dom.ast.cpp.ICPPClassType;
import org.eclipse.cdt.core.dom.ast.cpp.ICPPConstructor;
import org.eclipse.cdt.core.dom.ast.cpp.ICPPASTConversionName;
import org.eclipse.cdt.core.dom.ast.cpp.ICPPASTSimpleTypeConstructorExpression;
import org.eclipse.cdt.core.dom.ast.cpp.ICPPField;
import org.eclipse.cdt.core.dom.ast.cpp.ICPPVariable;
import org.eclipse.cdt.core.dom.ast.cpp.ICPPFunction;
import org.eclipse.cdt.core.dom.ast.cpp.ICPPMethod;
import org.eclipse.cdt.core.dom.ast.cpp.ICPPSpecialization;
import klap.model.ImplicitCall;

/**
 * The calls of the program's functions that the main file makes without writing a call
 * ({@link ImplicitCall}), from CDT's implicit names: an overloaded operator or a functor's
 * {@code operator()} in an expression, the constructor of a declared object or temporary, and the
 * destructor at the end of an object's scope (review 2026-11-29: a child that called a functor, an
 * {@code operator+} or a constructor that reads {@code threadIdx} was aggregated and read the
 * aggregated grid's indices; a parent whose {@code operator+=} holds a {@code __syncthreads()} had
 * its guarded return rewritten).
 *
 * <p>Input: the parsed unit. Output: one {@link ImplicitCall} per implicit name in the main file
 * that resolves to a function the program declares (not one of klap's CUDA prelude, not one the
 * compiler generates), an operator's with how it takes its operands, and, where the unit declares a
 * conversion function, one per conversion C++ may apply to a main-file expression ({@link
 * #conversions}), by offset; its origin is the main file where the main file defines it, a
 * header where only a header does (with the facts of the definitions called, {@link
 * HeaderFunctions#factsOf}), {@link ImplicitCall.Origin#UNSEEN} where nothing in the unit defines it
 * or the header's body does what klap cannot follow.
 */
final class ImplicitCalls {

    private final IASTTranslationUnit tu;
    private final String mainPath;
    private final HeaderFunctions headers;
    private final List<ImplicitCall> out = new ArrayList<>();
    /** where each function's body is and what it does, by binding: its call at offset 0 (each looked up once) */
    private final java.util.Map<ICPPFunction, java.util.Optional<ImplicitCall>> functions = new java.util.HashMap<>();
    /** whether each class is one of klap's prelude (each looked up once) */
    private final java.util.Map<ICPPClassType, Boolean> prelude = new java.util.HashMap<>();

    private ImplicitCalls(IASTTranslationUnit tu, String mainPath, HeaderFunctions headers) {
        this.tu = tu;
        this.mainPath = mainPath;
        this.headers = headers;
    }

    static List<ImplicitCall> of(IASTTranslationUnit tu, String mainPath, HeaderFunctions headers) {
        return new ImplicitCalls(tu, mainPath, headers).collect();
    }

    private List<ImplicitCall> collect() {
        tu.accept(new ASTVisitor() {
            {
                shouldVisitNames = true;
                shouldVisitImplicitNames = true;
                shouldVisitImplicitDestructorNames = true;
                shouldVisitDeclarators = true;
                shouldVisitExpressions = true;
            }

            /**
             * An object of class type declared in the main file: CDT names no destructor where the class's is
             * the compiler's (struct G { H h; } destroys its H), and no constructor for an aggregate
             * initialization, so what constructing and destroying it runs is added here (at the declarator,
             * and at the closing brace of its block), whatever CDT names.
             */
            @Override
            public int visit(IASTDeclarator d) {
                IASTFileLocation l = d.getFileLocation();
                if (l == null || !mainPath.equals(l.getFileName()) || d.getName() == null) {
                    return PROCESS_CONTINUE;
                }
                IBinding b;
                try {
                    b = d.getName().resolveBinding();
                } catch (RuntimeException e) {
                    return PROCESS_CONTINUE;
                }
                if (!(b instanceof ICPPVariable v) || b instanceof ICPPField || !(classOf(v.getType()) instanceof ICPPClassType c)) {
                    return PROCESS_CONTINUE;
                }
                IASTNode block = d.getParent();
                while (block != null && !(block instanceof IASTCompoundStatement)) {
                    block = block.getParent() instanceof IASTFunctionDefinition fd ? fd.getBody() : block.getParent();
                }
                IASTFileLocation bl = block == null ? null : block.getFileLocation();
                if (bl == null || !mainPath.equals(bl.getFileName())) {
                    return PROCESS_CONTINUE; // not a local of a function body
                }
                object(c, l.getNodeOffset(), bl.getNodeOffset() + bl.getNodeLength() - 1);
                return PROCESS_CONTINUE;
            }

            /** A temporary of class type ({@code H{p}}, {@code H(p)}): constructed and destroyed in its full expression. */
            @Override
            public int visit(IASTExpression e) {
                if (!(e instanceof ICPPASTSimpleTypeConstructorExpression)) {
                    return PROCESS_CONTINUE;
                }
                IASTFileLocation l = e.getFileLocation();
                if (l == null || !mainPath.equals(l.getFileName())) {
                    return PROCESS_CONTINUE;
                }
                IType t;
                try {
                    t = e.getExpressionType();
                } catch (RuntimeException ex) {
                    return PROCESS_CONTINUE;
                }
                if (classOf(t) instanceof ICPPClassType c) {
                    object(c, l.getNodeOffset(), l.getNodeOffset());
                }
                return PROCESS_CONTINUE;
            }

            @Override
            public int visit(IASTName n) {
                if (!(n instanceof IASTImplicitName)) {
                    return PROCESS_CONTINUE;
                }
                IASTFileLocation l = n.getFileLocation();
                if (l == null || !mainPath.equals(l.getFileName())) {
                    return PROCESS_CONTINUE;
                }
                calls(n, l.getNodeOffset());
                return PROCESS_CONTINUE;
            }
        });
        List<ICPPMethod> all = conversionFunctionsOfTheUnit();
        if (!all.isEmpty()) {
            conversions(all);
        }
        // a call both CDT names and the declarator or temporary adds is one call
        List<ImplicitCall> unique = new ArrayList<>(new java.util.LinkedHashSet<>(out));
        unique.sort(Comparator.comparingInt(ImplicitCall::offset));
        return List.copyOf(unique);
    }

    /** @return the conversion functions ({@code operator int()}) the translation unit declares anywhere */
    private List<ICPPMethod> conversionFunctionsOfTheUnit() {
        java.util.Set<ICPPMethod> found = new java.util.LinkedHashSet<>();
        tu.accept(new ASTVisitor() {
            {
                shouldVisitDeclarators = true;
            }

            @Override
            public int visit(IASTDeclarator d) {
                IASTName n = d.getName();
                if (n != null && n.getLastName() instanceof ICPPASTConversionName) {
                    try {
                        if (n.resolveBinding() instanceof ICPPMethod m && !m.isImplicit()) {
                            found.add(m);
                        }
                    } catch (RuntimeException e) {
                        // an unresolved declaration: no function to call
                    }
                }
                return PROCESS_CONTINUE;
            }
        });
        return List.copyOf(found);
    }

    /**
     * Adds the conversion functions C++ applies without a call (review 2026-11-29: {@code int v = l;}
     * with {@code Lane::operator int()} reading {@code threadIdx} was taken as uniform): one call of each
     * conversion function the program wrote for the class of a main-file expression ([class.conv.fct]),
     * and of every conversion function of the unit for an expression whose type a template's arguments
     * decide ({@code int v = l;} with {@code T l}). Each is at the expression's offset (inside its
     * parentheses: the model reads {@code (l)} as {@code l}), with its object's mode ({@code 'w'} unless
     * the function is const), for every such expression whose value may be converted. An
     * over-approximation: only where C++ surely uses the object as it is is there no call (a member
     * access's object, {@code &x}, {@code sizeof}, a discarded expression statement, the left operand
     * of an assignment, a functor call's object, and an initializer, argument or return value whose
     * target is the same class or a reference to it).
     *
     * @param all the conversion functions the unit declares (not empty)
     */
    private void conversions(List<ICPPMethod> all) {
        java.util.Map<ICPPClassType, List<ICPPMethod>> byClass = new java.util.HashMap<>();
        tu.accept(new ASTVisitor() {
            {
                shouldVisitExpressions = true;
            }

            @Override
            public int visit(IASTExpression e) {
                IASTFileLocation l = e.getFileLocation();
                if (l == null || !mainPath.equals(l.getFileName()) || !mayConvert(e)) {
                    return PROCESS_CONTINUE;
                }
                List<ICPPMethod> candidates;
                try {
                    IType t = e.getExpressionType();
                    if (org.eclipse.cdt.internal.core.dom.parser.cpp.semantics.CPPTemplates.isDependentType(t)) {
                        // in a template, of a type its arguments decide: any conversion of the unit may apply
                        candidates = all;
                    } else if (classOf(t) instanceof ICPPClassType x && !usedAsIs(e, x)) {
                        candidates = byClass.computeIfAbsent(x, k -> conversionFunctions(k, new java.util.HashSet<>()));
                    } else {
                        return PROCESS_CONTINUE;
                    }
                } catch (RuntimeException ex) {
                    return PROCESS_CONTINUE;
                }
                // the model reads (x) as x: the call is at the innermost expression
                IASTExpression inner = e;
                while (inner instanceof org.eclipse.cdt.core.dom.ast.IASTUnaryExpression u
                        && u.getOperator() == org.eclipse.cdt.core.dom.ast.IASTUnaryExpression.op_bracketedPrimary
                        && u.getOperand() != null && u.getOperand().getFileLocation() != null) {
                    inner = u.getOperand();
                }
                int at = inner.getFileLocation().getNodeOffset();
                for (ICPPMethod m : candidates) {
                    // a member of a class template's instance: where its body is, is the template's
                    ImplicitCall call = call(m instanceof ICPPSpecialization sp && sp.getSpecializedBinding() instanceof ICPPMethod t
                            ? t : m, at);
                    if (call != null) {
                        boolean constant;
                        try {
                            constant = m.getType() != null && m.getType().isConst();
                        } catch (RuntimeException ex) {
                            constant = false;
                        }
                        out.add(call.withOperandModes(constant ? "r" : "w"));
                    }
                }
                return PROCESS_CONTINUE;
            }
        });
    }

    /** @return the conversion functions the program wrote for class {@code c} and its bases */
    private List<ICPPMethod> conversionFunctions(ICPPClassType c, java.util.Set<ICPPClassType> seen) {
        List<ICPPMethod> found = new ArrayList<>();
        if (c == null || !seen.add(c) || inPrelude(c)) {
            return found;
        }
        try {
            for (ICPPMethod m : c.getDeclaredMethods()) {
                if (!m.isImplicit() && klap.model.FunctionDef.isConversionName(m.getName())) {
                    found.add(m);
                }
            }
            for (ICPPBase b : c.getBases()) {
                if (b.getBaseClass() instanceof ICPPClassType bc) {
                    found.addAll(conversionFunctions(bc, seen));
                }
            }
        } catch (RuntimeException e) {
            return found;
        }
        return found;
    }

    /**
     * @return false where the context of {@code e} takes its object as it is whatever its type: a
     *         member access's object, the operand of {@code &}, {@code sizeof}, {@code alignof} or
     *         parentheses (the parenthesized expression is judged), a discarded expression statement,
     *         the left operand of an assignment, a functor call's object
     */
    private static boolean mayConvert(IASTExpression e) {
        IASTNode p = e.getParent();
        if (p instanceof org.eclipse.cdt.core.dom.ast.IASTFieldReference fr) {
            return fr.getFieldOwner() != e;
        }
        if (p instanceof org.eclipse.cdt.core.dom.ast.IASTUnaryExpression u) {
            int op = u.getOperator();
            if (op == org.eclipse.cdt.core.dom.ast.IASTUnaryExpression.op_amper
                    || op == org.eclipse.cdt.core.dom.ast.IASTUnaryExpression.op_sizeof
                    || op == org.eclipse.cdt.core.dom.ast.IASTUnaryExpression.op_alignOf
                    || op == org.eclipse.cdt.core.dom.ast.IASTUnaryExpression.op_bracketedPrimary) {
                return false;
            }
        }
        if (p instanceof org.eclipse.cdt.core.dom.ast.IASTExpressionStatement) {
            return false;
        }
        if (p instanceof org.eclipse.cdt.core.dom.ast.IASTBinaryExpression b && b.getOperand1() == e
                && b.getOperator() == org.eclipse.cdt.core.dom.ast.IASTBinaryExpression.op_assign) {
            return false;
        }
        // (an operand of an overloaded operator may be converted too: a * t with operator*(int) converts t)
        return !(p instanceof org.eclipse.cdt.core.dom.ast.IASTFunctionCallExpression fc && fc.getFunctionNameExpression() == e);
    }

    /**
     * @return true if {@code e}, of class {@code c}, initializes a variable, is passed to a parameter or
     *         is returned from a function whose declared type is {@code c} or a reference to it (a copy or
     *         a binding: no conversion)
     */
    private static boolean usedAsIs(IASTExpression e, ICPPClassType c) {
        IASTNode p = e.getParent();
        IType target = null;
        if (p instanceof org.eclipse.cdt.core.dom.ast.IASTEqualsInitializer
                || p instanceof org.eclipse.cdt.core.dom.ast.cpp.ICPPASTConstructorInitializer
                || p instanceof org.eclipse.cdt.core.dom.ast.cpp.ICPPASTInitializerList) {
            IASTNode d = p.getParent();
            if (d instanceof IASTDeclarator decl && decl.getName() != null
                    && decl.getName().resolveBinding() instanceof org.eclipse.cdt.core.dom.ast.IVariable v) {
                target = v.getType();
            }
        } else if (p instanceof org.eclipse.cdt.core.dom.ast.IASTFunctionCallExpression fc) {
            org.eclipse.cdt.core.dom.ast.IASTInitializerClause[] args = fc.getArguments();
            int i = java.util.Arrays.asList(args).indexOf(e);
            if (i >= 0 && fc.getFunctionNameExpression() instanceof org.eclipse.cdt.core.dom.ast.IASTIdExpression id
                    && id.getName().resolveBinding() instanceof org.eclipse.cdt.core.dom.ast.IFunction f
                    && f.getType() != null && i < f.getType().getParameterTypes().length) {
                target = f.getType().getParameterTypes()[i];
            }
        } else if (p instanceof org.eclipse.cdt.core.dom.ast.IASTReturnStatement) {
            IASTNode fn = p;
            while (fn != null && !(fn instanceof IASTFunctionDefinition)) {
                fn = fn.getParent();
            }
            if (fn instanceof IASTFunctionDefinition fd
                    && fd.getDeclarator().getName().resolveBinding() instanceof org.eclipse.cdt.core.dom.ast.IFunction f
                    && f.getType() != null) {
                target = f.getType().getReturnType();
            }
        }
        if (target instanceof org.eclipse.cdt.core.dom.ast.cpp.ICPPReferenceType r) {
            target = r.getType();
        }
        return target != null && classOf(target) instanceof ICPPClassType t && t.isSameType(c);
    }

    /**
     * Adds the calls that the implicit name {@code n} at {@code offset} makes: the function it names, if
     * the program wrote it; and for a constructor or destructor (the compiler's or the program's), what
     * constructing or destroying the object runs besides its body ([class.base.init], [class.dtor]/13):
     * the constructors or destructor the program wrote for its bases and members, and the default member
     * initializers that read the indices or call functions (review 2026-11-29: {@code struct D : B {}} with
     * {@code B() : v(threadIdx.x)}, and {@code struct M { unsigned a = threadIdx.x; }})
     */
    private void calls(IASTName n, int offset) {
        IBinding b;
        try {
            b = n.resolveBinding();
        } catch (RuntimeException e) {
            return;
        }
        IBinding called = b;
        if (b instanceof ICPPSpecialization sp && sp.getSpecializedBinding() != null) {
            b = sp.getSpecializedBinding(); // an instance of a function template, or a member of a class template's
        }
        if (!(b instanceof ICPPFunction f)) {
            return;
        }
        if (!(f instanceof ICPPMethod m && m.isImplicit())) {
            ImplicitCall c = call(f, offset);
            if (c != null) {
                // the instance's parameter types: T& of a template is int& or const int& there
                out.add(c.isOperator() && called instanceof ICPPFunction cf ? c.withOperandModes(operandModes(cf)) : c);
            }
        }
        if (f instanceof ICPPMethod m && (m instanceof ICPPConstructor || m.isDestructor())) {
            partsAt(m.getClassOwner(), m.isDestructor(), offset);
        }
    }

    /**
     * Adds what making an object of class {@code c} at {@code made} and destroying it at {@code gone} runs:
     * the constructors and the destructor the program wrote for {@code c}, and their {@link #parts}.
     */
    private void object(ICPPClassType c, int made, int gone) {
        if (inPrelude(c)) {
            return;
        }
        try {
            for (ICPPMethod m : c.getConstructors()) {
                if (!m.isImplicit()) {
                    ImplicitCall x = call(m, made);
                    if (x != null) {
                        out.add(x);
                    }
                }
            }
            for (ICPPMethod m : c.getDeclaredMethods()) {
                if (m.isDestructor() && !m.isImplicit()) {
                    ImplicitCall x = call(m, gone);
                    if (x != null) {
                        out.add(x);
                    }
                }
            }
        } catch (RuntimeException e) {
            return;
        }
        partsAt(c, false, made);
        partsAt(c, true, gone);
    }

    /** Adds {@link #parts} of class {@code c} at {@code offset} (computed once per class). */
    private void partsAt(ICPPClassType c, boolean dtor, int offset) {
        if (c == null) {
            return;
        }
        List<ImplicitCall> at0 = (dtor ? destroying : constructing).computeIfAbsent(c, k -> {
            List<ImplicitCall> l = new ArrayList<>();
            parts(k, dtor, new java.util.HashSet<>(), l);
            return l;
        });
        for (ImplicitCall x : at0) {
            out.add(x.at(offset));
        }
    }

    /** {@link #parts} of each class, at offset 0 (each computed once) */
    private final java.util.Map<ICPPClassType, List<ImplicitCall>> constructing = new java.util.HashMap<>();
    private final java.util.Map<ICPPClassType, List<ImplicitCall>> destroying = new java.util.HashMap<>();

    /**
     * Adds to {@code into}, at offset 0, what constructing (or, with {@code dtor}, destroying) an object of
     * class {@code c} runs besides the body of its own constructor (destructor): for each base and each
     * member of class type, the constructors (every one: which one runs is not read) or the destructor the
     * program wrote, and recursively their parts; for the construction, {@code c}'s default member
     * initializers.
     */
    private void parts(ICPPClassType c, boolean dtor, java.util.Set<ICPPClassType> seen, List<ImplicitCall> into) {
        int offset = 0;
        if (c == null || !seen.add(c) || inPrelude(c)) {
            return;
        }
        List<ICPPClassType> subs = new ArrayList<>();
        try {
            for (ICPPBase base : c.getBases()) {
                if (base.getBaseClass() instanceof ICPPClassType bc) {
                    subs.add(bc);
                }
            }
            for (ICPPField fld : c.getDeclaredFields()) {
                if (!fld.isStatic() && classOf(fld.getType()) instanceof ICPPClassType fc) {
                    subs.add(fc);
                }
            }
        } catch (RuntimeException e) {
            return;
        }
        for (ICPPClassType sub : subs) {
            if (inPrelude(sub)) {
                continue;
            }
            for (ICPPMethod m : dtor ? sub.getDeclaredMethods() : sub.getConstructors()) {
                if (!m.isImplicit() && (!dtor || m.isDestructor())) {
                    ImplicitCall x = call(m, offset);
                    if (x != null) {
                        into.add(x);
                    }
                }
            }
            parts(sub, dtor, seen, into);
        }
        if (!dtor) {
            initializers(c, into);
        }
    }

    /**
     * Adds to {@code into}, at offset 0, what the default member initializers of {@code c} run: a record
     * {@link ImplicitCall.Origin#INITIALIZER} that reads the indices where one names {@code threadIdx},
     * {@code blockIdx}, {@code blockDim} or {@code gridDim}, and the program's functions they call.
     */
    private void initializers(ICPPClassType c, List<ImplicitCall> into) {
        int offset = 0;
        boolean[] reads = {false};
        for (ICPPField fld : c.getDeclaredFields()) {
            for (IASTName d : tu.getDeclarationsInAST(fld)) {
                if (!(d.getParent() instanceof IASTDeclarator dd) || dd.getInitializer() == null) {
                    continue;
                }
                dd.getInitializer().accept(new ASTVisitor() {
                    {
                        shouldVisitNames = true;
                        shouldVisitImplicitNames = true;
                    }

                    @Override
                    public int visit(IASTName x) {
                        String s = x.toString();
                        if (s.equals("threadIdx") || s.equals("blockIdx") || s.equals("blockDim") || s.equals("gridDim")) {
                            reads[0] = true;
                        } else {
                            IBinding xb;
                            try {
                                xb = x.resolveBinding();
                            } catch (RuntimeException e) {
                                return PROCESS_CONTINUE;
                            }
                            if (xb instanceof ICPPFunction xf && !(xf instanceof ICPPMethod xm && xm.isImplicit())) {
                                ImplicitCall call = call(xf, offset);
                                if (call != null) {
                                    into.add(call);
                                }
                            }
                        }
                        return PROCESS_CONTINUE;
                    }
                });
            }
        }
        if (reads[0]) {
            into.add(new ImplicitCall(offset, c.getName(), ImplicitCall.Origin.INITIALIZER, true, false));
        }
    }

    /**
     * @return {@link ImplicitCall#operandModes} of operator {@code f}: for a member operator, its object
     *         first ({@code 'w'} unless the operator is {@code const}), then one character per parameter
     *         ({@link AstConverter#mayWrite}); null if CDT cannot give its type
     */
    static String operandModes(ICPPFunction f) {
        try {
            org.eclipse.cdt.core.dom.ast.cpp.ICPPFunctionType ft = f.getType();
            if (ft == null) {
                return null;
            }
            StringBuilder b = new StringBuilder();
            if (f instanceof ICPPMethod m && !m.isStatic()) {
                b.append(ft.isConst() ? 'r' : 'w');
            }
            for (IType p : ft.getParameterTypes()) {
                b.append(AstConverter.mayWrite(p) ? 'w' : 'r');
            }
            return b.toString();
        } catch (RuntimeException e) {
            return null; // unknown: every operand may be written
        }
    }

    /** @return the class type of an object of type {@code t} (typedefs, cv and arrays stripped), or null */
    private static IType classOf(IType t) {
        for (int i = 0; i < 32 && t != null; i++) {
            if (t instanceof ITypedef td) {
                t = td.getType();
            } else if (t instanceof IQualifierType q) {
                t = q.getType();
            } else if (t instanceof IArrayType a) {
                t = a.getType();
            } else {
                return t instanceof ICPPClassType ? t : null;
            }
        }
        return null;
    }

    /** @return true if {@code c} is one of klap's CUDA prelude ({@code dim3}, the vector types) */
    private boolean inPrelude(ICPPClassType c) {
        return prelude.computeIfAbsent(c, k -> {
            for (IASTName d : tu.getDefinitionsInAST(k)) {
                IASTFileLocation l = d.getFileLocation();
                if (l != null && CudaPrelude.PATH.equals(l.getFileName())) {
                    return true;
                }
            }
            return false;
        });
    }

    /** @return the call of the program's function {@code f} at {@code offset}, or null if it is none of the program's */
    private ImplicitCall call(ICPPFunction f, int offset) {
        ImplicitCall at0 = functions.computeIfAbsent(f, k -> java.util.Optional.ofNullable(lookUp(k))).orElse(null);
        return at0 == null ? null : at0.at(offset);
    }

    /** @return the call of {@code f} at offset 0: where its body is and what it does; null if not the program's */
    private ImplicitCall lookUp(ICPPFunction f) {
        int offset = 0;
        String name = AstConverter.stripTemplateArgs(f.getName()).trim();
        java.util.Set<HeaderFunctions.Fact> facts = java.util.EnumSet.noneOf(HeaderFunctions.Fact.class);
        boolean inHeader = false;
        for (IASTName d : tu.getDefinitionsInAST(f)) {
            IASTFileLocation dl = d.getFileLocation();
            if (dl == null || CudaPrelude.PATH.equals(dl.getFileName())) {
                return null;
            }
            if (mainPath.equals(dl.getFileName())) {
                return new ImplicitCall(offset, name, ImplicitCall.Origin.MAIN);
            }
            IASTNode def = d;
            while (def != null && !(def instanceof IASTFunctionDefinition)) {
                def = def.getParent();
            }
            if (def instanceof IASTFunctionDefinition fd) {
                facts.addAll(headers.factsOf(fd));
            } else {
                facts.add(HeaderFunctions.Fact.OPAQUE);
            }
            inHeader = true;
        }
        if (inHeader) {
            return facts.contains(HeaderFunctions.Fact.OPAQUE) ? new ImplicitCall(offset, name, ImplicitCall.Origin.UNSEEN)
                : new ImplicitCall(offset, name, ImplicitCall.Origin.HEADER, facts.contains(HeaderFunctions.Fact.INDICES),
                    facts.contains(HeaderFunctions.Fact.SYNC));
        }
        IASTName[] decls = tu.getDeclarationsInAST(f);
        for (IASTName d : decls) {
            IASTFileLocation dl = d.getFileLocation();
            if (dl == null || CudaPrelude.PATH.equals(dl.getFileName())) {
                return null;
            }
        }
        return decls.length == 0 ? null : new ImplicitCall(offset, name, ImplicitCall.Origin.UNSEEN);
    }
}
