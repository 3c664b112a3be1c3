package klap.model;

import java.util.List;

/**
 * What the front end hands over for one translation unit: the main file's text, every function
 * definition in it (kernels, device and host functions) with statement trees, its pragmas and the
 * diagnostics found while parsing. Only the main file is described; included headers contribute
 * declarations and macros but nothing of theirs is rewritten.
 *
 * @param file        the main file
 * @param functions   function definitions of the main file, in source order
 * @param pragmas     pragmas of the main file, in source order
 * @param diagnostics parse problems (errors make the unit unusable for transformation)
 * @param kernelsDeclaredElsewhere names of kernels that are declared (in headers or the main file)
 *                    but not defined in the main file
 * @param deviceFunctionsWithoutBody simple names of {@code __device__} functions whose body klap
 *                    cannot follow: declared by the main file or a header and defined nowhere in
 *                    the translation unit (their bodies are in another file, relocatable device
 *                    code), or defined in a project header and doing what klap cannot follow there
 *                    (a launch, a CUDA runtime call, a call through a pointer: the bridge's
 *                    {@code HeaderFunctions}); klap cannot know whether they synchronize, launch or
 *                    read the built-in indices
 * @param headerSyncFunctions simple names of {@code __device__} functions defined in a project
 *                    header that synchronize (a barrier or warp collective, maybe through other
 *                    header functions) and do nothing klap cannot follow
 * @param headerIndexReaders simple names of {@code __device__} functions defined in a project
 *                    header that read the built-in indices ({@code threadIdx}, ...) and do nothing
 *                    klap cannot follow: klap cannot give them a child's original indices
 * @param headerOpaqueFunctions the names of {@code deviceFunctionsWithoutBody} that a project header
 *                    defines (the others are only declared: their bodies are in another file)
 * @param kernelHeaders the kernels of {@code kernelsDeclaredElsewhere} that an included header defines,
 *                    by simple and by namespace-qualified name, to that header as diagnostics name it
 *                    (for a message that says where the child is and what to do)
 * @param implicitCalls the calls of the program's functions that the main file makes without writing
 *                    a call (operators, constructors, destructors: {@link ImplicitCall}), sorted by offset
 * @param libraries   the libraries with collectives that the translation unit includes, directly or
 *                    through a project header ({@link LibraryCalls}: their calls synchronize)
 * @param headerMacroExpansions for each expansion in the main file of a macro defined in a header,
 *                    its offset and its expanded text: what textual checks of the main file cannot
 *                    read there (review 2026-12-01: {@code RELEASE(buf)} of a header's
 *                    {@code #define RELEASE(p) delete[] p})
 * @param headerExitFunctions simple names of {@code __device__} functions defined in a project header
 *                    that may end their thread with an {@code asm} exit (review 2026-12-01)
 */
