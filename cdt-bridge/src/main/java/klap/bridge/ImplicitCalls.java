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
import org.eclipse.cdt.core.dom.ast.IBinding;
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
 * compiler generates), by offset; its origin is the main file where the main file defines it, a
 * header where only a header does (with the facts of the definitions called, {@link
 * HeaderFunctions#factsOf}), {@link ImplicitCall.Origin#UNSEEN} where nothing in the unit defines it
 * or the header's body does what klap cannot follow.
 */
final class ImplicitCalls {

    private ImplicitCalls() {
    }

    static List<ImplicitCall> of(IASTTranslationUnit tu, String mainPath, HeaderFunctions headers) {
        List<ImplicitCall> out = new ArrayList<>();
        tu.accept(new ASTVisitor() {
            {
                shouldVisitNames = true;
                shouldVisitImplicitNames = true;
                shouldVisitImplicitDestructorNames = true;
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
                ImplicitCall c = call(tu, mainPath, headers, n, l.getNodeOffset());
                if (c != null) {
                    out.add(c);
                }
                return PROCESS_CONTINUE;
            }
        });
        out.sort(Comparator.comparingInt(ImplicitCall::offset));
        return List.copyOf(out);
    }

    /** @return the call that the implicit name {@code n} at {@code offset} makes, or null if it calls nothing of the program */
    private static ImplicitCall call(IASTTranslationUnit tu, String mainPath, HeaderFunctions headers, IASTName n,
                                     int offset) {
        IBinding b;
        try {
            b = n.resolveBinding();
        } catch (RuntimeException e) {
            return null;
        }
        if (b instanceof ICPPSpecialization sp && sp.getSpecializedBinding() != null) {
            b = sp.getSpecializedBinding(); // an instance of a function template, or a member of a class template's
        }
        if (!(b instanceof ICPPFunction f) || f instanceof ICPPMethod m && m.isImplicit()) {
            return null;
        }
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
