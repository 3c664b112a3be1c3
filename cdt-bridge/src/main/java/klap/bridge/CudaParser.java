package klap.bridge;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.eclipse.cdt.core.dom.ast.ASTVisitor;
import org.eclipse.cdt.core.dom.ast.IASTExpression;
import org.eclipse.cdt.core.dom.ast.IASTFileLocation;
import org.eclipse.cdt.core.dom.ast.IASTFunctionDefinition;
import org.eclipse.cdt.core.dom.ast.IASTName;
import org.eclipse.cdt.core.dom.ast.IASTNode;
import org.eclipse.cdt.core.dom.ast.IASTPreprocessorElifStatement;
import org.eclipse.cdt.core.dom.ast.IASTPreprocessorEndifStatement;
import org.eclipse.cdt.core.dom.ast.IASTPreprocessorIfStatement;
import org.eclipse.cdt.core.dom.ast.IASTPreprocessorIfdefStatement;
import org.eclipse.cdt.core.dom.ast.IASTPreprocessorIfndefStatement;
import org.eclipse.cdt.core.dom.ast.IASTPreprocessorIncludeStatement;
import org.eclipse.cdt.core.dom.ast.IASTPreprocessorMacroDefinition;
import org.eclipse.cdt.core.dom.ast.IASTPreprocessorMacroExpansion;
import org.eclipse.cdt.core.dom.ast.IASTPreprocessorPragmaStatement;
import org.eclipse.cdt.core.dom.ast.IASTPreprocessorStatement;
import org.eclipse.cdt.core.dom.ast.IASTProblem;
import org.eclipse.cdt.core.dom.ast.IASTTranslationUnit;
import org.eclipse.cdt.core.dom.ast.IASTUnaryExpression;
import org.eclipse.cdt.core.dom.ast.IBinding;
import org.eclipse.cdt.core.dom.ast.IMacroBinding;
import org.eclipse.cdt.core.dom.ast.cpp.ICPPASTTemplateDeclaration;
import org.eclipse.cdt.core.dom.ast.gnu.cpp.GPPLanguage;
import org.eclipse.cdt.core.model.ILanguage;
import org.eclipse.cdt.core.parser.DefaultLogService;
import org.eclipse.cdt.core.parser.ExtendedScannerInfo;
import org.eclipse.cdt.core.parser.FileContent;
import org.eclipse.cdt.core.parser.IProblem;

import klap.model.CudaUnit;
import klap.model.Diagnostic;
import klap.model.FunctionDef;
import klap.model.Pragma;
import klap.model.SourceFile;
import klap.model.SourceRange;

/**
 * The klap front end: parses one CUDA translation unit with the Eclipse CDT C++ parser and turns
 * it into the CUDA model ({@link CudaUnit}).
 *
 * <p>How CUDA is made palatable to a C++ parser without shifting any offset:
 * <ul>
 * <li>CUDA keywords are scanner macros expanding to GNU attributes ({@code __global__} becomes
 * {@code __attribute__((global))}), so kernels are recognised from their attributes;</li>
 * <li>a forced-include prelude (a separate in-memory file) declares the CUDA builtins, vector
 * types and the runtime API, so that {@code threadIdx}, {@code dim3}, {@code cudaMalloc}, ... resolve;</li>
 * <li>a same-length text pre-pass turns {@code <<<}/{@code >>>} into {@code (((}/{@code )))} and
 * blanks {@code __device__}/{@code __host__} after a lambda introducer (see {@link Prepass}).</li>
 * </ul>
 * Quote-includes are read from disk (including file's directory first, then the include
 * directories); angle includes ({@code <cuda_runtime.h>}, {@code <cstdio>}) get no content.
 * Every range of the model indexes the original text exactly.
 */
public final class CudaParser {

    private CudaParser() {
    }

    /** A launch opener, {@code <<<} or a spaced {@code << <} (see {@link Prepass}). */
    private static final java.util.regex.Pattern OPENER =
        java.util.regex.Pattern.compile("<<[ \\t]*(?:/\\*.*?\\*/[ \\t]*)*<");

    /**
     * Whether {@code text} may hold a kernel launch: it has a launch opener, {@code <<<} or the
     * spaced {@code << <} that nvcc also accepts. A quick filter (comments and literals are not
     * skipped), for callers that pass a file on untouched when it holds none.
     *
     * @param text any text
     * @return false only if no launch can be in it
     */
    public static boolean mayHoldLaunch(CharSequence text) {
        return OPENER.matcher(text).find();
    }

    /**
     * Parses the main file {@code file} whose exact content is {@code text}.
     *
     * <p>Never throws on bad input: syntax errors ({@code parse}), missing quote-includes
     * ({@code missing-include}) and launches written inside macro expansions
     * ({@code launch-in-macro}) become error {@link Diagnostic}s of the returned unit. Problems
     * inside headers are reported at the header's path, line and column.
     *
     * @param file        the main file's path as the user named it (used in diagnostics; made
     *                    absolute to resolve quote-includes relative to its directory)
     * @param text        the main file's exact content
     * @param includeDirs directories searched for quote-includes after the including file's directory
     * @return the unit: function definitions of the main file in source order, its pragmas, the
     *         diagnostics and the kernels declared but not defined in the main file
     */
    public static CudaUnit parse(Path file, String text, List<Path> includeDirs) {
        return parse(file, text, includeDirs, Map.of(), List.of(), List.of());
    }

