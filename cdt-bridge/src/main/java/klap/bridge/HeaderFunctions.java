package klap.bridge;

import java.util.EnumSet;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.eclipse.cdt.core.dom.ast.*;
import org.eclipse.cdt.core.dom.ast.cpp.*;
import klap.model.FunctionDef;

/**
 * What klap must know of the {@code __device__} and {@code __host__ __device__} functions that the
 * project's own headers define (review 2026-11-27). The model describes the main file only, so a
 * helper such as {@code __device__ unsigned gtid() { return blockIdx.x * blockDim.x + threadIdx.x; }}
 * or a {@code block_sum} with {@code __syncthreads()} in an included {@code "util.cuh"} was neither
 * analysed nor treated as unknown: a child calling {@code gtid()} was aggregated and read the
 * aggregated grid's indices, and a barrier in {@code block_sum} after a guarded return did not stop
 * the guard rewrite (a hang). CDT has parsed those bodies; this class reads from each body, once,
 * which of three facts hold (transitively through the helpers it calls):
 * <ul>
 * <li>{@link Fact#INDICES}: it names {@code threadIdx}, {@code blockIdx}, {@code blockDim} or
 * {@code gridDim}, or reads a special register of the hardware grid in {@code asm};</li>
 * <li>{@link Fact#SYNC}: it calls a barrier or warp collective ({@code __syncthreads}, {@code __syncwarp},
 * {@code __*_sync}, cooperative-groups {@code sync}/{@code arrive_and_wait}) or has {@code bar.} /
 * {@code barrier.} in {@code asm};</li>
 * <li>{@link Fact#OPAQUE}: it does what klap cannot follow: a kernel launch, a CUDA runtime call
 * ({@code cuda*}: streams, events, copies, device heap), {@code malloc}/{@code free}, cooperative
 * groups, a call through a pointer, lambda or functor, or a call of a function whose body is in the
 * main file or nowhere in the unit.</li>
 * </ul>
 * A header function with none of them (arithmetic, math intrinsics, atomics, other pure helpers:
 * {@code helper_math.h}'s operators and {@code dot}) stays harmless, as before. Calls of library
 * functions that no header klap reads declares (CUB, Thrust: angle includes get no content) are
 * taken as harmless, as in the main file, but for the collectives of CUB, cooperative groups and
 * libcu++'s barriers ({@link klap.model.LibraryCalls}), which synchronize.
 */
final class HeaderFunctions {

    /** A fact of a header function; see the class comment. */
    enum Fact {
        INDICES, SYNC, OPAQUE, EXIT
    }

    private static final Set<String> INDEX_NAMES = Set.of("threadIdx", "blockIdx", "blockDim", "gridDim");
    private static final Set<String> COOPERATIVE = Set.of("this_thread_block", "this_grid", "this_cluster",
        "this_multi_grid", "tiled_partition", "coalesced_threads", "thread_rank", "group_index", "thread_index");
    private static final Set<String> SYNC_CALLS = Set.of("__syncthreads", "__syncthreads_count", "__syncthreads_and",
        "__syncthreads_or", "__syncwarp", "__barrier_sync", "sync", "arrive_and_wait", "barrier_wait");
    private static final Pattern SPECIAL_REGISTER = Pattern.compile("%(tid|ntid|ctaid|nctaid|clusterid|nclusterid|"
        + "cluster_ctaid|cluster_nctaid|gridid)\\b");

    private final IASTTranslationUnit tu;
    private final String mainPath;
    private final Map<IASTFunctionDefinition, Set<Fact>> memo = new HashMap<>();
    /** the header functions by simple name: what a dependent call in a template may call */
    private final Map<String, java.util.List<IASTFunctionDefinition>> byName = new HashMap<>();
    /** simple names of header functions with {@link Fact#OPAQUE} */
    final Set<String> opaque = new LinkedHashSet<>();
    /** simple names of header functions that may end their thread with an {@code asm} exit (through the ones they call) */
    final Set<String> exiting = new LinkedHashSet<>();
    /** simple names of header functions that synchronize and are not opaque */
    final Set<String> synchronizing = new LinkedHashSet<>();
    /** simple names of header functions that read the built-in indices and are not opaque */
    final Set<String> indexReaders = new LinkedHashSet<>();

