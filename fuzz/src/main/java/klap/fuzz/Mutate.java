package klap.fuzz;

import java.io.IOException;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;
import klap.cli.Klap;
import org.apache.commons.io.FileUtils;

/**
 * Mutation fuzzing of the real {@code klap} command (in-process):
 * {@code java -cp ... klap.fuzz.Mutate OUTDIR COUNT FIRST_SEED [--statements] INPUT...}.
 *
 * <p>Mutant {@code SEED} (one of COUNT consecutive seeds) is a {@link Mutator} mutant of one INPUT
 * ({@code .cu} files, or directories searched for them), drawn with {@code new Random(SEED)}, run with
 * one mode drawn the same way: {@code --granularity} warp, block or kernel (three in five), {@code
 * --promote} (one in five) or {@code --np} (one in five), with {@code -I} the input's directory and its
 * parent. Each run is classified ({@link Outcome}); every mutant whose outcome is a defect is kept in
 * {@code OUTDIR/bad/SEED/} ({@code in.cu}, {@code args}, {@code stderr}) and {@code OUTDIR/report.tsv}
 * lists every run. The exit status is 1 when a defect was found, 0 otherwise, 2 on a usage error.
 *
 * <p>{@code --statements} draws {@link Mutator#statements} mutants (mostly valid CUDA) instead of
 * {@link Mutator#tokens} mutants (mostly invalid), and keeps every accepted mutant whose output
 * differs from it in {@code OUTDIR/mu_SEED/} ({@code in.cu}, {@code out.cu} and klap's headers,
 * {@code incs}); {@code OUTDIR/compile.sh} (bash and nvcc) then builds each mutant and, where nvcc
 * accepts it, klap's output, and prints {@code BAD mu_SEED} for an output that does not compile.
 */
public final class Mutate {
    private Mutate() {
    }

    /** What a run of klap on a mutant did; the last four are defects. */
    public enum Outcome {
        /** exit 0, output written */
        ACCEPTED,
        /** non-zero exit with a {@code file:line:col: error:} diagnostic */
        REJECTED,
        /** an exception escaped, or stderr shows one ("internal error", a Java exception, a stack frame) */
        CRASH,
        /** no result within {@link #TIMEOUT_S} seconds */
        HANG,
        /** a non-zero exit without an error diagnostic, or an exit 0 without the output file */
        SILENT,
        /** the input file changed */
        INPUT_MODIFIED
    }

    /** Seconds a run may take before it counts as a hang (the largest inputs take about 2 s). */
    static final int TIMEOUT_S = 60;

    static final String USAGE = "usage: klap.fuzz.Mutate OUTDIR COUNT FIRST_SEED [--statements] INPUT...";

    /** One run: the input mutated, the outcome, the mutant, klap's arguments (after the program name) and stderr. */
    public record Run(Path input, Outcome outcome, Mutator.Mutant mutant, List<String> args, String stderr) {
    }

    /**
     * @param args the command line
     */
    public static void main(String[] args) throws IOException {
        System.exit(run(args, System.out, System.err));
    }