    /**
     * Parses the main file as {@link #parse(Path, String, List)} does, with the preprocessing options of
     * the compiler command line that builds it ({@code -D}, {@code -U}, {@code -include}), so that
     * {@code #ifdef}s, {@code #error}s and macros in the file see what nvcc sees.
     *
     * @param file        the main file's path as the user named it
     * @param text        the main file's exact content
     * @param includeDirs directories searched for quote-includes after the including file's directory
     * @param defines     macros defined before the file, {@code NAME} or {@code NAME(params)} to replacement
     *                    text ({@code -DNAME} is {@code NAME -> "1"}); they replace klap's predefined macros
     *                    of the same name
     * @param undefines   macro names undefined before the file (predefined ones or {@code defines}), applied
     *                    after {@code defines}
     * @param preIncludes files included before the file's first line, in order ({@code -include FILE})
     * @return the unit, as {@link #parse(Path, String, List)}
     */
    public static CudaUnit parse(Path file, String text, List<Path> includeDirs, Map<String, String> defines,
                                 List<String> undefines, List<Path> preIncludes) {
        SourceFile src = new SourceFile(file, text);
        List<Diagnostic> diags = new ArrayList<>();
        try {
            return doParse(src, file, text, includeDirs == null ? List.of() : includeDirs, defines, undefines,
                preIncludes, diags);
        } catch (StackOverflowError e) {
            diags.add(Diagnostic.at(Diagnostic.Severity.ERROR, src, 0, "the input is nested too deeply for klap's "
                    + "parser (expressions or statements nested thousands of levels deep); split the nesting, or "
                    + "raise the stack with KLAP_JAVA_OPTS=-Xss64m", "nesting"));
            return new CudaUnit(src, List.of(), List.of(), diags, Set.of());
        } catch (RuntimeException e) {
            diags.add(Diagnostic.at(Diagnostic.Severity.ERROR, src, 0, "internal parser failure: " + e, "parse"));
            return new CudaUnit(src, List.of(), List.of(), diags, Set.of());
        }
    }

