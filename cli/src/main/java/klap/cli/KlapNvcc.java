package klap.cli;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import klap.runtime.RuntimeHeaders;
import org.apache.commons.io.FileUtils;
import picocli.CommandLine;

/**
 * {@code klap-nvcc}: a drop-in nvcc that runs klap on the CUDA files of an nvcc command line first, so
 * a Makefile or CMake project switches klap on by changing one variable ({@code make NVCC=klap-nvcc},
 * {@code -DCMAKE_CUDA_COMPILER_LAUNCHER=klap-nvcc}). See {@code docs/klap-nvcc.md}.
 *
 * <p>Command line: {@code klap-nvcc [--klap-OPTION...] [REAL_NVCC] NVCC_ARGS...}, plus the
 * {@code --klap-} options in the environment variable {@code KLAP_FLAGS}. {@code REAL_NVCC} is present
 * when klap-nvcc is a compiler launcher (CMake passes the compiler path first); otherwise the real nvcc
 * is {@code $KLAP_NVCC} or the first {@code nvcc} on {@code PATH} that is not klap-nvcc itself.
 *
 * <p>What it does with {@code nvcc -c -Isrc src/a.cu -o a.o} when {@code a.cu} launches kernels from
 * the device:
 * <pre>
 * klap --granularity=block --no-summary src/a.cu -o $TMP/0/a.cu --no-runtime-headers -I src (in-process)
 * nvcc -rdc=true -I$TMP/inc -Xcompiler -iquotesrc -c -Isrc $TMP/0/a.cu -o a.o     ($TMP/inc/klap/*.cuh)
 * </pre>
 * Files without device launches are given to nvcc untouched; every other argument is passed on as
 * written. {@code -rdc=true} is added where device launches need it (a transformed file compiled
 * without {@code -rdc}/{@code -dc}, and link steps, so nvcc runs the device link). nvcc's stdout,
 * stderr and exit status are passed through, with the temporary file's name replaced by the user's;
 * klap's {@code #line} directives make nvcc's diagnostics name the user's file and line. Dependency
 * rules ({@code -M}, {@code -MD}, ...) are rewritten to name the user's file.
 *
 * <p>A file klap cannot parse ({@code [klap-parse]}, {@code [klap-encoding]}, ...) is compiled as written,
 * with a warning, so nvcc reports the user's own syntax errors.
 *
 * <p>Exit status: nvcc's; 1 when klap cannot transform a file it has parsed (klap's diagnostics on
 * stderr, nvcc is not run); 2 for a usage error of klap-nvcc itself ({@code klap-nvcc: error: ...}).
 */
public final class KlapNvcc {
    static final String NAME = "klap-nvcc";
    private static final String DEPTH_ENV = "KLAP_NVCC_DEPTH";
    /**
     * The work directory's subdirectory that holds the runtime headers ({@code inc/klap/*.cuh}) and goes on
     * nvcc's include path. It is not the parent of any transformed file, so a user's
     * {@code #include "../include/x.h"} can never resolve into the work directory's surroundings.
     */
    static final String INC = "inc";

    /** The {@code --klap-} options, from {@code KLAP_FLAGS} and the command line (later wins). */
    static final class Options {
        String granularity = "block";
        boolean granularityGiven;
        String promote;
        String promoteDepth;
        String np;
        Integer npSlaves;
        Long npBudget;
        boolean keep;
        Path keepDir;
        Long poolSize;
        boolean noScalarize;
        boolean off;
        boolean werror;
        boolean quiet;
        boolean verbose;
        boolean help;
        boolean version;
    }

    /** A usage error of klap-nvcc (exit 2). */
    static final class UsageException extends Exception {
        UsageException(String message) {
            super(message);
        }
    }

    private final Map<String, String> env;
    private final PrintStream out;
    private final PrintStream err;
    private final Options opts = new Options();
    private Path workDir;
    private Path stagingDir;
    private volatile Process running;
    /** Rewrites the dependency files of the current nvcc run; null when there is nothing to rewrite. */
    private Runnable dependencyFixer;

    private KlapNvcc(Map<String, String> env, PrintStream out, PrintStream err) {
        this.env = env;
        this.out = out;
        this.err = err;
    }

    /** Entry point of {@code scripts/klap-nvcc}. */
    public static void main(String[] args) {
        int rc = run(args, System.getenv(), System.out, System.err);
        System.out.flush();
        System.err.flush();
        System.exit(rc);
    }

