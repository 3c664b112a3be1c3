package klap.fuzz;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeSet;

/**
 * Random self-checking programs for the CUDA-NP transform (issue 13, Yang and Zhou, PPoPP 2014):
 * a kernel {@code np_k} whose loops carry {@code #pragma np parallel for [reduction(op:vars)]
 * [scan(op:vars)] [copyin(vars)] [num_slaves(N)]}, and its textual twin {@code ref_k} without the
 * pragma lines (klap transforms only kernels with the pragma, so {@code ref_k} stays sequential).
 * {@code main} fills a deterministic input, runs both kernels with the same launch configuration on
 * separate output buffers, compares every output word and the atomic counter exactly, and prints
 * {@code RESULT <hash>} and {@code PASS} (or {@code FAIL <detail>}, exit 1). No host reference: the
 * sequential twin is the reference. All arithmetic is unsigned (wrapping, so reassociated
 * reductions are exact), int only where it cannot overflow (min, max, &&, ||), float only with min
 * and max.
 *
 * <p>What a program may contain, drawn per seed:
 * <ul>
 *   <li>reductions with every operator ({@code + * min max & | ^} on unsigned, {@code min max & |}
 *       on int, {@code && ||} on int flags, {@code min max} on float), several variables in one
 *       clause or several clauses, updates {@code v op= e}, {@code v = v op e}, {@code v = min(v, e)},
 *       {@code v++}, conditional ones, and reduction variables that are live-ins of later loops;</li>
 *   <li>scans {@code scan(+:v)} and {@code scan(*:v)} of the shape {@code { pre-declarations; v += e;
 *       out[...] = f(v); }};</li>
 *   <li>loops without a clause that only store to global memory;</li>
 *   <li>bounds: constants, kernel parameters, per-thread (different trip counts, 0 trips, lo &gt; hi),
 *       scalars computed earlier; {@code i++ ++i i += 1}, {@code i < hi}, {@code i <= hi};</li>
 *   <li>local arrays (8..64 elements) written at index {@code i} and read at {@code i} by a later
 *       loop with the same lower bound (register placement), or read at another index, with another
 *       lower bound, or by sequential code, or initialised by sequential code (shared placement);</li>
 *   <li>np loops in sequential loops, in divergent branches, after an early return of some threads,
 *       {@code __syncthreads()} between np loops, {@code __shared__} arrays written by one thread
 *       and read by another after a barrier;</li>
 *   <li>{@code continue}, non-np inner loops, calls of pure {@code __device__} functions,
 *       {@code atomicAdd} to a global counter, {@code copyin} and {@code num_slaves} clauses;</li>
 *   <li>both kernels as templates ({@code template <typename fz_T, int fz_S = 1>}, the default on the
 *       definition or on a prototype before it) launched without template arguments;</li>
 *   <li>1-D, 2-D and 3-D blocks of 1..1024 threads (sometimes so many that the grown block exceeds
 *       1024 threads and the launch must fall back to the original kernel), 1..8 blocks, launches
 *       with a stream.</li>
 * </ul>
 * A few programs (about one in seven) contain exactly one construct that klap must refuse with an
 * {@code np} warning ({@link Refusal}); everything else is a construct klap must transform.
 */
public final class NpGenerator {
    private NpGenerator() {
    }

    /** The constructs klap must refuse: the loop (or kernel) stays as written, with an {@code np} warning. */
    public enum Refusal {
        /** {@code if (i == c) break;} in an np loop body. */
        BREAK("break", List.of("break")),
        /** an np loop writes a local scalar declared outside it that is in no reduction clause ({@code fz_last}). */
        OUTER_WRITE("outer-write", List.of("fz_last")),
        /** {@code __syncthreads()} in an np loop body (uniform bounds, so the original is correct). */
        SYNC_IN_LOOP("sync-in-loop", List.of("__syncthreads", "barrier")),
        /** {@code __shfl_sync} in the kernel (in sequential code, exact mask): the whole kernel stays as written. */
        WARP_INTRINSIC("warp-intrinsic", List.of("__shfl_sync", "shfl", "warp")),
        /** a loop not of the form {@code for (int i = lo; i < hi; i++)}: {@code for (int i = hi - 1; i >= lo; i--)}. */
        NON_CANONICAL("non-canonical", List.of("canonical", "i--", "form", "decrement", "increment", "step", "condition")),
        /**
         * {@code np_k} is prototyped before {@code typedef unsigned fz_word;} and defined with {@code
         * fz_word* out}, and a host function between the prototype and the typedef launches it: the
         * variant's prototype, which that launch needs before it, would copy that signature
         * (2026-11-30), so the whole kernel stays as written. Not drawn with the loop refusals above
         * ({@link #DRAWN}): a draw of its own, among programs without another refusal.
         */
        LATE_SIGNATURE("late-signature", List.of("where klap must declare the CUDA-NP variant"));

        /** the refusals a program draws with its loops (the first five; their draw is that of the first version) */
        static final int DRAWN = 5;

        /** the name in a program's shapes file, {@code refuse:NAME} */
        public final String cliName;
        /** words one of which the {@code np} warning should contain (it names the construct) */
        public final List<String> keywords;

        Refusal(String cliName, List<String> keywords) {
            this.cliName = cliName;
            this.keywords = keywords;
        }
    }

    /**
     * A generated program.
     *
     * @param seed          the seed
     * @param text          the program ({@code np_k}, {@code ref_k}, {@code main})
     * @param refusal       the one construct klap must refuse, or null when klap must transform every
     *                      np loop of {@code np_k}
     * @param kernelRefused with a refusal: true when no loop of {@code np_k} can be transformed (a
     *                      warp intrinsic, or the refused loop is its only np loop), so {@code np_k}
     *                      must stay as written
     * @param interWarp     true when klap must also emit the inter-warp variant of {@code np_k} (a
     *                      transformable program of the inter-warp flavour: every np loop reached by
     *                      the whole block, no sequential load after a sequential store); otherwise
     *                      --np=inter-warp leaves it as written with an {@code np} warning
     * @param interImpossible true when klap must not emit the inter-warp variant (an np loop is not
     *                      reached by the whole block: in a divergent branch or a loop with a
     *                      per-thread trip count, or after an early return); neither flag: klap may
     *                      or may not (it also refuses the inter-warp layout when a sequential load
     *                      follows a sequential store, which the generator does not track outside
     *                      the inter-warp flavour)
     * @param npLoops       the number of {@code #pragma np} loops in {@code np_k}'s text
     * @param threads       threads per block of the launch ({@code blockDim.x * blockDim.y * blockDim.z})
     * @param sIntra        slaves per master for the intra-warp variant (2, 4, 8, 16, 32)
     * @param sInter        slaves per master for the inter-warp variant (2, 3, 4)
     * @param sAll          slaves per master for the variant with both (2, 4, 8)
     * @param shapes        tags of the constructs the program contains (for the shapes file and coverage)
     */
    public record Program(long seed, String text, Refusal refusal, boolean kernelRefused, boolean interWarp,
                          boolean interImpossible, int npLoops,
                          int threads,
                          int sIntra, int sInter, int sAll, Set<String> shapes) {
        /** @return true when klap must transform {@code np_k} and warn about nothing */
        public boolean transformable() {
            return refusal == null;
        }

        /** @return the program's directory name in a klap.fuzz.Main output, {@code np_SEED} */
        public String dirName() {
            return String.format("np_%06d", seed);
        }

        /** @return S for {@code mode} ({@code intra-warp}, {@code inter-warp}, {@code all}) */
        public int slaves(String mode) {
            return switch (mode) {
                case "intra-warp" -> sIntra;
                case "inter-warp" -> sInter;
                case "all" -> sAll;
                default -> throw new IllegalArgumentException(mode);
            };
        }

        /** @return the line of the shapes file: {@code np[:refuse:NAME] S=intra/inter/all tags...} */
        public String shapesLine() {
            return "np" + (refusal == null ? "" : ":refuse:" + refusal.cliName) + " S=" + sIntra + "/" + sInter + "/"
                    + sAll + " threads=" + threads + " " + String.join(" ", shapes);
        }

        /** Writes the program as {@code dir/name}, creating {@code dir}; returns the file. */
        public Path writeTo(Path dir, String name) throws IOException {
            Files.createDirectories(dir);
            Path p = dir.resolve(name);
            Files.writeString(p, text, StandardCharsets.UTF_8);
            return p;
        }
    }