    private static CudaUnit doParse(SourceFile src, Path file, String text, List<Path> includeDirs,
                                    Map<String, String> defines, List<String> undefines, List<Path> preIncludes,
                                    List<Diagnostic> diags) throws RuntimeException {
        String mainPath = file.toAbsolutePath().normalize().toString();
        Prepass prepass = Prepass.run(text);
        String[] local = includeDirs.stream().map(p -> p.toAbsolutePath().normalize().toString())
            .toArray(String[]::new);
        Map<String, String> macros = CudaPrelude.macros();
        for (Map.Entry<String, String> d : defines.entrySet()) {
            macros.keySet().removeIf(k -> macroName(k).equals(macroName(d.getKey())));
            macros.put(d.getKey(), d.getValue());
        }
        for (String u : undefines) {
            macros.keySet().removeIf(k -> macroName(k).equals(u));
        }
        List<String> forced = new ArrayList<>();
        forced.add(CudaPrelude.PATH);
        for (Path p : preIncludes) {
            forced.add(p.toAbsolutePath().normalize().toString());
        }
        ExtendedScannerInfo info = new ExtendedScannerInfo(macros, new String[0], new String[0],
            forced.toArray(String[]::new), local);
        HeaderProvider headers = new HeaderProvider();
        IASTTranslationUnit tu;
        try {
            tu = GPPLanguage.getDefault().getASTTranslationUnit(FileContent.create(mainPath, prepass.out.clone()),
                info, headers, null, ILanguage.OPTION_IS_SOURCE_UNIT | ILanguage.OPTION_NO_IMAGE_LOCATIONS,
                new DefaultLogService());
        } catch (Exception e) {
            diags.add(Diagnostic.at(Diagnostic.Severity.ERROR, src, 0, "internal parser failure: " + e, "parse"));
            return new CudaUnit(src, List.of(), List.of(), diags, Set.of());
        }

        Problems problems = new Problems(src, mainPath, headers, diags);
        // missing quote-includes
        for (IASTPreprocessorIncludeStatement inc : tu.getIncludeDirectives()) {
            if (inc.isSystemInclude() || !inc.isActive() || inc.isResolved() || isToolkitHeader(inc.getName().toString())) {
                continue;
            }
            IASTFileLocation l = inc.getFileLocation();
            if (l == null) {
                continue;
            }
            problems.add(l, "cannot find include file \"" + inc.getName() + "\"", "missing-include");
        }
        for (IASTProblem p : tu.getPreprocessorProblems()) {
            if (p.getID() == IProblem.PREPROCESSOR_INCLUSION_NOT_FOUND) {
                continue; // system includes are not resolved on purpose; quote includes handled above
            }
            IASTFileLocation l = p.getFileLocation();
            if (l == null || CudaPrelude.PATH.equals(l.getFileName())) {
                continue;
            }
            problems.add(l, preprocessorMessage(p), "parse");
        }
        tu.accept(new ASTVisitor() {
            {
                shouldVisitProblems = true;
            }

            @Override
            public int visit(IASTProblem p) {
                IASTFileLocation l = p.getFileLocation();
                if (l != null && !CudaPrelude.PATH.equals(l.getFileName())) {
                    String detail = problemText(p, text, mainPath, l);
                    problems.add(l, "syntax error" + (detail.isEmpty() ? "" : " near '" + detail + "'"), "parse");
                }
                return PROCESS_CONTINUE;
            }
        });

        // macro expansions of the main file, for launch-in-macro reports
        List<SourceRange> expansions = new ArrayList<>();
        IASTPreprocessorMacroExpansion[] mexp = tu.getMacroExpansions();
        for (IASTPreprocessorMacroExpansion m : mexp) {
            IASTFileLocation l = m.getFileLocation();
            if (l != null && mainPath.equals(l.getFileName())) {
                expansions.add(new SourceRange(l.getNodeOffset(), l.getNodeLength()));
            }
        }
        AstConverter conv = new AstConverter(src, prepass, mainPath, tu, diags);
        conv.findLaunches(expansions);
        reportLaunchesInMacroBodies(tu, mainPath, prepass, headers, mexp, conv);
        conv.modelMacroLaunches();

        List<FunctionDef> functions = new ArrayList<>(conv.functions());
        Set<String> elsewhere = new java.util.LinkedHashSet<>(conv.kernelsDeclaredElsewhere(functions));
        Set<String> archConditional = setAsideArchConditional(tu, mainPath, src, functions, diags);

        List<Pragma> pragmas = new ArrayList<>();
        for (IASTPreprocessorStatement st : tu.getAllPreprocessorStatements()) {
            if (st instanceof IASTPreprocessorPragmaStatement ps && ps.isPartOfTranslationUnitFile()) {
                IASTFileLocation l = ps.getFileLocation();
                if (l != null && mainPath.equals(l.getFileName())) {
                    pragmas.add(new Pragma(new SourceRange(l.getNodeOffset(), l.getNodeLength()),
                        new String(ps.getMessage()).trim()));
                }
            }
        }
        pragmas.sort(Comparator.comparingInt(p -> p.range().offset()));
        noteHeaderLaunches(tu, file, headers, diags);
        diags.sort(Comparator.comparing((Diagnostic d) -> !d.file().equals(String.valueOf(file)))
            .thenComparingInt(Diagnostic::line).thenComparingInt(Diagnostic::column));
        Set<klap.model.LibraryCalls.Library> libraries = librariesIncluded(tu);
        HeaderFunctions inHeaders = new HeaderFunctions(tu, mainPath, libraries);
        Set<String> unseen = new java.util.LinkedHashSet<>(conv.deviceFunctionsWithoutBody());
        unseen.addAll(inHeaders.opaque);
        for (String name : archConditional) {
            (conv.functions().stream().anyMatch(f -> f.name().equals(name) && f.kind() == FunctionDef.Kind.KERNEL)
                ? elsewhere : unseen).add(name);
        }
        Map<String, Path> kernelHeaders = new java.util.LinkedHashMap<>();
        conv.kernelsInHeaders.forEach((name, path) -> {
            if (elsewhere.contains(name)) {
                kernelHeaders.put(name, shownPath(path, file));
            }
        });
        return new CudaUnit(src, functions, pragmas, dedupe(diags), Set.copyOf(elsewhere), Set.copyOf(unseen),
            Set.copyOf(inHeaders.synchronizing), Set.copyOf(inHeaders.indexReaders), Set.copyOf(inHeaders.opaque),
            Map.copyOf(kernelHeaders), ImplicitCalls.of(tu, mainPath, inHeaders), Set.copyOf(libraries),
            headerMacroExpansions(mexp, mainPath), Set.copyOf(inHeaders.exiting));
    }

    /**
     * @return the libraries with collectives ({@link klap.model.LibraryCalls}) that the translation
     *         unit includes: its include directives, those of the project headers it reads included (an
     *         angle include gets no content, but its directive is there), active ones only
     */
    private static Set<klap.model.LibraryCalls.Library> librariesIncluded(IASTTranslationUnit tu) {
        List<String> names = new ArrayList<>();
        for (IASTPreprocessorIncludeStatement inc : tu.getIncludeDirectives()) {
            IASTFileLocation l = inc.getFileLocation();
            if (inc.isActive() && (l == null || !CudaPrelude.PATH.equals(l.getFileName()))) {
                names.add(inc.getName().toString());
            }
        }
        return klap.model.LibraryCalls.librariesOf(names);
    }

