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
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import klap.cli.Klap;
import klap.transform.Granularity;

/**
 * Writes generated programs and their klap variants for the GPU run:
 * {@code java -cp ... klap.fuzz.Main OUTDIR [COUNT=50] [FIRST_SEED=1] [--shape=NAME[,NAME...]] [--fixtures=DIR]}.
 *
 * <p>A single-file program is {@code OUTDIR/fz_SEED/original.cu}; a two-file program ({@link
 * Shape#TWO_FILES}) is {@code OUTDIR/fz_SEED/kernels.cu}, {@code main.cu} and {@code fz_common.cuh}.
 * {@code OUTDIR/fz_SEED/<granularity>.cu} is klap's output for the original (for kernels.cu in a
 * two-file program: main.cu is compiled with it untouched), with {@code klap/*.cuh} next to it, or
 * {@code <granularity>.refused} holds klap's diagnostics when klap refused it. {@code
 * OUTDIR/fz_SEED/shapes} names the program's shapes.
 *
 * <p>{@code --shape=NAME[,NAME...]} generates programs with exactly those shapes ({@link
 * Shape#parseList}: {@code random}, {@code ref-out}, {@code barrier-return}, {@code dependent},
 * {@code ff-loop}, {@code two-files}); without it every program is {@link Shape#RANDOM} mixed with
 * each other shape with its probability. {@code --fixtures=DIR} also writes the hand-written shape
 * programs of DIR ({@code fuzz/src/test/resources/shapes}: each {@code NAME.cu}, and each
 * directory {@code NAME/} holding {@code kernels.cu} and {@code main.cu}) as {@code OUTDIR/fx_NAME}
 * (COUNT then defaults to 0).
 *
 * <p>{@code --small-pool} also builds every aggregation program at each granularity with
 * {@code --pool-size=64K} ({@link #SMALL_POOL_VARIANTS}, named in the program's file {@code
 * variants}): groups then find no pool memory and launch their children as written, mixed with
 * aggregated ones, and kernel-granularity parents launch theirs as written into
 * cudaStreamTailLaunch (issue 11's fallback); each must still print the original's RESULT.
 *
 * <p>{@code --chains} writes launch-promotion chain programs instead ({@link #writeChains}), {@code
 * --np} CUDA-NP programs ({@link #writeNp}); each such program has a file {@code variants} naming
 * the variants run.sh builds and runs ({@code B@X}: B.cu's binary run with {@code KLAP_NP=X}).
 *
 * <p>{@code OUTDIR/run.sh} (bash and nvcc, no Java) builds every variant with nvcc in parallel,
 * runs each binary under a timeout, and checks that the original prints {@code PASS} and every
 * variant the same {@code RESULT} line; see {@link #runScript()}.
 */
public final class Main {
    private Main() {
    }

    /** The promotion variants of a chain program: file name and klap options. */
    static final List<String> PROMOTION_VARIANTS = List.of("p", "pa2", "po", "pao3");

    /**
     * The CUDA-NP variants of an np program (issue 13): the klap modes; {@code all} is built once and
     * run three times, with {@code KLAP_NP} set to each of {@link #NP_RUNS}.
     */
    static final List<String> NP_MODES = List.of("intra-warp", "inter-warp", "all");

    /** The values of {@code KLAP_NP} the {@code all} variant of an np program runs with. */
    static final List<String> NP_RUNS = List.of("original", "intra-warp", "inter-warp");

    /** The variants line of an np program: {@code all@X} is all.cu's binary run with {@code KLAP_NP=X}. */
    static final String NP_VARIANTS = "original intra-warp inter-warp all@original all@intra-warp all@inter-warp";

    /**
     * The variants {@code --small-pool} adds to an aggregation program: each granularity with
     * {@link #SMALL_POOL}, so that groups run out of pool memory and launch their children as
     * written (issue 11's fallback), mixed with aggregated ones; at kernel granularity no record
     * chunk fits, so every launch of a kernel without tail launches goes out as written, into
     * cudaStreamTailLaunch. {@code kernel-pool64k} is left out where klap notes {@link #NO_FALLBACK}
     * (that kernel would report the exhaustion and stop, as documented).
     */
    static final List<String> SMALL_POOL_VARIANTS = List.of("warp-pool64k", "block-pool64k", "kernel-pool64k");