    /** The number of input words (a power of two: indices are masked with {@code FZ_NIN - 1}). */
    static final int NIN = 1024;

    /** @return the program of {@code seed} */
    public static Program generate(long seed) {
        return new Gen(seed).program();
    }

    /** @return {@code text} without its {@code #pragma np} lines (the sequential twin's body) */
    static String withoutNpPragmas(String text) {
        StringBuilder b = new StringBuilder();
        for (String l : text.split("\n", -1)) {
            if (!l.strip().startsWith("#pragma np")) {
                b.append(l).append('\n');
            }
        }
        return b.substring(0, b.length() - 1);
    }

    /** One program under construction. */
    private static final class Gen {
        final long seed;
        final SplittableRandom r;
        final StringBuilder body = new StringBuilder();
        int indent = 1;
        int slots;
        int names;
        int npLoops;
        int transformableLoops;
        final Set<String> shapes = new TreeSet<>();
        /** readable and writable unsigned scalars, innermost scope last */
        final Deque<List<String>> scopes = new ArrayDeque<>();
        /** read-only int counters of the sequential loops around the current point */
        final List<String> counters = new ArrayList<>();
        /** true once {@code fz_sh} was written and a barrier passed (reads of other threads' words are safe) */
        boolean shReady;
        // the launch
        final int bx;
        final int by;
        final int bz;
        final int dims;
        final int threads;
        final int grid;
        final int n;
        final int m;
        final int sIntra;
        final int sInter;
        final int sAll;
        // kernel-wide choices
        final boolean shared;
        final boolean earlyReturn;
        /**
         * the inter-warp flavour: every np loop reached by the whole block (no early return, no
         * divergent branch, sequential loops with block-uniform trip counts) and no sequential load
         * after a sequential store (results are folded into {@code fz_acc} and stored at the end)
         */
        final boolean uniform;
        /** a sequential store was emitted (from then on, the inter-warp flavour reads no memory in sequential code) */
        boolean seqStored;
        /** an np loop is not reached by the whole block (divergent branch, thread-dependent loop, early return) */
        boolean interImpossible;
        /** the one num_slaves(N) of this kernel (0: none); a kernel's loops share one group size */
        final int numSlaves;
        /** the construct klap must refuse; set last for {@link Refusal#LATE_SIGNATURE} (from the alias draw) */
        Refusal refusal;
        /**
         * 0, or for a program that is no template 1 in 8: {@code 1} declares {@code typedef unsigned
         * fz_word;} before the kernels' prototypes (klap transforms np_k), 1 in 8 without another
         * refusal: {@code 2} after them (klap must leave np_k as written); the definitions take {@code
         * fz_word* out}. Drawn from a generator of its own, so the other draws stay.
         */
        final int alias;
        /**
         * with {@code alias == 2}: a host function before the alias launches np_k ({@code fz_np_early},
         * never called), so klap must declare the variant where the definition's signature cannot be
         * written yet (refusal {@link Refusal#LATE_SIGNATURE}); without it, klap declares the variant
         * with its definition and transforms the kernel (2026-11-30, an eighth session)
         */
        final boolean earlyLaunch;
        final int arrayBudget; // the largest local array (elements) the block may have, 0: none

        Gen(long seed) {
            this.seed = seed;
            this.r = new SplittableRandom(seed * 0x9E3779B97F4A7C15L + 13);
            int[] d = dims();
            bx = d[0];
            by = d[1];
            bz = d[2];
            dims = bz > 1 ? 3 : by > 1 ? 2 : 1;
            threads = bx * by * bz;
            grid = 1 + r.nextInt(8);
            n = r.nextInt(9);
            m = r.nextInt(4);
            sIntra = 2 << r.nextInt(5);
            sInter = 2 + r.nextInt(3);
            sAll = 2 << r.nextInt(3);
            int rf = r.nextInt(35);
            refusal = rf < Refusal.DRAWN ? Refusal.values()[rf] : null;
            int ad = templateCase() < 2 ? -1 : new SplittableRandom(seed * 1_000_003L + 11).nextInt(8);
            alias = ad == 0 ? 1 : ad == 1 && refusal == null ? 2 : 0;
            // a late alias with a host function launching np_k before it (then klap must refuse), or not
            earlyLaunch = alias == 2 && new SplittableRandom(seed * 1_000_003L + 17).nextBoolean();
            shared = r.nextInt(3) == 0;
            uniform = r.nextInt(5) < 2;
            earlyReturn = !uniform && refusal != Refusal.SYNC_IN_LOOP && r.nextInt(4) == 0;
            numSlaves = r.nextInt(6) == 0 ? pick(2, 4, 8) : 0;
            int maxElems = threads > 512 ? 0 : 16384 / (4 * threads);
            arrayBudget = maxElems >= 8 ? Math.min(64, maxElems) : 0;
        }

        int[] dims() {
            return switch (r.nextInt(3)) {
                case 0 -> new int[] {pick(1, 7, 16, 32, 33, 64, 96, 100, 128, 200, 256, 512, 1024), 1, 1};
                case 1 -> new int[] {pick(4, 5, 8, 16, 32), pick(2, 3, 4, 8), 1};
                default -> new int[] {pick(2, 3, 4, 8, 32), pick(2, 3), pick(2, 3, 4)};
            };
        }

        int pick(int... xs) {
            return xs[r.nextInt(xs.length)];
        }

        String pick(String... xs) {
            return xs[r.nextInt(xs.length)];
        }

        <T> T pick(List<T> xs) {
            return xs.get(r.nextInt(xs.size()));
        }

        boolean chance(int oneIn) {
            return r.nextInt(oneIn) == 0;
        }

        String fresh(String prefix) {
            return prefix + (names++);
        }

        void line(String s) {
            body.append("    ".repeat(indent)).append(s).append('\n');
        }

        void pragmaLine(String s) {
            body.append("    ".repeat(indent)).append(s).append('\n');
        }

        List<String> readable() {
            List<String> all = new ArrayList<>();
            for (List<String> s : scopes) {
                all.addAll(s);
            }
            return all;
        }

        void declare(String name) {
            scopes.peekLast().add(name);
        }

        void push() {
            scopes.addLast(new ArrayList<>());
        }

        void pop() {
            scopes.removeLast();
        }

        /** An out slot range of {@code size} words per thread; returns its first slot. */
        int slots(int size) {
            int s = slots;
            slots += size;
            return s;
        }

        /** Where an expression is generated: the loop variable, names it must not read, what it read. */
        final class Ctx {
            final String loopVar;
            final Set<String> excluded;
            final Set<String> used = new LinkedHashSet<>();
            final List<String> locals = new ArrayList<>();

            Ctx(String loopVar, Set<String> excluded) {
                this.loopVar = loopVar;
                this.excluded = excluded;
            }
        }