    /**
     * Notes, once per header, the device-side launches that the project's own headers hold (a kernel
     * or {@code __device__} function of an included {@code "kernels.cuh"}, or of an included {@code .cu}
     * file). klap transforms the file it is given and leaves every header as written, so those launches
     * stay CDP launches; without a word the user would find nothing aggregated and not know why.
     * One note {@code [klap-header-launches]} at the header's first such launch ({@code file:line:col}
     * of its {@code <<<}) gives their number and what to do. Launches in host functions of a header are
     * not counted (klap does not change host launches of kernels it keeps), nor launches written in a
     * macro's body.
     *
     * @param tu       the parsed unit, headers included
     * @param file     the main file as the user named it
     * @param headers  the header texts and pre-passes read while parsing
     * @param diags    where the notes go
     */
    private static void noteHeaderLaunches(IASTTranslationUnit tu, Path file, HeaderProvider headers,
                                           List<Diagnostic> diags) {
        Map<String, Map<Integer, Prepass.Chevron>> anchors = new HashMap<>();
        headers.headerPrepasses.forEach((path, pre) -> {
            for (Prepass.Chevron c : pre.chevrons) {
                if (!c.inDirective()) {
                    anchors.computeIfAbsent(path, k -> new HashMap<>()).put(c.open() + 1, c);
                }
            }
        });
        if (anchors.isEmpty()) {
            return;
        }
        Map<String, List<Integer>> found = new java.util.TreeMap<>();
        tu.accept(new ASTVisitor() {
            {
                shouldVisitExpressions = true;
            }

            @Override
            public int visit(IASTExpression e) {
                // the (((/))) characters are literal text: a node spanning exactly them is the launch
                if (!(e instanceof IASTUnaryExpression u) || u.getOperator() != IASTUnaryExpression.op_bracketedPrimary) {
                    return PROCESS_CONTINUE;
                }
                IASTFileLocation l = u.getFileLocation();
                Map<Integer, Prepass.Chevron> in = l == null ? null : anchors.get(l.getFileName());
                Prepass.Chevron c = in == null ? null : in.get(l.getNodeOffset());
                if (c == null || l.getNodeOffset() + l.getNodeLength() != c.close() + 2) {
                    return PROCESS_CONTINUE;
                }
                IASTNode f = u.getParent();
                while (f != null && !(f instanceof IASTFunctionDefinition)) {
                    f = f.getParent();
                }
                if (f instanceof IASTFunctionDefinition fd) {
                    IASTNode templ = fd.getParent() instanceof ICPPASTTemplateDeclaration t ? t : null;
                    if (AstConverter.kindOf(AstConverter.attributes(fd, fd.getDeclSpecifier(), fd.getDeclarator(),
                            templ)) != FunctionDef.Kind.HOST) {
                        List<Integer> at = found.computeIfAbsent(l.getFileName(), k -> new ArrayList<>());
                        if (!at.contains(c.open())) {
                            at.add(c.open());
                        }
                    }
                }
                return PROCESS_CONTINUE;
            }
        });
        String main = String.valueOf(file.getFileName());
        found.forEach((path, at) -> {
            SourceFile hf = new SourceFile(shownPath(path, file), headers.headerTexts.get(path));
            String name = String.valueOf(Path.of(path).getFileName());
            int n = at.size();
            diags.add(Diagnostic.at(Diagnostic.Severity.NOTE, hf, java.util.Collections.min(at), n + " device-side "
                + "launch site" + (n == 1 ? "" : "s") + " in this included file (" + name + ", included by " + main
                + ") stay" + (n == 1 ? "s" : "") + " as written: klap transforms only the file it is given, never "
                + "what it includes; to aggregate " + (n == 1 ? "it" : "them") + ", transform " + name + " itself "
                + "(klap " + name + " -o OUT) and include OUT instead, or move the launching kernels into "
                + main, "header-launches"));
        });
    }

    /**
     * @param header the path CDT read a header from (absolute)
     * @param main   the main file as the user named it
     * @return how diagnostics name the header: as gcc does, through the main file's directory as the
     *         user wrote it ({@code src/util.cuh} for {@code src/main.cu}) when the header lies below that
     *         directory and the main file was named by a relative path; otherwise {@code header}
     */
    static Path shownPath(String header, Path main) {
        Path h = Path.of(header).normalize();
        Path dir = main.toAbsolutePath().normalize().getParent();
        if (main.isAbsolute() || dir == null || !h.startsWith(dir)) {
            return h;
        }
        Path rel = dir.relativize(h);
        return main.getParent() == null ? rel : main.getParent().resolve(rel);
    }

    private static final java.util.regex.Pattern CUDA_ARCH = java.util.regex.Pattern.compile("\\b__CUDA_ARCH__\\b");

    /**
     * @return true if {@code st} is an {@code #if}, {@code #ifdef}, {@code #ifndef} or {@code #elif}
     *         whose condition names {@code __CUDA_ARCH__} (also on a line continued with a backslash)
     */
    static boolean archConditional(IASTPreprocessorStatement st) {
        return (st instanceof IASTPreprocessorIfStatement || st instanceof IASTPreprocessorIfdefStatement
            || st instanceof IASTPreprocessorIfndefStatement || st instanceof IASTPreprocessorElifStatement)
            && CUDA_ARCH.matcher(st.getRawSignature().replaceAll("\\\\\r?\n", " ")).find();
    }

