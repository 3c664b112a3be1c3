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
 * @param deviceFunctionsWithoutBody simple names of {@code __device__} functions that the main
 *                    file or a header declares and that nothing in the translation unit defines:
 *                    their bodies are in another file (relocatable device code), so klap cannot
 *                    know whether they synchronize, launch or read the built-in indices
 */
public record CudaUnit(SourceFile file, List<FunctionDef> functions, List<Pragma> pragmas,
                       List<Diagnostic> diagnostics, java.util.Set<String> kernelsDeclaredElsewhere,
                       java.util.Set<String> deviceFunctionsWithoutBody) {

    /** A unit whose every declared function is defined in it. */
    public CudaUnit(SourceFile file, List<FunctionDef> functions, List<Pragma> pragmas, List<Diagnostic> diagnostics,
                    java.util.Set<String> kernelsDeclaredElsewhere) {
        this(file, functions, pragmas, diagnostics, kernelsDeclaredElsewhere, java.util.Set.of());
    }

    /** @return true if any diagnostic is an error */
    public boolean hasErrors() {
        return diagnostics.stream().anyMatch(d -> d.severity() == Diagnostic.Severity.ERROR);
    }
}