    /** The note of a kernel whose kernel-granularity launches cannot fall back when the pool is full. */
    static final String NO_FALLBACK = "[klap-kernel-no-fallback]";

    /** The {@code --pool-size} of {@link #SMALL_POOL_VARIANTS}: the smallest klap accepts. */
    static final String SMALL_POOL = "64K";

    static final String USAGE = "usage: klap.fuzz.Main OUTDIR [COUNT=50] [FIRST_SEED=1] [--shape=NAME[,NAME...]] [--fixtures=DIR] "
            + "[--small-pool] [--chains | --np]\n"
            + "  shapes: " + Shape.names() + " (default: random mixed with each other shape by chance)\n"
            + "  --chains: launch-promotion chain programs (ChainGenerator) with the variants " + String.join(" ", PROMOTION_VARIANTS)
            + "\n  --np: CUDA-NP programs (NpGenerator) with the variants " + NP_VARIANTS
            + "\n  --small-pool: aggregation programs also get " + String.join(" ", SMALL_POOL_VARIANTS) + " (--pool-size="
            + SMALL_POOL + ")";

    /** Entry point: {@link #run} and exit with its status. */
    public static void main(String[] args) throws IOException {
        int rc = run(args, System.out, System.err);
        if (rc != 0) {
            System.exit(rc);
        }
    }

    /**
     * Runs the command with {@code args}.
     *
     * @return the exit status: 0 written, 2 usage error
     */
    public static int run(String[] args, PrintStream out, PrintStream err) throws IOException {
        List<String> pos = new ArrayList<>();
        Set<Shape> shapes = null;
        Path fixtures = null;
        boolean chains = false;
        boolean np = false;
        boolean smallPool = false;
        int count;
        long first;
        try {
            for (String a : args) {
                if (a.startsWith("--shape=")) {
                    shapes = Shape.parseList(a.substring("--shape=".length()));
                } else if (a.startsWith("--fixtures=")) {
                    fixtures = Path.of(a.substring("--fixtures=".length()));
                    if (!Files.isDirectory(fixtures)) {
                        throw new IllegalArgumentException("--fixtures: no directory " + fixtures);
                    }
                } else if (a.equals("--chains")) {
                    chains = true;
                } else if (a.equals("--np")) {
                    np = true;
                } else if (a.equals("--small-pool")) {
                    smallPool = true;
                } else if (a.equals("-h") || a.equals("--help")) {
                    out.println(USAGE);
                    return 0;
                } else if (a.startsWith("-")) {
                    throw new IllegalArgumentException("unknown option " + a);
                } else {
                    pos.add(a);
                }
            }
            if (pos.isEmpty() || pos.size() > 3) {
                throw new IllegalArgumentException("expected OUTDIR [COUNT] [FIRST_SEED]");
            }
            count = pos.size() > 1 ? Integer.parseInt(pos.get(1)) : fixtures != null ? 0 : 50;
            first = pos.size() > 2 ? Long.parseLong(pos.get(2)) : 1;
            if (chains && np) {
                throw new IllegalArgumentException("--chains and --np exclude each other");
            }
            if (count < 0) {
                throw new IllegalArgumentException("COUNT must not be negative");
            }
        } catch (IllegalArgumentException e) {
            err.println("klap.fuzz.Main: " + e.getMessage());
            err.println(USAGE);
            return 2;
        }
        Path dir = Path.of(pos.get(0));
        int refused = chains ? writeChains(dir, first, count)
                : np ? writeNp(dir, first, count) : write(dir, first, count, shapes, smallPool);
        int fx = fixtures != null ? writeFixtures(dir, fixtures, smallPool) : 0;
        out.println("wrote " + count + " programs" + (fixtures != null ? " and " + fx + " fixtures" : "") + " to " + dir
                + " (" + refused + " generated variants refused by klap); run: bash " + dir.resolve("run.sh"));
        return 0;
    }

    /** {@link #write(Path, long, int, Set)} with the default mix of shapes. */
    public static int write(Path dir, long first, int count) throws IOException {
        return write(dir, first, count, null);
    }