    /**
     * Sets aside the device-side functions whose body holds a conditional directive on {@code
     * __CUDA_ARCH__} ({@code #ifdef __CUDA_ARCH__}, {@code #if __CUDA_ARCH__ >= 800}, ...). klap reads
     * the file as the host compilation sees it ({@code __CUDA_ARCH__} undefined, {@link CudaPrelude}),
     * while nvcc compiles such a body, for each target architecture, with code klap never saw: a
     * barrier, a return, a launch or a write of a local that would change what klap may do. So the
     * function is removed from {@code functions} (a kernel is then handled as one defined in another
     * file, a {@code __device__} or {@code __host__ __device__} function as one klap cannot follow:
     * its launches stay as written, it is not aggregated as a child, and its calls count as calls of
     * unknown code), with a warning {@code [klap-cuda-arch]} at the directive.
     *
     * @return the names of the functions set aside
     */
    private static Set<String> setAsideArchConditional(IASTTranslationUnit tu, String mainPath, SourceFile src,
                                                       List<FunctionDef> functions, List<Diagnostic> diags) {
        List<Integer> directives = new ArrayList<>();
        for (IASTPreprocessorStatement st : tu.getAllPreprocessorStatements()) {
            IASTFileLocation l = st.getFileLocation();
            if (l != null && mainPath.equals(l.getFileName()) && archConditional(st)) {
                directives.add(l.getNodeOffset());
            }
        }
        Set<String> names = new java.util.LinkedHashSet<>();
        java.util.Map<String, List<int[]>> regions = archRegions(tu);
        java.util.Map<String, Integer> archMacros = archMacros(tu, regions);
        List<Integer> statementExpressions = statementExpressions(tu, mainPath);
        if (directives.isEmpty() && archMacros.isEmpty() && statementExpressions.isEmpty() && regions.isEmpty()) {
            return names;
        }
        // names declared at file or namespace scope under a conditional on __CUDA_ARCH__ (review 2026-12-01:
        // a __device__ lane_base() returning threadIdx.x on the device and 0 on the host, a constexpr TILE of
        // 64 on the device and 32 on the host): klap reads the host's
        Set<String> archNames = new java.util.LinkedHashSet<>();
        if (!regions.isEmpty()) {
            collectArchNames(tu.getDeclarations(), regions, archNames);
            // a macro of the file that names one of them names it too (#define TILE TILE_)
            java.util.regex.Matcher d = java.util.regex.Pattern.compile("(?m)^\\s*#\\s*define\\s+(\\w+)(.*)").matcher(src.text());
            List<String[]> defines = new ArrayList<>();
            while (d.find()) {
                defines.add(new String[] {d.group(1), d.group(2)});
            }
            for (boolean grew = !archNames.isEmpty(); grew; ) {
                grew = false;
                for (String[] m : defines) {
                    if (!archNames.contains(m[0]) && archNames.stream().anyMatch(n -> java.util.regex.Pattern.compile(
                            "\\b" + java.util.regex.Pattern.quote(n) + "\\b").matcher(m[1]).find())) {
                        archNames.add(m[0]);
                        grew = true;
                    }
                }
            }
        }
        List<int[]> mainRegions = regions.getOrDefault(mainPath, List.of());
        String text = src.text(); // comments included: a name there only sets aside needlessly
        // the expansions in the main file of macros defined under such a conditional: offset -> macro name
        java.util.TreeMap<Integer, String> expansions = new java.util.TreeMap<>();
        for (IASTPreprocessorMacroExpansion m : tu.getMacroExpansions()) {
            IASTFileLocation l = m.getFileLocation();
            if (l == null || !mainPath.equals(l.getFileName())) {
                continue;
            }
            List<IASTName> refs = new ArrayList<>(List.of(m.getNestedMacroReferences()));
            refs.add(0, m.getMacroReference());
            for (IASTName r : refs) {
                if (archMacros.containsKey(r.toString())) {
                    expansions.putIfAbsent(l.getNodeOffset(), r.toString());
                }
            }
        }
        functions.removeIf(f -> {
            if (f.kind() == FunctionDef.Kind.HOST) {
                return false;
            }
            String why = null;
            int at = -1;
            for (int d : directives) {
                if (d > f.range().offset() && d < f.range().end()) {
                    at = d;
                    why = "has code under a conditional on __CUDA_ARCH__";
                    break;
                }
            }
            // in the body only: a specifier macro (#define FORCEINLINE __forceinline__ / inline) changes nothing
            var use = expansions.ceilingEntry(f.body().range().offset());
            if (why == null && use != null && use.getKey() < f.body().range().end()) {
                // #ifdef __CUDA_ARCH__ #define GID (blockIdx.x * ...) #else #define GID 0 (self-review 2026-11-27)
                at = use.getKey();
                why = "uses the macro '" + use.getValue() + "', defined under a conditional on __CUDA_ARCH__";
            }
            if (why == null) {
                for (int[] r : mainRegions) {
                    if (f.range().offset() > r[0] && f.range().offset() < r[1] && !f.name().matches("atomic\\w*|__\\w+")) {
                        at = f.range().offset();
                        why = "is defined under a conditional on __CUDA_ARCH__";
                        break;
                    }
                }
            }
            if (why == null && archNames.contains(f.name())) {
                at = f.range().offset();
                why = "is declared under a conditional on __CUDA_ARCH__";
            }
            if (why == null && !archNames.isEmpty()) {
                String body = text.substring(f.body().range().offset(), f.body().range().end());
                for (String n : archNames) {
                    java.util.regex.Matcher w = java.util.regex.Pattern.compile("\\b" + java.util.regex.Pattern.quote(n) + "\\b")
                        .matcher(body);
                    if (w.find()) {
                        at = f.body().range().offset() + w.start();
                        why = "uses '" + n + "', declared under a conditional on __CUDA_ARCH__";
                        break;
                    }
                }
            }
            if (why == null) {
                for (int o : statementExpressions) {
                    if (o > f.range().offset() && o < f.range().end()) {
                        names.add(f.name());
                        diags.add(Diagnostic.at(Diagnostic.Severity.WARNING, src, o, "'" + f.name() + "' has a GNU statement "
                            + "expression ({ ... }), whose statements klap does not read (a launch, a barrier or a write "
                            + "there would go unseen); klap leaves its launches as written, does not aggregate launches of "
                            + "it, and takes its calls as calls of code it cannot follow", "statement-expression"));
                        return true;
                    }
                }
                return false;
            }
            names.add(f.name());
            diags.add(Diagnostic.at(Diagnostic.Severity.WARNING, src, at, "'" + f.name() + "' " + why + ", which "
                + "klap does not see (it reads the host compilation's view of the file, where __CUDA_ARCH__ is "
                + "undefined); klap leaves its launches as written, does not aggregate launches of it, and takes its "
                + "calls as calls of code it cannot follow", "cuda-arch"));
            return true;
        });
        return names;
    }

