package klap.cli;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import klap.aggregation.AggregationPass;
import klap.bridge.CudaParser;
import klap.model.CudaUnit;
import klap.model.Diagnostic;
import klap.model.SourceFile;
import klap.np.NpMode;
import klap.np.NpPass;
import klap.promotion.PromoteMode;
import klap.promotion.PromotionPass;
import klap.runtime.RuntimeHeaders;
import klap.transform.Granularity;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * The {@code klap} command: reads one CUDA file, aggregates its device-side launches at the chosen
 * granularity (KLAP section II) and writes the transformed CUDA file.
 *
 * <p>Exit codes: 0 success (warnings may have been printed), 1 the input cannot be transformed
 * (error diagnostics on stderr, gcc style), 2 usage errors. The input file is never written; the
 * output is written to a temporary file next to it and then renamed, so an interrupted run leaves
 * no half-written file.
 */
@Command(name = "klap", mixinStandardHelpOptions = true, versionProvider = Klap.Version.class,
        sortOptions = false, usageHelpAutoWidth = true,
        description = {
            "Rewrites a CUDA dynamic-parallelism program so that the child grids launched by the threads of a "
                + "warp or block are aggregated into one launch (KLAP, MICRO 2016), for the CUDA 12/13 device "
                + "runtime (CDP2, sm_75+). With --promote, it instead promotes recursive single-block kernels "
                + "(KLAP section III: P, PA-n, PO, PAO-n). With --np, it spreads the iterations of '#pragma np parallel for' "
                + "loops over a master thread and its slaves (CUDA-NP, PPoPP 2014) without any launch.",
            "Compile the result with: nvcc -rdc=true -arch=sm_90 OUT.cu (the runtime headers klap/*.cuh are "
                + "written next to OUT.cu)."},
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {"0:transformed (warnings may have been printed)", "1:error in the input (diagnostics on stderr)",
            "2:usage error"})
public final class Klap implements Callable<Integer> {

    @Parameters(index = "0", paramLabel = "IN.cu", description = "the CUDA source file to transform (never modified)")
    Path input;

    @Option(names = {"-g", "--granularity"}, paramLabel = "warp|block|kernel", defaultValue = "block",
            converter = GranularityConverter.class,
            description = "aggregation granularity: one launch per warp, per block, or per parent grid "
                + "(default: ${DEFAULT-VALUE})")
    Granularity granularity;

    @Option(names = {"-o", "--output"}, paramLabel = "OUT.cu",
            description = "output file; its directory also receives the runtime headers klap/*.cuh. Default: stdout")
    Path output;

    @Option(names = "--promote", paramLabel = "P|PA|PO|PAO", converter = PromoteConverter.class,
            description = "launch promotion (KLAP section III) instead of aggregation: for each single-block "
                + "kernel that launches itself once from thread 0, launch the successor early and hand its late "
                + "arguments over through memory. P: basic; PA: n descendants per launch (--promote-depth); "
                + "PO/PAO: also run the prologue before '#pragma klap overlap' before waiting. Other launches stay "
                + "as written")
    PromoteMode promote;

    @Option(names = "--promote-depth", paramLabel = "N",
            description = "the n of PA-n and PAO-n: descendants per launch, dividing the nesting depth by n "
                + "(default " + PromoteMode.DEFAULT_DEPTH + ", the paper's PA and PAO)")
    Integer promoteDepth;

    @Option(names = "--np", paramLabel = "intra-warp|inter-warp|all", converter = NpConverter.class,
            description = "CUDA-NP instead of aggregation: grow each block by slave threads and spread the "
                + "iterations of '#pragma np parallel for' loops over each master and its slaves. intra-warp: a group "
                + "is S lanes of one warp; inter-warp: S threads in different warps; all: both, chosen at run time "
                + "with KLAP_NP / KLAP_NP_<kernel> or klap::np::select(). Launches of other kernels stay as written")
    NpMode np;

    @Option(names = "--np-slaves", paramLabel = "S",
            description = "threads per CUDA-NP group, master included: 2..32, a power of two for intra-warp "
                + "(default " + NpPass.DEFAULT_SLAVES + "; a num_slaves(S) clause overrides it per kernel)")
    Integer npSlaves;