    /**
     * Runs the command with {@code args}.
     *
     * @return the exit status: 0 no defect, 1 a defect found, 2 usage error
     */
    public static int run(String[] args, PrintStream out, PrintStream err) throws IOException {
        boolean statements = Arrays.asList(args).contains("--statements");
        List<String> pos = Stream.of(args).filter(a -> !a.equals("--statements")).toList();
        Path dir;
        int count;
        long first;
        List<Path> inputs;
        try {
            if (pos.size() < 4) {
                throw new IllegalArgumentException("missing arguments");
            }
            dir = Path.of(pos.get(0));
            count = Integer.parseInt(pos.get(1));
            first = Long.parseLong(pos.get(2));
            inputs = inputs(pos.subList(3, pos.size()).stream().map(Path::of).toList());
        } catch (IllegalArgumentException | IOException e) {
            err.println("klap.fuzz.Mutate: " + e.getMessage());
            err.println(USAGE);
            return 2;
        }
        Files.createDirectories(dir);
        Map<Outcome, Integer> counts = new EnumMap<>(Outcome.class);
        StringBuilder report = new StringBuilder("seed\tinput\toutcome\targs\tedits\n");
        try (Runner runner = new Runner()) {
            for (long seed = first; seed < first + count; seed++) {
                Path work = dir.resolve((statements ? "mu_" : "tk_") + seed);
                Run r = runner.run(inputs, seed, statements, work);
                Path input = r.input();
                counts.merge(r.outcome(), 1, Integer::sum);
                report.append(seed).append('\t').append(input).append('\t').append(r.outcome()).append('\t')
                    .append(String.join(" ", r.args())).append('\t').append(oneLine(String.join("; ", r.mutant().edits())))
                    .append('\n');
                boolean keep = statements && r.outcome() == Outcome.ACCEPTED
                    && !Files.readString(work.resolve("out.cu")).equals(r.mutant().text());
                if (r.outcome().compareTo(Outcome.CRASH) >= 0) {
                    Path bad = dir.resolve("bad").resolve(Long.toString(seed));
                    Files.createDirectories(bad);
                    Files.writeString(bad.resolve("in.cu"), r.mutant().text());
                    Files.writeString(bad.resolve("args"), String.join(" ", r.args()) + "\n");
                    Files.writeString(bad.resolve("stderr"), r.stderr());
                    out.println(r.outcome() + " " + bad + " (" + input + ")");
                } else if (keep) {
                    Files.writeString(work.resolve("incs"), "-I " + input.toAbsolutePath().getParent() + " -I "
                        + input.toAbsolutePath().getParent().getParent() + "\n");
                }
                if (!keep) {
                    FileUtils.deleteDirectory(work.toFile());
                }
            }
        }
        Files.writeString(dir.resolve("report.tsv"), report);
        if (statements) {
            Path sh = dir.resolve("compile.sh");
            Files.writeString(sh, compileScript());
            Files.setPosixFilePermissions(sh, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        out.println("mutants " + count + ": " + counts);
        int defects = 0;
        for (Outcome o : List.of(Outcome.CRASH, Outcome.HANG, Outcome.SILENT, Outcome.INPUT_MODIFIED)) {
            defects += counts.getOrDefault(o, 0);
        }
        return defects == 0 ? 0 : 1;
    }

    /** @return {@code s} with backslashes, newlines and tabs escaped (one report.tsv field) */
    static String oneLine(String s) {
        return s.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t");
    }

    /** @return the {@code .cu} files of {@code paths} (directories searched recursively), sorted */
    static List<Path> inputs(List<Path> paths) throws IOException {
        List<Path> out = new ArrayList<>();
        for (Path p : paths) {
            if (Files.isDirectory(p)) {
                try (Stream<Path> s = Files.walk(p)) {
                    s.filter(f -> f.toString().endsWith(".cu") && Files.isRegularFile(f)).sorted().forEach(out::add);
                }
            } else if (Files.isRegularFile(p)) {
                out.add(p);
            } else {
                throw new IOException("no such input: " + p);
            }
        }
        if (out.isEmpty()) {
            throw new IOException("no .cu input in " + paths);
        }
        return out;
    }

    /**
     * @param rc           klap's exit status
     * @param stderr       what klap printed to stderr
     * @param inputSame    whether the input file still holds the mutant
     * @param outputExists whether the output file exists
     * @return the outcome of a run that finished (in time, without an exception escaping)
     */
    static Outcome classify(int rc, String stderr, boolean inputSame, boolean outputExists) {
        if (stderr.contains("internal error") || stderr.contains("Exception") || stderr.contains("\tat ")) {
            return Outcome.CRASH;
        }
        if (!inputSame) {
            return Outcome.INPUT_MODIFIED;
        }
        if (rc == 0) {
            return outputExists ? Outcome.ACCEPTED : Outcome.SILENT;
        }
        return stderr.lines().anyMatch(l -> l.matches(".*:\\d+:\\d+: error: .*")) ? Outcome.REJECTED : Outcome.SILENT;
    }

    /**
     * Runs klap in-process, one run at a time, each under {@link #TIMEOUT_S}; a hung run's thread is
     * abandoned (a daemon) and the next run gets a fresh one.
     */
    static final class Runner implements AutoCloseable {
        private ExecutorService exec = fresh();

        private static ExecutorService fresh() {
            return Executors.newSingleThreadExecutor(r -> {
                Thread t = new Thread(r, "klap-mutant");
                t.setDaemon(true);
                return t;
            });
        }

        /**
         * Writes mutant {@code seed} of one of {@code inputs} (drawn by the seed) to {@code work/in.cu} and
         * runs klap on it with the mode the seed draws, output {@code work/out.cu}.
         *
         * @return the run
         */
        Run run(List<Path> inputs, long seed, boolean statements, Path work) throws IOException {
            Random rnd = new Random(seed);
            Path input = inputs.get(rnd.nextInt(inputs.size()));
            String src = Files.readString(input, StandardCharsets.UTF_8);
            Mutator.Mutant m = statements ? Mutator.statements(src, rnd, Long.toString(seed)) : Mutator.tokens(src, rnd);
            Files.createDirectories(work);
            Path in = work.resolve("in.cu");
            Path outFile = work.resolve("out.cu");
            Files.deleteIfExists(outFile);
            Files.writeString(in, m.text());
            Path parent = input.toAbsolutePath().getParent();
            List<String> args = new ArrayList<>(List.of("-I", parent.toString(), "-I", parent.getParent().toString()));
            int mode = rnd.nextInt(5);
            if (mode == 3) {
                args.add("--promote=" + List.of("P", "PA", "PO", "PAO").get(rnd.nextInt(4)));
            } else if (mode == 4) {
                args.add("--np=" + List.of("intra-warp", "inter-warp", "all").get(rnd.nextInt(3)));
            } else {
                args.add("--granularity=" + List.of("warp", "block", "kernel").get(mode));
            }
            args.addAll(List.of(in.toString(), "-o", outFile.toString()));
            StringWriter o = new StringWriter();
            StringWriter e = new StringWriter();
            Future<Integer> f = exec.submit(() -> Klap.run(args.toArray(String[]::new), new PrintWriter(o, true),
                new PrintWriter(e, true), null));
            Outcome outcome;
            try {
                int rc = f.get(TIMEOUT_S, TimeUnit.SECONDS);
                outcome = classify(rc, e.toString(), Files.readString(in).equals(m.text()), Files.exists(outFile));
            } catch (TimeoutException ex) {
                f.cancel(true);
                exec.shutdownNow();
                exec = fresh();
                outcome = Outcome.HANG;
            } catch (ExecutionException ex) {
                StringWriter st = new StringWriter();
                ex.getCause().printStackTrace(new PrintWriter(st));
                e.write(st.toString());
                outcome = Outcome.CRASH;
            } catch (InterruptedException ex) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted", ex);
            }
            return new Run(input, outcome, m, args, e.toString());
        }

        @Override
        public void close() {
            exec.shutdownNow();
        }
    }

    /**
     * @return the text of {@code compile.sh}: for each {@code mu_*} directory, builds {@code in.cu} with
     *         {@code nvcc -std=c++17 -rdc=true -arch=${ARCH:-sm_90} -c} and its {@code incs}; where that
     *         succeeds, builds {@code out.cu} the same way (with klap's headers next to it) and prints
     *         {@code OK}, or {@code BAD} and keeps nvcc's messages in {@code out.nvcc}; a mutant nvcc
     *         rejects is {@code SKIP}. Runs {@code ${JOBS:-nproc}} builds at once; exit 1 if any is BAD.
     */
    static String compileScript() {
        return """
            #!/bin/bash
            # Builds each accepted statement mutant and klap's output for it (klap.fuzz.Mutate --statements).
            cd "$(dirname "$0")"
            one() {
              d=$1
              if ! nvcc -std=c++17 -rdc=true -arch=${ARCH:-sm_90} $(cat $d/incs) -c $d/in.cu -o $d/in.o > $d/in.nvcc 2>&1; then
                echo "SKIP $d"; return
              fi
              if nvcc -std=c++17 -rdc=true -arch=${ARCH:-sm_90} $(cat $d/incs) -c $d/out.cu -o $d/out.o > $d/out.nvcc 2>&1; then
                echo "OK $d"
              else
                echo "BAD $d"
              fi
              rm -f $d/in.o $d/out.o
            }
            export -f one
            ls -d mu_* 2>/dev/null | xargs -r -P ${JOBS:-$(nproc)} -I{} bash -c 'one {}' | tee compile.log
            ! grep -q '^BAD' compile.log
            """;
    }
}