    /**
     * @return for each expansion in the main file of a macro whose definition is in another file,
     *         its offset and its expanded text (CDT's, of the expansion as a whole)
     */
    private static java.util.SortedMap<Integer, String> headerMacroExpansions(IASTPreprocessorMacroExpansion[] mexp,
                                                                                String mainPath) {
        java.util.TreeMap<Integer, String> out = new java.util.TreeMap<>();
        for (IASTPreprocessorMacroExpansion m : mexp) {
            IASTFileLocation l = m.getFileLocation();
            IASTPreprocessorMacroDefinition d = m.getMacroDefinition();
            IASTFileLocation dl = d == null ? null : d.getFileLocation();
            if (l == null || !mainPath.equals(l.getFileName()) || dl == null || mainPath.equals(dl.getFileName())) {
                continue;
            }
            StringBuilder text = new StringBuilder(d.getExpansion());
            for (IASTName nested : m.getNestedMacroReferences()) {
                if (nested.resolveBinding() instanceof IMacroBinding mb) {
                    text.append('\n').append(mb.getExpansion());
                }
            }
            out.merge(l.getNodeOffset(), text.toString(), (a, b) -> a + "\n" + b);
        }
        return java.util.Collections.unmodifiableSortedMap(out);
    }

    /** @return the offsets, in the main file, of its GNU statement expressions {@code ({ ... })} */
    private static List<Integer> statementExpressions(IASTTranslationUnit tu, String mainPath) {
        List<Integer> out = new ArrayList<>();
        tu.accept(new ASTVisitor() {
            {
                shouldVisitExpressions = true;
            }

            @Override
            public int visit(IASTExpression e) {
                if (e instanceof org.eclipse.cdt.core.dom.ast.gnu.IGNUASTCompoundStatementExpression) {
                    IASTFileLocation l = e.getFileLocation();
                    if (l != null && mainPath.equals(l.getFileName())) {
                        out.add(l.getNodeOffset());
                    }
                }
                return PROCESS_CONTINUE;
            }
        });
        return out;
    }

    /**
     * @return per file, the extents {start, end} of the conditional groups ({@code #if} ...
     *         {@code #endif}) of which some branch tests {@code __CUDA_ARCH__}
     */
    private static java.util.Map<String, List<int[]>> archRegions(IASTTranslationUnit tu) {
        java.util.Map<String, java.util.ArrayDeque<int[]>> open = new java.util.HashMap<>();
        java.util.Map<String, List<int[]>> out = new java.util.HashMap<>();
        for (IASTPreprocessorStatement st : tu.getAllPreprocessorStatements()) {
            IASTFileLocation l = st.getFileLocation();
            if (l == null) {
                continue;
            }
            var stack = open.computeIfAbsent(l.getFileName(), k -> new java.util.ArrayDeque<>());
            boolean arch = archConditional(st);
            if (st instanceof IASTPreprocessorIfStatement || st instanceof IASTPreprocessorIfdefStatement
                    || st instanceof IASTPreprocessorIfndefStatement) {
                stack.push(new int[] {l.getNodeOffset(), arch ? 1 : 0});
            } else if (st instanceof IASTPreprocessorElifStatement && !stack.isEmpty()) {
                stack.peek()[1] |= arch ? 1 : 0;
            } else if (st instanceof IASTPreprocessorEndifStatement && !stack.isEmpty()) {
                int[] g = stack.pop();
                if (g[1] == 1) {
                    out.computeIfAbsent(l.getFileName(), k -> new ArrayList<>())
                        .add(new int[] {g[0], l.getNodeOffset() + l.getNodeLength()});
                }
            }
        }
        return out;
    }