    @Option(names = "--np-shared-budget", paramLabel = "BYTES", converter = BudgetConverter.class,
            description = "most dynamic shared memory per block a CUDA-NP launch may use for local arrays and "
                + "inter-warp collectives, e.g. 48K, 100K (default 48K); a launch that needs more runs the "
                + "original kernel. Above 48K klap sets cudaFuncAttributeMaxDynamicSharedMemorySize")
    Long npBudget;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /**
     * Bounds of {@code --pool-size}: at least one 64 KiB segment; at most 1 GiB of static device memory (one pool
     * per program and size: {@code klap/pool_state.cuh}).
     */
    static final long MIN_POOL_BYTES = 64L << 10, MAX_POOL_BYTES = 1L << 30;

    @Option(names = "--pool-size", paramLabel = "BYTES", converter = SizeConverter.class,
            description = "size of the device memory pool for argument and configuration arrays, e.g. 256M, 1G "
                + "(default: the runtime's 128M; at most 1G: it is static device memory, one pool for all the files "
                + "of a program built with the same size)")
    Long poolSize;

    @Option(names = "--no-scalarize", description = "pass every argument through per-parent arrays, even those "
            + "proven uniform across the warp/block (KLAP II-C)")
    boolean noScalarize;

    @Option(names = "--leave-launch", paramLabel = "LINE", split = ",",
            description = "leave the device-side launch that begins on LINE of IN.cu as written (a comma-separated "
                + "list, or the option repeated): an escape hatch for one launch, and how a GPU run bisects a "
                + "program's launch sites without changing what it computes")
    List<Integer> leaveLaunch = new ArrayList<>();

    @Option(names = {"-I", "--include-dir"}, paramLabel = "DIR",
            description = "directory searched for quote-included headers (after the input's own directory)")
    List<Path> includeDirs = new ArrayList<>();

    @Option(names = {"-D", "--define"}, paramLabel = "NAME[=VALUE]",
            description = "define a macro before the input, as the compiler's -D (NAME alone defines it as 1)")
    List<String> defines = new ArrayList<>();

    @Option(names = {"-U", "--undefine"}, paramLabel = "NAME",
            description = "undefine a macro before the input (after every -D), as the compiler's -U")
    List<String> undefines = new ArrayList<>();

    @Option(names = "--pre-include", paramLabel = "FILE",
            description = "include FILE before the input's first line, as the compiler's -include")
    List<Path> preIncludes = new ArrayList<>();

    @Option(names = "--no-runtime-headers", description = "do not write klap/*.cuh next to the output "
            + "(put them on nvcc's include path yourself, e.g. with --emit-runtime DIR)")
    boolean noRuntimeHeaders;

    /** klap-nvcc's: it compiles the output with the inputs' directories on nvcc's quote path (-iquote). */
    @Option(names = "--keep-include-paths", hidden = true)
    boolean keepIncludePaths;

    @Option(names = "--emit-runtime", paramLabel = "DIR",
            description = "write the runtime headers DIR/klap/*.cuh and exit (no input needed with this option)")
    Path emitRuntime;

    @Option(names = "--Werror", description = "treat warnings as errors")
    boolean werror;

    @Option(names = {"-q", "--quiet"}, description = "do not print warnings")
    boolean quiet;

    @Option(names = "--no-summary", description = "do not print the per-file note on how many launch sites were "
            + "aggregated (klap-nvcc passes it, so that builds stay as quiet as nvcc)")
    boolean noSummary;

    private PrintWriter err;
    private PrintWriter out;
    /** parses shared with other in-process runs, or null: this run parses its input itself */
    private Parses parses;

    /**
     * Parsed inputs shared between in-process runs of klap, for a tool that transforms one file in
     * several variants (each granularity, each promotion or CUDA-NP mode: the fuzz and regress tiers)
     * and would otherwise parse it once per variant (parsing is most of klap's time on a small file).
     * A run reuses the parse of an earlier run when its input has the same absolute path and the same
     * text and the runs have the same {@code -I}, {@code -D}, {@code -U} and {@code -include}
     * options; the transformation and everything after it run as without sharing, and the passes do
     * not change the parsed unit, so the output and the diagnostics are those of a run of its own.
     *
     * <p>The holder promises that the headers the input includes do not change while it shares
     * parses (the input's own text is compared; its headers are not read again). Keeps the
     * {@value #CAPACITY} most recent parses; safe to use from several threads at once.
     */
    public static final class Parses {
        /** parses kept: enough for each of a few threads' current file */
        static final int CAPACITY = 8;
        private final java.util.LinkedHashMap<List<Object>, CudaUnit> units = new java.util.LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(java.util.Map.Entry<List<Object>, CudaUnit> eldest) {
                return size() > CAPACITY;
            }
        };
        private int reused;