    /** the libraries with collectives the unit includes ({@link klap.model.LibraryCalls}) */
    private final Set<klap.model.LibraryCalls.Library> libraries;

    /**
     * Classifies every device function that a header (not the main file, not the prelude) defines.
     *
     * @param libraries the libraries with collectives that the unit includes: a header function that
     *                  calls one of their collectives synchronizes ({@link Fact#SYNC})
     */
    HeaderFunctions(IASTTranslationUnit tu, String mainPath, Set<klap.model.LibraryCalls.Library> libraries) {
        this.tu = tu;
        this.mainPath = mainPath;
        this.libraries = libraries;
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
                if (d instanceof IASTFunctionDefinition fd) {
                    if (!mainPath.equals(l.getFileName())) {
                        byName.computeIfAbsent(simpleName(innermost(fd.getDeclarator()).getName()),
                            k -> new java.util.ArrayList<>()).add(fd);
                    }
                    return PROCESS_SKIP;
                }
                return PROCESS_CONTINUE;
            }
        });
        for (IASTPreprocessorStatement st : tu.getAllPreprocessorStatements()) {
            IASTFileLocation l = st.getFileLocation();
            if (l != null && !mainPath.equals(l.getFileName()) && CudaParser.archConditional(st)) {
                archDirectives.computeIfAbsent(l.getFileName(), k -> new java.util.ArrayList<>()).add(l.getNodeOffset());
            }
        }
        byName.values().forEach(fs -> fs.forEach(this::record));
    }

    /** Offsets of conditional directives on {@code __CUDA_ARCH__} in each header, by file name. */
    private final Map<String, java.util.List<Integer>> archDirectives = new HashMap<>();

    /**
     * @return true if {@code fd}'s definition holds a conditional on {@code __CUDA_ARCH__}: klap reads
     *         the host view of it, nvcc compiles other code for the device (CudaParser sets such main-file
     *         functions aside for the same reason)
     */
    private boolean archConditional(IASTFunctionDefinition fd) {
        IASTFileLocation l = fd.getFileLocation();
        if (l == null) {
            return false;
        }
        for (int at : archDirectives.getOrDefault(l.getFileName(), java.util.List.of())) {
            if (at > l.getNodeOffset() && at < l.getNodeOffset() + l.getNodeLength()) {
                return true;
            }
        }
        return false;
    }

    private void record(IASTFunctionDefinition fd) {
        IASTNode templ = fd.getParent() instanceof ICPPASTTemplateDeclaration t ? t : null;
        FunctionDef.Kind k = AstConverter.kindOf(AstConverter.attributes(fd, fd.getDeclSpecifier(), fd.getDeclarator(),
            templ));
        if (k != FunctionDef.Kind.DEVICE && k != FunctionDef.Kind.HOST_DEVICE) {
            return;
        }
        String name = simpleName(innermost(fd.getDeclarator()).getName());
        Set<Fact> facts = classify(fd);
        String convertedClass = conversionClass(fd, name);
        if (convertedClass != null && (facts.contains(Fact.INDICES) || facts.contains(Fact.OPAQUE))) {
            // C++ applies a conversion function without a call that klap or CDT sees: an object of its class
            // in a child is as good as a call of it (ChildRefusals scans for the class's name)
            indexReaders.add(convertedClass);
        }
        if (facts.contains(Fact.EXIT)) {
            exiting.add(name);
        }
        if (facts.contains(Fact.OPAQUE)) {
            opaque.add(name);
            synchronizing.remove(name);
            indexReaders.remove(name);
        } else if (!opaque.contains(name)) {
            if (facts.contains(Fact.SYNC)) {
                synchronizing.add(name);
            }
            if (facts.contains(Fact.INDICES)) {
                indexReaders.add(name);
            }
        }
    }

    /**
     * @param fd a function definition in a header
     * @return its facts, through the header functions it calls (computed once per definition)
     */
    Set<Fact> factsOf(IASTFunctionDefinition fd) {
        return EnumSet.copyOf(classify(fd)); // classify's sets are EnumSets, empty ones included
    }

    /** @return the facts of the header function {@code fd}, through the header functions it calls */
    private Set<Fact> classify(IASTFunctionDefinition fd) {
        Set<Fact> known = memo.get(fd);
        if (known != null) {
            return known;
        }
        memo.put(fd, EnumSet.noneOf(Fact.class)); // a recursive call adds nothing the body does not show
        Set<Fact> facts = EnumSet.noneOf(Fact.class);
        if (archConditional(fd)) {
            facts.add(Fact.OPAQUE);
        }
        // the body, the parameters' default arguments and a constructor's member initializers
        java.util.List<IASTNode> parts = new java.util.ArrayList<>();
        parts.add(fd.getDeclarator());
        if (fd instanceof ICPPASTFunctionDefinition cfd) {
            parts.addAll(java.util.List.of(cfd.getMemberInitializers()));
        }
        parts.add(fd.getBody());
        for (IASTNode part : parts) {
            if (part == null) {
                continue;
            }
            part.accept(new ASTVisitor() {
                {
                    shouldVisitNames = true;
                    shouldVisitImplicitNames = true;
                    shouldVisitExpressions = true;
                    shouldVisitDeclarations = true;
                }

                @Override
                public int visit(IASTDeclaration d) {
                    if (d instanceof IASTASMDeclaration a) {
                        String asm = a.getAssembly();
                        if (asm.contains("bar.") || asm.contains("barrier.")) {
                            facts.add(Fact.SYNC);
                        }
                        if (SPECIAL_REGISTER.matcher(asm).find()) {
                            facts.add(Fact.INDICES);
                        }
                        if (java.util.regex.Pattern.compile("\\bexit\\b").matcher(asm).find()) {
                            facts.add(Fact.EXIT); // may end the thread (review 2026-12-01)
                        }
                    }
                    return PROCESS_CONTINUE;
                }

                @Override
                public int visit(IASTName n) {
                    if (n instanceof IASTImplicitName) {
                        // a constructor or an overloaded operator called implicitly (Idx i; p + q)
                        IBinding b = resolve(n);
                        if (b instanceof IFunction) {
                            facts.addAll(functionFacts(b));
                        }
                        return PROCESS_CONTINUE;
                    }
                    String s = n.toString();
                    if (INDEX_NAMES.contains(s)) {
                        facts.add(Fact.INDICES);
                    } else if (COOPERATIVE.contains(s)) {
                        facts.add(Fact.OPAQUE);
                    }
                    return PROCESS_CONTINUE;
                }

                @Override
                public int visit(IASTExpression e) {
                    if (e instanceof IASTFunctionCallExpression c) {
                        facts.addAll(callFacts(c));
                    }
                    return PROCESS_CONTINUE;
                }
            });
        }
        memo.put(fd, facts);
        return facts;
    }

    /** @return the facts a call inside a header function adds */
    private Set<Fact> callFacts(IASTFunctionCallExpression c) {
        IASTExpression fn = c.getFunctionNameExpression();
        IASTName name = fn instanceof IASTIdExpression id ? id.getName()
            : fn instanceof IASTFieldReference fr ? fr.getFieldName() : null;
        if (name == null) {
            return EnumSet.of(Fact.OPAQUE); // through an expression: a pointer, or a kernel launch k(((g, b)))(args)
        }
        String s = simpleName(name);
        if (SYNC_CALLS.contains(s) || s.startsWith("__") && s.endsWith("_sync")) {
            return EnumSet.of(Fact.SYNC);
        }
        if (s.startsWith("cuda") || s.equals("malloc") || s.equals("free")
                || klap.model.LibraryCalls.launches(libraries, AstConverter.stripTemplateArgs(name.toString()))) {
            return EnumSet.of(Fact.OPAQUE); // a CUB device-wide algorithm launches its kernels
        }
        IBinding b = resolve(name instanceof ICPPASTQualifiedName q ? q.getLastName() : name);
        if (b instanceof IParameter) {
            // op(x) with a callable parameter (a functor, a lambda, a pointer): what the caller passes,
            // in code klap sees (a lambda written in the call is walked there)
            return EnumSet.noneOf(Fact.class);
        }
        if (b instanceof IVariable || b instanceof ICPPField) {
            return EnumSet.of(Fact.OPAQUE); // a function pointer, a lambda or a functor held in a variable
        }
        if (!(b instanceof IFunction)) {
            // unresolved: a dependent call in a template may call any header function of that name;
            // otherwise a library function klap reads no header of (a collective of one synchronizes:
            // klap.model.LibraryCalls), or a type
            Set<Fact> out = EnumSet.noneOf(Fact.class);
            byName.getOrDefault(s, java.util.List.of()).forEach(d -> out.addAll(classify(d)));
            if (klap.model.LibraryCalls.isCollective(libraries,
                    fn instanceof IASTFieldReference ? null : AstConverter.stripTemplateArgs(name.toString()),
                    fn instanceof IASTFieldReference ? s : null)) {
                out.add(Fact.SYNC);
            }
            return out;
        }
        return functionFacts(b);
    }

    private static IBinding resolve(IASTName n) {
        try {
            return n.resolveBinding();
        } catch (RuntimeException ex) {
            return null;
        }
    }

    /** @return the facts of calling the function {@code b} from a header function */
    private Set<Fact> functionFacts(IBinding b) {
        IASTName[] defs = tu.getDefinitionsInAST(b);
        if (defs.length == 0) {
            for (IASTName dn : tu.getDeclarationsInAST(b)) {
                IASTFileLocation l = dn.getFileLocation();
                if (l != null && !CudaPrelude.PATH.equals(l.getFileName())) {
                    return EnumSet.of(Fact.OPAQUE); // declared, defined in another file
                }
            }
            // an intrinsic of the prelude, or a dependent call in a template that CDT binds to no
            // declaration: any header function of that name
            Set<Fact> out = EnumSet.noneOf(Fact.class);
            byName.getOrDefault(b.getName(), java.util.List.of()).forEach(d -> out.addAll(classify(d)));
            return out;
        }
        Set<Fact> out = EnumSet.noneOf(Fact.class);
        for (IASTName dn : defs) {
            IASTNode n = dn;
            while (n != null && !(n instanceof IASTFunctionDefinition)) {
                n = n.getParent();
            }
            IASTFileLocation l = dn.getFileLocation();
            if (!(n instanceof IASTFunctionDefinition d) || l == null || mainPath.equals(l.getFileName())) {
                return EnumSet.of(Fact.OPAQUE); // a body in the main file: the model has it, this header call does not follow it
            }
            out.addAll(classify(d));
        }
        return out;
    }

    /**
     * @return the name of the class whose conversion function ({@code operator unsigned()}) {@code fd}
     *         is, or null if it is none
     */
    private static String conversionClass(IASTFunctionDefinition fd, String name) {
        if (!klap.model.FunctionDef.isConversionName(name)) {
            return null;
        }
        for (IASTNode p = fd.getParent(); p != null; p = p.getParent()) {
            if (p instanceof ICPPASTCompositeTypeSpecifier cs) {
                return simpleName(cs.getName());
            }
        }
        IASTName n = innermost(fd.getDeclarator()).getName();
        if (n instanceof ICPPASTQualifiedName q && q.getQualifier().length > 0) {
            return AstConverter.stripTemplateArgs(q.getQualifier()[q.getQualifier().length - 1].toString()).trim();
        }
        return null;
    }

    private static IASTDeclarator innermost(IASTDeclarator d) {
        while (d.getNestedDeclarator() != null) {
            d = d.getNestedDeclarator();
        }
        return d;
    }

    private static String simpleName(IASTName n) {
        IASTName last = n instanceof ICPPASTQualifiedName q ? q.getLastName() : n;
        return AstConverter.stripTemplateArgs(last.toString()).trim(); // "operator <<" stays itself
    }
}