    /** Adds the names that {@code decls} (and the namespaces and linkage blocks among them) declare inside {@code regions}. */
    private static void collectArchNames(org.eclipse.cdt.core.dom.ast.IASTDeclaration[] decls,
                                         java.util.Map<String, List<int[]>> regions, Set<String> out) {
        for (var d : decls) {
            if (d instanceof org.eclipse.cdt.core.dom.ast.cpp.ICPPASTNamespaceDefinition ns) {
                collectArchNames(ns.getDeclarations(), regions, out);
                continue;
            }
            if (d instanceof org.eclipse.cdt.core.dom.ast.cpp.ICPPASTLinkageSpecification ls) {
                collectArchNames(ls.getDeclarations(), regions, out);
                continue;
            }
            IASTFileLocation l = d.getFileLocation();
            // a declaration inside a region, or one that holds a region (an enumerator list or a class body with
            // a conditional inside: review 2026-12-01)
            var inner = d instanceof ICPPASTTemplateDeclaration t ? t.getDeclaration() : d;
            // (a function whose body holds the conditional is set aside by the body rule; its callers call code
            // klap cannot follow)
            boolean holds = !(inner instanceof IASTFunctionDefinition);
            if (l == null || regions.getOrDefault(l.getFileName(), List.of()).stream()
                    .noneMatch(r -> l.getNodeOffset() > r[0] && l.getNodeOffset() < r[1]
                            || holds && l.getNodeOffset() < r[1] && r[0] < l.getNodeOffset() + l.getNodeLength())) {
                continue;
            }
            if (inner instanceof org.eclipse.cdt.core.dom.ast.IASTSimpleDeclaration sd0
                    && sd0.getDeclSpecifier() instanceof org.eclipse.cdt.core.dom.ast.IASTCompositeTypeSpecifier ct0) {
                collectArchNames(ct0.getMembers(), regions, out); // its members declared under the conditional
            }
            if (inner instanceof IASTFunctionDefinition fd) {
                addName(fd.getDeclarator(), out);
            } else if (inner instanceof org.eclipse.cdt.core.dom.ast.IASTSimpleDeclaration sd
                    && sd.getDeclSpecifier().getStorageClass() != org.eclipse.cdt.core.dom.ast.IASTDeclSpecifier.sc_typedef) {
                // (a typedef: klap writes the type's name, and FunctionDef.scalarTypes leaves such types out)
                for (var dc : sd.getDeclarators()) {
                    addName(dc, out);
                }
                if (sd.getDeclSpecifier() instanceof org.eclipse.cdt.core.dom.ast.IASTCompositeTypeSpecifier ct) {
                    out.add(lastSegment(ct.getName()));
                } else if (sd.getDeclSpecifier() instanceof org.eclipse.cdt.core.dom.ast.IASTEnumerationSpecifier es) {
                    out.add(lastSegment(es.getName()));
                    for (var en : es.getEnumerators()) {
                        out.add(lastSegment(en.getName()));
                    }
                }
            }
        }
        out.remove("");
        // a polyfill of a CUDA built-in (#if __CUDA_ARCH__ < 600 ... atomicAdd(double*, double) ...) does on
        // the device what the built-in does: no reason to set its callers aside
        out.removeIf(n -> n.matches("atomic\\w*|__\\w+"));
    }

    private static void addName(org.eclipse.cdt.core.dom.ast.IASTDeclarator dc, Set<String> out) {
        while (dc != null && dc.getName().toString().isEmpty() && dc.getNestedDeclarator() != null) {
            dc = dc.getNestedDeclarator();
        }
        if (dc != null) {
            out.add(lastSegment(dc.getName()));
        }
    }

    private static String lastSegment(IASTName n) {
        String s = n == null ? "" : n.toString();
        int c = s.lastIndexOf("::");
        s = c >= 0 ? s.substring(c + 2) : s;
        int t = s.indexOf('<');
        return (t >= 0 ? s.substring(0, t) : s).strip();
    }

    /**
     * @return the macros (by name) defined between a conditional directive on {@code __CUDA_ARCH__} and
     *         its {@code #endif}, in any file of the unit, active in the host view or not: their device
     *         definition may differ from the one klap expands
     */
    private static java.util.Map<String, Integer> archMacros(IASTTranslationUnit tu,
                                                             java.util.Map<String, List<int[]>> regions) {
        java.util.Map<String, Integer> out = new java.util.HashMap<>();
        for (IASTPreprocessorStatement st : tu.getAllPreprocessorStatements()) {
            IASTFileLocation l = st.getFileLocation();
            if (l != null && st instanceof IASTPreprocessorMacroDefinition md && regions.getOrDefault(l.getFileName(), List.of())
                    .stream().anyMatch(r -> l.getNodeOffset() > r[0] && l.getNodeOffset() < r[1])) {
                out.put(md.getName().toString(), l.getNodeOffset());
            }
        }
        return out;
    }

    private static final java.util.regex.Pattern TOOLKIT_HEADER = java.util.regex.Pattern.compile(
        "cuda[_A-Za-z0-9]*\\.h|cu(rand|blas|fft|sparse|solver)[_A-Za-z0-9]*\\.h|nvToolsExt.*|nvtx3/.*"
            + "|cooperative_groups.*|device_(launch_parameters|functions|atomic_functions)\\.h|sm_\\d+_.*\\.h"
            + "|vector_(types|functions)\\.h|math_(functions|constants)\\.h|driver_types\\.h|host_defines\\.h"
            + "|crt/.*|thrust/.*|cub/.*|helper_(cuda|functions|string|math|timer)\\.h");
    private static final Set<String> STANDARD_HEADERS = Set.of("assert.h", "ctype.h", "errno.h", "float.h",
        "limits.h", "locale.h", "math.h", "setjmp.h", "signal.h", "stdarg.h", "stddef.h", "stdint.h", "stdio.h",
        "stdlib.h", "string.h", "time.h", "stdbool.h", "inttypes.h", "unistd.h", "sys/time.h", "iostream",
        "cstdio", "cstdlib", "cstring", "cmath", "vector", "algorithm", "string", "chrono", "cassert", "cstdint");