        /** @return the unit parsed earlier for {@code key}, or {@code parse}'s unit, kept for later runs */
        CudaUnit get(List<Object> key, java.util.function.Supplier<CudaUnit> parse) {
            synchronized (units) {
                CudaUnit u = units.get(key);
                if (u != null) {
                    reused++;
                    return u;
                }
            }
            CudaUnit u = parse.get(); // outside the lock: two threads may parse different files at once
            synchronized (units) {
                units.put(key, u);
            }
            return u;
        }

        /** @return how many runs reused an earlier parse */
        public int reused() {
            synchronized (units) {
                return reused;
            }
        }
    }

    /** Entry point. */
    public static void main(String[] args) {
        System.exit(run(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
    }

    /**
     * Runs the command with {@code args}, printing to the given writers.
     *
     * @return the exit code (0, 1 or 2)
     */
    public static int run(String[] args, PrintWriter out, PrintWriter err) {
        return run(args, out, err, null);
    }

    /**
     * Runs the command with {@code args} as {@link #run(String[], PrintWriter, PrintWriter)} does,
     * reusing the parse of an earlier run of the same input held by {@code parses}.
     *
     * @param parses parses shared with other runs ({@link Parses}: the caller keeps the input's headers
     *               unchanged meanwhile), or null to parse the input in this run alone
     * @return the exit code (0, 1 or 2)
     */
    public static int run(String[] args, PrintWriter out, PrintWriter err, Parses parses) {
        Klap k = new Klap();
        k.out = out;
        k.err = err;
        k.parses = parses;
        CommandLine cl = new CommandLine(k);
        cl.setOut(out);
        cl.setErr(err);
        cl.setExecutionExceptionHandler((ex, cmd, parsed) -> {
            err.println("klap: internal error: " + ex);
            err.println("klap: please report this with the input file");
            return 1;
        });
        // allow --emit-runtime without an input
        if (List.of(args).stream().anyMatch(a -> a.startsWith("--emit-runtime")) && List.of(args).stream()
                .noneMatch(a -> a.endsWith(".cu") || a.endsWith(".cuh"))) {
            return emitRuntimeOnly(args, err);
        }
        try {
            return cl.execute(args);
        } catch (OutOfMemoryError e) {
            err.println((k.input == null ? "klap" : k.input.toString()) + ": error: out of memory while transforming this "
                    + "file; give Java more heap with KLAP_JAVA_OPTS=-Xmx8g (scripts/klap passes it on) [klap-memory]");
            err.flush();
            return 1;
        } catch (StackOverflowError e) {
            err.println((k.input == null ? "klap" : k.input.toString()) + ": error: the input is nested too deeply; "
                    + "raise the stack with KLAP_JAVA_OPTS=-Xss64m [klap-nesting]");
            err.flush();
            return 1;
        }
    }

    private static int emitRuntimeOnly(String[] args, PrintWriter err) {
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            String dir = a.startsWith("--emit-runtime=") ? a.substring("--emit-runtime=".length())
                    : a.equals("--emit-runtime") && i + 1 < args.length ? args[i + 1] : null;
            if (dir != null) {
                try {
                    RuntimeHeaders.writeTo(Path.of(dir));
                    return 0;
                } catch (java.io.UncheckedIOException e) {
                    err.println("klap: error: cannot write the runtime headers to " + dir + ": " + e.getMessage());
                    return 1;
                }
            }
        }
        err.println("klap: error: --emit-runtime needs a directory");
        return 2;
    }

    @Override
    public Integer call() {
        String usage = optionsProblem();
        if (usage != null) {
            throw new CommandLine.ParameterException(spec.commandLine(), usage);
        }
        if (emitRuntime != null) {
            try {
                RuntimeHeaders.writeTo(emitRuntime);
            } catch (java.io.UncheckedIOException e) {
                err.println("klap: error: cannot write the runtime headers to " + emitRuntime + ": " + e.getMessage());
                return 1;
            }
        }
        String text;
        try {
            text = readStrict(input);
        } catch (NoSuchFileException e) {
            err.println(input + ": error: no such file [klap-io]");
            return 1;
        } catch (CharacterCodingException e) {
            err.println(input + ":1:1: error: the file is not valid UTF-8 text; is it a CUDA source file? [klap-encoding]");
            return 1;
        } catch (IOException e) {
            err.println(input + ": error: cannot read: " + e.getMessage() + " [klap-io]");
            return 1;
        }
        // a UTF-8 byte order mark is not C++ to klap's parser; nvcc's preprocessor skips it. The output
        // keeps it, so a file without device launches is copied byte for byte
        String bom = text.startsWith("\uFEFF") ? "\uFEFF" : "";
        text = text.substring(bom.length());
        if (output != null && sameFile(input, output)) {
            err.println(input + ": error: the output file is the input file; klap never overwrites its input [klap-io]");
            return 2;
        }
        List<Path> dirs = new ArrayList<>(includeDirs);
        String parsedText = text;
        java.util.function.Supplier<CudaUnit> parse = () -> CudaParser.parse(input, parsedText, dirs,
                macroDefinitions(defines), undefines, preIncludes);
        CudaUnit unit = parses == null ? parse.get() : parses.get(List.of(input, input.toAbsolutePath().normalize(),
                text, dirs, List.copyOf(defines), List.copyOf(undefines), List.copyOf(preIncludes)), parse);
        if (report(unit.diagnostics()) || unit.hasErrors()) {
            return 1;
        }
        if (text.isBlank()) {
            err.println(input + ":1:1: error: the file is empty [klap-empty]");
            return 1;
        }
        // klap's output given to the same pass again (a Makefile rule that runs klap twice): the pass
        // leaves klap's own code as written, so nothing more is transformed; the output still builds
        String pass = np != null ? "--np=" : promote != null ? "--promote=" : "--granularity=";
        java.util.regex.Matcher again = java.util.regex.Pattern.compile("#include \"klap/\\w+\\.cuh\" /\\* added by klap "
                + java.util.regex.Pattern.quote(pass) + "[^*]*\\*/").matcher(text);
        if (again.lookingAt() && report(List.of(Diagnostic.at(Diagnostic.Severity.WARNING, unit.file(), 0, "this file is "
                + "already klap's output ('" + again.group() + "'); klap leaves its own code as written, so a second "
                + pass + " pass adds nothing; give klap the original file instead", "already-transformed")))) {
            return 1;
        }
        String text2;
        String summary;
        boolean usesRuntime;
        if (np != null) {
            NpPass.Result r = NpPass.run(unit, npOptions());
            if (report(r.diagnostics())) {
                return 1;
            }
            text2 = r.text();
            summary = r.summary();
            usesRuntime = r.usesRuntime();
        } else if (promote != null) {
            PromotionPass.Result r = PromotionPass.run(unit, new PromotionPass.Options(promote,
                    promote.aggregates() ? (promoteDepth == null ? PromoteMode.DEFAULT_DEPTH : promoteDepth) : 1));
            if (report(r.diagnostics())) {
                return 1;
            }
            text2 = r.text();
            summary = r.summary();
            usesRuntime = r.usesRuntime();
        } else {
            AggregationPass.Result r = AggregationPass.run(unit,
                    new AggregationPass.Options(granularity, !noScalarize, poolSize, Set.copyOf(leaveLaunch)));
            boolean failed = report(r.diagnostics());
            if (failed || r.hasErrors()) {
                return 1;
            }
            text2 = r.text();
            summary = r.summary();
            usesRuntime = r.usesRuntime();
        }
        text2 = bom + text2;
        if (!quiet && !noSummary && !summary.isEmpty()) {
            err.println(input + ": note: " + summary + " [klap-summary]");
            err.flush();
        }
        try {
            if (output == null) {
                out.print(text2);
                out.flush();
            } else {
                Path theirs = usesRuntime && !noRuntimeHeaders ? RuntimeHeaders.foreign(output.toAbsolutePath().getParent()) : null;
                if (theirs != null) {
                    // checked before the output is written: nothing is written (review 2026-12-01)
                    err.println(theirs + ": error: exists and was not written by klap; klap does not replace it (write the "
                            + "output to another directory, or pass --no-runtime-headers and -I a directory that holds "
                            + "klap's headers) [klap-io]");
                    return 1;
                }
                writeAtomically(output, keepIncludePaths ? text2 : QuoteIncludes.rebase(text2, input, output));
                if (usesRuntime && !noRuntimeHeaders) {
                    Path dir = output.toAbsolutePath().getParent();
                    RuntimeHeaders.writeTo(dir);
                }
            }
        } catch (IOException | java.io.UncheckedIOException e) {
            err.println(String.valueOf(output) + ": error: cannot write: " + e.getMessage() + " [klap-io]");
            return 1;
        }
        return 0;
    }

    /**
     * The {@code -D} arguments as macro definitions: {@code N} is {@code N -> "1"}, {@code N=V} is
     * {@code N -> V}, {@code F(a)=a} is {@code F(a) -> a}; a later definition of a name replaces an earlier one.
     *
     * @param defs the {@code -D} values in command-line order
     * @return name (with parameters for function-like macros) to replacement text, in order
     */
    static java.util.Map<String, String> macroDefinitions(List<String> defs) {
        java.util.Map<String, String> m = new java.util.LinkedHashMap<>();
        for (String d : defs) {
            int eq = d.indexOf('=');
            String key = eq < 0 ? d : d.substring(0, eq);
            String value = eq < 0 ? "1" : d.substring(eq + 1);
            int paren = key.indexOf('(');
            String name = paren < 0 ? key : key.substring(0, paren);
            m.keySet().removeIf(k -> k.equals(name) || k.startsWith(name + "("));
            m.put(key, value);
        }
        return m;
    }

    private NpPass.Options npOptions() {
        return new NpPass.Options(np, npSlaves == null ? NpPass.DEFAULT_SLAVES : npSlaves,
                npBudget == null ? NpPass.DEFAULT_SHARED_BUDGET : npBudget);
    }

    /** @return why the options do not fit together (promotion, CUDA-NP, pool size), or null if they do */
    private String optionsProblem() {
        boolean granularityGiven = spec.commandLine().getParseResult().hasMatchedOption("--granularity");
        if (np != null && (promote != null || granularityGiven || noScalarize || poolSize != null)) {
            return "--np cannot be combined with --promote, --granularity, --no-scalarize or --pool-size: CUDA-NP "
                    + "launches nothing and leaves every launch it does not rewrite as written";
        }
        if (!leaveLaunch.isEmpty() && (np != null || promote != null)) {
            return "--leave-launch applies to aggregation (--granularity), not to --np or --promote";
        }
        for (int line : leaveLaunch) {
            if (line < 1) {
                return "--leave-launch: " + line + " is not a line number (lines count from 1)";
            }
        }
        if (np == null && (npSlaves != null || npBudget != null)) {
            return "--np-slaves and --np-shared-budget apply to --np";
        }
        if (np != null) {
            try {
                npOptions();
            } catch (IllegalArgumentException e) {
                return "--np-slaves: " + e.getMessage();
            }
        }
        if (promote != null && (granularityGiven || noScalarize || poolSize != null)) {
            return "--promote cannot be combined with --granularity, --no-scalarize or --pool-size: promotion "
                    + "leaves the launches it does not promote as written";
        }
        if (promoteDepth != null && (promote == null || !promote.aggregates())) {
            return "--promote-depth applies to --promote=PA and --promote=PAO";
        }
        if (poolSize != null && (poolSize < MIN_POOL_BYTES || poolSize > MAX_POOL_BYTES)) {
            return "--pool-size must be between 64K and 1G, got " + poolSize + " bytes: the pool is a static "
                    + "__device__ array shared by the files of the program built with the same size (it has a host "
                    + "shadow of the same size, and the host link fails past 2 GiB); it is reclaimed on the device, "
                    + "so it needs to hold only the launches pending at one moment";
        }
        if (promoteDepth != null && (promoteDepth < 1 || promoteDepth > 65535)) {
            return "--promote-depth must be between 1 and 65535, got " + promoteDepth;
        }
        return null;
    }

    /** Prints diagnostics; returns true if one of them counts as an error. */
    private boolean report(List<Diagnostic> ds) {
        boolean error = false;
        for (Diagnostic d : ds) {
            boolean isError = d.severity() == Diagnostic.Severity.ERROR
                    || (werror && d.severity() == Diagnostic.Severity.WARNING);
            if (isError || !quiet) {
                err.println(d.format());
            }
            error |= isError;
        }
        err.flush();
        return error;
    }

    private static String readStrict(Path p) throws IOException {
        byte[] bytes = Files.readAllBytes(p);
        return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(bytes)).toString();
    }

    private static boolean sameFile(Path a, Path b) {
        try {
            return Files.exists(b) && Files.isSameFile(a, b);
        } catch (IOException e) {
            return a.toAbsolutePath().normalize().equals(b.toAbsolutePath().normalize());
        }
    }

    /**
     * Writes {@code content} (UTF-8) over {@code target} through a temporary file and a rename
     * ({@link klap.runtime.AtomicFiles#write}), so that an interrupted run leaves no half-written output.
     */
    static void writeAtomically(Path target, String content) throws IOException {
        klap.runtime.AtomicFiles.write(target, content.getBytes(StandardCharsets.UTF_8));
    }

    /** Reads the version from the jar manifest. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = Klap.class.getPackage().getImplementationVersion();
            return new String[] {"klap " + (v == null ? "(development build)" : v),
                "targets the CUDA 12/13 device runtime (CDP2), sm_75+"};
        }
    }

    /** Parses warp|block|kernel. */
    static final class GranularityConverter implements CommandLine.ITypeConverter<Granularity> {
        @Override
        public Granularity convert(String value) {
            for (Granularity g : Granularity.values()) {
                if (g.cliName().equals(value)) {
                    return g;
                }
            }
            throw new CommandLine.TypeConversionException("expected warp, block or kernel, got '" + value + "'");
        }
    }

    /** Parses P|PA|PO|PAO. */
    static final class PromoteConverter implements CommandLine.ITypeConverter<PromoteMode> {
        @Override
        public PromoteMode convert(String value) {
            return parsed(value, PromoteMode::parse);
        }
    }

    /** Parses intra-warp|inter-warp|all. */
    static final class NpConverter implements CommandLine.ITypeConverter<NpMode> {
        @Override
        public NpMode convert(String value) {
            return parsed(value, NpMode::parse);
        }
    }

    /** @return {@code parse(value)}, its IllegalArgumentException turned into picocli's usage error */
    private static <T> T parsed(String value, java.util.function.Function<String, T> parse) {
        try {
            return parse.apply(value);
        } catch (IllegalArgumentException e) {
            throw new CommandLine.TypeConversionException(e.getMessage());
        }
    }

    /** Parses shared-memory budgets such as 0, 4096, 48K, 227K (at most 1M). */
    static final class BudgetConverter implements CommandLine.ITypeConverter<Long> {
        @Override
        public Long convert(String value) {
            return bytes(value, 0, 1L << 20, "a budget such as 48K");
        }
    }

    /** Parses sizes such as 4096, 64K, 256M, 1G. */
    static final class SizeConverter implements CommandLine.ITypeConverter<Long> {
        @Override
        public Long convert(String value) {
            return bytes(value, 4096, Long.MAX_VALUE, "a pool size such as 256M");
        }
    }

    /**
     * @param value a byte count with an optional K, M or G suffix (powers of 1024) and an optional B
     * @return the bytes
     * @throws CommandLine.TypeConversionException outside {@code min .. max} or not a size
     */
    private static long bytes(String value, long min, long max, String what) {
        String v = value.trim().toUpperCase(java.util.Locale.ROOT);
        if (v.endsWith("B")) {
            v = v.substring(0, v.length() - 1);
        }
        long mult = v.endsWith("K") ? 1L << 10 : v.endsWith("M") ? 1L << 20 : v.endsWith("G") ? 1L << 30 : 1;
        if (mult > 1) {
            v = v.substring(0, v.length() - 1);
        }
        long n;
        try {
            n = Math.multiplyExact(Long.parseLong(v), mult);
        } catch (NumberFormatException | ArithmeticException e) {
            throw new CommandLine.TypeConversionException("expected " + what + ", got '" + value + "'");
        }
        if (n < min || n > max) {
            throw new CommandLine.TypeConversionException("expected " + what + " between " + min + " and " + max
                    + " bytes, got '" + value + "'");
        }
        return n;
    }
}