    /**
     * Writes programs {@code first .. first+count-1} (with exactly {@code shapes}, or the default mix
     * if null), their variants and run.sh into {@code dir}.
     *
     * @return the number of variants klap refused
     */
    public static int write(Path dir, long first, int count, Set<Shape> shapes) throws IOException {
        return write(dir, first, count, shapes, false);
    }

    /**
     * {@link #write(Path, long, int, Set)}; with {@code smallPool} every program also gets the
     * {@link #SMALL_POOL_VARIANTS} and a file {@code variants} naming them.
     */
    public static int write(Path dir, long first, int count, Set<Shape> shapes, boolean smallPool) throws IOException {
        Files.createDirectories(dir);
        int refused = 0;
        for (long s = first; s < first + count; s++) {
            ProgramGenerator.Program p = shapes == null ? ProgramGenerator.generate(s) : ProgramGenerator.generate(s, shapes);
            Path pd = dir.resolve(p.dirName());
            Path in = p.writeTo(pd, "original.cu");
            StringBuilder sh = new StringBuilder();
            for (Shape x : p.shapes()) {
                sh.append(sh.length() == 0 ? "" : " ").append(x.cliName);
            }
            Files.writeString(pd.resolve("shapes"), sh + "\n");
            refused += transform(in, pd, smallPool);
        }
        writeRunScript(dir);
        return refused;
    }

    private static List<String> promotionArgs(String variant) {
        return switch (variant) {
            case "p" -> List.of("--promote=P");
            case "pa2" -> List.of("--promote=PA", "--promote-depth=2");
            case "po" -> List.of("--promote=PO");
            case "pao3" -> List.of("--promote=PAO", "--promote-depth=3");
            default -> throw new IllegalArgumentException(variant);
        };
    }

    /**
     * Writes chain programs {@code first .. first+count-1} ({@link ChainGenerator}, issue 12) as
     * {@code dir/fp_SEED/original.cu} with the promotion variants {@code p.cu}, {@code pa2.cu},
     * {@code po.cu}, {@code pao3.cu} (or {@code <v>.refused} when klap promoted nothing), the file
     * {@code variants} that tells run.sh which variants the program has, and run.sh.
     *
     * @return the number of variants klap did not promote
     */
    public static int writeChains(Path dir, long first, int count) throws IOException {
        Files.createDirectories(dir);
        int refused = 0;
        for (long s = first; s < first + count; s++) {
            ChainGenerator.Program p = ChainGenerator.generate(s);
            Path pd = dir.resolve(p.dirName());
            Path in = p.writeTo(pd, "original.cu");
            Files.writeString(pd.resolve("shapes"), "chain" + (p.promotable() ? "" : ":refused")
                    + (p.overlaps() ? ":overlap" : "") + "\n");
            Files.writeString(pd.resolve("variants"), "original " + String.join(" ", PROMOTION_VARIANTS) + "\n");
            Klap.Parses parses = new Klap.Parses();
            for (String v : PROMOTION_VARIANTS) {
                StringWriter out = new StringWriter();
                StringWriter err = new StringWriter();
                List<String> args = new ArrayList<>(promotionArgs(v));
                args.addAll(List.of(in.toString(), "-o", pd.resolve(v + ".cu").toString()));
                int rc = Klap.run(args.toArray(String[]::new), new PrintWriter(out), new PrintWriter(err), parses);
                Path cu = pd.resolve(v + ".cu");
                if (rc != 0 || !Files.readString(cu).contains("klap/promote.cuh")) {
                    refused++;
                    Files.deleteIfExists(cu);
                    Files.writeString(pd.resolve(v + ".refused"), "exit " + rc + "\n" + err);
                }
            }
        }
        writeRunScript(dir);
        return refused;
    }

