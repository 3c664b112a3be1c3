package klap.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * What klap-nvcc needs to know about one nvcc command line: which arguments are input files (and of
 * which kind), which compilation phase it runs, and where its output and dependency files go. Every
 * argument is kept as written; this class only reads them.
 *
 * <p>Shape: {@code parse(["-c", "-Isrc", "src/a.cu", "-o", "a.o"])} gives one input {@code src/a.cu}
 * of kind {@link Kind#CUDA}, {@code has("--compile")}, {@code values("--include-path") = ["src"]},
 * {@code last("--output-file") = "a.o"}. {@code @file} arguments are replaced by the file's words
 * (nvcc itself does not read {@code @file}); {@code --options-file}/{@code -optf} files are read to
 * find inputs ({@link #flat}) but stay as written in {@link #top}.
 *
 * <p>Options are recognised by nvcc's own names (long and short, {@code --opt=v}, {@code --opt v},
 * {@code -Iv}); an option that takes a value consumes the next argument when the value is not
 * attached, so the value of {@code -o x.cu} is never taken for an input.
 */
final class NvccCommandLine {

    /** What an input file is, by its extension (or {@code -x}). */
    enum Kind { CUDA, HOST_SOURCE, OBJECT, OTHER }

    /**
     * One input file.
     *
     * @param path the argument as written
     * @param kind its kind
     * @param flatIndex its index in {@link #flat}
     * @param topIndex its index in {@link #top}, or -1 when it comes from an options file
     */
    record Input(String path, Kind kind, int flatIndex, int topIndex) {}

    /** Options (long names) that take a value, with their short aliases. */
    private static final Map<String, String> VALUE_OPTIONS = new HashMap<>();
    /** Options (long names) without a value that klap-nvcc looks at, with their short aliases. */
    private static final Map<String, String> FLAG_OPTIONS = new HashMap<>();
    /** Options whose value is a comma-separated list. */
    private static final Set<String> LIST_OPTIONS = Set.of("--include-path", "--system-include", "--options-file",
            "--define-macro", "--undefine-macro", "--pre-include");

    static {
        String[] values = {
            "--output-file -o", "--pre-include -include", "--library -l", "--define-macro -D",
            "--undefine-macro -U", "--include-path -I", "--system-include -isystem", "--library-path -L",
            "--output-directory -odir", "--compiler-bindir -ccbin", "--archiver-binary -arbin", "--cudart -cudart",
            "--cudadevrt -cudadevrt", "--libdevice-directory -ldir", "--target-directory -target-dir",
            "--optimization-info -opt-info", "--optimize -O", "--Ofast-compile -Ofc", "--dopt -dopt",
            "--ftemplate-backtrace-limit -ftemplate-backtrace-limit", "--ftemplate-depth -ftemplate-depth",
            "--x -x", "--std -std", "--machine -m", "--compiler-options -Xcompiler", "--linker-options -Xlinker",
            "--archive-options -Xarchive", "--ptxas-options -Xptxas", "--nvlink-options -Xnvlink",
            "--static-global-template-stub -static-global-template-stub",
            "--device-entity-has-hidden-visibility -device-entity-has-hidden-visibility", "--threads -t",
            "--split-compile -split-compile", "--split-compile-extended -split-compile-extended",
            "--fdevice-time-trace -fdevice-time-trace", "--keep-dir -keep-dir", "--time -time",
            "--run-args -run-args", "--input-drive-prefix -idp", "--dependency-drive-prefix -ddp",
            "--drive-prefix -dp", "--dependency-target-name -MT", "--dependency-output -MF",
            "--gpu-architecture -arch", "--gpu-code -code", "--generate-code -gencode",
            "--relocatable-device-code -rdc", "--entries -e", "--maxrregcount -maxrregcount", "--ftz -ftz",
            "--prec-div -prec-div", "--prec-sqrt -prec-sqrt", "--fmad -fmad", "--default-stream -default-stream",
            "--Werror -Werror", "--diag-error -diag-error", "--diag-suppress -diag-suppress",
            "--diag-warn -diag-warn", "--host-linker-script -hls", "--brief-diagnostics -brief-diag",
            "--jump-table-density -jtd", "--device-stack-protector -device-stack-protector",
            "--compress-mode -compress-mode", "--frandom-seed -frandom-seed", "--sanitize -sanitize",
            "--options-file -optf"};
        for (String v : values) {
            String[] p = v.split(" ");
            VALUE_OPTIONS.put(p[0], p[0]);
            VALUE_OPTIONS.put(p[1], p[0]);
        }
        String[] flags = {
            "--cuda -cuda", "--cubin -cubin", "--fatbin -fatbin", "--ptx -ptx", "--optix-ir -optix-ir",
            "--ltoir -ltoir", "--preprocess -E", "--generate-dependencies -M",
            "--generate-nonsystem-dependencies -MM", "--generate-dependencies-with-compile -MD",
            "--generate-nonsystem-dependencies-with-compile -MMD", "--generate-dependency-targets -MP",
            "--compile -c", "--device-c -dc", "--device-w -dw", "--device-link -dlink", "--link -link",
            "--lib -lib", "--run -run", "--verbose -v", "--dryrun -dryrun", "--help -h", "--version -V",
            "--shared -shared"};
        for (String f : flags) {
            String[] p = f.split(" ");
            FLAG_OPTIONS.put(p[0], p[0]);
            FLAG_OPTIONS.put(p[1], p[0]);
        }
    }

    /** The arguments after {@code @file} expansion, as they go to nvcc when no options file needs rewriting. */
    final List<String> top;
    /** {@link #top} with {@code --options-file} options replaced by the files' words. */
    final List<String> flat = new ArrayList<>();
    /** The input files, in order. */
    final List<Input> inputs = new ArrayList<>();
    /** (long option name, value or null) for each option seen, in order. */
    private final List<String[]> options = new ArrayList<>();

    private NvccCommandLine(List<String> top) {
        this.top = top;
    }

    /**
     * Parses an nvcc argument list (without the program name).
     *
     * @throws IOException if an {@code @file} or options file cannot be read
     */
    static NvccCommandLine parse(List<String> args) throws IOException {
        List<String> top = new ArrayList<>();
        expandAtFiles(args, top, 0);
        NvccCommandLine cl = new NvccCommandLine(List.copyOf(top));
        cl.scan(top, true, 0);
        cl.classify();
        return cl;
    }

    /**
     * Replaces each {@code @file} argument standing on its own by the file's words; an {@code @file} that
     * is the value of the option before it ({@code -Xlinker @file}, {@code -Xcompiler @file}, {@code -o @x})
     * is the tool's business and stays as written.
     */
    private static void expandAtFiles(List<String> args, List<String> into, int depth) throws IOException {
        boolean isValue = false;
        for (String a : args) {
            boolean value = isValue;
            isValue = a.startsWith("-") && a.indexOf('=') < 0 && VALUE_OPTIONS.containsKey(a);
            if (a.startsWith("@") && a.length() > 1 && !value) {
                if (depth > 8) {
                    throw new IOException("response files nested too deeply at " + a);
                }
                expandAtFiles(Words.split(readFile(a.substring(1))), into, depth + 1);
            } else {
                into.add(a);
            }
        }
    }

    private static String readFile(String name) throws IOException {
        try {
            return Files.readString(Path.of(name), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IOException("cannot read the response file " + name + ": " + e.getMessage(), e);
        }
    }

    private void scan(List<String> args, boolean isTop, int depth) throws IOException {
        for (int i = 0; i < args.size(); i++) {
            String a = args.get(i);
            int topIndex = isTop ? i : -1;
            if (!a.startsWith("-") || a.equals("-")) {
                inputs.add(new Input(a, Kind.OTHER, flat.size(), topIndex));
                flat.add(a);
                continue;
            }
            int eq = a.indexOf('=');
            String name = eq > 0 ? a.substring(0, eq) : a;
            String longName = VALUE_OPTIONS.get(name);
            String value = null;
            int consumed = 0;
            if (longName != null) {
                if (eq > 0) {
                    value = a.substring(eq + 1);
                } else if (i + 1 < args.size()) {
                    value = args.get(i + 1);
                    consumed = 1;
                }
            } else if (FLAG_OPTIONS.containsKey(a)) {
                longName = FLAG_OPTIONS.get(a);
            } else if (a.length() > 2 && !a.startsWith("--") && VALUE_OPTIONS.containsKey(a.substring(0, 2))) {
                // attached single-letter value: -Idir, -DX=1, -O3, -lfoo, -x cu is separate
                longName = VALUE_OPTIONS.get(a.substring(0, 2));
                value = a.substring(2);
            } else {
                longName = a; // an option klap-nvcc does not need to understand
            }
            if (longName.equals("--options-file") && value != null) {
                if (depth > 8) {
                    throw new IOException("options files nested too deeply at " + value);
                }
                for (String f : value.split(",")) {
                    if (!f.isEmpty()) {
                        scan(Words.split(readFile(f)), false, depth + 1);
                    }
                }
                i += consumed;
                continue;
            }
            options.add(new String[] {longName, value});
            for (int k = 0; k <= consumed; k++) {
                flat.add(args.get(i + k));
            }
            i += consumed;
        }
    }

    private void classify() {
        String lang = last("--x");
        for (int i = 0; i < inputs.size(); i++) {
            Input in = inputs.get(i);
            inputs.set(i, new Input(in.path(), kindOf(in.path(), lang), in.flatIndex(), in.topIndex()));
        }
    }

    static Kind kindOf(String path, String lang) {
        String p = path.toLowerCase(Locale.ROOT);
        int dot = p.lastIndexOf('.');
        String ext = dot >= 0 && dot > p.lastIndexOf('/') ? p.substring(dot + 1) : "";
        boolean source = Set.of("cu", "c", "cc", "cpp", "cxx", "c++", "cp").contains(ext);
        if (source && lang != null) {
            return lang.equals("cu") ? Kind.CUDA : Kind.HOST_SOURCE;
        }
        if (path.endsWith(".cu")) {
            return Kind.CUDA;
        }
        if (source || path.endsWith(".C")) {
            return Kind.HOST_SOURCE;
        }
        if (Set.of("o", "obj", "a", "so", "lib", "dll", "dylib").contains(ext) || p.matches(".*\\.so(\\.[0-9]+)+")) {
            return Kind.OBJECT;
        }
        return Kind.OTHER;
    }

    /** Whether the option (long name, e.g. {@code --compile}) is present. */
    boolean has(String longName) {
        return options.stream().anyMatch(o -> o[0].equals(longName));
    }

    /** The last value of the option, or null. */
    String last(String longName) {
        String v = null;
        for (String[] o : options) {
            if (o[0].equals(longName) && o[1] != null) {
                v = o[1];
            }
        }
        return v;
    }

    /** All values of the option, comma lists split for list options. */
    List<String> values(String longName) {
        List<String> vs = new ArrayList<>();
        for (String[] o : options) {
            if (o[0].equals(longName) && o[1] != null) {
                if (LIST_OPTIONS.contains(longName)) {
                    for (String s : o[1].split(",")) {
                        if (!s.isEmpty()) {
                            vs.add(s);
                        }
                    }
                } else {
                    vs.add(o[1]);
                }
            }
        }
        return vs;
    }

    /**
     * The values of several options in command-line order, comma lists split for list options.
     *
     * @param longNames the options' long names, e.g. {@code --define-macro}, {@code --undefine-macro}
     * @return (long name, value) pairs
     */
    List<String[]> valuesInOrder(Set<String> longNames) {
        List<String[]> vs = new ArrayList<>();
        for (String[] o : options) {
            if (longNames.contains(o[0]) && o[1] != null) {
                for (String s : LIST_OPTIONS.contains(o[0]) ? o[1].split(",") : new String[] {o[1]}) {
                    if (!s.isEmpty()) {
                        vs.add(new String[] {o[0], s});
                    }
                }
            }
        }
        return vs;
    }

    /**
     * The {@code -D}/{@code -U} options reduced to klap's form (every {@code -D}, then every {@code -U}):
     * {@code -DA -UA} leaves {@code -UA}, {@code -UA -DA=2} leaves {@code -DA=2}, as the compiler applies
     * them in command-line order.
     *
     * @return klap arguments: {@code -D NAME[=VALUE]} pairs, then {@code -U NAME} pairs
     */
    List<String> macroArgumentsForKlap() {
        Map<String, String> defined = new java.util.LinkedHashMap<>();
        Set<String> undefined = new java.util.LinkedHashSet<>();
        for (String[] o : valuesInOrder(Set.of("--define-macro", "--undefine-macro"))) {
            String name = o[1].split("[=(]", 2)[0].trim();
            if (o[0].equals("--define-macro")) {
                defined.put(name, o[1]);
                undefined.remove(name);
            } else {
                defined.remove(name);
                undefined.add(name);
            }
        }
        List<String> args = new ArrayList<>();
        defined.values().forEach(d -> args.addAll(List.of("-D", d)));
        undefined.forEach(u -> args.addAll(List.of("-U", u)));
        return args;
    }

    /** Input files of the given kind. */
    List<Input> inputs(Kind kind) {
        return inputs.stream().filter(i -> i.kind() == kind).toList();
    }

    /** Whether device code is already relocatable ({@code -rdc=...} given, or {@code -dc}). */
    boolean hasRdcChoice() {
        return has("--relocatable-device-code") || has("--device-c");
    }

    /** Whether the command only preprocesses ({@code -E}, {@code -M}, {@code -MM}). */
    boolean preprocessOnly() {
        return has("--preprocess") || has("--generate-dependencies") || has("--generate-nonsystem-dependencies");
    }

    /** Whether the command stops before linking or does something other than compile/link. */
    boolean hasPhaseOtherThanLink() {
        for (String p : List.of("--compile", "--device-c", "--device-w", "--preprocess", "--generate-dependencies",
                "--generate-nonsystem-dependencies", "--ptx", "--cubin", "--fatbin", "--cuda", "--optix-ir",
                "--ltoir", "--device-link", "--lib", "--dryrun", "--help", "--version")) {
            if (has(p)) {
                return true;
            }
        }
        return false;
    }

    /** A link step: object files and no source files, nothing but linking asked for. */
    boolean isLinkStep() {
        return inputs(Kind.CUDA).isEmpty() && inputs(Kind.HOST_SOURCE).isEmpty() && !inputs(Kind.OBJECT).isEmpty()
                && !hasPhaseOtherThanLink();
    }

    /** Whether dependency generation was asked for ({@code -M}, {@code -MM}, {@code -MD}, {@code -MMD}). */
    boolean generatesDependencies() {
        return has("--generate-dependencies") || has("--generate-nonsystem-dependencies")
                || has("--generate-dependencies-with-compile") || has("--generate-nonsystem-dependencies-with-compile");
    }

    /** Whether the dependency rules go to standard output ({@code -M}/{@code -MM} without {@code -MF} or {@code -o}). */
    boolean dependenciesOnStdout() {
        return (has("--generate-dependencies") || has("--generate-nonsystem-dependencies"))
                && last("--dependency-output") == null && last("--output-file") == null;
    }

    /**
     * The files nvcc may write dependency rules into for the given input (nvcc 12/13 rules: {@code -MF},
     * else {@code -o} for {@code -M}, else the output file or the input's base name with {@code .d},
     * in {@code -odir} if given). May name files that nvcc does not write.
     */
    List<Path> dependencyFiles(String input) {
        List<Path> files = new ArrayList<>();
        String mf = last("--dependency-output");
        String o = last("--output-file");
        if (mf != null) {
            files.add(Path.of(mf));
        } else if (has("--generate-dependencies") || has("--generate-nonsystem-dependencies")) {
            if (o != null) {
                files.add(Path.of(o));
            }
        } else if (o != null) {
            files.add(Path.of(replaceExt(o)));
        } else {
            String base = replaceExt(Path.of(input).getFileName().toString());
            String odir = last("--output-directory");
            files.add(odir == null ? Path.of(base) : Path.of(odir, base));
        }
        return files;
    }

    private static String replaceExt(String p) {
        int slash = p.lastIndexOf('/');
        int dot = p.lastIndexOf('.');
        return (dot > slash + 1 ? p.substring(0, dot) : p) + ".d";
    }
}