        /** An unsigned expression. */
        String ue(Ctx c, int depth) {
            int k = depth <= 0 ? 0 : r.nextInt(10);
            if ((k == 4 || k == 5 || k == 7) && uniform && seqStored && c.loopVar == null) {
                // klap counts a call of a device function as a load
                k = 8;
            }
            switch (k) {
                case 0, 1, 2, 3 -> {
                    return atom(c);
                }
                case 4 -> {
                    return "in[(" + ue(c, depth - 1) + ") & " + (NIN - 1) + "u]";
                }
                case 5 -> {
                    shapes.add("devfn");
                    return "fz_f" + r.nextInt(3) + "(" + ue(c, depth - 1) + ", " + ue(c, depth - 1) + ")";
                }
                case 6 -> {
                    return "(" + ue(c, depth - 1) + " >> " + (1 + r.nextInt(12)) + ")";
                }
                case 7 -> {
                    if (shared && shReady) {
                        String idx = c.loopVar != null && r.nextBoolean() ? "t + " + (1 + r.nextInt(5)) + " + " + c.loopVar
                                : "t + " + r.nextInt(threads + 3);
                        shapes.add("shared-read");
                        return "fz_sh[(unsigned)(" + idx + ") % " + threads + "u]";
                    }
                    return atom(c);
                }
                default -> {
                    return "(" + ue(c, depth - 1) + " " + pick("+", "-", "*", "^", "|", "+", "^") + " " + ue(c, depth - 1) + ")";
                }
            }
        }

        String atom(Ctx c) {
            List<String> xs = new ArrayList<>();
            if (c.loopVar != null) {
                xs.add("(unsigned)" + c.loopVar);
                xs.add("(unsigned)" + c.loopVar);
                xs.add("(unsigned)(" + c.loopVar + " * " + (2 + r.nextInt(9)) + ")");
            }
            for (String v : readable()) {
                if (!c.excluded.contains(v)) {
                    xs.add(v);
                }
            }
            xs.addAll(c.locals);
            counters.forEach(x -> xs.add("(unsigned)" + x));
            xs.addAll(List.of("(unsigned)t", "(unsigned)gt", (r.nextInt(1000) + 1) + "u", "threadIdx.x", "blockIdx.x",
                    "blockDim.x", "(unsigned)n"));
            if (dims >= 2) {
                xs.addAll(List.of("threadIdx.y", "blockDim.y"));
            }
            if (dims >= 3) {
                xs.add("threadIdx.z");
            }
            String a = pick(xs);
            if (readable().contains(a) && !c.locals.contains(a)) {
                c.used.add(a);
            }
            return a;
        }

        /** A condition on unsigned values (true about half the time). */
        String cond(Ctx c) {
            return switch (r.nextInt(4)) {
                case 0 -> "(" + ue(c, 1) + " & " + pick("1u", "2u", "4u") + ") != 0u";
                case 1 -> c.loopVar != null ? c.loopVar + " % " + (2 + r.nextInt(3)) + " " + pick("==", "!=") + " 1"
                        : "(t & 1) == 0";
                case 2 -> "(" + ue(c, 1) + ") % " + (3 + r.nextInt(5)) + "u < 2u";
                default -> "(" + ue(c, 1) + " ^ " + ue(c, 0) + ") % 3u == 0u";
            };
        }

        // ---- bounds ----

        /** A loop header: text of {@code for (...)} and what its bounds are. */
        record Header(String text, String var, String lo, String hi, String cmp) {
        }

        /**
         * A canonical header over indices within [0, cap); {@code loFixed}, if not null, is the lower
         * bound (the same text as another loop's).
         */
        Header header(int cap, String loFixed, String hiFixed, String cmpFixed, Set<String> excluded) {
            String v = pick("i", "i", "j", "n_i");
            String lo = loFixed != null ? loFixed : lower(cap, excluded);
            String cmp = cmpFixed != null ? cmpFixed : chance(3) ? "<=" : "<";
            String hi = hiFixed != null ? hiFixed : upper(cap, lo, cmp.equals("<="), excluded);
            if (loFixed == null && hiFixed == null && chance(4)) {
                // bounds in variables
                String lv = fresh("lo");
                String hv = fresh("hi");
                line("const int " + lv + " = " + lo + ";");
                line("const int " + hv + " = " + hi + ";");
                lo = lv;
                hi = hv;
                shapes.add("bound-vars");
            }
            String inc = pick(v + "++", "++" + v, v + " += 1");
            return new Header("for (int " + v + " = " + lo + "; " + v + " " + cmp + " " + hi + "; " + inc + ")", v, lo, hi, cmp);
        }

        /** The scalars a bound may read: not {@code excluded} (the loop's reduction variables). */
        List<String> boundScalars(Set<String> excluded) {
            List<String> rd = new ArrayList<>(readable());
            rd.removeAll(excluded);
            return rd;
        }

        String lower(int cap, Set<String> excluded) {
            return switch (r.nextInt(9)) {
                case 0, 1, 2 -> "0";
                case 3 -> "" + (1 + r.nextInt(3));
                case 4 -> {
                    shapes.add("bound-thread");
                    yield "t % 3";
                }
                case 5 -> {
                    shapes.add("bound-thread");
                    yield "(int)(threadIdx.x % 4u)";
                }
                case 6 -> {
                    shapes.add("bound-param");
                    yield "m";
                }
                case 7 -> {
                    List<String> rd = boundScalars(excluded);
                    if (rd.isEmpty()) {
                        yield "0";
                    }
                    shapes.add("bound-scalar");
                    yield "(int)(" + pick(rd) + " % 4u)";
                }
                default -> {
                    shapes.add("bound-lo-gt-hi");
                    yield (cap / 2) + " + t % 3";
                }
            };
        }

        /** An upper bound whose value never exceeds cap (cap - 1 with {@code <=}). */
        String upper(int cap, String lo, boolean inclusive, Set<String> excluded) {
            int top = inclusive ? cap - 1 : cap;
            return switch (r.nextInt(9)) {
                case 0, 1 -> "" + top;
                case 2 -> {
                    shapes.add("bound-thread");
                    yield top + " - t % 4";
                }
                case 3 -> {
                    shapes.add("bound-thread");
                    yield "(t * 7 + 3) % " + (top + 1);
                }
                case 4 -> {
                    if (n > top) {
                        yield "" + top;
                    }
                    shapes.add("bound-param");
                    yield "n";
                }
                case 5 -> {
                    List<String> rd = boundScalars(excluded);
                    if (rd.isEmpty()) {
                        yield "" + top;
                    }
                    shapes.add("bound-scalar");
                    yield "(int)(" + pick(rd) + " % " + (top + 1) + "u)";
                }
                case 6 -> {
                    shapes.add("bound-zero-trips");
                    yield inclusive ? "(" + lo + ") - 1" : lo;
                }
                case 7 -> {
                    shapes.add("bound-thread");
                    yield "(t % 2 == 0 ? " + top + " : " + Math.min(top, 1) + ")";
                }
                default -> {
                    if (dims < 2) {
                        yield "" + top;
                    }
                    shapes.add("bound-thread");
                    yield "(int)(" + top + "u - threadIdx.y % 3u)";
                }
            };
        }

        // ---- reductions ----

        /** A reduction variable: name, C type, operator (as in the clause). */
        record Red(String name, String type, String op) {
        }

        /** @return true if {@code text} mentions the identifier {@code name} */
        static boolean mentions(String text, String name) {
            return java.util.regex.Pattern.compile("\\b" + java.util.regex.Pattern.quote(name) + "\\b").matcher(text).find();
        }