    /**
     * Writes CUDA-NP programs {@code first .. first+count-1} ({@link NpGenerator}, issue 13) as {@code
     * dir/np_SEED/original.cu} with klap's output for {@code --np=intra-warp}, {@code --np=inter-warp}
     * and {@code --np=all} (each with the program's S, {@code --np-slaves}) as {@code intra-warp.cu},
     * {@code inter-warp.cu} and {@code all.cu}, or {@code <mode>.refused} when klap transformed no
     * kernel; the file {@code variants} ({@link #NP_VARIANTS}: run.sh runs all.cu's binary once per
     * {@code KLAP_NP} value), {@code shapes} (S, the constructs, {@code refuse:NAME} for a program
     * with a construct klap must refuse), and run.sh.
     *
     * @return the number of variants klap left as written
     */
    public static int writeNp(Path dir, long first, int count) throws IOException {
        Files.createDirectories(dir);
        int refused = 0;
        for (long s = first; s < first + count; s++) {
            NpGenerator.Program p = NpGenerator.generate(s);
            Path pd = dir.resolve(p.dirName());
            Path in = p.writeTo(pd, "original.cu");
            Files.writeString(pd.resolve("shapes"), p.shapesLine() + "\n");
            Files.writeString(pd.resolve("variants"), NP_VARIANTS + "\n");
            Klap.Parses parses = new Klap.Parses();
            for (String m : NP_MODES) {
                StringWriter out = new StringWriter();
                StringWriter err = new StringWriter();
                Path cu = pd.resolve(m + ".cu");
                int rc = Klap.run(new String[] {"--np=" + m, "--np-slaves=" + p.slaves(m), in.toString(), "-o", cu.toString()},
                        new PrintWriter(out), new PrintWriter(err), parses);
                if (rc != 0 || !Files.exists(cu) || !Files.readString(cu).contains("np_k_klap_np")) {
                    refused++;
                    Files.deleteIfExists(cu);
                    Files.writeString(pd.resolve(m + ".refused"), "exit " + rc + "\n" + err);
                }
            }
        }
        writeRunScript(dir);
        return refused;
    }

    /**
     * Writes the fixtures of {@code fixtures} (each {@code NAME.cu}; each directory {@code NAME/} with
     * kernels.cu and main.cu) as {@code dir/fx_NAME} with their variants, and run.sh.
     *
     * @return the number of fixtures written
     */
    public static int writeFixtures(Path dir, Path fixtures) throws IOException {
        return writeFixtures(dir, fixtures, false);
    }