    /**
     * Runs klap-nvcc with {@code args} (without the program name) in the current directory.
     *
     * @param env the environment ({@code KLAP_FLAGS}, {@code KLAP_NVCC}, {@code PATH}, ...)
     * @param out receives nvcc's standard output
     * @param err receives nvcc's and klap's diagnostics and klap-nvcc's own messages
     * @return the exit status: nvcc's, 1 when klap rejects an input, 2 for usage errors
     */
    public static int run(String[] args, Map<String, String> env, PrintStream out, PrintStream err) {
        KlapNvcc k = new KlapNvcc(env, out, err);
        Thread hook = new Thread(k::interrupted, "klap-nvcc-cleanup");
        boolean hooked = false;
        try {
            Runtime.getRuntime().addShutdownHook(hook);
            hooked = true;
        } catch (IllegalStateException e) {
            // shutting down already
        }
        try {
            return k.execute(List.of(args));
        } catch (UsageException e) {
            err.println(NAME + ": error: " + e.getMessage());
            err.println(NAME + ": see '" + NAME + " --klap-help'");
            return 2;
        } catch (IOException | UncheckedIOException e) {
            err.println(NAME + ": error: " + e.getMessage());
            return 1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            err.println(NAME + ": error: interrupted");
            return 130;
        } catch (RuntimeException e) {
            err.println(NAME + ": internal error: " + e);
            err.println(NAME + ": please report this with the command line (build without klap: --klap-off)");
            return 1;
        } finally {
            k.cleanUp();
            if (hooked) {
                try {
                    Runtime.getRuntime().removeShutdownHook(hook);
                } catch (IllegalStateException e) {
                    // shutting down: the hook runs
                }
            }
            out.flush();
            err.flush();
        }
    }