        /**
         * A new reduction variable (declared here), or sometimes an unsigned scalar already live (a
         * live-in of earlier loops) when {@code reuse}; never one that {@code header} mentions.
         */
        Red newRed(boolean reuse, String header) {
            int k = r.nextInt(14);
            String op;
            String type;
            if (k < 8) {
                type = "unsigned";
                op = pick("+", "+", "*", "&", "|", "^", "min", "max");
            } else if (k < 12) {
                type = "int";
                op = pick("min", "max", "&&", "||", "&", "|");
            } else if (k < 13) {
                type = "float";
                op = pick("min", "max");
                shapes.add("float");
            } else {
                type = "unsigned";
                op = pick("min", "max", "+");
            }
            // a top-level unsigned scalar (a live-in of earlier loops) as the reduction variable
            if (reuse && type.equals("unsigned") && !readable().isEmpty() && chance(3)) {
                String v = pick(readable());
                if (!mentions(header, v)) {
                    shapes.add("reduce-live-scalar");
                    return new Red(v, type, op);
                }
            }
            String name = fresh(type.equals("float") ? "x" : type.equals("int") ? (op.equals("&&") || op.equals("||") ? "f" : "k") : "s");
            String init = switch (type) {
                case "float" -> pick("-1.0f", "(float)(t % 17)", "1000.0f");
                case "int" -> switch (op) {
                    case "&&" -> pick("1", "(t % 5 != 0)");
                    case "||" -> pick("0", "(t % 7 == 0)");
                    case "&" -> "-1";
                    default -> pick("0", "t % 11 - 5", op.equals("min") ? "1000" : "-1000");
                };
                default -> switch (op) {
                    case "*" -> pick("1u", "(unsigned)t * 2u + 1u");
                    case "&" -> pick("0xffffffffu", "~(unsigned)t");
                    case "min" -> pick("0xffffffffu", "(unsigned)t * 977u");
                    default -> pick("0u", "(unsigned)t", "(unsigned)gt * 3u + 1u");
                };
            };
            line(type + " " + name + " = " + init + ";");
            return new Red(name, type, op);
        }

        /** One update of {@code v} (never reads v except as the reduction operand). */
        String update(Red v, Ctx c) {
            String e = ue(c, 2);
            String u = switch (v.type()) {
                case "float" -> v.name() + " = " + v.op() + "(" + v.name() + ", (float)((" + e + ") % 1000u) * 0.25f);";
                case "int" -> switch (v.op()) {
                    case "&&" -> v.name() + " = " + v.name() + " && ((" + e + ") % 53u != 7u);";
                    case "||" -> v.name() + " = " + v.name() + " || ((" + e + ") % 61u == 5u);";
                    case "&" -> v.name() + " &= (int)((" + e + ") | 0xfff7ff7fu);";
                    case "|" -> v.name() + " |= (int)(1u << ((" + e + ") & 30u));";
                    default -> v.name() + " = " + v.op() + "(" + v.name() + ", (int)((" + e + ") % 2001u) - 1000);";
                };
                default -> switch (v.op()) {
                    case "+" -> switch (r.nextInt(4)) {
                        case 0 -> v.name() + " += " + e + ";";
                        case 1 -> v.name() + " = " + v.name() + " + " + e + ";";
                        case 2 -> {
                            shapes.add("update-inc");
                            yield pick(v.name() + "++;", "++" + v.name() + ";");
                        }
                        default -> v.name() + " += " + e + " & 255u;";
                    };
                    case "*" -> chance(2) ? v.name() + " *= (" + e + ") | 1u;" : v.name() + " = " + v.name() + " * ((" + e + ") | 1u);";
                    case "&" -> chance(2) ? v.name() + " &= (" + e + ") | 0xfff7ff7fu;"
                            : v.name() + " = " + v.name() + " & ((" + e + ") | 0xfff7ff7fu);";
                    case "|" -> chance(2) ? v.name() + " |= 1u << ((" + e + ") & 31u);"
                            : v.name() + " = " + v.name() + " | (1u << ((" + e + ") & 31u));";
                    case "^" -> chance(2) ? v.name() + " ^= " + e + ";" : v.name() + " = " + v.name() + " ^ " + e + ";";
                    default -> v.name() + " = " + v.op() + "(" + v.name() + ", " + e + ");";
                };
            };
            if (chance(4)) {
                shapes.add("update-conditional");
                return "if (" + cond(c) + ") " + u;
            }
            return u;
        }

        String store(Red v) {
            return switch (v.type()) {
                case "float" -> "__float_as_uint(" + v.name() + ")";
                case "int" -> "(unsigned)" + v.name();
                default -> v.name();
            };
        }

        /** The clause text for reductions {@code reds}: one clause per operator, or several clauses. */
        String reductionClauses(List<Red> reds) {
            List<String> ops = new ArrayList<>();
            for (Red v : reds) {
                if (!ops.contains(v.op())) {
                    ops.add(v.op());
                }
            }
            StringBuilder b = new StringBuilder();
            for (String op : ops) {
                List<String> vs = new ArrayList<>();
                for (Red v : reds) {
                    if (v.op().equals(op)) {
                        vs.add(v.name());
                    }
                }
                if (vs.size() > 1) {
                    shapes.add("reduce-several-vars");
                }
                b.append(" reduction(").append(op).append(':').append(String.join(pick(",", ", "), vs)).append(')');
                shapes.add("reduce:" + op);
            }
            if (ops.size() > 1) {
                shapes.add("reduce-several-clauses");
            }
            return b.toString();
        }

        String extraClauses(Ctx c) {
            StringBuilder b = new StringBuilder();
            if (!c.used.isEmpty() && chance(4)) {
                List<String> u = new ArrayList<>(c.used);
                List<String> some = u.subList(0, 1 + r.nextInt(u.size()));
                b.append(" copyin(").append(String.join(", ", some)).append(')');
                shapes.add("copyin");
            }
            if (numSlaves != 0 && chance(2)) {
                b.append(" num_slaves(").append(numSlaves).append(')');
                shapes.add("num_slaves");
            }
            return b.toString();
        }

        // ---- np loops ----

        enum Kind { STORE, REDUCE, SCAN }

        /** Emits one transformable np loop at the current point. */
        void npLoop() {
            Kind kind = pick(List.of(Kind.STORE, Kind.REDUCE, Kind.REDUCE, Kind.SCAN));
            switch (kind) {
                case STORE -> storeLoop();
                case REDUCE -> reduceLoop();
                default -> scanLoop();
            }
        }

        int cap() {
            return pick(4, 8, 16, 33, 48);
        }

        /** The body statements shared by store and reduce loops: locals, continue, inner loop, a store, atomics. */
        void commonBody(Ctx c, Header h, int slot, List<Red> reds, boolean mustStore) {
            if (chance(3)) {
                String x = fresh("u");
                line("unsigned " + x + " = " + ue(c, 2) + ";");
                c.locals.add(x);
                if (chance(3)) {
                    line(x + " = " + x + " * " + (3 + r.nextInt(20)) + "u + " + ue(c, 1) + ";");
                }
            }
            if (chance(4)) {
                shapes.add("continue");
                line("if (" + cond(c) + ") continue;");
            }
            if (chance(4)) {
                shapes.add("inner-loop");
                String acc = fresh("acc");
                line("unsigned " + acc + " = " + ue(c, 0) + ";");
                String trips = pick(String.valueOf(1 + r.nextInt(4)), h.var() + " % 4", "(int)(" + ue(c, 0) + " % 5u)");
                line("for (int kk = 0; kk < " + trips + "; ++kk)");
                line("    " + acc + " = " + acc + " * 31u + in[(" + ue(c, 1) + " + (unsigned)kk) & " + (NIN - 1) + "u];");
                c.locals.add(acc);
            }
            for (Red v : reds) {
                line(update(v, c));
                if (chance(6)) {
                    line(update(v, c));
                }
            }
            if (mustStore || chance(2)) {
                line("out[(" + slot + " + " + h.var() + ") * NT + gt] = " + storeValue(c, h.var()) + ";");
            }
            if (chance(5)) {
                shapes.add("atomic");
                line("atomicAdd(cnt, (" + ue(c, 1) + ") & 255u);");
            }
        }