    /** {@link #writeFixtures(Path, Path)}; with {@code smallPool} also the {@link #SMALL_POOL_VARIANTS}. */
    public static int writeFixtures(Path dir, Path fixtures, boolean smallPool) throws IOException {
        Files.createDirectories(dir);
        int n = 0;
        List<Path> entries;
        try (Stream<Path> s = Files.list(fixtures)) {
            entries = s.sorted().toList();
        }
        for (Path f : entries) {
            String name = f.getFileName().toString();
            if (Files.isDirectory(f) && Files.exists(f.resolve(ProgramGenerator.KERNELS_FILE))) {
                Path pd = dir.resolve("fx_" + name);
                Files.createDirectories(pd);
                try (Stream<Path> s = Files.list(f)) {
                    for (Path x : s.toList()) {
                        Files.copy(x, pd.resolve(x.getFileName().toString()), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                    }
                }
                Files.writeString(pd.resolve("shapes"), "fixture:" + name + "\n");
                transform(pd.resolve(ProgramGenerator.KERNELS_FILE), pd, smallPool);
                n++;
            } else if (name.endsWith(".cu")) {
                String base = name.substring(0, name.length() - 3);
                Path pd = dir.resolve("fx_" + base);
                Files.createDirectories(pd);
                Path orig = pd.resolve("original.cu");
                Files.copy(f, orig, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                Files.writeString(pd.resolve("shapes"), "fixture:" + base + "\n");
                transform(orig, pd, smallPool);
                n++;
            }
        }
        writeRunScript(dir);
        return n;
    }

    /**
     * Runs klap on {@code in} at every granularity, writing {@code pd/<granularity>.cu} or {@code
     * pd/<granularity>.refused}; a refusal is also reported on stderr.
     *
     * @return the number of granularities klap refused
     */
    static int transform(Path in, Path pd) throws IOException {
        return transform(in, pd, false);
    }

    /**
     * {@link #transform(Path, Path)}; with {@code smallPool} also {@code pd/warp-pool64k.cu},
     * {@code pd/block-pool64k.cu} and, unless klap notes {@link #NO_FALLBACK}, {@code
     * pd/kernel-pool64k.cu} ({@code --pool-size=64K}), and the file {@code pd/variants}.
     */
    static int transform(Path in, Path pd, boolean smallPool) throws IOException {
        int refused = 0;
        // parsed once for every variant: klap writes only the variants and klap/*.cuh, which the program does not include
        Klap.Parses parses = new Klap.Parses();
        for (Granularity g : Granularity.values()) {
            refused += klap(in, pd, g.cliName(), parses, null, "--granularity=" + g.cliName());
        }
        if (smallPool) {
            List<String> variants = new ArrayList<>(List.of("original", "warp", "block", "kernel"));
            for (String v : SMALL_POOL_VARIANTS) {
                String g = v.substring(0, v.indexOf('-'));
                StringWriter notes = new StringWriter();
                int r = klap(in, pd, v, parses, notes, "--granularity=" + g, "--pool-size=" + SMALL_POOL);
                refused += r;
                if (r == 0 && notes.toString().contains(NO_FALLBACK)) {
                    Files.delete(pd.resolve(v + ".cu"));
                } else {
                    if (r == 0 && g.equals("kernel")) {
                        optInTailFallback(pd.resolve(v + ".cu"));
                    }
                    variants.add(v);
                }
            }
            Files.writeString(pd.resolve("variants"), String.join(" ", variants) + "\n");
        }
        return refused;
    }

    /**
     * Turns on, in klap's output {@code f}, the kernel-granularity fallback that a full pool takes
     * (launches as written into cudaStreamTailLaunch; off by default since it hung on the H200,
     * klap/config.cuh KLAP_KERNEL_TAIL_FALLBACK): {@code #define KLAP_KERNEL_TAIL_FALLBACK 1} as its
     * second line, after klap's {@code #define KLAP_POOL_SIZE_BYTES} and before the runtime's include,
     * so that the kernel-pool64k variant keeps testing that fallback.
     */
    static void optInTailFallback(Path f) throws IOException {
        String text = Files.readString(f);
        int nl = text.indexOf('\n') + 1;
        Files.writeString(f, text.substring(0, nl) + "#define KLAP_KERNEL_TAIL_FALLBACK 1\n" + text.substring(nl));
    }

    /**
     * Runs klap with {@code options} on {@code in} into {@code pd/<variant>.cu}, reusing the parse of an
     * earlier variant held by {@code parses}; with {@code diagnostics} klap runs without {@code -q}
     * and its warnings and notes are appended to it.
     *
     * @return 0, or 1 if it refused (then {@code pd/<variant>.refused})
     */
    private static int klap(Path in, Path pd, String variant, Klap.Parses parses, StringWriter diagnostics,
            String... options) throws IOException {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        List<String> args = new ArrayList<>(List.of(options));
        if (diagnostics == null) {
            args.add("-q");
        }
        args.addAll(List.of(in.toString(), "-o", pd.resolve(variant + ".cu").toString()));
        int rc = Klap.run(args.toArray(String[]::new), new PrintWriter(out), new PrintWriter(err), parses);
        if (diagnostics != null) {
            diagnostics.append(err.toString());
        }
        if (rc == 0) {
            return 0;
        }
        Files.writeString(pd.resolve(variant + ".refused"), "exit " + rc + "\n" + err);
        String firstLine = err.toString().lines().findFirst().orElse("");
        System.err.println("klap refused " + in + " as " + variant + " " + String.join(" ", options) + " (exit " + rc + "): "
                + firstLine);
        return 1;
    }

    private static void writeRunScript(Path dir) throws IOException {
        Path run = dir.resolve("run.sh");
        Files.writeString(run, runScript(), StandardCharsets.UTF_8);
        try {
            Files.setPosixFilePermissions(run, PosixFilePermissions.fromString("rwxr-xr-x"));
        } catch (UnsupportedOperationException e) {
            // not a POSIX file system: run it with bash
        }
    }

    /**
     * The bash script that builds and runs every program and variant on a GPU machine (no Java):
     * {@code bash run.sh [--jobs N] [--timeout SECONDS] [--arch sm_XX] [PROGRAM_DIR...]}, with the
     * environment overrides {@code NVCC}, {@code ARCH}, {@code JOBS}, {@code TIMEOUT}. It builds with
     * {@code xargs -P JOBS} ({@code nproc} by default), {@code nvcc -std=c++17 -rdc=true}, main.cu
     * next to the variant for a two-file program; runs each binary under {@code timeout} (a run
     * still going after TIMEOUT seconds, 60 by default, is killed and reported as {@code HANG});
     * prints one line per program, writes {@code results.tsv}, prints a per-variant summary table
     * last, and exits 1 if any program failed (a refused variant is not a failure).
     */
    static String runScript() {
        StringBuilder variants = new StringBuilder("original");
        for (Granularity g : Granularity.values()) {
            variants.append(' ').append(g.cliName());
        }
        SMALL_POOL_VARIANTS.forEach(v -> variants.append(' ').append(v));
        PROMOTION_VARIANTS.forEach(v -> variants.append(' ').append(v));
        variants.append(' ').append(NP_VARIANTS.substring("original ".length()));
        return """
                #!/usr/bin/env bash
                # Generated by klap.fuzz.Main. Builds and runs every program (fz_*: generated, fx_*: fixtures,
                # fp_*: chains, np_*: CUDA-NP) and each of its klap variants, and checks that the original prints
                # PASS and every variant the same RESULT line as the original. Needs bash, nvcc and a GPU; no Java.
                # A single-file program is original.cu; a two-file program is kernels.cu + main.cu, and a
                # variant <v>.cu replaces kernels.cu only (main.cu is compiled untouched). A variant B@X of a
                # program's 'variants' file is B.cu's binary (built once) run with KLAP_NP=X.
                # Usage: bash run.sh [--jobs N] [--timeout SECONDS] [--arch sm_XX] [PROGRAM_DIR...]
                # Environment: NVCC (nvcc), ARCH (sm_90), JOBS (parallel nvcc jobs, default nproc),
                # TIMEOUT (seconds per run, default 60: a run killed by it is reported as HANG).
                set -u
                cd "$(dirname "${BASH_SOURCE[0]}")"
                NVCC="${NVCC:-nvcc}"; ARCH="${ARCH:-sm_90}"; JOBS="${JOBS:-$(nproc 2>/dev/null || echo 2)}"; TIMEOUT="${TIMEOUT:-60}"
                VARIANTS="%s"
                progs=()
                while [ $# -gt 0 ]; do
                  case "$1" in
                    -j|--jobs) JOBS="$2"; shift 2 ;;
                    --jobs=*) JOBS="${1#*=}"; shift ;;
                    --timeout) TIMEOUT="$2"; shift 2 ;;
                    --timeout=*) TIMEOUT="${1#*=}"; shift ;;
                    --arch) ARCH="$2"; shift 2 ;;
                    --arch=*) ARCH="${1#*=}"; shift ;;
                    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
                    -*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
                    *) progs+=("${1%%/}"); shift ;;
                  esac
                done
                if [ ${#progs[@]} -eq 0 ]; then
                  for d in fz_*/ fx_*/ fp_*/ np_*/; do [ -d "$d" ] && progs+=("${d%%/}"); done
                fi
                # variants_of DIR: the variants of one program (its file 'variants', else the aggregation ones)
                variants_of() {
                  if [ -f "$1/variants" ]; then cat "$1/variants"; else echo "original warp block kernel"; fi
                }
                # sources DIR VARIANT: the files nvcc compiles for one variant (nothing if it was not written)
                sources() {
                  local d="$1" v="${2%%%%@*}" k
                  if [ -f "$d/main.cu" ]; then
                    if [ "$v" = original ]; then k="$d/kernels.cu"; else k="$d/$v.cu"; fi
                    if [ -f "$k" ]; then echo "$k $d/main.cu"; fi
                  elif [ -f "$d/$v.cu" ]; then
                    echo "$d/$v.cu"
                  fi
                }
                build() {  # DIR VARIANT
                  local d="$1" v="$2" src
                  src="$(sources "$d" "$v")"
                  [ -n "$src" ] || return 0
                  rm -f "$d/$v.bin" "$d/$v.nvcc.failed"
                  # shellcheck disable=SC2086
                  "$NVCC" -std=c++17 -rdc=true -arch="$ARCH" -o "$d/$v.bin" $src >"$d/$v.nvcc.log" 2>&1 \\
                    || echo "nvcc failed" >"$d/$v.nvcc.failed"
                }
                export -f sources build variants_of; export NVCC ARCH
                echo "building ${#progs[@]} programs with $JOBS jobs..." >&2
                for d in "${progs[@]}"; do for v in $(variants_of "$d"); do echo "$d ${v%%%%@*}"; done; done \\
                  | awk '!seen[$0]++' | xargs -P "$JOBS" -n 2 bash -c 'build "$0" "$1"'
                declare -A count failed
                statuses="ok FAIL HANG NVCC-FAILED refused missing"
                for v in $VARIANTS; do for s in $statuses; do count[$v,$s]=0; done; failed[$v]=""; done
                printf 'program\\tshapes\\tvariant\\tstatus\\tresult\\tdetail\\n' >results.tsv
                pass=0; fail=0
                for d in "${progs[@]}"; do
                  shapes="$(cat "$d/shapes" 2>/dev/null || echo '?')"
                  line="$d [$shapes]"; ok=1; ref=""
                  for v in $(variants_of "$d"); do
                    res=""; detail=""; b="${v%%%%@*}"; env=()
                    [ "$b" = "$v" ] || env=("KLAP_NP=${v#*@}")
                    if [ -f "$d/$b.refused" ]; then
                      st=refused; detail="$(sed -n 2p "$d/$b.refused")"
                    elif [ -z "$(sources "$d" "$v")" ]; then
                      st=missing
                    elif [ -f "$d/$b.nvcc.failed" ] || [ ! -x "$d/$b.bin" ]; then
                      st=NVCC-FAILED; detail="$(grep -m1 -i 'error' "$d/$b.nvcc.log" 2>/dev/null)"
                    else
                      env ${env[@]+"${env[@]}"} timeout -k 10 "$TIMEOUT" "./$d/$b.bin" >"$d/$v.out" 2>&1; rc=$?
                      res="$(grep -m1 '^RESULT ' "$d/$v.out" | cut -d' ' -f2)"
                      detail="$(grep -m1 -E '^(PASS|FAIL)|klap: error' "$d/$v.out")"
                      if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
                        st=HANG; detail="no exit within ${TIMEOUT}s"
                      elif [ "$v" = original ]; then
                        ref="$res"
                        if [ $rc -eq 0 ] && [ -n "$res" ] && grep -q '^PASS' "$d/$v.out"; then st=ok; else st=FAIL; fi
                      elif [ $rc -eq 0 ] && [ -n "$res" ] && [ "$res" = "$ref" ]; then
                        st=ok
                      else
                        st=FAIL; detail="rc=$rc result=${res:-none} original=${ref:-none}; $detail"
                      fi
                    fi
                    count[$v,$st]=$(( ${count[$v,$st]} + 1 ))
                    case "$st" in
                      ok|refused) ;;
                      *) ok=0; failed[$v]="${failed[$v]} $d" ;;
                    esac
                    line="$line $v=$st"
                    printf '%%s\\t%%s\\t%%s\\t%%s\\t%%s\\t%%s\\n' "$d" "$shapes" "$v" "$st" "$res" "$detail" >>results.tsv
                  done
                  if [ $ok -eq 1 ]; then pass=$((pass+1)); echo "PASS $line"; else fail=$((fail+1)); echo "FAIL $line"; fi
                done
                echo
                for v in $VARIANTS; do
                  if [ -n "${failed[$v]}" ]; then echo "not ok at $v:${failed[$v]}"; fi
                done
                echo
                echo "SUMMARY programs=${#progs[@]} passed=$pass failed=$fail (details: results.tsv)"
                printf '%%-15s' variant; for s in $statuses; do printf ' %%12s' "$s"; done; echo
                for v in $VARIANTS; do
                  printf '%%-15s' "$v"; for s in $statuses; do printf ' %%12s' "${count[$v,$s]}"; done; echo
                done
                [ $fail -eq 0 ]
                """.formatted(variants);
    }
}