public record CudaUnit(SourceFile file, List<FunctionDef> functions, List<Pragma> pragmas,
                       List<Diagnostic> diagnostics, java.util.Set<String> kernelsDeclaredElsewhere,
                       java.util.Set<String> deviceFunctionsWithoutBody, java.util.Set<String> headerSyncFunctions,
                       java.util.Set<String> headerIndexReaders, java.util.Set<String> headerOpaqueFunctions,
                       java.util.Map<String, java.nio.file.Path> kernelHeaders, List<ImplicitCall> implicitCalls,
                       java.util.Set<LibraryCalls.Library> libraries, java.util.SortedMap<Integer, String> headerMacroExpansions,
                       java.util.Set<String> headerExitFunctions) {

    /** A unit that expands no macro of a header and whose headers end no thread. */
    public CudaUnit(SourceFile file, List<FunctionDef> functions, List<Pragma> pragmas, List<Diagnostic> diagnostics,
                    java.util.Set<String> kernelsDeclaredElsewhere, java.util.Set<String> deviceFunctionsWithoutBody,
                    java.util.Set<String> headerSyncFunctions, java.util.Set<String> headerIndexReaders,
                    java.util.Set<String> headerOpaqueFunctions, java.util.Map<String, java.nio.file.Path> kernelHeaders,
                    List<ImplicitCall> implicitCalls, java.util.Set<LibraryCalls.Library> libraries) {
        this(file, functions, pragmas, diagnostics, kernelsDeclaredElsewhere, deviceFunctionsWithoutBody,
            headerSyncFunctions, headerIndexReaders, headerOpaqueFunctions, kernelHeaders, implicitCalls, libraries,
            new java.util.TreeMap<>(), java.util.Set.of());
    }

    /**
     * @param r a range of the main file (a function)
     * @return the expanded texts of the header macros expanded in {@code r} ({@link #headerMacroExpansions}),
     *         one per line; empty if none
     */
    public String headerMacroTextIn(SourceRange r) {
        return String.join("\n", headerMacroExpansions.subMap(r.offset(), r.end()).values());
    }

    /** A unit that includes no library with collectives. */
    public CudaUnit(SourceFile file, List<FunctionDef> functions, List<Pragma> pragmas, List<Diagnostic> diagnostics,
                    java.util.Set<String> kernelsDeclaredElsewhere, java.util.Set<String> deviceFunctionsWithoutBody,
                    java.util.Set<String> headerSyncFunctions, java.util.Set<String> headerIndexReaders,
                    java.util.Set<String> headerOpaqueFunctions, java.util.Map<String, java.nio.file.Path> kernelHeaders,
                    List<ImplicitCall> implicitCalls) {
        this(file, functions, pragmas, diagnostics, kernelsDeclaredElsewhere, deviceFunctionsWithoutBody,
            headerSyncFunctions, headerIndexReaders, headerOpaqueFunctions, kernelHeaders, implicitCalls,
            java.util.Set.of());
    }

    /** A unit whose main file calls no function of the program implicitly. */
    public CudaUnit(SourceFile file, List<FunctionDef> functions, List<Pragma> pragmas, List<Diagnostic> diagnostics,
                    java.util.Set<String> kernelsDeclaredElsewhere, java.util.Set<String> deviceFunctionsWithoutBody,
                    java.util.Set<String> headerSyncFunctions, java.util.Set<String> headerIndexReaders,
                    java.util.Set<String> headerOpaqueFunctions, java.util.Map<String, java.nio.file.Path> kernelHeaders) {
        this(file, functions, pragmas, diagnostics, kernelsDeclaredElsewhere, deviceFunctionsWithoutBody,
            headerSyncFunctions, headerIndexReaders, headerOpaqueFunctions, kernelHeaders, List.of());
    }

    /**
     * @param r a range of the main file (a function, a statement)
     * @return the {@link ImplicitCall}s whose offset lies in {@code r}, in source order
     */
    public List<ImplicitCall> implicitCallsIn(SourceRange r) {
        // implicitCalls is sorted by offset (the front end's order): the first at or after r, by bisection
        int lo = 0;
        int hi = implicitCalls.size();
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (implicitCalls.get(mid).offset() < r.offset()) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        List<ImplicitCall> out = new java.util.ArrayList<>();
        for (int i = lo; i < implicitCalls.size() && implicitCalls.get(i).offset() < r.end(); i++) {
            out.add(implicitCalls.get(i));
        }
        return out;
    }

    /** A unit that no included header defines a kernel of. */
    public CudaUnit(SourceFile file, List<FunctionDef> functions, List<Pragma> pragmas, List<Diagnostic> diagnostics,
                    java.util.Set<String> kernelsDeclaredElsewhere, java.util.Set<String> deviceFunctionsWithoutBody,
                    java.util.Set<String> headerSyncFunctions, java.util.Set<String> headerIndexReaders,
                    java.util.Set<String> headerOpaqueFunctions) {
        this(file, functions, pragmas, diagnostics, kernelsDeclaredElsewhere, deviceFunctionsWithoutBody,
            headerSyncFunctions, headerIndexReaders, headerOpaqueFunctions, java.util.Map.of(), List.of());
    }

    /** A unit whose every declared function is defined in it. */
    public CudaUnit(SourceFile file, List<FunctionDef> functions, List<Pragma> pragmas, List<Diagnostic> diagnostics,
                    java.util.Set<String> kernelsDeclaredElsewhere) {
        this(file, functions, pragmas, diagnostics, kernelsDeclaredElsewhere, java.util.Set.of());
    }

    /** A unit whose project headers define no device function that synchronizes or reads the indices. */
    public CudaUnit(SourceFile file, List<FunctionDef> functions, List<Pragma> pragmas, List<Diagnostic> diagnostics,
                    java.util.Set<String> kernelsDeclaredElsewhere, java.util.Set<String> deviceFunctionsWithoutBody) {
        this(file, functions, pragmas, diagnostics, kernelsDeclaredElsewhere, deviceFunctionsWithoutBody,
            java.util.Set.of(), java.util.Set.of(), java.util.Set.of());
    }

    /** @return true if any diagnostic is an error */
    public boolean hasErrors() {
        return diagnostics.stream().anyMatch(d -> d.severity() == Diagnostic.Severity.ERROR);
    }
}