        String storeValue(Ctx c, String var) {
            return "fz_f0(" + ue(c, 2) + ", (unsigned)" + var + ")";
        }

        void closeBlock() {
            indent--;
            line("}");
        }

        void storeLoop() {
            int cap = cap();
            int slot = slots(cap);
            Header h = header(cap, null, null, null, Set.of());
            Ctx c = new Ctx(h.var(), Set.of());
            StringBuilder saved = detach();
            indent++;
            commonBody(c, h, slot, List.of(), true);
            indent--;
            String bodyText = reattach(saved);
            npLoops++;
            transformableLoops++;
            shapes.add("store-only");
            pragmaLine("#pragma np parallel for" + extraClauses(c));
            if (bodyText.lines().count() == 1 && chance(2)) {
                line(h.text());
                body.append(bodyText);
            } else {
                line(h.text() + " {");
                body.append(bodyText);
                line("}");
            }
        }

        void reduceLoop() {
            int nv = 1 + (chance(3) ? 1 + r.nextInt(2) : 0);
            List<Red> reds = new ArrayList<>();
            Set<String> excl = new LinkedHashSet<>();
            for (int q = 0; q < nv; q++) {
                Red v = newRed(true, "");
                if (excl.contains(v.name())) {
                    continue;
                }
                reds.add(v);
                excl.add(v.name());
            }
            int cap = cap();
            int slot = slots(cap);
            Header h = header(cap, null, null, null, excl);
            Ctx c = new Ctx(h.var(), excl);
            StringBuilder saved = detach();
            indent++;
            commonBody(c, h, slot, reds, false);
            indent--;
            emitReductionLoop(saved, reds, c, h);
        }

        /** Emits a transformable parallel loop whose body was generated into {@code saved}'s place, and stores its reductions. */
        void emitReductionLoop(StringBuilder saved, List<Red> reds, Ctx c, Header h) {
            String bodyText = reattach(saved);
            npLoops++;
            transformableLoops++;
            pragmaLine("#pragma np parallel for" + reductionClauses(reds) + extraClauses(c));
            line(h.text() + " {");
            body.append(bodyText);
            line("}");
            for (Red v : reds) {
                result(store(v));
            }
        }

        /** Makes a loop's result observable: stored now, or (inter-warp flavour) folded into fz_acc. */
        void result(String value) {
            if (uniform) {
                line("fz_acc = fz_acc * 31u + " + value + ";");
            } else {
                line("out[" + slots(1) + " * NT + gt] = " + value + ";");
                seqStored = true;
            }
        }

        void scanLoop() {
            String op = chance(4) ? "*" : "+";
            String v = fresh("sc");
            line("unsigned " + v + " = " + (op.equals("*") ? pick("1u", "(unsigned)t | 1u") : pick("0u", "(unsigned)t * 5u")) + ";");
            int cap = cap();
            int slot = slots(cap);
            Header h = header(cap, null, null, null, Set.of());
            Ctx c = new Ctx(h.var(), Set.of(v));
            StringBuilder saved = detach();
            indent++;
            String x = null;
            if (chance(3) || op.equals("*")) {
                x = fresh("e");
                line("unsigned " + x + " = " + ue(c, 2) + ";");
                c.locals.add(x);
                if (chance(3)) {
                    String y = fresh("e");
                    line("const unsigned " + y + " = " + x + " ^ " + ue(c, 1) + ";");
                    c.locals.add(y);
                    x = y;
                }
            }
            String e = x != null ? x : ue(c, 2);
            if (op.equals("*")) {
                line(chance(2) ? v + " *= " + e + " | 1u;" : v + " = " + v + " * (" + e + " | 1u);");
            } else {
                line(chance(2) ? v + " += " + e + ";" : v + " = " + v + " + " + e + ";");
            }
            String f = pick(v, v + " * 3u + (unsigned)" + h.var(), "fz_f1(" + v + ", " + ue(c, 1) + ")");
            line("out[(" + slot + " + " + h.var() + ") * NT + gt] = " + f + ";");
            indent--;
            String bodyText = reattach(saved);
            npLoops++;
            transformableLoops++;
            shapes.add("scan:" + op);
            pragmaLine("#pragma np parallel for scan(" + op + ":" + v + ")" + extraClauses(c));
            line(h.text() + " {");
            body.append(bodyText);
            line("}");
            result(v);
            declare(v);
        }

        /** Starts generating into a fresh buffer; returns the text so far. */
        StringBuilder detach() {
            StringBuilder saved = new StringBuilder(body);
            body.setLength(0);
            return saved;
        }

        /** Ends {@link #detach()}: returns what was generated meanwhile, restores the text. */
        String reattach(StringBuilder saved) {
            String s = body.toString();
            body.setLength(0);
            body.append(saved);
            return s;
        }

        // ---- local arrays ----

        void arrayStory() {
            int sz = Math.min(arrayBudget, pick(8, 16, 24, 32, 64));
            String a = fresh("la");
            line("unsigned " + a + "[" + sz + "];");
            Set<String> none = Set.of();
            switch (r.nextInt(5)) {
                case 0, 1 -> {
                    // register placement: written at i, then read at i by a loop with the same bounds
                    shapes.add("array:register");
                    Header w = header(sz, lowerStable(), null, null, none);
                    arrayWriteLoop(a, w);
                    if (chance(2)) {
                        seqStatement(false); // nothing the bounds read changes in between
                    }
                    arrayReadLoop(a, sz, header(sz, w.lo(), w.hi(), w.cmp(), none), true);
                }
                case 2 -> {
                    // shared: read at another index
                    shapes.add("array:shared-index");
                    arrayWriteLoop(a, header(sz, "0", "" + sz, "<", none));
                    arrayReadLoop(a, sz, header(sz, null, null, null, none), false);
                }
                case 3 -> {
                    // shared: read with another lower bound, or by sequential code
                    arrayWriteLoop(a, header(sz, "0", "" + sz, "<", none));
                    if (uniform || chance(2)) {
                        shapes.add("array:shared-lo");
                        arrayReadLoop(a, sz, header(sz, pick("1", "2", "t % 3 + 1", "m + 1"), null, null, none), true);
                    } else {
                        shapes.add("array:shared-seq");
                        List<String> rd = readable();
                        if (!rd.isEmpty() && chance(2)) {
                            String s0 = pick(rd);
                            line(s0 + " += " + a + "[t % " + sz + "] * 7u + " + a + "[(" + s0 + " + 3u) % " + sz + "u];");
                        } else {
                            String acc = fresh("q");
                            line("unsigned " + acc + " = 0u;");
                            line("for (int kk = 0; kk < " + sz + "; kk += " + (1 + r.nextInt(3)) + ") " + acc + " = " + acc
                                    + " * 3u + " + a + "[kk];");
                            result(acc);
                        }
                    }
                }
                default -> {
                    // initialised by sequential code, then partly rewritten and read by np loops
                    shapes.add("array:shared-seq-init");
                    line("for (int kk = 0; kk < " + sz + "; ++kk) " + a + "[kk] = (unsigned)(kk * 3 + t);");
                    seqStored = true; // the array lives in shared memory: a master-only store
                    arrayWriteLoop(a, header(sz, null, null, null, none));
                    arrayReadLoop(a, sz, header(sz, null, null, null, none), r.nextBoolean());
                }
            }
        }

        /** The lower bound of a register story: a constant (register placement), or a variable one (shared). */
        String lowerStable() {
            if (chance(4)) {
                shapes.add("array:same-variable-lo");
                return pick("t % 3", "m");
            }
            return pick("0", "0", "1", "2");
        }

