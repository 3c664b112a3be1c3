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
 */
public record CudaUnit(SourceFile file, List<FunctionDef> functions, List<Pragma> pragmas,
                       List<Diagnostic> diagnostics, java.util.Set<String> kernelsDeclaredElsewhere) {

    /** @return true if any diagnostic is an error */
    public boolean hasErrors() {
        return diagnostics.stream().anyMatch(d -> d.severity() == Diagnostic.Severity.ERROR);
    }
}