    /** Shutdown hook (SIGINT/SIGTERM from make): stop nvcc, remove the temporary files. */
    private void interrupted() {
        Process p = running;
        if (p != null) {
            p.destroy();
            try {
                p.waitFor(2, java.util.concurrent.TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        runDependencyFixer();
        cleanUp();
    }

    private synchronized void cleanUp() {
        if (stagingDir != null) {
            FileUtils.deleteQuietly(stagingDir.toFile());
            stagingDir = null;
        }
        if (workDir != null && !opts.keep) {
            FileUtils.deleteQuietly(workDir.toFile());
            workDir = null;
        }
    }

    private int execute(List<String> argv) throws UsageException, IOException, InterruptedException {
        List<String> rest = new ArrayList<>();
        for (String w : Words.split(env.get("KLAP_FLAGS"))) {
            if (!klapOption(w)) {
                throw new UsageException("KLAP_FLAGS: '" + w + "' is not a klap-nvcc option (they start with --klap-)");
            }
        }
        resetModeForCommandLine(argv);
        for (String a : argv) {
            if (!klapOption(a)) {
                rest.add(a);
            }
        }
        if (opts.promote != null && (opts.granularityGiven || opts.poolSize != null || opts.noScalarize)) {
            throw new UsageException("--klap-promote cannot be combined with --klap-granularity, --klap-pool-size or "
                    + "--klap-no-scalarize: promotion leaves the launches it does not promote as written");
        }
        if (opts.promoteDepth != null && !("PA".equals(opts.promote) || "PAO".equals(opts.promote))) {
            throw new UsageException("--klap-promote-depth applies to --klap-promote=PA and --klap-promote=PAO");
        }
        checkNpOptions();
        int depth = parseDepth(env.get(DEPTH_ENV));
        if (depth >= 3) {
            err.println(NAME + ": error: klap-nvcc runs itself again and again; set KLAP_NVCC to the real nvcc");
            return 2;
        }
        if (depth >= 1) {
            opts.off = true; // the real nvcc we found runs klap-nvcc again: do not transform twice
        }
        String nvcc = null;
        boolean launcher = false;
        List<String> launchers = new ArrayList<>(); // e.g. ccache between klap-nvcc and nvcc
        if (!rest.isEmpty() && looksLikeCompiler(rest.get(0))) {
            launcher = true;
            List<String> chain = new ArrayList<>(List.of(rest.remove(0)));
            while (!rest.isEmpty() && !isNvccName(chain.get(chain.size() - 1)) && looksLikeCompiler(rest.get(0))) {
                chain.add(rest.remove(0));
            }
            String c = chain.remove(chain.size() - 1);
            launchers.addAll(chain);
            nvcc = isSelf(c) ? null : c.contains("/") ? c : findOnPath(c);
        }
        if (opts.help || rest.equals(List.of("--help")) || rest.equals(List.of("-h"))) {
            out.print(help());
            return 0;
        }
        if (nvcc == null) {
            nvcc = findNvcc();
        }
        if (opts.version || rest.equals(List.of("--version")) || rest.equals(List.of("-V"))) {
            return version(nvcc);
        }
        if (rest.isEmpty()) {
            throw new UsageException("no nvcc arguments given");
        }
        if (nvcc == null) {
            err.println(NAME + ": error: cannot find the real nvcc: set KLAP_NVCC to its path or put nvcc on PATH");
            return 2;
        }
        boolean verbose = opts.verbose || rest.contains("-v") || rest.contains("--verbose");
        if (opts.off) {
            List<String> cmd = new ArrayList<>(launchers);
            cmd.add(nvcc);
            cmd.addAll(rest);
            return runNvcc(cmd, verbose, Map.of(), null, depth);
        }
        NvccCommandLine cl = NvccCommandLine.parse(rest);
        verbose |= cl.has("--verbose");

        if (verbose && "cu".equals(cl.last("--x"))) {
            for (NvccCommandLine.Input in : cl.inputs(NvccCommandLine.Kind.OTHER)) {
                if (!in.path().startsWith("-")) {
                    err.println(NAME + ": note: " + in.path() + " is compiled as CUDA (-x cu) but not transformed: "
                            + "klap-nvcc transforms .cu files and C/C++ sources under -x cu only");
                }
            }
        }

        // 1. transform the CUDA inputs that have device launches
        Map<NvccCommandLine.Input, Path> transformed = new LinkedHashMap<>();
        for (NvccCommandLine.Input in : cl.inputs(NvccCommandLine.Kind.CUDA)) {
            Path src = Path.of(in.path());
            if (!Files.isRegularFile(src) || !mayNeedKlap(src)) {
                continue; // nvcc reports missing files itself
            }
            Path tmp = tempFileFor(src, transformed.size());
            List<String> kargs = new ArrayList<>(List.of(opts.np != null ? "--np=" + opts.np
                    : opts.promote != null ? "--promote=" + opts.promote : "--granularity=" + opts.granularity,
                    "--no-summary", in.path(), "-o", tmp.toString(), "--no-runtime-headers", "--keep-include-paths"));
            if (opts.promoteDepth != null) {
                kargs.add("--promote-depth=" + opts.promoteDepth);
            }
            if (opts.npSlaves != null) {
                kargs.add("--np-slaves=" + opts.npSlaves);
            }
            if (opts.npBudget != null) {
                kargs.add("--np-shared-budget=" + opts.npBudget);
            }
            for (String dir : cl.values("--include-path")) {
                kargs.add("-I");
                kargs.add(dir);
            }
            for (String dir : cl.values("--system-include")) {
                kargs.add("-I"); // quote-includes search -isystem directories after the -I ones
                kargs.add(dir);
            }
            kargs.addAll(cl.macroArgumentsForKlap());
            for (String f : cl.values("--pre-include")) {
                kargs.add("--pre-include");
                kargs.add(f);
            }
            if (opts.poolSize != null) {
                kargs.add("--pool-size");
                kargs.add(Long.toString(opts.poolSize));
            }
            if (opts.noScalarize) {
                kargs.add("--no-scalarize");
            }
            if (opts.werror) {
                kargs.add("--Werror");
            }
            if (opts.quiet) {
                kargs.add("-q");
            }
            if (verbose) {
                err.println(NAME + ": klap " + Words.join(kargs));
            }
            java.io.StringWriter kbuf = new java.io.StringWriter();
            PrintWriter kerr = new PrintWriter(kbuf, true);
            int rc = Klap.run(kargs.toArray(String[]::new), kerr, kerr);
            kerr.flush();
            String klapSays = kbuf.toString();
            String parseProblem = rc == 1 ? parseLevelOnly(klapSays) : null;
            if (parseProblem != null && !opts.werror) {
                // klap cannot read the file (C++ it does not parse, a syntax error of the user's, bytes it
                // cannot decode): nvcc compiles it as written and reports the user's own errors itself
                if (verbose) {
                    err.print(klapSays);
                }
                err.println(NAME + ": warning: " + in.path() + " is compiled without klap (as written): klap cannot "
                        + "parse it: " + parseProblem + (verbose ? "" : " (--klap-verbose shows klap's diagnostics)"));
                Files.deleteIfExists(tmp);
                continue;
            }
            err.print(klapSays);
            err.flush();
            if (rc != 0) {
                err.println(NAME + ": error: klap cannot transform " + in.path() + "; nvcc was not run "
                        + "(to build without klap: --klap-off or KLAP_FLAGS=--klap-off)");
                return rc;
            }
            if (Files.readString(tmp, StandardCharsets.UTF_8).equals(Files.readString(src, StandardCharsets.UTF_8))) {
                Files.delete(tmp); // no device launches: nvcc compiles the user's file itself
                if (verbose) {
                    err.println(NAME + ": " + in.path() + " has no device-side launches: compiled as is");
                }
                continue;
            }
            String std = cl.last("--std");
            if (std != null && List.of("c++03", "c++98", "c++11", "c++14").contains(std)) {
                // the runtime headers need C++17: the file is compiled as written rather than failing in them
                err.println(NAME + ": warning: " + in.path() + " is compiled without klap (as written): klap's "
                        + "output needs C++17 and the command asks for -std=" + std + " (use -std=c++17 or later)");
                Files.delete(tmp);
                continue;
            }
            transformed.put(in, tmp);
        }

        // 2. the nvcc command
        List<String> args = new ArrayList<>();
        boolean fromOptionsFile = transformed.keySet().stream().anyMatch(i -> i.topIndex() < 0);
        if (fromOptionsFile) {
            args.addAll(cl.flat);
            transformed.forEach((in, tmp) -> args.set(in.flatIndex(), tmp.toString()));
        } else {
            args.addAll(cl.top);
            transformed.forEach((in, tmp) -> args.set(in.topIndex(), tmp.toString()));
        }
        List<String> cmd = new ArrayList<>(launchers);
        cmd.add(nvcc); // klap-nvcc's options go after the real nvcc, not after a launcher in front of it
        if (!transformed.isEmpty()) {
            // CUDA-NP adds no device launches: its output compiles like its input, without -rdc
            if (opts.np == null && !cl.preprocessOnly() && !cl.hasRdcChoice() && !cl.has("--device-w")
                    && !cl.has("--device-link")) {
                cmd.add("-rdc=true");
                if (launcher && cl.has("--compile") && !opts.quiet) {
                    // a launcher does not see the link step, which must then run a device link
                    err.println(NAME + ": warning: added -rdc=true for the device launches in " + transformed.keySet()
                            .iterator().next().path() + "; the link step must run a device link (CMake: set the "
                            + "target property CUDA_SEPARABLE_COMPILATION ON)");
                }
            }
            cmd.addAll(includeOptions(workDir, transformed.keySet()));
        } else if (cl.isLinkStep() && !cl.hasRdcChoice() && opts.np == null) {
            cmd.add("-rdc=true"); // objects with device launches need the device link
        }
        cmd.addAll(args);

        // 3. run it, naming the user's files in its output
        Map<String, String> renames = new LinkedHashMap<>();
        transformed.forEach((in, tmp) -> renames.put(tmp.toString(), in.path()));
        String dropPrefix = workDir == null ? null : workDir.resolve(INC) + "/";
        boolean depsOnStdout = !transformed.isEmpty() && cl.dependenciesOnStdout();
        if (!transformed.isEmpty() && cl.generatesDependencies()) {
            // also after a failed or interrupted nvcc: a .d that names the temporary file breaks make for good
            dependencyFixer = () -> fixDependencies(cl, transformed.keySet(), renames, dropPrefix);
        }
        int rc;
        try {
            rc = runNvcc(cmd, verbose, renames, depsOnStdout ? dropPrefix : null, depth);
        } finally {
            runDependencyFixer();
        }
        if (opts.keep && workDir != null && (opts.keepDir == null || verbose)) {
            err.println(NAME + ": note: klap's output is kept in " + workDir);
        }
        return rc;
    }

    /** klap's diagnostic ids that mean "klap cannot read this file", not "this program is wrong for CDP". */
    static final Set<String> PARSE_LEVEL_IDS = Set.of("parse", "encoding", "missing-include", "nesting");

    private static final java.util.regex.Pattern KLAP_ERROR =
            java.util.regex.Pattern.compile("^(.*?): error: (.*) \\[klap-([A-Za-z0-9-]+)\\]\\s*$");

    /**
     * Whether klap's diagnostics for a failed file are parse-level only (every error has one of
     * {@link #PARSE_LEVEL_IDS}), so the file can be compiled as written.
     *
     * @param klapStderr what klap printed
     * @return the first error's location and message (the reason shown in klap-nvcc's warning), or null when
     *         some error is not parse-level (or no error has an id: an internal error)
     */
    static String parseLevelOnly(String klapStderr) {
        String first = null;
        for (String line : klapStderr.split("\\R")) {
            if (!line.contains("error:")) {
                continue;
            }
            java.util.regex.Matcher m = KLAP_ERROR.matcher(line);
            if (!m.matches() || !PARSE_LEVEL_IDS.contains(m.group(3))) {
                return null;
            }
            if (first == null) {
                first = m.group(1) + ": " + m.group(2) + " [klap-" + m.group(3) + "]";
            }
        }
        return first;
    }

    /** Runs the dependency-file rewriting once (after nvcc, or from the shutdown hook when interrupted). */
    private synchronized void runDependencyFixer() {
        Runnable f = dependencyFixer;
        dependencyFixer = null;
        if (f != null) {
            f.run();
        }
    }

    /**
     * Rewrites the dependency files nvcc may have written for the transformed inputs so that they name the
     * user's files; runs whatever nvcc's exit status (best effort: a file that cannot be rewritten is left).
     */
    private static void fixDependencies(NvccCommandLine cl, Iterable<NvccCommandLine.Input> inputs,
            Map<String, String> renames, String dropPrefix) {
        for (NvccCommandLine.Input in : inputs) {
            for (Path d : cl.dependencyFiles(in.path())) {
                try {
                    if (Files.isRegularFile(d)) {
                        String text = Files.readString(d, StandardCharsets.ISO_8859_1);
                        String fixed = DepRules.rewrite(text, latin1(renames), latin1(dropPrefix));
                        if (!fixed.equals(text)) {
                            Files.writeString(d, fixed, StandardCharsets.ISO_8859_1);
                        }
                    }
                } catch (IOException | UncheckedIOException e) {
                    // best effort; nvcc's exit status still counts
                }
            }
        }
    }

    /** Parses one argument if it is a {@code --klap-} option. */
    private boolean klapOption(String a) throws UsageException {
        if (!a.startsWith("--klap-")) {
            return false;
        }
        int eq = a.indexOf('=');
        String name = eq < 0 ? a : a.substring(0, eq);
        String value = eq < 0 ? null : a.substring(eq + 1);
        switch (name) {
            case "--klap-granularity" -> {
                if (!"warp".equals(value) && !"block".equals(value) && !"kernel".equals(value)) {
                    throw new UsageException("--klap-granularity=warp|block|kernel expected, got '" + a + "'");
                }
                opts.granularity = value;
                opts.granularityGiven = true;
            }
            case "--klap-promote" -> {
                if (value == null || !List.of("P", "PA", "PO", "PAO").contains(value.toUpperCase(java.util.Locale.ROOT))) {
                    throw new UsageException("--klap-promote=P|PA|PO|PAO expected, got '" + a + "'");
                }
                opts.promote = value.toUpperCase(java.util.Locale.ROOT);
            }
            case "--klap-promote-depth" -> {
                if (value == null || !value.matches("[0-9]{1,5}")) {
                    throw new UsageException("--klap-promote-depth=N expected (descendants per launch), got '" + a + "'");
                }
                opts.promoteDepth = value;
            }
            case "--klap-np" -> {
                if (value == null || !List.of("intra-warp", "inter-warp", "all").contains(value)) {
                    throw new UsageException("--klap-np=intra-warp|inter-warp|all expected, got '" + a + "'");
                }
                opts.np = value;
            }
            case "--klap-np-slaves" -> {
                if (value == null || !value.matches("[0-9]{1,2}")) {
                    throw new UsageException("--klap-np-slaves=S expected (threads per group, master included, 2..32), "
                            + "got '" + a + "'");
                }
                opts.npSlaves = Integer.valueOf(value);
            }
            case "--klap-np-shared-budget" -> {
                if (value == null) {
                    throw new UsageException("--klap-np-shared-budget=BYTES expected, e.g. --klap-np-shared-budget=100K");
                }
                try {
                    opts.npBudget = new Klap.BudgetConverter().convert(value);
                } catch (CommandLine.TypeConversionException e) {
                    throw new UsageException("--klap-np-shared-budget: " + e.getMessage());
                }
            }
            case "--klap-keep" -> {
                opts.keep = true;
                if (value != null && value.isEmpty()) {
                    throw new UsageException("--klap-keep=DIR needs a directory");
                }
                opts.keepDir = value == null ? null : Path.of(value).toAbsolutePath().normalize();
            }
            case "--klap-pool-size" -> {
                if (value == null) {
                    throw new UsageException("--klap-pool-size=BYTES expected, e.g. --klap-pool-size=256M");
                }
                try {
                    opts.poolSize = new Klap.SizeConverter().convert(value);
                } catch (CommandLine.TypeConversionException e) {
                    throw new UsageException("--klap-pool-size: " + e.getMessage());
                }
            }
            case "--klap-no-scalarize" -> opts.noScalarize = flag(name, value);
            case "--klap-off" -> opts.off = flag(name, value);
            case "--klap-on" -> opts.off = !flag(name, value);
            case "--klap-Werror" -> opts.werror = flag(name, value);
            case "--klap-quiet" -> opts.quiet = flag(name, value);
            case "--klap-verbose" -> opts.verbose = flag(name, value);
            case "--klap-help" -> opts.help = flag(name, value);
            case "--klap-version" -> opts.version = flag(name, value);
            default -> throw new UsageException("unknown option " + a);
        }
        return true;
    }

    /**
     * A transform mode on the command line ({@code --klap-granularity}, {@code --klap-promote},
     * {@code --klap-np}) replaces the one from {@code KLAP_FLAGS}: the mode from the environment is
     * dropped, with its options that do not apply to the command line's mode (so that
     * {@code KLAP_FLAGS=--klap-np=all} and {@code --klap-granularity=warp} on the command line means warp
     * aggregation, not a usage error). {@code --klap-off}/{@code --klap-on} are not modes: the last of
     * them wins, so {@code KLAP_FLAGS=--klap-off} still switches klap off.
     */
    private void resetModeForCommandLine(List<String> argv) {
        boolean granularity = argv.stream().anyMatch(a -> a.startsWith("--klap-granularity"));
        boolean promote = argv.stream().anyMatch(a -> a.startsWith("--klap-promote") && !a.startsWith("--klap-promote-"));
        boolean np = argv.stream().anyMatch(a -> a.startsWith("--klap-np") && !a.startsWith("--klap-np-"));
        if (!granularity && !promote && !np) {
            return;
        }
        opts.granularity = "block";
        opts.granularityGiven = false;
        opts.promote = null;
        opts.np = null;
        if (!promote) {
            opts.promoteDepth = null;
        }
        if (!np) {
            opts.npSlaves = null;
            opts.npBudget = null;
        }
        if (!granularity) {
            opts.poolSize = null;
            opts.noScalarize = false;
        }
    }

    /** The CUDA-NP options' rules, as klap's own (--np excludes the other transforms; S and the budget need --np). */
    private void checkNpOptions() throws UsageException {
        if (opts.np != null && (opts.promote != null || opts.granularityGiven || opts.poolSize != null
                || opts.noScalarize)) {
            throw new UsageException("--klap-np cannot be combined with --klap-promote, --klap-granularity, "
                    + "--klap-pool-size or --klap-no-scalarize: CUDA-NP launches nothing and leaves every launch as "
                    + "written");
        }
        if (opts.np == null && (opts.npSlaves != null || opts.npBudget != null)) {
            throw new UsageException("--klap-np-slaves and --klap-np-shared-budget apply to --klap-np");
        }
        if (opts.npSlaves != null) {
            int s = opts.npSlaves;
            if (s < 2 || s > 32) {
                throw new UsageException("--klap-np-slaves must be between 2 and 32 (threads per group, master "
                        + "included), got " + s);
            }
            if (!opts.np.equals("inter-warp") && Integer.bitCount(s) != 1) {
                throw new UsageException("--klap-np-slaves=" + s + ": --klap-np=" + opts.np + " builds the intra-warp "
                        + "variant, which needs a power of two (2, 4, 8, 16, 32)");
            }
        }
    }

    private static boolean flag(String name, String value) throws UsageException {
        if (value != null) {
            throw new UsageException(name + " takes no value");
        }
        return true;
    }

    private static int parseDepth(String s) {
        try {
            return s == null ? 0 : Integer.parseInt(s.trim());
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /** A file that may contain device launches or pragmas (anything else goes to nvcc untouched). */
    private static boolean mayNeedKlap(Path src) throws IOException {
        String text = Files.readString(src, StandardCharsets.ISO_8859_1);
        return klap.bridge.CudaParser.mayHoldLaunch(text) || text.contains("#pragma");
    }

    /** The first argument is the compiler when klap-nvcc is a launcher (CMake's CMAKE_CUDA_COMPILER_LAUNCHER). */
    private boolean looksLikeCompiler(String a) {
        if (a.startsWith("-") || a.startsWith("@") || NvccCommandLine.kindOf(a, null) != NvccCommandLine.Kind.OTHER) {
            return false;
        }
        if (isNvccName(a)) {
            return true;
        }
        Path p = Path.of(a);
        if (!a.contains("/")) {
            // a launcher named without a path (ccache): a program on PATH that is not a file here
            return !Files.exists(p) && findOnPath(a) != null;
        }
        return Files.isRegularFile(p) && Files.isExecutable(p);
    }

    /** Whether the program's base name is nvcc (or klap-nvcc), whatever its directory. */
    private static boolean isNvccName(String a) {
        Path f = Path.of(a).getFileName();
        String base = f == null ? a : f.toString();
        return base.equals("nvcc") || base.equals("nvcc.exe") || base.equals(NAME);
    }

    /** Whether {@code path} is klap-nvcc itself (the script sets {@code KLAP_NVCC_SELF}). */
    private boolean isSelf(String path) {
        Path p = Path.of(path);
        if (p.getFileName() != null && p.getFileName().toString().equals(NAME)) {
            return true;
        }
        String self = env.get("KLAP_NVCC_SELF");
        if (self == null || self.isEmpty()) {
            return false;
        }
        try {
            return Files.exists(p) && Files.isSameFile(p.toRealPath(), Path.of(self).toRealPath());
        } catch (IOException e) {
            return false;
        }
    }

    private String findNvcc() {
        String explicit = env.get("KLAP_NVCC");
        if (explicit != null && !explicit.isBlank()) {
            return explicit.contains("/") ? explicit : findOnPath(explicit);
        }
        return findOnPath("nvcc");
    }

    private String findOnPath(String name) {
        String path = env.getOrDefault("PATH", "");
        for (String dir : path.split(":")) {
            Path c = Path.of(dir.isEmpty() ? "." : dir, name);
            if (Files.isRegularFile(c) && Files.isExecutable(c) && !isSelf(c.toString())) {
                return c.toString();
            }
        }
        return null;
    }

    /** The transformed copy of {@code src}: same base name (nvcc names default outputs after it). */
    private Path tempFileFor(Path src, int index) throws IOException {
        if (workDir == null) {
            if (opts.keepDir != null) {
                workDir = opts.keepDir;
                Files.createDirectories(workDir);
                stagingDir = Files.createTempDirectory(NAME + "-");
                RuntimeHeaders.writeTo(stagingDir);
                installHeaders(stagingDir.resolve("klap"), workDir.resolve(INC).resolve("klap"));
            } else {
                workDir = Files.createTempDirectory(NAME + "-").toAbsolutePath();
                RuntimeHeaders.writeTo(workDir.resolve(INC));
            }
        }
        Path dir;
        if (opts.keepDir != null) {
            Path abs = src.toAbsolutePath().normalize().getParent();
            dir = workDir.resolve(abs.getRoot().relativize(abs).toString());
        } else {
            dir = workDir.resolve(Integer.toString(index));
        }
        Files.createDirectories(dir);
        return dir.resolve(src.getFileName().toString());
    }

    /**
     * The include options added in front of the user's arguments when files are transformed: the runtime
     * headers' directory ({@code -I$TMP/inc}), then each original file's directory as a quote-only directory
     * ({@code -Xcompiler -iquoteDIR}, which nvcc hands to the host compiler's preprocessing of both the host
     * and the device side). nvcc on the original searches that directory first for {@code #include "..."}
     * and never for {@code #include <...>}; {@code -iquote} does the same for the copy in {@code $TMP/N},
     * so both kinds of include resolve as they do for nvcc (a {@code -I} would put the directory ahead of
     * the user's {@code -I} for angle includes too). A directory that nvcc cannot pass through
     * {@code -Xcompiler} intact (blanks, commas, quotes) is given as {@code -I} instead.
     *
     * @param workDir the work directory (runtime headers in {@code workDir/inc/klap})
     * @param inputs the transformed inputs
     * @return the options, in order
     */
    static List<String> includeOptions(Path workDir, Iterable<NvccCommandLine.Input> inputs) {
        List<String> cmd = new ArrayList<>();
        cmd.add("-I" + workDir.resolve(INC));
        Set<String> dirs = new LinkedHashSet<>();
        for (NvccCommandLine.Input in : inputs) {
            Path parent = Path.of(in.path()).getParent();
            dirs.add(parent == null ? "." : parent.toString());
        }
        for (String d : dirs) {
            if (d.matches("[^\\s,'\"\\\\$`]+")) {
                cmd.add("-Xcompiler");
                cmd.add("-iquote" + d);
            } else {
                cmd.add("-I" + d);
            }
        }
        return cmd;
    }

    /** Moves each header into {@code to} with an atomic rename, so parallel builds never see a half-written one. */
    private static void installHeaders(Path from, Path to) throws IOException {
        Files.createDirectories(to);
        try (Stream<Path> s = Files.list(from)) {
            for (Path f : s.toList()) {
                Path target = to.resolve(f.getFileName().toString());
                try {
                    Files.move(f, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                } catch (AtomicMoveNotSupportedException e) {
                    Path tmp = Files.createTempFile(to, "." + f.getFileName(), ".tmp");
                    Files.copy(f, tmp, StandardCopyOption.REPLACE_EXISTING);
                    Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
    }

    /**
     * Runs nvcc. With {@code renames} non-empty its output is pumped line by line with the temporary
     * paths replaced; with {@code depsDropPrefix} non-null its standard output is dependency rules,
     * rewritten as a whole.
     */
    private int runNvcc(List<String> cmd, boolean verbose, Map<String, String> renames, String depsDropPrefix,
            int depth) throws IOException, InterruptedException {
        if (verbose) {
            err.println(NAME + ": " + Words.join(cmd));
            err.flush();
        }
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().put(DEPTH_ENV, Integer.toString(depth + 1));
        pb.redirectInput(ProcessBuilder.Redirect.INHERIT);
        boolean direct = renames.isEmpty() && out == System.out && err == System.err;
        if (direct) {
            out.flush();
            err.flush();
            pb.redirectOutput(ProcessBuilder.Redirect.INHERIT);
            pb.redirectError(ProcessBuilder.Redirect.INHERIT);
        }
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            err.println(NAME + ": error: cannot run " + cmd.get(0) + ": " + e.getMessage());
            return 127;
        }
        running = p;
        try {
            if (direct) {
                return p.waitFor();
            }
            Map<String, String> latin = latin1(renames);
            ByteArrayOutputStream deps = depsDropPrefix == null ? null : new ByteArrayOutputStream();
            Thread t1 = pump(p.getInputStream(), deps != null ? deps : out, deps != null ? Map.of() : latin);
            Thread t2 = pump(p.getErrorStream(), err, latin);
            int rc = p.waitFor();
            t1.join();
            t2.join();
            if (deps != null) {
                String text = deps.toString(StandardCharsets.ISO_8859_1);
                out.write(DepRules.rewrite(text, latin, latin1(depsDropPrefix)).getBytes(StandardCharsets.ISO_8859_1));
                out.flush();
            }
            return rc;
        } finally {
            running = null;
        }
    }

    /** Copies {@code in} to {@code to} line by line, replacing the keys of {@code renames} (bytes as ISO-8859-1). */
    private static Thread pump(InputStream in, OutputStream to, Map<String, String> renames) {
        Thread t = new Thread(() -> {
            try (in) {
                ByteArrayOutputStream line = new ByteArrayOutputStream();
                int b;
                byte[] buf = new byte[8192];
                int n;
                while ((n = in.read(buf)) > 0) {
                    for (int i = 0; i < n; i++) {
                        b = buf[i];
                        line.write(b);
                        if (b == '\n') {
                            emit(line, to, renames);
                        }
                    }
                    if (in.available() == 0 && line.size() > 0 && renames.isEmpty()) {
                        emit(line, to, renames);
                    }
                }
                emit(line, to, renames);
            } catch (IOException e) {
                // the reader went away; nvcc's exit status still counts
            }
        }, "klap-nvcc-pump");
        t.setDaemon(true);
        t.start();
        return t;
    }

    private static void emit(ByteArrayOutputStream line, OutputStream to, Map<String, String> renames)
            throws IOException {
        if (line.size() == 0) {
            return;
        }
        String s = line.toString(StandardCharsets.ISO_8859_1);
        for (Map.Entry<String, String> e : renames.entrySet()) {
            s = s.replace(e.getKey(), e.getValue());
        }
        synchronized (to) {
            to.write(s.getBytes(StandardCharsets.ISO_8859_1));
            to.flush();
        }
        line.reset();
    }

    /** Strings re-encoded so that they match UTF-8 bytes read as ISO-8859-1. */
    private static Map<String, String> latin1(Map<String, String> m) {
        Map<String, String> r = new LinkedHashMap<>();
        m.forEach((k, v) -> r.put(latin1(k), latin1(v)));
        return r;
    }

    private static String latin1(String s) {
        return s == null ? null : new String(s.getBytes(StandardCharsets.UTF_8), StandardCharsets.ISO_8859_1);
    }

    private int version(String nvcc) throws IOException, InterruptedException {
        String v = KlapNvcc.class.getPackage().getImplementationVersion();
        out.println(NAME + " " + (v == null ? "(development build)" : v)
                + ": nvcc with klap's launch aggregation in front (CUDA 12/13 device runtime, sm_75+)");
        if (nvcc == null) {
            out.println("real nvcc: not found (set KLAP_NVCC or put nvcc on PATH)");
            return 0;
        }
        out.println("real nvcc: " + nvcc);
        out.flush();
        return runNvcc(List.of(nvcc, "--version"), false, Map.of(), null, parseDepth(env.get(DEPTH_ENV)));
    }

    static String help() {
        return """
            Usage: klap-nvcc [--klap-OPTION...] [REAL_NVCC] NVCC_ARGUMENTS...

            A drop-in nvcc that runs klap (aggregation of CUDA dynamic-parallelism launches) on every
            .cu input of an nvcc command line before nvcc compiles it:
              make NVCC=klap-nvcc                                  (Makefile projects)
              cmake -DCMAKE_CUDA_COMPILER_LAUNCHER=klap-nvcc ...   (CMake projects)

            Every .cu input with device-side launches is transformed into a temporary file that nvcc
            compiles instead; klap's runtime headers are put on the include path and -rdc=true is added
            where device launches need it (compiling without -rdc/-dc, and link steps). Files without
            device-side launches and all other arguments go to nvcc unchanged. nvcc's diagnostics name
            the original file and line; dependency files (-M, -MD, ...) name the original file.

            klap options (on the command line or in the environment variable KLAP_FLAGS):
              --klap-granularity=warp|block|kernel  one aggregated launch per warp, per block or per parent grid (default block)
              --klap-promote=P|PA|PO|PAO     launch promotion (KLAP section III) instead of aggregation
              --klap-promote-depth=N         descendants per launch for PA and PAO (default 128)
              --klap-np=intra-warp|inter-warp|all  CUDA-NP instead of aggregation: spread '#pragma np parallel
                                             for' loops over slave threads (all: both variants, chosen at run
                                             time with KLAP_NP); no -rdc=true is added
              --klap-np-slaves=S             threads per CUDA-NP group, master included (2..32, default 8)
              --klap-np-shared-budget=BYTES  dynamic shared memory a CUDA-NP launch may use, e.g. 100K (default 48K)
              --klap-pool-size=BYTES         device memory pool for launch arguments, e.g. 256M
              --klap-no-scalarize            pass every argument through per-parent arrays
              --klap-keep[=DIR]              keep the transformed files (in DIR, or a printed temp dir)
              --klap-off, --klap-on          run nvcc unchanged (no klap at all) / run klap (the last one wins)
              --klap-Werror                  klap warnings are errors
              --klap-quiet                   do not print klap warnings
              --klap-verbose                 print the klap and nvcc commands (also done by nvcc's -v)
              --klap-help, --klap-version    this help; the versions of klap-nvcc and the real nvcc
            --help and --version given alone print this help and the versions.

            A mode on the command line (--klap-granularity, --klap-promote, --klap-np) replaces the one in
            KLAP_FLAGS; otherwise the command line's options come after KLAP_FLAGS' (the later wins).

            The real nvcc: REAL_NVCC when given first (a compiler launcher's argument), else $KLAP_NVCC,
            else the first nvcc on PATH that is not klap-nvcc itself.

            A file klap cannot parse is compiled as written, with a warning.
            Exit status: nvcc's; 1 when klap cannot transform a file it has parsed (klap's diagnostics,
            nvcc not run); 2 for klap-nvcc usage errors. Documentation: docs/klap-nvcc.md
            """;
    }
}