        void arrayWriteLoop(String a, Header h) {
            Ctx c = new Ctx(h.var(), Set.of());
            int slot = slots(64);
            StringBuilder saved = detach();
            indent++;
            line(a + "[" + h.var() + "] = " + ue(c, 2) + ";");
            if (chance(3)) {
                line("out[(" + slot + " + " + h.var() + ") * NT + gt] = " + a + "[" + h.var() + "] + 1u;");
            }
            indent--;
            String bodyText = reattach(saved);
            npLoops++;
            transformableLoops++;
            pragmaLine("#pragma np parallel for" + extraClauses(c));
            line(h.text() + " {");
            body.append(bodyText);
            line("}");
        }

        /** A loop that reads {@code a} (of {@code sz} elements): at its own index when {@code atI}, else at another one. */
        void arrayReadLoop(String a, int sz, Header h, boolean atI) {
            String idx = atI ? h.var() : pick("(" + (sz - 1) + " - " + h.var() + ")", "(" + h.var() + " * 5 + t) % " + sz,
                    "(" + h.var() + " + 1) % " + sz);
            Set<String> excl = new LinkedHashSet<>();
            List<Red> reds = new ArrayList<>();
            boolean reduce = r.nextBoolean();
            if (reduce) {
                Red v = newRed(true, h.text());
                reds.add(v);
                excl.add(v.name());
            }
            Ctx c = new Ctx(h.var(), excl);
            int slot = slots(64);
            StringBuilder saved = detach();
            indent++;
            String val = a + "[" + idx + "]";
            if (reduce) {
                String x = fresh("w");
                line("const unsigned " + x + " = " + val + " * " + (3 + r.nextInt(9)) + "u + " + ue(c, 1) + ";");
                c.locals.add(x);
                line(update(reds.get(0), c));
            } else {
                line("out[(" + slot + " + " + h.var() + ") * NT + gt] = " + val + " ^ " + ue(c, 1) + ";");
            }
            if (atI && chance(4)) {
                shapes.add("array:update-in-place");
                line(a + "[" + h.var() + "] = " + a + "[" + h.var() + "] * 3u + 1u;");
            }
            indent--;
            emitReductionLoop(saved, reds, c, h);
        }

        // ---- sequential code ----

        /** A sequential statement: declares a new scalar, or (when {@code mayModify}) updates one. */
        void seqStatement(boolean mayModify) {
            List<String> rd = readable();
            Ctx c = new Ctx(null, Set.of());
            if (rd.isEmpty() || !mayModify || chance(4)) {
                String x = fresh("a");
                line("unsigned " + x + " = " + ue(c, 2) + ";");
                declare(x);
            } else {
                String x = pick(rd);
                boolean call = !(uniform && seqStored) && chance(3);
                line(x + " = " + (call ? "fz_f1(" + x + ", " + ue(c, 1) + ")"
                        : pick(x + " * " + (3 + r.nextInt(50)) + "u + " + ue(c, 1), x + " ^ " + ue(c, 2))) + ";");
            }
        }

        /** One segment of the kernel body; {@code top}: at the kernel's top level (block-uniform, unless after an early return). */
        void segment(boolean top) {
            int k = r.nextInt(12);
            if (k <= 4) {
                npLoop();
            } else if (k == 5 && arrayBudget > 0 && top) {
                arrayStory();
            } else if (k == 6 || k == 5) {
                // np loop(s) in a sequential loop
                shapes.add("in-seq-loop");
                String rv = fresh("r");
                String trips = uniform ? pick("2", "3", "n % 3", "(int)(blockIdx.x % 2u) + 1")
                        : pick("2", "3", "1 + t % 3", "n % 3", "(int)(blockIdx.x % 2u) + 1");
                interImpossible |= trips.contains("t %");
                line("for (int " + rv + " = 0; " + rv + " < " + trips + "; ++" + rv + ") {");
                indent++;
                push();
                counters.add(rv);
                if (chance(2)) {
                    seqStatement(true);
                }
                npLoop();
                if (chance(3)) {
                    seqStatement(true);
                    npLoop();
                }
                pop();
                counters.remove(rv);
                closeBlock();
            } else if (k == 7 && !uniform) {
                shapes.add("divergent");
                interImpossible = true;
                String cnd = pick("(t & 3) != 1", "t < " + Math.max(1, threads / 2), "gt % 3 == 0",
                        dims >= 2 ? "threadIdx.y == 0" : "threadIdx.x % 2u == 1u",
                        "((" + ue(new Ctx(null, Set.of()), 1) + " ^ (unsigned)t) & 1u) != 0u");
                line("if (" + cnd + ") {");
                indent++;
                push();
                npLoop();
                pop();
                indent--;
                if (chance(2)) {
                    line("} else {");
                    indent++;
                    push();
                    if (chance(2)) {
                        npLoop();
                    } else {
                        seqStatement(true);
                    }
                    pop();
                    indent--;
                }
                line("}");
            } else if (k == 9 && top && !earlyReturn) {
                // a sequential value with a side effect: the master runs the atomic once and
                // broadcasts the old value (a slave running it too would count the slot up to S)
                shapes.add("broadcast");
                String x = fresh("b");
                line("unsigned " + x + " = atomicAdd(&out[" + slots(1) + " * NT + gt], 1u) + 5u;");
                declare(x);
                npLoop();
            } else if (k == 8 && top && !earlyReturn) {
                shapes.add("syncthreads");
                if (shared && chance(2)) {
                    shapes.add("shared-rewrite");
                    line("__syncthreads();");
                    shReady = false;
                    line("fz_sh[t] = " + ue(new Ctx(null, Set.of()), 2) + ";");
                    seqStored = true;
                    shReady = true;
                }
                line("__syncthreads();");
                npLoop();
            } else {
                seqStatement(true);
                npLoop();
            }
        }

        // ---- refusals ----

        void refusedLoop() {
            npLoops++;
            switch (refusal) {
                case BREAK -> {
                    int cap = cap();
                    int slot = slots(cap);
                    Header h = header(cap, null, null, null, Set.of());
                    Ctx c = new Ctx(h.var(), Set.of());
                    pragmaLine("#pragma np parallel for");
                    line(h.text() + " {");
                    indent++;
                    line("if (" + h.var() + " == " + (1 + r.nextInt(cap - 1)) + ") break;");
                    line("out[(" + slot + " + " + h.var() + ") * NT + gt] = " + storeValue(c, h.var()) + ";");
                    closeBlock();
                }
                case OUTER_WRITE -> {
                    int cap = cap();
                    int slot = slots(cap);
                    line("unsigned fz_last = 0u;");
                    Header h = header(cap, null, null, null, Set.of());
                    Ctx c = new Ctx(h.var(), Set.of());
                    pragmaLine("#pragma np parallel for");
                    line(h.text() + " {");
                    indent++;
                    line("out[(" + slot + " + " + h.var() + ") * NT + gt] = " + storeValue(c, h.var()) + ";");
                    line("fz_last = " + storeValue(c, h.var()) + ";");
                    closeBlock();
                    result("fz_last");
                }
                case SYNC_IN_LOOP -> {
                    int cap = cap();
                    int slot = slots(cap);
                    String v = pick("i", "j");
                    Ctx c = new Ctx(v, Set.of());
                    pragmaLine("#pragma np parallel for");
                    line("for (int " + v + " = 0; " + v + " < " + cap + "; " + v + "++) {");
                    indent++;
                    line("out[(" + slot + " + " + v + ") * NT + gt] = " + storeValue(c, v) + ";");
                    line("__syncthreads();");
                    closeBlock();
                }
                case NON_CANONICAL -> {
                    int cap = cap();
                    int slot = slots(cap);
                    String v = pick("i", "j");
                    Ctx c = new Ctx(v, Set.of());
                    String lo = pick("0", "t % 3", "m");
                    pragmaLine("#pragma np parallel for");
                    line("for (int " + v + " = " + (cap - 1) + "; " + v + " >= " + lo + "; " + v + "--) {");
                    indent++;
                    line("out[(" + slot + " + " + v + ") * NT + gt] = " + storeValue(c, v) + ";");
                    closeBlock();
                }
                default -> {
                    // a warp intrinsic is kernel-wide (prologue); the loop here is an ordinary one
                    npLoops--;
                    npLoop();
                }
            }
        }