    /**
     * @return true for a quote-include that names a CUDA toolkit or standard header
     *         ({@code "cuda_runtime.h"}, {@code "stdio.h"}): like an angle include, it gets no
     *         content and is not reported when it is not found among the project's headers
     */
    static boolean isToolkitHeader(String name) {
        return STANDARD_HEADERS.contains(name) || TOOLKIT_HEADER.matcher(name).matches();
    }

    /** The name of a macro key: {@code F} for {@code F(a, b)}. */
    private static String macroName(String key) {
        int paren = key.indexOf('(');
        return (paren < 0 ? key : key.substring(0, paren)).trim();
    }

    /** Notes the expansions (in the main file) of macros whose {@code #define} body holds a launch. */
    private static void reportLaunchesInMacroBodies(IASTTranslationUnit tu, String mainPath, Prepass prepass,
                                                    HeaderProvider headers, IASTPreprocessorMacroExpansion[] mexp,
                                                    AstConverter conv) {
        Map<String, List<Prepass.Chevron>> byFile = new HashMap<>();
        byFile.put(mainPath, prepass.chevrons);
        headers.headerPrepasses.forEach((p, pre) -> byFile.put(p, pre.chevrons));
        boolean any = byFile.values().stream().flatMap(List::stream).anyMatch(Prepass.Chevron::inDirective);
        if (!any) {
            return;
        }
        for (IASTPreprocessorMacroExpansion m : mexp) {
            IASTFileLocation l = m.getFileLocation();
            if (l == null || !mainPath.equals(l.getFileName())) {
                continue;
            }
            List<IASTPreprocessorMacroDefinition> defs = new ArrayList<>();
            defs.add(m.getMacroDefinition());
            for (IASTName nested : m.getNestedMacroReferences()) {
                IBinding b = nested.resolveBinding();
                if (b instanceof IMacroBinding) {
                    for (IASTName dn : tu.getDefinitionsInAST(b)) {
                        if (dn.getParent() instanceof IASTPreprocessorMacroDefinition d) {
                            defs.add(d);
                        }
                    }
                }
            }
            for (IASTPreprocessorMacroDefinition d : defs) {
                IASTFileLocation dl = d == null ? null : d.getFileLocation();
                if (dl == null) {
                    continue;
                }
                List<Prepass.Chevron> cs = byFile.get(dl.getFileName());
                if (cs == null) {
                    continue;
                }
                int s = dl.getNodeOffset();
                int e = s + dl.getNodeLength();
                if (cs.stream().anyMatch(c -> c.inDirective() && c.open() >= s && c.open() < e)) {
                    conv.launchInMacro(SourceRange.of(l.getNodeOffset(), l.getNodeOffset() + l.getNodeLength()));
                    break;
                }
            }
        }
    }

    private static String preprocessorMessage(IASTProblem p) {
        String[] args = p.getArguments();
        String arg = args != null && args.length > 0 ? args[0] : "";
        return switch (p.getID()) {
            case IProblem.PREPROCESSOR_POUND_ERROR -> "#error " + arg;
            case IProblem.PREPROCESSOR_UNBALANCE_CONDITION -> "unbalanced preprocessor conditional";
            default -> "preprocessor error: " + p.getMessage();
        };
    }

    /** @return the source text of a problem node (first line, at most 40 characters), or empty */
    private static String problemText(IASTProblem p, String mainText, String mainPath, IASTFileLocation l) {
        if (!mainPath.equals(l.getFileName())) {
            return "";
        }
        int s = l.getNodeOffset();
        int e = Math.min(mainText.length(), s + l.getNodeLength());
        if (s < 0 || s >= e) {
            return "";
        }
        String t = mainText.substring(s, e).strip();
        int nl = t.indexOf('\n');
        if (nl >= 0) {
            t = t.substring(0, nl).strip();
        }
        return t.length() > 40 ? t.substring(0, 40) + "..." : t;
    }

    private static List<Diagnostic> dedupe(List<Diagnostic> ds) {
        List<Diagnostic> out = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (Diagnostic d : ds) {
            if (seen.add(d.format())) {
                out.add(d);
            }
        }
        return out;
    }

    /** Turns CDT locations into diagnostics in the main file or in a header. */
    private static final class Problems {
        private final SourceFile src;
        private final String mainPath;
        private final HeaderProvider headers;
        private final List<Diagnostic> diags;
        private final Map<String, SourceFile> headerFiles = new HashMap<>();

        Problems(SourceFile src, String mainPath, HeaderProvider headers, List<Diagnostic> diags) {
            this.src = src;
            this.mainPath = mainPath;
            this.headers = headers;
            this.diags = diags;
        }

        void add(IASTFileLocation l, String message, String id) {
            String f = l.getFileName();
            if (mainPath.equals(f)) {
                diags.add(Diagnostic.at(Diagnostic.Severity.ERROR, src, Math.min(l.getNodeOffset(),
                    src.text().length()), message, id));
                return;
            }
            String ht = headers.headerTexts.get(f);
            if (ht == null) {
                return;
            }
            SourceFile hf = headerFiles.computeIfAbsent(f, k -> new SourceFile(shownPath(k, src.path()), ht));
            diags.add(Diagnostic.at(Diagnostic.Severity.ERROR, hf, Math.min(l.getNodeOffset(), ht.length()), message,
                id));
        }
    }
}