        // ---- the program ----

        Program program() {
            push();
            // prologue
            line("const int nb = " + switch (dims) {
                case 1 -> pick("blockDim.x", "blockDim.x * blockDim.y * blockDim.z");
                case 2 -> pick("blockDim.x * blockDim.y", "blockDim.x * blockDim.y * blockDim.z");
                default -> "blockDim.x * blockDim.y * blockDim.z";
            } + ";");
            line("const int t = " + switch (dims) {
                case 1 -> pick("threadIdx.x", "threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)");
                case 2 -> "threadIdx.x + blockDim.x * threadIdx.y";
                default -> "threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)";
            } + ";");
            shapes.add("dims:" + dims);
            line("const int gt = blockIdx.x * nb + t;");
            line("const int NT = gridDim.x * nb;");
            Ctx c0 = new Ctx(null, Set.of());
            String a0 = fresh("a");
            line("unsigned " + a0 + " = in[(unsigned)gt & " + (NIN - 1) + "u] ^ " + (r.nextInt(1 << 16)) + "u;");
            declare(a0);
            if (chance(2)) {
                String a1 = fresh("a");
                line("unsigned " + a1 + " = " + ue(c0, 2) + ";");
                declare(a1);
            }
            if (uniform) {
                shapes.add("inter-warp");
                line("unsigned fz_acc = 0u;");
            }
            if (refusal == Refusal.WARP_INTRINSIC) {
                // the exact mask of this thread's warp (warps are formed from the linear thread index)
                line("const unsigned fz_lanes = min(32u, (unsigned)(nb - (t & ~31)));");
                line("const unsigned fz_mask = fz_lanes == 32u ? 0xffffffffu : (1u << fz_lanes) - 1u;");
                String w = fresh("a");
                line("unsigned " + w + " = __shfl_sync(fz_mask, " + a0 + ", 0);");
                declare(w);
            }
            if (shared) {
                shapes.add("shared");
                line("__shared__ unsigned fz_sh[" + threads + "];");
                line("fz_sh[t] = " + ue(c0, 2) + ";");
                line("__syncthreads();");
                seqStored = true;
                shReady = true;
            }
            if (earlyReturn) {
                shapes.add("early-return");
                interImpossible = true;
                line("if (" + pick("t % 5 == 3", "gt >= " + Math.max(1, grid * threads - 1 - r.nextInt(Math.max(1, grid * threads))),
                        "(" + a0 + " & 3u) == 1u") + ") return;");
            }
            int segs = 2 + r.nextInt(4);
            int refuseAt = refusal == null ? -1 : r.nextInt(segs + 1);
            for (int s = 0; s <= segs; s++) {
                if (s == refuseAt) {
                    refusedLoop();
                }
                if (s < segs) {
                    segment(true);
                }
            }
            for (String v : scopes.peekLast()) {
                line("out[" + slots(1) + " * NT + gt] = " + v + ";");
            }
            if (uniform) {
                line("out[" + slots(1) + " * NT + gt] = fz_acc;");
            }
            pop();
            if (earlyLaunch) {
                refusal = Refusal.LATE_SIGNATURE; // (set last: the draws above see no refusal)
            }
            if (alias != 0) {
                shapes.add(alias == 1 ? "signature:early-alias" : earlyLaunch ? "signature:late-alias:early-launch" : "signature:late-alias");
            }
            boolean kernelRefused = refusal == Refusal.WARP_INTRINSIC || refusal == Refusal.LATE_SIGNATURE
                    || refusal != null && transformableLoops == 0;
            boolean clause = shapes.contains("num_slaves");
            for (int s : new int[] {sIntra, sInter, sAll}) {
                if (threads * (clause ? numSlaves : s) > 1024) {
                    shapes.add("fallback"); // the grown block exceeds 1024 threads: the launch runs np_k itself
                }
            }
            if (refusal != null) {
                shapes.add("refuse:" + refusal.cliName);
            }
            return new Program(seed, text(body.toString()), refusal, kernelRefused, uniform && refusal == null, interImpossible,
                    npLoops, threads,
                    sIntra, sInter, sAll, shapes);
        }

        /** a declaration of a scalar local at the start of a line: {@code unsigned s1 = }, {@code float x2 = }, {@code int f3 = } */
        private static final java.util.regex.Pattern ALIASED_DECL =
                java.util.regex.Pattern.compile("(?m)^(\\s*)(unsigned|int|float) ([a-z]\\w* = )");

        /** @return the draw of the template form (0 and 1: templates), from a generator of its own */
        int templateCase() {
            return new SplittableRandom(seed * 1_000_003L + 7).nextInt(8);
        }

        String text(String kernelBody) {
            StringBuilder p = new StringBuilder();
            p.append("// klap.fuzz CUDA-NP program (issue 13), seed ").append(seed).append('\n');
            p.append("// np_k carries #pragma np loops; ref_k is the same kernel without them (the reference).\n");
            p.append("#include <cstdio>\n#include <vector>\n\n");
            p.append("#define FZ_NIN ").append(NIN).append("\n\n");
            // one program in four declares the kernels' scalar locals through a typedef (unsigned), a
            // using alias (int) and a macro (float): klap reads their types through CDT (FunctionDef.
            // scalarTypes) and must transform exactly as with the types written out; a draw of its own
            if (new SplittableRandom(seed * 1_000_003L + 13).nextInt(4) == 0) {
                shapes.add("types:aliased");
                p.append("typedef unsigned fz_u;\nusing fz_i = int;\n#define FZ_F float\n\n");
                kernelBody = ALIASED_DECL.matcher(kernelBody).replaceAll(mr -> mr.group(1)
                        + (mr.group(2).equals("unsigned") ? "fz_u" : mr.group(2).equals("int") ? "fz_i" : "FZ_F") + " " + mr.group(3));
            }
            p.append("__device__ __forceinline__ unsigned fz_f0(unsigned a, unsigned b) { return a * 2654435761u + (b ^ (b >> 7)); }\n");
            p.append("__device__ unsigned fz_f1(unsigned a, unsigned b) { return (a ^ 0x5bd1e995u) + b * 31u; }\n");
            p.append("__device__ unsigned fz_f2(unsigned a, unsigned b)\n{\n    unsigned x = a;\n"
                    + "    for (int k = 0; k < 3; ++k) x = (x * 33u) ^ b;\n    return x;\n}\n\n");
            String params = "(const unsigned* in, unsigned* out, unsigned* cnt, int n, int m)";
            // about one program in four makes both kernels templates that main launches without template
            // arguments (C++ deduces fz_T = unsigned from out; fz_S takes its default, given by the
            // definition or by a prototype before it); drawn from a generator of its own, so the other
            // draws stay. in is never fz_T, which would make integer reductions of its elements dependent
            // (left sequential: klap cannot show them integers); the local arrays' element types and sizes
            // name no template parameter (klap places them in shared memory in template kernels too)
            String header = "";
            switch (templateCase()) {
                case 0 -> {
                    header = "template <typename fz_T, int fz_S = 1>\n";
                    shapes.add("template:definition-default");
                }
                case 1 -> {
                    header = "template <typename fz_T, int fz_S>\n";
                    shapes.add("template:prototype-default");
                }
                default -> {
                }
            }
            if (!header.isEmpty()) {
                // a local of type fz_T: klap checks the variant with the template arguments it may take
                // (NpPass.checkedTypes) and runs it only for those; its value never changes the result
                kernelBody = "    fz_T fz_tz = (fz_T)(n & 0);\n" + kernelBody + "    if (fz_tz != (fz_T)0) out[0] = 1u;\n";
                params = "(const unsigned* in, fz_T* out, unsigned* cnt, int n, int m)";
                if (header.contains("fz_S>")) {
                    p.append("template <typename fz_T, int fz_S = 1> __global__ void np_k").append(params).append(";\n");
                    p.append("template <typename fz_T, int fz_S = 1> __global__ void ref_k").append(params).append(";\n\n");
                }
            }
            if (alias != 0) {
                // prototypes with plain types, the definitions naming fz_word (declared before or after them)
                String typedef = "typedef unsigned fz_word;\n";
                p.append(alias == 1 ? typedef : "");
                p.append("__global__ void np_k").append(params).append(";\n");
                p.append("__global__ void ref_k").append(params).append(";\n");
                if (earlyLaunch) {
                    p.append("void fz_np_early(const unsigned* in, unsigned* out, unsigned* cnt)\n{\n"
                            + "    np_k<<<1, 32>>>(in, out, cnt, 0, 0);\n}\n");
                }
                p.append(alias == 2 ? typedef : "").append('\n');
                params = params.replace("unsigned* out", "fz_word* out");
            }
            // one non-template program in eight gives both kernels C linkage: extern "C" prototypes and the
            // definitions in an extern "C" { } block (klap's variants took C linkage there after C++
            // prototypes: an nvcc error until 2026-11-30); a draw of its own
            boolean cLinkage = header.isEmpty() && alias == 0 && new SplittableRandom(seed * 1_000_003L + 19).nextInt(8) == 0;
            if (cLinkage) {
                shapes.add("linkage:c");
                p.append("extern \"C\" __global__ void np_k").append(params).append(";\n");
                p.append("extern \"C\" {\n");
            }
            p.append(header).append("__global__ void np_k").append(params).append("\n{\n").append(kernelBody).append("}\n\n");
            p.append(header).append("__global__ void ref_k").append(params).append("\n{\n").append(withoutNpPragmas(kernelBody)).append("}\n\n");
            if (cLinkage) {
                p.append("}\n\n");
            }
            int nslots = Math.max(1, slots);
            p.append("static int fz_check(const char* what)\n{\n");
            p.append("    cudaError_t e = cudaGetLastError();\n");
            p.append("    if (e == cudaSuccess) e = cudaDeviceSynchronize();\n");
            p.append("    if (e != cudaSuccess) { std::printf(\"FAIL %s: %s\\n\", what, cudaGetErrorString(e)); return 1; }\n");
            p.append("    return 0;\n}\n\n");
            p.append("int main()\n{\n");
            p.append("    const int G = ").append(grid).append(", NB = ").append(threads).append(", NT = G * NB, SLOTS = ")
                    .append(nslots).append(";\n");
            p.append("    const size_t NOUT = (size_t)SLOTS * NT;\n");
            p.append("    std::vector<unsigned> h(FZ_NIN);\n");
            p.append("    unsigned long long z = ").append(seed).append("ull * 2654435761ull + 1ull;\n");
            p.append("    for (unsigned& x : h) { z = z * 6364136223846793005ull + 1442695040888963407ull; x = (unsigned)(z >> 29); }\n");
            p.append("    unsigned *d_in, *d_ref, *d_np, *d_cnt;\n");
            p.append("    if (cudaMalloc(&d_in, sizeof(unsigned) * FZ_NIN) != cudaSuccess || cudaMalloc(&d_ref, sizeof(unsigned) * NOUT) != cudaSuccess\n"
                    + "        || cudaMalloc(&d_np, sizeof(unsigned) * NOUT) != cudaSuccess || cudaMalloc(&d_cnt, sizeof(unsigned) * 2) != cudaSuccess) {\n"
                    + "        std::printf(\"FAIL cudaMalloc\\n\");\n        return 1;\n    }\n");
            p.append("    cudaMemcpy(d_in, h.data(), sizeof(unsigned) * FZ_NIN, cudaMemcpyHostToDevice);\n");
            p.append("    cudaMemset(d_ref, 0, sizeof(unsigned) * NOUT);\n    cudaMemset(d_np, 0, sizeof(unsigned) * NOUT);\n");
            p.append("    cudaMemset(d_cnt, 0, sizeof(unsigned) * 2);\n");
            String gridText = chance(2) ? "G" : "dim3(G)";
            String blockText = dims == 1 && chance(2) ? "" + bx : "dim3(" + bx + ", " + by + ", " + bz + ")";
            String args = "(d_in, d_%s, d_cnt%s, " + n + ", " + m + ")";
            if (chance(2)) {
                p.append("    const dim3 grid(").append(grid).append("), block(").append(bx).append(", ").append(by).append(", ")
                        .append(bz).append(");\n");
                gridText = "grid";
                blockText = "block";
            }
            p.append("    ref_k<<<").append(gridText).append(", ").append(blockText).append(">>>")
                    .append(String.format(args, "ref", "")).append(";\n");
            p.append("    if (fz_check(\"ref_k\")) return 1;\n");
            String cfg = switch (r.nextInt(4)) {
                case 0 -> ", 0";
                case 1 -> ", 0, st";
                default -> "";
            };
            if (cfg.contains("st")) {
                p.append("    cudaStream_t st;\n    cudaStreamCreate(&st);\n");
                shapes.add("stream");
            }
            p.append("    np_k<<<").append(gridText).append(", ").append(blockText).append(cfg).append(">>>")
                    .append(String.format(args, "np", " + 1")).append(";\n");
            p.append("    if (fz_check(\"np_k\")) return 1;\n");
            if (cfg.contains("st")) {
                p.append("    cudaStreamDestroy(st);\n");
            }
            p.append("    std::vector<unsigned> ref(NOUT), got(NOUT), c(2);\n");
            p.append("    cudaMemcpy(ref.data(), d_ref, sizeof(unsigned) * NOUT, cudaMemcpyDeviceToHost);\n");
            p.append("    cudaMemcpy(got.data(), d_np, sizeof(unsigned) * NOUT, cudaMemcpyDeviceToHost);\n");
            p.append("    cudaMemcpy(c.data(), d_cnt, sizeof(unsigned) * 2, cudaMemcpyDeviceToHost);\n");
            p.append("    if (fz_check(\"copy\")) return 1;\n");
            p.append("    unsigned long long hash = 1469598103934665603ull;\n");
            p.append("    for (unsigned x : got) { hash ^= x; hash *= 1099511628211ull; }\n");
            p.append("    hash ^= c[1]; hash *= 1099511628211ull;\n");
            p.append("    std::printf(\"RESULT %016llx\\n\", hash);\n");
            p.append("    size_t bad = 0, first = 0;\n");
            p.append("    for (size_t q = 0; q < NOUT; ++q) if (got[q] != ref[q]) { if (bad++ == 0) first = q; }\n");
            p.append("    if (bad) {\n");
            p.append("        std::printf(\"FAIL np_k: %zu of %zu words differ; first: slot %zu thread %zu: %u, expected %u\\n\",\n"
                    + "                    bad, NOUT, first / NT, first % NT, got[first], ref[first]);\n");
            p.append("        return 1;\n    }\n");
            p.append("    if (c[0] != c[1]) { std::printf(\"FAIL np_k: atomic counter %u, expected %u\\n\", c[1], c[0]); return 1; }\n");
            p.append("    std::printf(\"PASS np seed=").append(seed).append(" blocks=%d threads=%d\\n\", G, NB);\n");
            p.append("    return 0;\n}\n");
            return p.toString();
        }
    }
}
