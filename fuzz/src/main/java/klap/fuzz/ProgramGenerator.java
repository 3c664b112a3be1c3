package klap.fuzz;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/**
 * Generates small, complete, self-checking CUDA dynamic-parallelism programs (CDP2, CUDA 12/13)
 * from a seed. The same seed always gives the same program.
 *
 * <p>Each program has 1-3 child kernels and 1-2 parent kernels launched from {@code main}. The
 * parents are random nests of uniform and divergent {@code if}s, uniform and divergent loops,
 * {@code switch}, early returns ({@code if (c) return;} as a guard or nested) and {@code continue},
 * with device-side launches whose grid and block are {@code int} or {@code dim3} (1-3 D) values that
 * are constant, uniform (kernel parameters, {@code blockIdx}) or per-thread ({@code threadIdx}), with
 * optional dynamic shared memory and a stream ({@code 0} or {@code cudaStreamFireAndForget}), and
 * whose arguments are kernel parameters, uniform and per-thread values, {@code __device__} helper
 * results, and pointers plus offsets. Some launches sit in {@code __device__} functions. Children
 * use {@code gridDim}/{@code blockDim} in 3 D, {@code __syncthreads}, static or dynamic shared
 * memory, helpers reading the built-in indices, and may launch themselves (depth-limited recursion).
 *
 * <p>Every child thread adds a hash of (tag, virtual block, thread, shared-memory neighbour, input
 * data) with {@code atomicAdd} into an output slot chosen by (tag, block, thread); the tag is derived
 * from the launching parent thread and the launch site. The sum is order-independent, so any
 * missing, duplicated or mis-indexed child thread changes the array. {@code main} computes the
 * expected array on the CPU by running the same parent code per thread (the generator emits both
 * versions from one description), then prints {@code RESULT <hash of the GPU array>} and
 * {@code PASS} or {@code FAIL ...}, exiting 0 or 1. A CUDA error prints {@code FAIL cuda ...}.
 *
 * <p>Besides these random parents ({@link Shape#RANDOM}), a program may have the shapes of issue 10
 * ("Correct on the GPU"), the bug classes the first GPU run found: parents whose launches depend on
 * {@code __device__} reference out-parameters ({@link Shape#REF_OUT}), a barrier after a guarded
 * return ({@link Shape#BARRIER_RETURN}), dependent launches of one thread ({@link Shape#DEPENDENT}),
 * loop-carried arguments in fire-and-forget loops ({@link Shape#FF_LOOP}), and the two-file form
 * {@code kernels.cu} + {@code main.cu} ({@link Shape#TWO_FILES}). {@link #generate(long)} mixes them
 * with their {@link Shape#probability}; {@link #generate(long, Set)} generates exactly the shapes
 * given. Each is self-checking in the same way (its CPU reference runs next to the random parents'),
 * and the shapes that use scratch memory (dependent launches) also compare it with the CPU's.
 *
 * <p>Compile with {@code nvcc -std=c++17 -rdc=true -arch=sm_90} ({@code kernels.cu main.cu} for a
 * two-file program).
 */
public final class ProgramGenerator {
    /** number of output slots (a prime) */
    static final int OUT_N = 4093;
    /** number of input data words */
    static final int DATA_N = 1024;

    /** the file klap transforms in a two-file program */
    public static final String KERNELS_FILE = "kernels.cu";
    /** the host file of a two-file program, which klap never sees */
    public static final String MAIN_FILE = "main.cu";
    /** the header shared by {@link #KERNELS_FILE} and {@link #MAIN_FILE} */
    public static final String COMMON_HEADER = "fz_common.cuh";

    /**
     * A generated program.
     *
     * @param seed the seed
     * @param shapes the shapes it has ({@link Shape#TWO_FILES} for a two-file program)
     * @param files the files by name, in writing order: one {@link #fileName()} for a single-file program;
     *     {@link #KERNELS_FILE}, {@link #MAIN_FILE} and {@link #COMMON_HEADER} for a two-file one
     * @param kernelFile the name of the file klap transforms (the one with the CDP kernels)
     * @param deviceLaunchSites the number of device-side launch statements
     * @param summary the features, space-separated (also in the program's {@code // Features:} line)
     */
    public record Program(long seed, Set<Shape> shapes, Map<String, String> files, String kernelFile,
            int deviceLaunchSites, String summary) {
        /** @return the text of the file klap transforms (the whole program for a single-file program) */
        public String source() {
            return files.get(kernelFile);
        }

        /** @return true for a {@link Shape#TWO_FILES} program */
        public boolean twoFiles() {
            return files.size() > 1;
        }

        /** @return a file name such as {@code fz_000042.cu}: the single-file program's name */
        public String fileName() {
            return String.format("fz_%06d.cu", seed);
        }

        /** @return a directory name such as {@code fz_000042} */
        public String dirName() {
            return String.format("fz_%06d", seed);
        }

        /**
         * Writes the program's files into {@code dir} (created if needed); a single-file program is
         * written as {@code singleName} if that is not null.
         *
         * @return the path of the file klap transforms
         */
        public Path writeTo(Path dir, String singleName) throws IOException {
            Files.createDirectories(dir);
            Path kernels = null;
            for (Map.Entry<String, String> f : files.entrySet()) {
                String name = !twoFiles() && singleName != null ? singleName : f.getKey();
                Path p = dir.resolve(name);
                Files.writeString(p, f.getValue());
                if (f.getKey().equals(kernelFile)) {
                    kernels = p;
                }
            }
            return kernels;
        }
    }

    private Random rnd;
    /**
     * draws whether a program has a shape added after the first GPU run, and that shape's kernel
     * (so that every draw of {@link #rnd} stays what it was for the older seeds)
     */
    private final Random late;
    /** the generator of the shapes added on 2026-11-24 ({@link Shape#generation} 2), for the same reason */
    private final Random later;
    /** the generator of the shapes added on 2026-11-25 ({@link Shape#generation} 3), for the same reason */
    private final Random latest;
    /** the generator of the shapes of {@link Shape#generation} 4, for the same reason */
    private final Random fifth;
    /** the generator of the shapes of {@link Shape#generation} 5 (2026-11-27), for the same reason */
    private final Random sixth;
    /** the generator of the shapes of {@link Shape#generation} 6 (COND_DECL), for the same reason */
    private final Random seventh;
    /** the generator of the shapes of {@link Shape#generation} 7 (FULL_DYN_SHARED), for the same reason */
    private final Random eighth;
    /** the generator of the shapes of {@link Shape#generation} 8 (STREAM_EVENT), for the same reason */
    private final Random ninth;
    /** the generator of the shapes of {@link Shape#generation} 9 (SURVIVOR_LOOP), for the same reason */
    private final Random tenth;
    /** the generator of the shapes of {@link Shape#generation} 10 (CONVERGENT_LOOP), for the same reason */
    private final Random eleventh;
    /** the generator of the shapes of {@link Shape#generation} 11 (LOOP_JUMPS), for the same reason */
    private final Random twelfth;
    /** the generator of the shapes of {@link Shape#generation} 12 (DEPENDENT_AFTER_RETURN), for the same reason */
    private final Random thirteenth;
    /** the generator of the shapes of {@link Shape#generation} 13 (BARRIER_SPELLINGS), for the same reason */
    private final Random fourteenth;
    /** the generator of the shapes of {@link Shape#generation} 14 (KERNEL_NAME_MACRO), for the same reason */
    private final Random fifteenth;
    /** the generator of the shapes of {@link Shape#generation} 15 (LAUNCH_ERROR), for the same reason */
    private final Random sixteenth;
    /** the generator of the shapes of {@link Shape#generation} 16 (HIDDEN_ATTRIBUTE), for the same reason */
    private final Random seventeenth;
    /** the generator of the shapes of {@link Shape#generation} 17 (LONE_LAUNCHER), for the same reason */
    private final Random eighteenth;
    /** the generator of the shapes of {@link Shape#generation} 18 (SPACED_CHEVRONS), for the same reason */
    private final Random nineteenth;
    /** the generator of the shapes of {@link Shape#generation} 19 (DEDUCED_TEMPLATE), for the same reason */
    private final Random twentieth;
    /** the generator of the shapes of {@link Shape#generation} 20 (EXCLUSIVE_LAUNCHES), for the same reason */
    private final Random twentyFirst;
    /** the generator of the shapes of {@link Shape#generation} 21 (IMPLICIT_CALLS), for the same reason */
    private final Random twentySecond;
    /** the generator of the shapes of {@link Shape#generation} 22 (LIBRARY_COLLECTIVES), for the same reason */
    private final Random twentyThird;
    /** the generator of the shapes of {@link Shape#generation} 23 (SHARED_HELPERS), for the same reason */
    private final Random twentyFourth;
    /** the generator of the shapes of {@link Shape#generation} 24 (PROTOTYPE_DEFAULTS), for the same reason */
    private final Random twentyFifth;
    /** the generator of the shapes of {@link Shape#generation} 25 (NAMESPACES), for the same reason */
    private final Random twentySixth;
    /** the generator of the shapes of {@link Shape#generation} 26 (LATE_SIGNATURE), for the same reason */
    private final Random twentySeventh;
    /** the generator of the shapes of {@link Shape#generation} 27 (MALLOC_LIFETIME), for the same reason */
    private final Random twentyEighth;
    /**
     * whether a {@link Shape#REF_OUT} helper is named {@code max} (2026-12-01: a user's function named
     * like a pure math function that writes its reference parameters was taken for the math one), drawn
     * from a generator of its own so that the programs of seeds that draw no such helper stay as they were
     */
    private final Random pureNames;
    private boolean pureNameUsed;
    /**
     * the forms the reviews of 2026-12-01 added to existing shapes (a value set in a backward-goto loop
     * passed after it, a temporary whose constructor reads the thread index), drawn from a generator of
     * their own so that the programs of seeds that draw none stay as they were
     */
    private final Random reviewForms;
    /** whether the program being built is a {@link Shape#TWO_FILES} one (known before its shapes' kernels are made) */
    private boolean twoFiles;
    private final long seed;
    private final List<Child> children = new ArrayList<>();
    private final List<String> helpers = new ArrayList<>();
    /** declarations a shape puts in {@link #COMMON_HEADER} of a two-file program (kernels declared only there) */
    private final StringBuilder commonDecls = new StringBuilder();
    private final List<String> helpersCpu = new ArrayList<>();
    private final List<Launcher> launchers = new ArrayList<>();
    private int siteCount;
    private int varCount;
    private int launchesInBody;
    private final List<String> features = new ArrayList<>();
    /** the includes and namespace alias the {@link Shape#LIBRARY_COLLECTIVES} kernels have written (each once a program) */
    private final Set<String> libraryHeaders = new java.util.HashSet<>();

    private ProgramGenerator(long seed) {
        this.seed = seed;
        this.rnd = new Random(seed * 0x9E3779B97F4A7C15L + 12345);
        this.late = new Random(seed * 0x2545F4914F6CDD1DL + 777);
        this.later = new Random(seed * 0x5851F42D4C957F2DL + 4242);
        this.latest = new Random(seed * 0x27BB2EE687B0B0FDL + 2511);
        this.fifth = new Random(seed * 0x6C8E9CF570932BD5L + 9001);
        this.sixth = new Random(seed * 0x3C6EF372FE94F82BL + 1127);
        this.seventh = new Random(seed * 0x1B873593CC9E2D51L + 3301);
        this.eighth = new Random(seed * 0x4CF5AD432745937FL + 6203);
        this.ninth = new Random(seed * 0x2127599BF4325C37L + 8117);
        this.tenth = new Random(seed * 0x7A646E4D2B5F9C31L + 9403);
        this.eleventh = new Random(seed * 0x61C8864680B583EBL + 10007);
        this.twelfth = new Random(seed * 0x4F1BBCDCBFA53E0BL + 11071);
        this.thirteenth = new Random(seed * 0x32DA6C9A5F81B7E5L + 12107);
        this.fourteenth = new Random(seed * 0x5BD1E9955BD1E995L + 13099);
        this.fifteenth = new Random(seed * 0xA0761D6478BD642FL + 14143);
        this.sixteenth = new Random(seed * 0xE7037ED1A0B428DBL + 15161);
        this.seventeenth = new Random(seed * 0x8EBC6AF09C88C6E3L + 16183);
        this.eighteenth = new Random(seed * 0xA4093822299F31D1L + 17209);
        this.nineteenth = new Random(seed * 0xD6E8FEB86659FD93L + 18223);
        this.twentieth = new Random(seed * 0x9FB21C651E98DF25L + 19211);
        this.twentyFirst = new Random(seed * 0xC2B2AE3D27D4EB4FL + 20231);
        this.twentySecond = new Random(seed * 0x94D049BB133111EBL + 21247);
        this.twentyThird = new Random(seed * 0xFF51AFD7ED558CCDL + 22259);
        this.twentyFourth = new Random(seed * 0xC4CEB9FE1A85EC53L + 23279);
        this.twentyFifth = new Random(seed * 0xD1B54A32D192ED03L + 24281);
        this.twentySixth = new Random(seed * 0xAEF17502108EF2D9L + 25303);
        this.twentySeventh = new Random(seed * 0x8CB92BA72F3D8DD7L + 26321);
        this.twentyEighth = new Random(seed * 0xE9846AF9B1A615D3L + 27337);
        this.pureNames = new Random(seed * 0x94D049BB133111EBL + 1201);
        this.reviewForms = new Random(seed * 0xBF58476D1CE4E5B9L + 1301);
    }

    /**
     * @return the program for {@code seed}: random parents ({@link Shape#RANDOM}) and each other
     *     shape with its {@link Shape#probability}; the random parents are those of {@code
     *     generate(seed, EnumSet.of(Shape.RANDOM))}
     */
    public static Program generate(long seed) {
        return new ProgramGenerator(seed).build(null);
    }

    /**
     * @return the program for {@code seed} with exactly {@code shapes} (random parents only if
     *     {@link Shape#RANDOM} is among them, or if {@link Shape#TWO_FILES} is the only one);
     *     {@code generate(seed, EnumSet.of(Shape.RANDOM))} is the program the generator wrote for
     *     {@code seed} before issue 10
     */
    public static Program generate(long seed, Set<Shape> shapes) {
        if (shapes.isEmpty()) {
            throw new IllegalArgumentException("no shape");
        }
        return new ProgramGenerator(seed).build(EnumSet.copyOf(shapes));
    }

    // ------------------------------------------------------------------ model

    private record Child(int id, boolean staticShared, boolean dynShared, boolean sync, int helper, boolean recursive) {
        String name() {
            return "fz_c" + id;
        }
    }

    /** A __device__ function that launches a child. */
    private record Launcher(int id, String device, String cpu) {
    }

    /** A name in scope and whether it is uniform across a block. */
    private record Var(String name, boolean uniform) {
    }

    // ------------------------------------------------------------------ helpers for text

    private int pick(int n) {
        return rnd.nextInt(n);
    }

    private boolean chance(double p) {
        return rnd.nextDouble() < p;
    }

    /**
     * Replaces the built-in placeholders: {@code @tx @ty @tz} (threadIdx), {@code @bx ...}
     * (blockIdx), {@code @dx ...} (blockDim), {@code @gx ...} (gridDim), {@code @hN(} (helper N).
     */
    static String render(String s, boolean cpu) {
        String[][] map = {{"@tx", "threadIdx.x", "tI.x"}, {"@ty", "threadIdx.y", "tI.y"}, {"@tz", "threadIdx.z", "tI.z"},
            {"@bx", "blockIdx.x", "bI.x"}, {"@by", "blockIdx.y", "bI.y"}, {"@bz", "blockIdx.z", "bI.z"},
            {"@dx", "blockDim.x", "bD.x"}, {"@dy", "blockDim.y", "bD.y"}, {"@dz", "blockDim.z", "bD.z"},
            {"@gx", "gridDim.x", "gD.x"}, {"@gy", "gridDim.y", "gD.y"}, {"@gz", "gridDim.z", "gD.z"}};
        for (String[] m : map) {
            s = s.replace(m[0], cpu ? m[2] : m[1]);
        }
        for (int i = 0; i < 10; i++) {
            s = s.replace("@h" + i + "(", cpu ? "fz_h" + i + "_cpu(tI, bI, " : "fz_h" + i + "(");
            s = s.replace("@l" + i + "(", cpu ? "fz_l" + i + "_cpu(tI, bI, " : "fz_l" + i + "(");
        }
        return s;
    }

    /** A statement rendered for the device and for the CPU reference. */
    private record Code(String device, String cpu) {
        static Code same(String placeholderText) {
            return new Code(render(placeholderText, false), render(placeholderText, true));
        }

        /** @return this code with {@code prefix} (indentation, a condition) before both texts */
        Code indent(String prefix) {
            return new Code(prefix + device, prefix + cpu);
        }
    }

    // ------------------------------------------------------------------ expressions

    private String uniformExpr(List<Var> scope) {
        List<String> opts = new ArrayList<>(List.of("k", "n % 7", "bl", "(int)@bx", "(k + bl)", "3"));
        for (Var v : scope) {
            if (v.uniform) {
                opts.add(v.name);
            }
        }
        return opts.get(pick(opts.size()));
    }

    private String divergentExpr(List<Var> scope) {
        List<String> opts = new ArrayList<>(List.of("gt", "lt", "(int)@tx", "(lt * 3 + k)", "(gt ^ 5)"));
        if (!helpers.isEmpty()) {
            opts.add("@h" + pick(helpers.size()) + "(lt)");
        }
        for (Var v : scope) {
            if (!v.uniform) {
                opts.add(v.name);
            }
        }
        return opts.get(pick(opts.size()));
    }

    private String anyExpr(List<Var> scope) {
        return chance(0.5) ? uniformExpr(scope) : divergentExpr(scope);
    }

    private String cond(boolean uniform, List<Var> scope) {
        String e = uniform ? uniformExpr(scope) : divergentExpr(scope);
        int m = 2 + pick(4);
        return switch (pick(3)) {
            case 0 -> "(" + e + ") % " + m + " == " + pick(m);
            case 1 -> "(" + e + ") % " + m + " != " + pick(m);
            default -> "(" + e + ") < " + (1 + pick(uniform ? 4 : 40));
        };
    }

    // ------------------------------------------------------------------ children and helpers

    private void makeHelpers() {
        int nh = pick(3);
        for (int i = 0; i < nh; i++) {
            String body = switch (pick(3)) {
                case 0 -> "x + (int)(@tx % 4u) * 3 + (int)@bx";
                case 1 -> "(x * 5 + (int)(@ty + @bz)) % 97";
                default -> "x + (int)(@tz * 2u + @by + @tx % 3u)";
            };
            helpers.add("__device__ int fz_h" + i + "(int x) { return " + render(body, false) + "; }\n");
            helpersCpu.add("static int fz_h" + i + "_cpu(dim3 tI, dim3 bI, int x) { return " + render(body, true) + "; }\n");
        }
        if (nh > 0) {
            features.add("helpers=" + nh);
        }
    }

    private void makeChildren() {
        int nc = 1 + pick(3);
        for (int i = 0; i < nc; i++) {
            boolean dyn = chance(0.3);
            boolean stat = !dyn && chance(0.4);
            boolean sync = stat || dyn || chance(0.3);
            int helper = !helpers.isEmpty() && chance(0.5) ? pick(helpers.size()) : -1;
            boolean rec = chance(0.25);
            children.add(new Child(i, stat, dyn, sync, helper, rec));
            features.add("c" + i + (stat ? "+shared" : "") + (dyn ? "+dynshared" : "") + (sync ? "+sync" : "")
                    + (helper >= 0 ? "+helper" : "") + (rec ? "+recursive" : ""));
        }
    }

    private String childDevice(Child c) {
        StringBuilder sb = new StringBuilder();
        sb.append("__global__ void ").append(c.name()).append("(unsigned* out, const int* p, unsigned tag, int a, int depth) {\n");
        if (c.staticShared) {
            sb.append("  __shared__ unsigned sh[64];\n");
        }
        if (c.dynShared) {
            sb.append("  extern __shared__ unsigned dsh[];\n");
        }
        sb.append("  unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);\n");
        sb.append("  unsigned nt = blockDim.x * blockDim.y * blockDim.z;\n");
        sb.append("  unsigned b = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);\n");
        sb.append("  unsigned v = fz_mix(tag, b * 1024u + t) + (unsigned)p[(t + (unsigned)a) % 8u];\n");
        if (c.helper >= 0) {
            sb.append("  v += (unsigned)fz_h").append(c.helper).append("(a);\n");
        }
        String arr = c.staticShared ? "sh" : c.dynShared ? "dsh" : null;
        if (arr != null) {
            sb.append("  ").append(arr).append("[t] = v;\n");
        }
        if (c.sync) {
            sb.append("  __syncthreads();\n");
        }
        if (arr != null) {
            sb.append("  v ^= ").append(arr).append("[(t + 1u) % nt] * 3u;\n");
        }
        sb.append("  atomicAdd(&out[(tag * 7919u + b * 131u + t) % ").append(OUT_N).append("u], fz_mix(v, tag + nt));\n");
        if (c.recursive) {
            sb.append("  if (depth > 0 && t == 0u) ").append(c.name()).append("<<<1u + b % 2u, blockDim")
                    .append(c.dynShared ? ", nt * sizeof(unsigned)" : "")
                    .append(">>>(out, p, tag * 3u + b + 1u, a + 1, depth - 1);\n");
        }
        sb.append("}\n");
        return sb.toString();
    }

    private String childCpu(Child c) {
        StringBuilder sb = new StringBuilder();
        sb.append("static void ").append(c.name()).append("_cpu(dim3 gD, dim3 bD, unsigned* out, const int* p, unsigned tag, int a, int depth) {\n");
        sb.append("  ++fz_launches;\n");
        sb.append("  unsigned nt = bD.x * bD.y * bD.z;\n");
        sb.append("  std::vector<unsigned> vv(nt), sh(nt);\n");
        sb.append("  for (unsigned bz = 0; bz < gD.z; ++bz) for (unsigned by = 0; by < gD.y; ++by) for (unsigned bx = 0; bx < gD.x; ++bx) {\n");
        sb.append("    dim3 bI(bx, by, bz);\n");
        sb.append("    for (unsigned tz = 0; tz < bD.z; ++tz) for (unsigned ty = 0; ty < bD.y; ++ty) for (unsigned tx = 0; tx < bD.x; ++tx) {\n");
        sb.append("      dim3 tI(tx, ty, tz);\n");
        sb.append("      unsigned t = tI.x + bD.x * (tI.y + bD.y * tI.z);\n");
        sb.append("      unsigned b = bI.x + gD.x * (bI.y + gD.y * bI.z);\n");
        sb.append("      unsigned v = fz_mix(tag, b * 1024u + t) + (unsigned)p[(t + (unsigned)a) % 8u];\n");
        if (c.helper >= 0) {
            sb.append("      v += (unsigned)fz_h").append(c.helper).append("_cpu(tI, bI, a);\n");
        }
        sb.append("      vv[t] = v; sh[t] = v;\n");
        sb.append("    }\n");
        sb.append("    for (unsigned tz = 0; tz < bD.z; ++tz) for (unsigned ty = 0; ty < bD.y; ++ty) for (unsigned tx = 0; tx < bD.x; ++tx) {\n");
        sb.append("      unsigned t = tx + bD.x * (ty + bD.y * tz);\n");
        sb.append("      unsigned b = bI.x + gD.x * (bI.y + gD.y * bI.z);\n");
        sb.append("      unsigned v = vv[t];\n");
        if (c.staticShared || c.dynShared) {
            sb.append("      v ^= sh[(t + 1u) % nt] * 3u;\n");
        }
        sb.append("      out[(tag * 7919u + b * 131u + t) % ").append(OUT_N).append("u] += fz_mix(v, tag + nt);\n");
        if (c.recursive) {
            sb.append("      if (depth > 0 && t == 0u) ").append(c.name())
                    .append("_cpu(dim3(1u + b % 2u), bD, out, p, tag * 3u + b + 1u, a + 1, depth - 1);\n");
        }
        sb.append("    }\n  }\n}\n");
        return sb.toString();
    }

    // ------------------------------------------------------------------ launches

    /** A launch of a random child from a parent scope: returns the placeholder text of the statement. */
    private Code launch(List<Var> scope, String tagExtra) {
        Child c = children.get(pick(children.size()));
        int site = siteCount++;
        launchesInBody++;
        String grid;
        String block;
        String nt;
        int gk = pick(4);
        if (gk == 0) {
            grid = String.valueOf(1 + pick(3));
        } else if (gk == 1) {
            grid = "1 + (" + anyExpr(scope) + ") % 3";
        } else {
            int dims = 1 + pick(3);
            String gx = chance(0.5) ? String.valueOf(1 + pick(2)) : "1 + (" + anyExpr(scope) + ") % 2";
            grid = "dim3(" + gx + (dims > 1 ? ", " + (1 + pick(2)) : "") + (dims > 2 ? ", 2" : "") + ")";
        }
        int bk = pick(4);
        if (bk == 0) {
            int b = new int[] {1, 5, 32, 33, 64}[pick(5)];
            block = String.valueOf(b);
            nt = "(" + b + ")";
        } else if (bk == 1) {
            String e = "(1 + (" + anyExpr(scope) + ") % 64)";
            block = e;
            nt = e;
        } else {
            int[][] shapes = {{8, 4, 1}, {4, 4, 2}, {2, 3, 5}, {16, 2, 1}, {3, 1, 1}, {4, 2, 8}};
            int[] s = shapes[pick(shapes.length)];
            if (chance(0.4)) {
                String x = "(1 + (" + anyExpr(scope) + ") % " + s[0] + ")";
                block = "dim3(" + x + ", " + s[1] + ", " + s[2] + ")";
                nt = "(" + x + " * " + (s[1] * s[2]) + ")";
            } else {
                block = s[2] == 1 && chance(0.5) ? "dim3(" + s[0] + ", " + s[1] + ")" : "dim3(" + s[0] + ", " + s[1] + ", " + s[2] + ")";
                nt = "(" + s[0] * s[1] * s[2] + ")";
            }
        }
        String smem = null;
        if (c.dynShared) {
            smem = "(unsigned)(" + nt + " * sizeof(unsigned))";
        } else if (chance(0.2)) {
            smem = String.valueOf(pick(2) * 128);
        }
        String stream = null;
        if (chance(0.35)) {
            stream = chance(0.5) ? "cudaStreamFireAndForget" : "0";
            if (smem == null) {
                smem = "0";
            }
            features.add("stream:" + stream);
        }
        String ptr = switch (pick(3)) {
            case 0 -> "data";
            case 1 -> "data + (" + uniformExpr(scope) + ") % 256";
            default -> "data + (" + divergentExpr(scope) + ") % 256";
        };
        String tag = "(unsigned)(" + (site + 1) + " * 100003 + gt * 31" + tagExtra + ")";
        String a = "(" + anyExpr(scope) + ") % 50";
        String depth = c.recursive ? (chance(0.5) ? String.valueOf(pick(3)) : "(" + anyExpr(scope) + ") % 3") : "0";
        String args = "out, " + ptr + ", " + tag + ", " + a + ", " + depth;
        String cfg = grid + ", " + block + (smem != null ? ", " + smem : "") + (stream != null ? ", " + stream : "");
        String dev = render(c.name() + "<<<" + cfg + ">>>(" + args + ");", false);
        String cpu = render(c.name() + "_cpu(dim3(" + grid + "), dim3(" + block + "), " + args + ");", true);
        return new Code(dev, cpu);
    }

    private void makeLaunchers() {
        if (!chance(0.3)) {
            return;
        }
        Child c = children.get(pick(children.size()));
        int id = launchers.size();
        String smem = c.dynShared ? ", 64 * sizeof(unsigned)" : "";
        String body = "  if (x % 3 != 2) " + c.name() + "<<<1 + x % 2, 32" + smem
                + ">>>(out, data + x % 256, (unsigned)(x * 7 + 900001 + (int)@tx), x % 50, 0);\n";
        String dev = "__device__ void fz_l" + id + "(unsigned* out, const int* data, int x) {\n" + render(body, false) + "}\n";
        String cpuBody = "  if (x % 3 != 2) " + c.name() + "_cpu(dim3(1 + x % 2), dim3(32), out, data + x % 256, "
                + "(unsigned)(x * 7 + 900001 + (int)@tx), x % 50, 0);\n";
        String cpu = "static void fz_l" + id + "_cpu(dim3 tI, dim3 bI, unsigned* out, const int* data, int x) {\n"
                + render(cpuBody, true) + "  (void)bI;\n}\n";
        launchers.add(new Launcher(id, dev, cpu));
        features.add("launch-in-device-function");
    }

    // ------------------------------------------------------------------ statements

    private void stmts(List<Code> out, List<Var> scope, int depth, boolean inLoop, String tagExtra, String indent) {
        int n = 1 + pick(depth == 0 ? 4 : 3);
        List<Var> local = new ArrayList<>(scope);
        for (int i = 0; i < n; i++) {
            int kind = pick(depth >= 2 ? 3 : 10);
            switch (kind) {
                case 0, 1 -> out.add(indent(launch(local, tagExtra), indent));
                case 2 -> {
                    boolean u = chance(0.4);
                    String name = "v" + varCount++;
                    String e = u ? uniformExpr(local) : divergentExpr(local);
                    out.add(indent(Code.same("int " + name + " = (" + e + ") % 1000 + " + pick(5) + ";"), indent));
                    local.add(new Var(name, u));
                }
                case 3, 4 -> {
                    boolean u = chance(0.5);
                    out.add(indent(Code.same("if (" + cond(u, local) + ") {"), indent));
                    stmts(out, local, depth + 1, inLoop, tagExtra, indent + "  ");
                    if (chance(0.4)) {
                        out.add(indent(Code.same("} else {"), indent));
                        stmts(out, local, depth + 1, inLoop, tagExtra, indent + "  ");
                    }
                    out.add(indent(Code.same("}"), indent));
                    features.add(u ? "if-uniform" : "if-divergent");
                }
                case 5, 6 -> {
                    boolean u = chance(0.5);
                    String iv = "i" + varCount++;
                    String bound = u ? (chance(0.5) ? String.valueOf(1 + pick(3)) : "1 + (" + uniformExpr(local) + ") % 3")
                            : "1 + (" + divergentExpr(local) + ") % 3";
                    out.add(indent(Code.same("for (int " + iv + " = 0; " + iv + " < " + bound + "; ++" + iv + ") {"), indent));
                    List<Var> inner = new ArrayList<>(local);
                    inner.add(new Var(iv, u));
                    if (chance(0.2)) {
                        out.add(indent(Code.same("  if (" + cond(chance(0.5), inner) + ") continue;"), indent));
                        features.add("continue");
                    }
                    stmts(out, inner, depth + 1, true, tagExtra + " + " + iv + " * 7919", indent + "  ");
                    out.add(indent(Code.same("}"), indent));
                    features.add(u ? "loop-uniform" : "loop-divergent");
                }
                case 7 -> {
                    boolean u = chance(0.5);
                    String e = u ? uniformExpr(local) : divergentExpr(local);
                    out.add(indent(Code.same("switch ((" + e + ") % 3) {"), indent));
                    for (int c = 0; c < 3; c++) {
                        out.add(indent(Code.same(c < 2 ? "case " + c + ": {" : "default: {"), indent));
                        if (chance(0.7)) {
                            stmts(out, local, depth + 1, inLoop, tagExtra + " + " + (c + 1) * 131, indent + "  ");
                        }
                        out.add(indent(Code.same("  break;"), indent));
                        out.add(indent(Code.same("}"), indent));
                    }
                    out.add(indent(Code.same("}"), indent));
                    features.add("switch");
                }
                case 8 -> {
                    boolean u = chance(0.4);
                    out.add(indent(Code.same("if (" + cond(u, local) + ") return;"), indent));
                    features.add(depth == 0 ? "guard-return" : "nested-return");
                }
                default -> {
                    if (!launchers.isEmpty()) {
                        Launcher l = launchers.get(pick(launchers.size()));
                        out.add(indent(Code.same("@l" + l.id + "(out, data, " + anyExpr(local) + ");"), indent));
                    } else {
                        out.add(indent(launch(local, tagExtra), indent));
                    }
                }
            }
        }
    }

    private static Code indent(Code c, String ind) {
        return new Code(ind + c.device, ind + c.cpu);
    }

    private record Parent(String name, String device, String cpu, String grid, String block, int n, int k) {
    }

    private Parent makeParent(int id) {
        String name = "fz_p" + id;
        List<Code> body = new ArrayList<>();
        String pro1 = "int gt = (int)(((@bz * @gy + @by) * @gx + @bx) * (@dx * @dy * @dz) + (@tz * @dy + @ty) * @dx + @tx);";
        String pro2 = "int lt = (int)((@tz * @dy + @ty) * @dx + @tx);";
        String pro3 = "int bl = (int)((@bz * @gy + @by) * @gx + @bx);";
        for (String p : List.of(pro1, pro2, pro3)) {
            body.add(indent(Code.same(p), "  "));
        }
        if (chance(0.6)) {
            body.add(indent(Code.same("if (gt >= n) return;"), "  "));
            features.add("guard-return");
        }
        launchesInBody = 0;
        stmts(body, List.of(), 0, false, "", "  ");
        if (launchesInBody == 0) {
            body.add(indent(launch(List.of(), ""), "  "));
        }
        StringBuilder dev = new StringBuilder("__global__ void " + name + "(unsigned* out, const int* data, int n, int k) {\n");
        StringBuilder cpu = new StringBuilder("static void " + name + "_cpu(dim3 tI, dim3 bI, dim3 bD, dim3 gD, "
                + "unsigned* out, const int* data, int n, int k) {\n");
        for (Code c : body) {
            dev.append(c.device).append('\n');
            cpu.append(c.cpu).append('\n');
        }
        dev.append("  (void)lt; (void)bl; (void)k; (void)n;\n}\n");
        cpu.append("  (void)lt; (void)bl; (void)k; (void)n; (void)tI; (void)bI; (void)bD; (void)gD;\n}\n");
        // host launch configuration: at most 4 blocks of at most 64 threads
        String[] grids = {"1", "2", "3", "dim3(2, 2)", "dim3(1, 2, 2)", "dim3(3, 1)"};
        String[] blocks = {"32", "64", "48", "dim3(8, 4)", "dim3(4, 2, 4)", "dim3(5, 3, 2)", "dim3(32, 2)"};
        String grid = grids[pick(grids.length)];
        String block = blocks[pick(blocks.length)];
        int n = 10 + pick(200);
        int k = pick(6);
        return new Parent(name, dev.toString(), cpu.toString(), grid, block, n, k);
    }

    // ------------------------------------------------------------------ issue 10 shapes

    /**
     * A kernel of one of the issue 10 shapes, launched from {@code main} next to the random parents.
     *
     * @param device its device code (helpers, children, the kernel)
     * @param cpu its CPU reference, ending in {@code NAME_grid_cpu(gD, bD, out, data, [scr,] n, k)}
     * @param scratchWords the scratch words it uses (0: its signature is that of a random parent)
     * @param sites its launch sites that {@code siteCount} does not count
     */
    /**
     * @param smem the dynamic shared memory of its host launch (bytes, a C++ expression), or null for none
     * @param attrChild a child kernel whose dynamic shared memory limit {@code main} raises to 64 KiB
     *     where klap cannot see it ({@link Shape#HIDDEN_ATTRIBUTE}), or null
     */
    private record Extra(String name, String device, String cpu, int scratchWords, String grid, String block, int n, int k,
            int sites, String smem, String attrChild) {
        Extra(String name, String device, String cpu, int scratchWords, String grid, String block, int n, int k, int sites) {
            this(name, device, cpu, scratchWords, grid, block, n, k, sites, null, null);
        }

        Extra withSmem(String bytes) {
            return new Extra(name, device, cpu, scratchWords, grid, block, n, k, sites, bytes, attrChild);
        }

        Extra withAttrChild(String child) {
            return new Extra(name, device, cpu, scratchWords, grid, block, n, k, sites, smem, child);
        }

        String params() {
            return scratchWords > 0 ? "unsigned* out, const int* data, unsigned* scr, int n, int k"
                    : "unsigned* out, const int* data, int n, int k";
        }
    }

    /** the per-thread prologue of a shape kernel (the random parents' indices) */
    private static final String PROLOGUE = "int gt = (int)(((@bz * @gy + @by) * @gx + @bx) * (@dx * @dy * @dz) "
            + "+ (@tz * @dy + @ty) * @dx + @tx);\n  int lt = (int)((@tz * @dy + @ty) * @dx + @tx);\n"
            + "  int bl = (int)((@bz * @gy + @by) * @gx + @bx);\n";

    /**
     * A launch of child {@code c} with a 1-D block {@code block} (at most 64 threads); the child's
     * dynamic shared memory is sized from the block, a recursive child gets {@code depth} (0 otherwise).
     * The text may use the {@code @} placeholders of {@link #render}.
     */
    private Code childLaunch(Child c, String grid, String block, String stream, String ptr, String tag, String a, String depth) {
        String smem = c.dynShared ? "(unsigned)((" + block + ") * sizeof(unsigned))" : stream != null ? "0" : null;
        String args = "out, " + ptr + ", " + tag + ", " + a + ", " + (c.recursive ? depth : "0");
        String cfg = grid + ", " + block + (smem != null ? ", " + smem : "") + (stream != null ? ", " + stream : "");
        return new Code(render(c.name() + "<<<" + cfg + ">>>(" + args + ");", false),
                render(c.name() + "_cpu(dim3(" + grid + "), dim3(" + block + "), " + args + ");", true));
    }

    private Child anyChild() {
        return children.get(pick(children.size()));
    }

    /** A kernel whose CPU reference runs each thread on its own: {@code NAME_cpu} per thread and a grid loop. */
    private Extra perThreadExtra(String name, String deviceBefore, String cpuBefore, List<Code> body, int scratchWords,
            String[] grids, String[] blocks, int sites) {
        boolean scr = scratchWords > 0;
        String params = scr ? "unsigned* out, const int* data, unsigned* scr, int n, int k" : "unsigned* out, const int* data, int n, int k";
        StringBuilder dev = new StringBuilder(deviceBefore);
        dev.append("__global__ void ").append(name).append("(").append(params).append(") {\n  ").append(render(PROLOGUE, false));
        StringBuilder cpu = new StringBuilder(cpuBefore);
        cpu.append("static void ").append(name).append("_cpu(dim3 tI, dim3 bI, dim3 bD, dim3 gD, ").append(params).append(") {\n  ")
                .append(render(PROLOGUE, true));
        for (Code c : body) {
            dev.append(c.device).append('\n');
            cpu.append(c.cpu).append('\n');
        }
        dev.append("  (void)gt; (void)lt; (void)bl; (void)k; (void)n;").append(scr ? " (void)scr;" : "").append("\n}\n");
        cpu.append("  (void)gt; (void)lt; (void)bl; (void)k; (void)n;").append(scr ? " (void)scr;" : "")
                .append(" (void)tI; (void)bI; (void)bD; (void)gD;\n}\n");
        cpu.append("static void ").append(name).append("_grid_cpu(dim3 gD, dim3 bD, ").append(params).append(") {\n");
        cpu.append("  for (unsigned bz = 0; bz < gD.z; ++bz) for (unsigned by = 0; by < gD.y; ++by) for (unsigned bx = 0; bx < gD.x; ++bx)\n");
        cpu.append("    for (unsigned tz = 0; tz < bD.z; ++tz) for (unsigned ty = 0; ty < bD.y; ++ty) for (unsigned tx = 0; tx < bD.x; ++tx)\n");
        cpu.append("      ").append(name).append("_cpu(dim3(tx, ty, tz), dim3(bx, by, bz), bD, gD, out, data, ").append(scr ? "scr, " : "")
                .append("n, k);\n}\n");
        String grid = grids[pick(grids.length)];
        String block = blocks[pick(blocks.length)];
        int threads = volume(grid) * volume(block);
        int n = scr ? 1 + pick(threads) : 10 + pick(200);
        return new Extra(name, dev.toString(), cpu.toString(), scr ? threads * 32 : 0, grid, block, n, pick(6), sites);
    }

    /** @return the number of elements of an {@code int} or {@code dim3(...)} literal */
    static int volume(String dim) {
        String s = dim.replace("dim3(", "").replace(")", "");
        int v = 1;
        for (String part : s.split(",")) {
            v *= Integer.parseInt(part.trim());
        }
        return v;
    }

    private static final String[] GRIDS = {"1", "2", "3", "dim3(2, 2)", "dim3(1, 2, 2)", "dim3(3, 1)"};
    private static final String[] BLOCKS = {"32", "64", "48", "dim3(8, 4)", "dim3(4, 2, 4)", "dim3(5, 3, 2)", "dim3(32, 2)"};

    private String tag(int site, String extra) {
        return "(unsigned)(" + (site + 1) + " * 100003 + gt * 31" + extra + ")";
    }

    /**
     * {@link Shape#REF_OUT}: a {@code __device__} helper writes thread-dependent values through
     * reference or pointer parameters; they feed a launch's grid, block and arguments and the bound
     * of the loop around it.
     */
    private Extra makeRefOut(int id) {
        String name = "fz_q" + id;
        int site = siteCount++;
        Child c = anyChild();
        List<Code> body = new ArrayList<>();
        String dev;
        String cpu;
        if (chance(0.5)) {
            body.add(Code.same("  if (gt >= n) return;"));
        }
        int form = pick(3);
        if (form == 0) {
            features.add("ref-out:reference");
            String fn = "fz_rr" + id;
            if (!pureNameUsed && pureNames.nextInt(4) == 0) {
                // a helper named like the math max (four parameters: no overload of CUDA's is ambiguous with it)
                fn = "max";
                pureNameUsed = true;
                features.add("ref-out:pure-name");
            }
            String text = "(const int* ptr, int r, int& b, int& e) {\n  b = ptr[r % 1000] % 5;\n  e = b + ptr[(r + 1) % 1000] % 4;\n}\n";
            dev = "__device__ void " + fn + text;
            cpu = "static void " + fn + "_cpu" + text;
            // initialised with values that look uniform, then overwritten per thread
            String init = chance(0.5) ? "0" : "k";
            body.add(Code.same("  int b = " + init + ", e = " + init + ";"));
            String call = fn + "(data, gt + k, b, e);";
            if (chance(0.35)) {
                body.add(new Code("  if (gt % 3 != 0) " + call, "  if (gt % 3 != 0) " + call.replace(fn + "(", fn + "_cpu(")));
                features.add("ref-out:conditional-call");
            } else {
                body.add(new Code("  " + call, "  " + call.replace(fn + "(", fn + "_cpu(")));
            }
            switch (pick(3)) {
                case 0 -> {
                    body.add(Code.same("  for (int j = b; j < e; ++j) {"));
                    body.add(indent(childLaunch(c, "1 + (e - j) % 2", "1 + (b * 5 + j) % 64", null, "data + (b + j) % 256",
                            tag(site, " + j * 7919"), "(e - b + j) % 50", "(e + j) % 2"), "    "));
                    body.add(Code.same("  }"));
                    features.add("ref-out:loop-bound");
                }
                case 1 -> {
                    body.add(Code.same("  if (e > b) {"));
                    body.add(indent(childLaunch(c, "1 + (e - b) % 3", "1 + (b + e * 3) % 64", null, "data + e % 256",
                            tag(site, ""), "b % 50", "b % 2"), "    "));
                    body.add(Code.same("  }"));
                    features.add("ref-out:config");
                }
                default -> {
                    body.add(Code.same("  for (int j = 0; j < e; ++j) {"));
                    body.add(Code.same("    if ((j + b) % 2 != 0) continue;"));
                    body.add(indent(childLaunch(c, "1 + b % 2", "1 + (e * 7 + j) % 64",
                            chance(0.3) ? "cudaStreamFireAndForget" : null, "data + b",
                            tag(site, " + j * 7919"), "(b + j) % 50", "j % 2"), "    "));
                    body.add(Code.same("  }"));
                    features.add("ref-out:loop-bound");
                }
            }
        } else if (form == 1) {
            features.add("ref-out:pointer");
            String fn = "fz_rp" + id;
            String text = "(const int* ptr, int r, int* lo, int* cnt) {\n  *lo = ptr[r % 1000] % 7;\n  *cnt = 1 + ptr[(r + 3) % 1000] % 3;\n}\n";
            dev = "__device__ void " + fn + text;
            cpu = "static void " + fn + "_cpu" + text;
            if (chance(0.5)) {
                int rounds = 1 + pick(3);
                body.add(Code.same("  for (int j = 0; j < " + rounds + "; ++j) {"));
                body.add(Code.same("    int lo, cnt;"));
                body.add(new Code("    " + fn + "(data, gt * 3 + j, &lo, &cnt);", "    " + fn + "_cpu(data, gt * 3 + j, &lo, &cnt);"));
                body.add(indent(childLaunch(c, "cnt", "1 + lo * 9", null, "data + lo",
                        tag(site, " + j * 7919"), "(lo + cnt) % 50", "cnt % 2"), "    "));
                body.add(Code.same("  }"));
                features.add("ref-out:config");
            } else {
                body.add(Code.same("  int lo = k, cnt = 1;"));
                body.add(new Code("  " + fn + "(data, gt, &lo, &cnt);", "  " + fn + "_cpu(data, gt, &lo, &cnt);"));
                body.add(Code.same("  for (int j = 0; j < cnt; ++j) {"));
                body.add(indent(childLaunch(c, "1 + (lo + j) % 2", "1 + lo * 9", null, "data + lo + j",
                        tag(site, " + j * 7919"), "(lo * 3 + j) % 50", "lo % 2"), "    "));
                body.add(Code.same("  }"));
                features.add("ref-out:loop-bound");
            }
        } else {
            features.add("ref-out:return+reference");
            String fn = "fz_rm" + id;
            String text = "(const int* ptr, int r, int& w) {\n  w = 1 + ptr[(r + 5) % 1000] % 48;\n  return ptr[r % 1000] % 3;\n}\n";
            dev = "__device__ int " + fn + text;
            cpu = "static int " + fn + "_cpu" + text;
            body.add(Code.same("  int w = 1;"));
            body.add(new Code("  int g = " + fn + "(data, gt, w);", "  int g = " + fn + "_cpu(data, gt, w);"));
            if (chance(0.5)) {
                body.add(Code.same("  for (int j = 0; j < g; ++j) {"));
                body.add(indent(childLaunch(c, "1 + j % 2", "w", null, "data + (w + j) % 256", tag(site, " + j * 7919"),
                        "(w + j) % 50", "g % 2"), "    "));
                body.add(Code.same("  }"));
                features.add("ref-out:loop-bound");
            } else {
                body.add(Code.same("  if (g != 1) {"));
                body.add(indent(childLaunch(c, "1 + g", "w", null, "data + w", tag(site, ""), "w % 50", "g % 2"), "    "));
                body.add(Code.same("  }"));
                features.add("ref-out:config");
            }
        }
        return perThreadExtra(name, dev + "\n", cpu + "\n", body, 0, GRIDS, BLOCKS, 0);
    }

    /**
     * A way to write a barrier, for {@link Shape#BARRIER_SPELLINGS}: the statement (without {@code
     * ;}), the definitions it needs (a macro or an include; identical when repeated, so a program may
     * hold it twice), its feature name, and the plain barrier it means.
     */
    record BarrierSpelling(String text, String defs, String feature, String plain) {
    }

    /**
     * The spellings of {@code __syncthreads()}: each compiles to the same barrier (PTX ISA {@code
     * bar.sync 0} / {@code barrier.sync 0}), so the CPU reference is unchanged.
     */
    static final List<BarrierSpelling> BLOCK_BARRIERS = List.of(
        new BarrierSpelling("FZ_BAR()", "#define FZ_BAR() asm volatile(\"bar.sync 0;\" ::: \"memory\")\n", "asm-macro",
            "__syncthreads()"),
        new BarrierSpelling("FZ_BAR_DO", "#define FZ_BAR_DO do { asm volatile(\"barrier.sync 0;\" ::: \"memory\"); } while (0)\n",
            "asm-do-macro", "__syncthreads()"),
        new BarrierSpelling("__barrier_sync(0)", "", "barrier-sync", "__syncthreads()"),
        new BarrierSpelling("(void)__syncthreads_count(1)", "", "syncthreads-count", "__syncthreads()"),
        new BarrierSpelling("cooperative_groups::this_thread_block().sync()", "#include <cooperative_groups.h>\n",
            "cg-block-sync", "__syncthreads()"),
        new BarrierSpelling("cooperative_groups::sync(cooperative_groups::this_thread_block())",
            "#include <cooperative_groups.h>\n", "cg-sync", "__syncthreads()"));

    /** The spellings of {@code __syncwarp()} ({@code bar.warp.sync -1}). */
    static final List<BarrierSpelling> WARP_BARRIERS = List.of(
        new BarrierSpelling("FZ_WARP_BAR()", "#define FZ_WARP_BAR() asm volatile(\"bar.warp.sync -1;\" ::: \"memory\")\n",
            "asm-macro-warp", "__syncwarp()"),
        new BarrierSpelling("__syncwarp(0xffffffffu)", "", "syncwarp-mask", "__syncwarp()"));

    /**
     * {@link Shape#BARRIER_RETURN}: {@code if (i >= n) return;} with n not a multiple of the block
     * size, then a shared-memory exchange around a barrier ({@code __syncthreads()} inline or in a
     * {@code __device__} function, or {@code __syncwarp()}), then a divergent launch; optionally
     * repeated in a uniform loop of rounds. With {@code spelled} ({@link Shape#BARRIER_SPELLINGS}) the
     * barrier is written another way that means the same ({@link #BLOCK_BARRIERS}, {@link #WARP_BARRIERS}); the draws before
     * it are the same as without.
     */
    private Extra makeBarrier(int id, boolean spelled) {
        String name = "fz_b" + id;
        int site = siteCount++;
        Child c = anyChild();
        int[] blocks = {48, 64, 96, 128};
        int block = blocks[pick(blocks.length)];
        int grid = 1 + pick(3);
        int n = (grid - 1) * block + 1 + pick(block - 1);
        boolean warp = chance(0.35);
        boolean inFunction = chance(0.4);
        int rounds = chance(0.6) ? 1 : 2 + pick(2);
        int mod = 2 + pick(3);
        features.add(warp ? "barrier:syncwarp" : "barrier:syncthreads");
        features.add(inFunction ? "barrier:device-function" : "barrier:inline");
        if (rounds > 1) {
            features.add("barrier:rounds");
        }
        String bar = warp ? "__syncwarp()" : "__syncthreads()";
        String spellingDefs = "";
        if (spelled) {
            BarrierSpelling sp = warp ? WARP_BARRIERS.get(chance(0.6) ? 0 : 1) : BLOCK_BARRIERS.get(pick(BLOCK_BARRIERS.size()));
            bar = sp.text();
            spellingDefs = sp.defs();
            features.add("barrier-spelling:" + sp.feature());
        }
        String neighbour = warp ? "sh[wb + (lt - wb + 1) % wl]" : "sh[(lt + 1) % live]";
        StringBuilder dev = new StringBuilder(spellingDefs);
        String fn = "fz_x" + id;
        if (inFunction) {
            dev.append("__device__ unsigned ").append(fn).append("(unsigned* sh, unsigned v, int lt, int live) {\n");
            if (warp) {
                dev.append("  int wb = lt & ~31;\n  int wl = min(32, live - wb);\n");
            }
            dev.append("  sh[lt] = v;\n  ").append(bar).append(";\n  unsigned w = ").append(neighbour).append(";\n  ")
                    .append(bar).append(";\n  return w;\n}\n");
        }
        dev.append("__global__ void ").append(name).append("(unsigned* out, const int* data, int n, int k) {\n");
        dev.append("  __shared__ unsigned fz_sh[128];\n");
        dev.append("  int i = (int)(blockIdx.x * blockDim.x + threadIdx.x);\n");
        dev.append("  if (i >= n) return;\n");
        dev.append("  int lt = (int)threadIdx.x;\n");
        dev.append("  int live = min((int)blockDim.x, n - (int)(blockIdx.x * blockDim.x));\n");
        dev.append("  unsigned v = fz_mix((unsigned)data[i % ").append(DATA_N).append("], (unsigned)(i + k * 7));\n");
        String ind = "  ";
        if (rounds > 1) {
            dev.append("  for (int r = 0; r < ").append(rounds).append("; ++r) {\n");
            ind = "    ";
        } else {
            dev.append("  const int r = 0;\n");
        }
        if (inFunction) {
            dev.append(ind).append("unsigned w = ").append(fn).append("(fz_sh, v, lt, live);\n");
        } else {
            if (warp) {
                dev.append(ind).append("int wb = lt & ~31;\n").append(ind).append("int wl = min(32, live - wb);\n");
            }
            dev.append(ind).append("fz_sh[lt] = v;\n").append(ind).append(bar).append(";\n");
            dev.append(ind).append("unsigned w = fz_").append(neighbour).append(";\n");
            if (rounds > 1) {
                dev.append(ind).append(bar).append(";\n");
            }
        }
        dev.append(ind).append("v = fz_mix(v, w);\n");
        Code launch = childLaunch(c, "1 + (int)(v % 2u)", "1 + (int)(v % 64u)", chance(0.3) ? "cudaStreamFireAndForget" : null,
                "data + v % 256u", "(unsigned)(" + (site + 1) + " * 100003 + i * 31 + r * 7919)", "(int)(v % 50u)", "(int)(v % 2u)");
        dev.append(ind).append("if (v % ").append(mod).append("u != 0u) ").append(launch.device).append('\n');
        if (rounds > 1) {
            dev.append("  }\n");
        }
        dev.append(rounds > 1 ? "}\n" : "  (void)r;\n}\n");
        StringBuilder cpu = new StringBuilder();
        cpu.append("static void ").append(name).append("_grid_cpu(dim3 gD, dim3 bD, unsigned* out, const int* data, int n, int k) {\n");
        cpu.append("  for (unsigned bx = 0; bx < gD.x; ++bx) {\n");
        cpu.append("    int base = (int)(bx * bD.x);\n");
        cpu.append("    int live = (int)bD.x < n - base ? (int)bD.x : n - base;\n");
        cpu.append("    if (live <= 0) continue;\n");
        cpu.append("    std::vector<unsigned> vv(live), ww(live);\n");
        cpu.append("    for (int lt = 0; lt < live; ++lt) vv[lt] = fz_mix((unsigned)data[(base + lt) % ").append(DATA_N)
                .append("], (unsigned)(base + lt + k * 7));\n");
        cpu.append("    for (int r = 0; r < ").append(rounds).append("; ++r) {\n");
        cpu.append("      for (int lt = 0; lt < live; ++lt) {\n");
        if (warp) {
            cpu.append("        int wb = lt & ~31;\n        int wl = 32 < live - wb ? 32 : live - wb;\n");
            cpu.append("        ww[lt] = vv[wb + (lt - wb + 1) % wl];\n");
        } else {
            cpu.append("        ww[lt] = vv[(lt + 1) % live];\n");
        }
        cpu.append("      }\n");
        cpu.append("      for (int lt = 0; lt < live; ++lt) {\n");
        cpu.append("        int i = base + lt;\n        unsigned v = fz_mix(vv[lt], ww[lt]);\n        vv[lt] = v;\n");
        cpu.append("        if (v % ").append(mod).append("u != 0u) ").append(launch.cpu).append('\n');
        cpu.append("      }\n    }\n  }\n  (void)gD;\n}\n");
        return new Extra(name, dev.toString(), cpu.toString(), 0, String.valueOf(grid), String.valueOf(block), n, pick(6), 0);
    }

    /**
     * What {@link #drawDependent} drew: the producer and consumer kernels' names, their launch
     * configurations (the consumer's with its stream), the consumers' loop header, whether they go
     * into {@code cudaStreamTailLaunch} and whether a {@code __device__} helper runs them, and the
     * device and CPU code written so far.
     */
    private record Dependent(String prod, String cons, String pcfg, String ccfg, String loop, boolean tail, boolean helper,
                             StringBuilder dev, StringBuilder cpu) {
    }

    /**
     * The draws and code shared by {@link #makeDependent} and {@link #makeDependentAfterReturn}: a
     * producer and a consumer kernel ({@link #producerConsumer}, slot multipliers {@code mi},
     * {@code mr}), the consumers' loop and, if drawn, the {@code __device__} helper {@code <name>_rest}
     * that runs it. The draws are made in the order {@link #makeDependent} always made them, so its
     * programs are unchanged.
     */
    private Dependent drawDependent(String name, double tailChance, String mi, String mr) {
        String prod = name + "_produce";
        String cons = name + "_consume";
        int rounds = 1 + pick(3);
        int salt = pick(1000);
        boolean tail = chance(tailChance);
        boolean helper = chance(0.35);
        String pcfg = new String[] {"1, 32", "2, 16", "dim3(1), dim3(32)", "1, 32, 0, 0"}[pick(4)];
        String ccfg = new String[] {"1, 32", "2, 16"}[pick(2)] + (tail ? ", 0, cudaStreamTailLaunch" : chance(0.4) ? ", 0, 0" : "");
        StringBuilder dev = new StringBuilder();
        StringBuilder cpu = new StringBuilder();
        producerConsumer(prod, cons, salt, mi, mr, dev, cpu);
        String loop = "for (int r = 0; r < " + rounds + "; ++r) ";
        if (helper) {
            dev.append("__device__ void ").append(name).append("_rest(unsigned* out, unsigned* a, int i) {\n  ").append(loop)
                    .append(cons).append("<<<").append(ccfg).append(">>>(out, a, i, r);\n}\n");
            cpu.append("static void ").append(name).append("_rest_cpu(unsigned* out, unsigned* a, int i) {\n  ").append(loop)
                    .append(cons).append("_cpu(out, a, i, r);\n}\n");
        }
        return new Dependent(prod, cons, pcfg, ccfg, loop, tail, helper, dev, cpu);
    }

    /**
     * {@link Shape#DEPENDENT}: each launching thread runs {@code produce<<<1, 32>>>} and then, in a
     * loop of constant trip count, {@code consume<<<1, 32>>>} on its own 32 scratch words, into the
     * NULL stream (omitted or explicit), from a {@code __device__} helper, or into {@code
     * cudaStreamTailLaunch}; consume reads and rewrites what the launches before it wrote.
     */
    private Extra makeDependent(int id) {
        String name = "fz_d" + id;
        Dependent d = drawDependent(name, 0.3, "97u", "31u");
        features.add(d.tail ? "dependent:tail-launch" : d.ccfg.endsWith(", 0, 0") ? "dependent:stream-0" : "dependent:null-stream");
        if (d.helper) {
            features.add("dependent:device-function");
        }
        List<Code> body = new ArrayList<>();
        body.add(Code.same("  if (gt >= n) return;"));
        String cond = d.tail ? "gt % 8 == 0" : new String[] {"gt % 3 != 1", "(gt + k) % 2 == 0", "true"}[pick(3)];
        body.add(Code.same("  if (" + cond + ") {"));
        body.add(new Code("    " + d.prod + "<<<" + d.pcfg + ">>>(scr, data, gt);", "    " + d.prod + "_cpu(scr, data, gt);"));
        if (d.helper) {
            body.add(new Code("    " + name + "_rest(out, scr, gt);", "    " + name + "_rest_cpu(out, scr, gt);"));
        } else {
            body.add(new Code("    " + d.loop + d.cons + "<<<" + d.ccfg + ">>>(out, scr, gt, r);",
                    "    " + d.loop + d.cons + "_cpu(out, scr, gt, r);"));
        }
        body.add(Code.same("  }"));
        return perThreadExtra(name, d.dev + "\n", d.cpu + "\n", body, 1, new String[] {"1", "2", "dim3(2, 1)"},
                new String[] {"32", "64", "dim3(8, 4)", "dim3(4, 4, 2)"}, 2);
    }

    /**
     * {@link Shape#DEPENDENT_AFTER_RETURN}: after {@code if (gt >= n) return;}, each thread runs
     * {@code produce<<<...>>>} on its own 32 scratch words (directly, in a case of a {@code switch} on
     * {@code k}, or under a thread-dependent {@code if}), sometimes returns when a second
     * thread-dependent condition holds, and then runs {@code consume<<<...>>>} in a loop of constant
     * trip count (in the kernel or a {@code __device__} helper; into the NULL stream, stream 0, or
     * {@code cudaStreamTailLaunch} for one thread in eight), each reading and rewriting what the launches
     * before it wrote: the producer must go out before the consumers.
     */
    private Extra makeDependentAfterReturn(int id) {
        String name = "fz_da" + id;
        Dependent d = drawDependent(name, 0.25, "89u", "37u");
        features.add(d.tail ? "dependent-after-return:tail-launch" : "dependent-after-return:ordered-stream");
        Code consume;
        if (d.helper) {
            features.add("dependent-after-return:device-function");
            consume = new Code(name + "_rest(out, scr, gt);", name + "_rest_cpu(out, scr, gt);");
        } else {
            consume = new Code(d.loop + d.cons + "<<<" + d.ccfg + ">>>(out, scr, gt, r);", d.loop + d.cons + "_cpu(out, scr, gt, r);");
        }
        Code produce = new Code(d.prod + "<<<" + d.pcfg + ">>>(scr, data, gt);", d.prod + "_cpu(scr, data, gt);");
        List<Code> body = new ArrayList<>();
        body.add(Code.same("  if (gt >= n) return;"));
        String where = new String[] {"top", "uniform-switch", "divergent-if"}[pick(3)];
        features.add("dependent-after-return:" + where);
        switch (where) {
            case "top" -> body.add(produce.indent("  "));
            case "uniform-switch" -> {
                body.add(Code.same("  switch (k % 3) {\n  case 0:"));
                body.add(produce.indent("    "));
                body.add(Code.same("    break;\n  case 1: {\n    int fz_w = (k + lt) % 5;"));
                body.add(produce.indent("    "));
                body.add(Code.same("    (void)fz_w;\n    break;\n  }\n  default:\n    break;\n  }"));
            }
            default -> body.add(produce.indent("  if ((gt * 7 + k) % 4 != 1) "));
        }
        if (chance(0.4)) {
            features.add("dependent-after-return:second-return");
            body.add(Code.same("  if ((gt + k) % 5 == 2) return;"));
        }
        // one thread in eight makes tail launches (they hold places in the pending-launch buffer until the parent ends)
        body.add(consume.indent(d.tail ? "  if (gt % 8 == 0) " : "  "));
        return perThreadExtra(name, d.dev + "\n", d.cpu + "\n", body, 1, new String[] {"1", "2", "dim3(2, 1)"},
                new String[] {"32", "64", "dim3(8, 4)", "dim3(4, 4, 2)"}, 2);
    }

    /**
     * {@link Shape#FF_LOOP}: a launch into {@code cudaStreamFireAndForget} in a loop whose counter is
     * grid-uniform and different in each round; the counter selects the child's output slots (its
     * tag) and sometimes its grid, block, data pointer and argument. The launch is in the kernel or
     * in a {@code __device__} function called with the counter.
     */
    private Extra makeFfLoop(int id) {
        String name = "fz_f" + id;
        int site = siteCount++;
        Child c = anyChild();
        String bound = chance(0.6) ? String.valueOf(2 + pick(3)) : "(1 + k % 3)";
        String[] heads = {"for (int r = 0; r < R; ++r) {", "for (int r = R - 1; r >= 0; --r) {", "for (int r = 0; r < 2 * R; r += 2) {",
            "for (int r = k; r < k + R; ++r) {", "int r = 0;\n  while (r < R) {"};
        int h = pick(heads.length);
        String head = heads[h].replace("R", bound);
        features.add("ff-loop:" + new String[] {"up", "down", "step-2", "from-k", "while"}[h]);
        String grid = new String[] {"1 + r % 2", "2", "dim3(1 + r % 2, 2)"}[pick(3)];
        String block = new String[] {"1 + (r * 13 + 5) % 64", "32", "1 + gt % 64", "5"}[pick(4)];
        String ptr = new String[] {"data + r % 256", "data + (gt + r) % 256", "data"}[pick(3)];
        String a = chance(0.5) ? "r % 50" : "(r * 7 + gt) % 50";
        boolean uniformTag = chance(0.25);
        String tagText = uniformTag ? "(unsigned)(" + (site + 1) + " * 100003 + r * 7919)" : tag(site, " + r * 7919");
        if (uniformTag) {
            features.add("ff-loop:uniform-tag");
        }
        Code launch = childLaunch(c, grid, block, "cudaStreamFireAndForget", ptr, tagText, a, "r % 2");
        String dev = "";
        String cpu = "";
        Code call = launch;
        if (chance(0.3)) {
            features.add("ff-loop:device-function");
            String fn = "fz_fl" + id;
            dev = "__device__ void " + fn + "(unsigned* out, const int* data, int gt, int r) {\n  " + launch.device + "\n}\n\n";
            cpu = "static void " + fn + "_cpu(unsigned* out, const int* data, int gt, int r) {\n  " + launch.cpu + "\n}\n\n";
            call = new Code(fn + "(out, data, gt, r);", fn + "_cpu(out, data, gt, r);");
        }
        List<Code> body = new ArrayList<>();
        if (chance(0.5)) {
            body.add(Code.same("  if (gt >= n) return;"));
        }
        body.add(Code.same("  " + head));
        String guard = chance(0.35) ? "if ((gt + r) % 3 != 0) " : "";
        body.add(new Code("    " + guard + call.device, "    " + guard + call.cpu));
        if (h == 4) {
            body.add(Code.same("    ++r;"));
        }
        body.add(Code.same("  }"));
        return perThreadExtra(name, dev, cpu, body, 0, GRIDS, BLOCKS, 0);
    }

    /**
     * {@link Shape#EXIT_AFTER_LAUNCH}: a launch followed, in the same region, by a jump that leaves it:
     * {@code if (c) return;} in the kernel body, or {@code break}, {@code continue} or {@code return}
     * in a loop of rounds (whose body may start with a {@code continue} guard), with c uniform across
     * the block or thread-dependent; sometimes another launch after the jump and a
     * {@code __syncthreads()} after a {@code return}. The launches recorded before the jump must
     * still be launched.
     */
    private Extra makeExit(int id) {
        String name = "fz_e" + id;
        List<Code> body = new ArrayList<>();
        if (chance(0.5)) {
            body.add(Code.same("  if (gt >= n) return;"));
        }
        boolean loop = chance(0.6);
        String ind = loop ? "    " : "  ";
        String r = loop ? "r" : "0";
        if (loop) {
            body.add(Code.same("  for (int r = 0; r < " + (2 + pick(3)) + "; ++r) {"));
            if (chance(0.3)) {
                body.add(Code.same("    if ((gt + r) % 4 == 3) continue;"));
                features.add("exit:continue-guard");
            }
        }
        int site = siteCount++;
        Child c = anyChild();
        // the launch, the jump and what follows inside a thread-dependent if: the if is the region
        boolean nest = chance(0.35);
        String pre = !nest && chance(0.4) ? "if ((gt + " + r + ") % 3 != 0) " : "";
        if (nest) {
            body.add(Code.same(ind + "if ((gt + " + r + ") % 3 != 0) {"));
            ind = ind + "  ";
            features.add("exit:in-divergent-if");
        }
        Code first = childLaunch(c, "1 + (gt + " + r + ") % 2", "1 + (lt * 5 + " + r + ") % 48", null, "data + (gt + " + r
                + ") % 256", tag(site, " + " + r + " * 7919"), "(gt + " + r + ") % 50", r + " % 2");
        body.add(new Code(ind + pre + first.device, ind + pre + first.cpu));
        boolean uniform = chance(0.5);
        String cond = uniform ? "(k + bl + " + r + ") % 3 == 1" : "(gt * 7 + " + r + ") % 5 == 2";
        String[] jumps = loop ? new String[] {"return", "break", "continue"} : new String[] {"return"};
        String jump = jumps[pick(jumps.length)];
        body.add(Code.same(ind + "if (" + cond + ") " + jump + ";"));
        features.add("exit:" + jump + (uniform ? "-uniform" : "-divergent"));
        if (jump.equals("return") && !nest && chance(0.25)) {
            // the original is valid: threads that returned have exited, and exited threads do not hold up a barrier
            // the CPU reference runs the threads one after another, and the result (sums of the
            // children's atomicAdds) does not depend on their order: the barrier has no counterpart
            body.add(new Code(ind + "__syncthreads();", ind + "/* __syncthreads() */"));
            features.add("exit:barrier-after");
        }
        if (chance(0.6)) {
            int site2 = siteCount++;
            Child c2 = anyChild();
            Code second = childLaunch(c2, "1", "32", null, "data", tag(site2, " + " + r + " * 7919"), "(lt + " + r + ") % 50", "1");
            body.add(new Code(ind + second.device, ind + second.cpu));
        }
        if (nest) {
            ind = ind.substring(2);
            body.add(Code.same(ind + "}"));
        }
        if (loop) {
            body.add(Code.same("  }"));
        }
        return perThreadExtra(name, "", "", body, 0, GRIDS, BLOCKS, 0);
    }

    /**
     * {@link Shape#IN_PLACE_LOOP}: {@code if (gt >= n) return;}, then a loop of rounds; in each round
     * a busy stretch whose length depends on the thread, then a launch whose argument (and sometimes
     * tag, pointer or grid) is derived from the round counter, under a thread-dependent condition.
     */
    private Extra makeInPlaceLoop(int id) {
        String name = "fz_i" + id;
        int site = siteCount++;
        Child c = anyChild();
        List<Code> body = new ArrayList<>();
        body.add(Code.same("  if (gt >= n) return;"));
        body.add(Code.same("  unsigned fz_w = (unsigned)gt;"));
        String bound = chance(0.5) ? String.valueOf(2 + pick(3)) : "(2 + k % 3)";
        body.add(Code.same("  for (int r = 0; r < " + bound + "; ++r) {"));
        // lanes leave this loop after different numbers of rounds: they drift apart
        body.add(Code.same("    for (int j = 0; j < 1 + ((gt ^ r) * 7) % " + (3 + pick(30)) + "; ++j) fz_w = fz_mix(fz_w, (unsigned)j);"));
        String q = new String[] {"r * 3 + k", "r", "(r + 1) * (k + 1)"}[pick(3)];
        body.add(Code.same("    int q = " + q + ";"));
        features.add("in-place-loop:" + (q.equals("r") ? "counter" : "derived"));
        String grid = chance(0.3) ? "1 + q % 2" : "1";
        String ptr = chance(0.3) ? "data + q % 256" : "data";
        String tagText = chance(0.5) ? "(unsigned)(" + (site + 1) + " * 100003 + q * 7919)" : tag(site, " + q * 7919");
        Code launch = childLaunch(c, grid, "32", null, ptr, tagText, "q % 50", "q % 2");
        String cond = "if ((gt + r) % " + (2 + pick(2)) + " == 0) ";
        body.add(new Code("    " + cond + launch.device, "    " + cond + launch.cpu));
        body.add(Code.same("  }"));
        body.add(new Code("  atomicAdd(&out[(unsigned)gt % " + OUT_N + "u], fz_w & 1u);",
                "  out[(unsigned)gt % " + OUT_N + "u] += fz_w & 1u;"));
        return perThreadExtra(name, "", "", body, 0, GRIDS, BLOCKS, 0);
    }

    /**
     * {@link Shape#MACROS}: what a kernel writes through macros, which klap must never edit: a child
     * that reads its indices through an index macro, a guard macro {@code FZ_M_GUARD(c)} ({@code
     * if (!(c)) return;}) and a return macro after a launch in the parent, and (sometimes) a device
     * cudaMalloc/cudaFree through macros. The CPU reference uses the same guard and return macros
     * (they are plain C++).
     */
    private Extra makeMacros(int id) {
        String name = "fz_m" + id;
        String child = "fz_mc" + id;
        int site = siteCount++;
        int site2 = siteCount++;
        String defs = "#ifndef FZ_M_GUARD\n#define FZ_M_GUARD(c) if (!(c)) return;\n#define FZ_M_BAIL return\n"
                + "#define FZ_M_TID (blockIdx.x * blockDim.x + threadIdx.x)\n"
                + "#define FZ_M_ALLOC(p, n) cudaMalloc((void**)&p, n)\n#define FZ_M_FREE(p) cudaFree(p)\n#endif\n";
        String dev = defs + "__global__ void " + child + "(unsigned* out, unsigned tag) {\n"
                + "  atomicAdd(&out[(tag * 31u + FZ_M_TID) % " + OUT_N + "u], tag + FZ_M_TID * 7u);\n}\n";
        String cpu = defs + "static void " + child + "_cpu(dim3 gD, dim3 bD, unsigned* out, unsigned tag) {\n  ++fz_launches;\n"
                + "  for (unsigned b = 0; b < gD.x; ++b) for (unsigned t = 0; t < bD.x; ++t) {\n"
                + "    unsigned i = b * bD.x + t;\n    out[(tag * 31u + i) % " + OUT_N + "u] += tag + i * 7u;\n  }\n}\n";
        List<Code> body = new ArrayList<>();
        body.add(Code.same("  FZ_M_GUARD(gt < n)"));
        String tag1 = "(unsigned)(" + (site + 1) + " * 100003 + gt * 31)";
        body.add(new Code("  " + child + "<<<1 + gt % 2, 8>>>(out, " + tag1 + ");",
                "  " + child + "_cpu(dim3(1 + gt % 2), dim3(8), out, " + tag1 + ");"));
        if (chance(0.5)) {
            features.add("macros:malloc");
            body.add(new Code("  { int* fz_b; if (FZ_M_ALLOC(fz_b, 4 * sizeof(int)) == cudaSuccess) { fz_b[0] = gt; "
                    + "atomicAdd(&out[(unsigned)fz_b[0] % " + OUT_N + "u], 1u); FZ_M_FREE(fz_b); } }",
                    "  out[(unsigned)gt % " + OUT_N + "u] += 1u;"));
        }
        String cond = chance(0.5) ? "(k + bl) % 3 == 1" : "gt % 4 == 1";
        features.add(cond.startsWith("gt") ? "macros:bail-divergent" : "macros:bail-uniform");
        body.add(Code.same("  if (" + cond + ") FZ_M_BAIL;"));
        String tag2 = "(unsigned)(" + (site2 + 1) + " * 100003 + gt * 31)";
        body.add(new Code("  " + child + "<<<1, 4>>>(out, " + tag2 + ");", "  " + child + "_cpu(dim3(1), dim3(4), out, " + tag2 + ");"));
        return perThreadExtra(name, dev + "\n", cpu + "\n", body, 0, GRIDS, BLOCKS, 0);
    }

    /**
     * {@link Shape#KERNEL_NAME_MACRO}: launches whose kernel an object-like macro names ({@code
     * FZ_KN0_K<<<...>>>(...)}): a child of its own in a namespace, sometimes a template with its
     * argument in the macro ({@code #define FZ_KN0_K fz_kn0_ns::fz_knc0<3u>}), sometimes through a
     * second macro, and a random child through a macro of its own; between them a divergent return,
     * sometimes. klap must launch (and aggregate) the kernel the macro expands to, as it does the
     * same launch written out; it took the macro's name for the kernel's until 2026-11-28. Half the
     * programs write the {@code __global__} of the parent and its own child through a macro too
     * ({@code FZ_KN0_G void ...}), which must still get klap's launch bounds.
     */
    private Extra makeKernelNameMacro(int id) {
        String name = "fz_kn" + id;
        String child = "fz_knc" + id;
        String ns = name + "_ns";
        String mk = "FZ_KN" + id + "_K";
        boolean template = chance(0.5);
        boolean chain = chance(0.5);
        String use = chain ? "FZ_KN" + id + "_J" : mk;
        int site = siteCount++;
        int site2 = siteCount++;
        boolean globalMacro = chance(0.5);
        String global = globalMacro ? "FZ_KN" + id + "_G" : "__global__";
        features.add("kernel-name-macro:" + (template ? "template" : "plain") + (chain ? ":chain" : ""));
        if (globalMacro) {
            features.add("kernel-name-macro:global-macro");
        }
        String m = template ? "3u" : "1u";
        String dev = "#ifndef " + mk + "\n" + (globalMacro ? "#define " + global + " __global__\n" : "")
                + "namespace " + ns + " {\n" + (template ? "template <unsigned M>\n" : "")
                + global + " void " + child + "(unsigned* out, unsigned tag) {\n"
                + "  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                + "  atomicAdd(&out[(tag * 31u + i) % " + OUT_N + "u], tag * " + (template ? "M" : "1u") + " + i * 7u);\n}\n}\n"
                + "#define " + mk + " " + ns + "::" + child + (template ? "<" + m + ">" : "") + "\n"
                + (chain ? "#define " + use + " " + mk + "\n" : "") + "#endif\n";
        String cpu = "static void " + child + "_cpu(dim3 gD, dim3 bD, unsigned* out, unsigned tag) {\n  ++fz_launches;\n"
                + "  for (unsigned b = 0; b < gD.x; ++b) for (unsigned t = 0; t < bD.x; ++t) {\n"
                + "    unsigned i = b * bD.x + t;\n    out[(tag * 31u + i) % " + OUT_N + "u] += tag * " + m + " + i * 7u;\n  }\n}\n";
        List<Code> body = new ArrayList<>();
        body.add(Code.same("  if (gt >= n) return;"));
        String tag1 = tag(site, "");
        String cond = chance(0.5) ? "gt % 3 != 2" : "(k + bl) % 2 == 0";
        body.add(new Code("  if (" + cond + ") " + use + "<<<1 + gt % 2, 8>>>(out, " + tag1 + ");",
                "  if (" + cond + ") " + child + "_cpu(dim3(1 + gt % 2), dim3(8), out, " + tag1 + ");"));
        if (chance(0.5)) {
            features.add("kernel-name-macro:return");
            body.add(Code.same("  if (gt % 4 == 3) return;"));
        }
        Child c = anyChild();
        String rm = "FZ_KN" + id + "_R";
        dev += "#ifndef " + rm + "\n#define " + rm + " " + c.name() + "\n#endif\n";
        Code launch = childLaunch(c, "1 + gt % 2", "32", null, "data + gt % 256", tag(site2, ""), "gt % 50", "gt % 2");
        requireLaunchOf(c, launch.device);
        body.add(new Code("  " + launch.device.replace(c.name() + "<<<", rm + "<<<"), "  " + launch.cpu));
        Extra e = perThreadExtra(name, dev + "\n", cpu + "\n", body, 0, GRIDS, BLOCKS, 0);
        return !globalMacro ? e : new Extra(e.name(), e.device().replace("__global__ void " + name + "(", global + " void " + name + "("),
                e.cpu(), e.scratchWords(), e.grid(), e.block(), e.n(), e.k(), e.sites(), e.smem(), e.attrChild());
    }

    /**
     * {@link Shape#LAUNCH_ERROR}: a launch whose configuration some threads make one that no device
     * accepts (a block of 1280 threads, or of depth 65), followed by the program's own check of the
     * launch's error ({@code cudaGetLastError()}, sometimes after {@code cudaPeekAtLastError()}) and a
     * fallback launch with blocks of 256 threads when it was refused; sometimes in a loop of
     * uniform trip count, sometimes into cudaStreamFireAndForget (independent children, whose flush
     * klap may defer past the check: the record and the check before the flush). The refused thread's
     * check must see the error the original launch left, or its fallback never runs: klap cleared
     * it until 2026-11-28 (H200, review reproducer C_launch_err).
     */
    private Extra makeLaunchError(int id) {
        String name = "fz_le" + id;
        String child = "fz_lec" + id;
        int site = siteCount++;
        int site2 = siteCount++;
        boolean deep = chance(0.5);
        boolean peek = chance(0.5);
        boolean loop = chance(0.5);
        // fire-and-forget children are independent: klap may then defer the flush past the check
        boolean ff = chance(0.5);
        String stream = ff ? ", 0, cudaStreamFireAndForget" : "";
        String refuse = chance(0.5) ? "gt % 7 == 3" : "(gt + k) % 5 == 1";
        features.add("launch-error:" + (deep ? "deep" : "wide") + (peek ? ":peek" : "") + (loop ? ":loop" : "")
                + (ff ? ":fire-and-forget" : ""));
        String dev = "__global__ void " + child + "(unsigned* out, unsigned tag) {\n"
                + "  unsigned t = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);\n"
                + "  unsigned i = blockIdx.x * (blockDim.x * blockDim.y * blockDim.z) + t;\n"
                + "  atomicAdd(&out[(tag * 31u + i) % " + OUT_N + "u], tag + i * 7u);\n}\n";
        String cpu = "static void " + child + "_cpu(dim3 gD, dim3 bD, unsigned* out, unsigned tag) {\n  ++fz_launches;\n"
                + "  unsigned nt = bD.x * bD.y * bD.z;\n"
                + "  for (unsigned b = 0; b < gD.x; ++b) for (unsigned t = 0; t < nt; ++t) {\n"
                + "    unsigned i = b * nt + t;\n    out[(tag * 31u + i) % " + OUT_N + "u] += tag + i * 7u;\n  }\n}\n";
        String r = loop ? " + r * 7919" : "";
        String in = loop ? "    " : "  ";
        String block = "fz_le" + id + "_b";
        String err = "fz_le" + id + "_e";
        String refused = deep ? "dim3(2, 2, 65)" : "dim3(1280)";
        List<Code> body = new ArrayList<>();
        body.add(Code.same("  if (gt >= n) return;"));
        if (loop) {
            body.add(Code.same("  for (int r = 0; r < 1 + k % 3; ++r) {"));
        }
        body.add(Code.same(in + "dim3 " + block + " = " + refuse + " ? " + refused + " : dim3(8 + gt % 8);"));
        String volume = "(" + block + ".x * " + block + ".y * " + block + ".z)";
        String fallback = "(" + volume + " + 255u) / 256u";
        body.add(new Code(in + child + "<<<1, " + block + stream + ">>>(out, " + tag(site, r) + ");"
                + (peek ? " (void)cudaPeekAtLastError();" : ""),
                in + "const bool " + err + " = " + volume + " > 1024u || " + block + ".z > 64u;\n"
                        + in + "if (!" + err + ") " + child + "_cpu(dim3(1), " + block + ", out, " + tag(site, r) + ");"));
        body.add(new Code(in + "const cudaError_t " + err + " = cudaGetLastError();\n"
                + in + "if (" + err + " != cudaSuccess) " + child + "<<<" + fallback + ", 256" + stream + ">>>(out, " + tag(site2, r) + ");",
                in + "if (" + err + ") " + child + "_cpu(dim3(" + fallback + "), dim3(256), out, " + tag(site2, r) + ");"));
        if (loop) {
            body.add(Code.same("  }"));
        }
        return perThreadExtra(name, dev + "\n", cpu + "\n", body, 0, GRIDS, BLOCKS, 0);
    }

    /**
     * {@link Shape#HIDDEN_ATTRIBUTE}: a child that some threads launch with 64 KiB of dynamic shared
     * memory (16384 words, the others 256), which it writes at both ends and reads back after a
     * barrier; {@code main} raises the child's {@code cudaFuncAttributeMaxDynamicSharedMemorySize}
     * to 64 KiB where klap cannot see it: through a {@code const void*} variable in a one-file
     * program (klap notes {@code attribute-unresolved}), in main.cu in a two-file one. klap's
     * aggregated forms of the child keep the default 48 KB, so the device refuses a group's or a
     * site's aggregated launch that holds a 64 KiB record: before 2026-11-28 that trapped ("device-side
     * launch failed") where the original ran; now the runtime launches those children as written.
     * Sometimes in a loop of uniform trip count, sometimes into cudaStreamFireAndForget.
     */
    private Extra makeHiddenAttribute(int id) {
        String name = "fz_ha" + id;
        String child = "fz_hac" + id;
        int site = siteCount++;
        boolean loop = chance(0.5);
        boolean ff = chance(0.5);
        String big = new String[] {"gt % 3 == 0", "(gt + k) % 4 == 1", "gt % 7 != 3"}[pick(3)];
        features.add("hidden-attribute" + (loop ? ":loop" : "") + (ff ? ":fire-and-forget" : ""));
        String sm = "fz_hsm" + id;
        String dev = "__global__ void " + child + "(unsigned* out, unsigned tag, unsigned words) {\n"
                + "  extern __shared__ unsigned " + sm + "[];\n"
                + "  unsigned t = threadIdx.x;\n"
                + "  " + sm + "[t] = tag + t * 3u;\n"
                + "  if (t == 0u) " + sm + "[words - 1u] = tag ^ 0x5bd1u;\n"
                + "  __syncthreads();\n"
                + "  unsigned v = " + sm + "[(t + 1u) % blockDim.x] + " + sm + "[words - 1u];\n"
                + "  atomicAdd(&out[(tag * 31u + blockIdx.x * blockDim.x + t) % " + OUT_N + "u], v);\n}\n";
        String cpu = "static void " + child + "_cpu(dim3 gD, dim3 bD, unsigned* out, unsigned tag, unsigned words) {\n"
                + "  ++fz_launches;\n  (void)words;\n  unsigned nt = bD.x;\n"
                + "  for (unsigned b = 0; b < gD.x; ++b) for (unsigned t = 0; t < nt; ++t)\n"
                + "    out[(tag * 31u + b * nt + t) % " + OUT_N + "u] += (tag + ((t + 1u) % nt) * 3u) + (tag ^ 0x5bd1u);\n}\n";
        String words = "fz_hw" + id;
        String r = loop ? " + r * 7919" : "";
        String in = loop ? "    " : "  ";
        List<Code> body = new ArrayList<>();
        body.add(Code.same("  if (gt >= n) return;"));
        if (loop) {
            body.add(Code.same("  for (int r = 0; r < 1 + k % 3; ++r) {"));
        }
        body.add(Code.same(in + "const unsigned " + words + " = (" + big + ") ? 16384u : 256u;"));
        body.add(new Code(in + child + "<<<1 + gt % 2, 32, " + words + " * 4u" + (ff ? ", cudaStreamFireAndForget" : "")
                + ">>>(out, " + tag(site, r) + ", " + words + ");",
                in + child + "_cpu(dim3(1 + gt % 2), dim3(32), out, " + tag(site, r) + ", " + words + ");"));
        if (loop) {
            body.add(Code.same("  }"));
        }
        return perThreadExtra(name, dev + "\n", cpu + "\n", body, 0, GRIDS, BLOCKS, 0).withAttrChild(child);
    }

    /**
     * {@link Shape#LONE_LAUNCHER}: a child launched by one thread of each warp ({@code lt % 32 == 0}),
     * of each block ({@code lt == 0}), or by every thread of blocks of one thread; sometimes a second
     * launch of the same thread right after it (the same guard), sometimes in a loop of uniform trip
     * count, sometimes into cudaStreamFireAndForget. A group of one thread, or one whose scan finds
     * one launch, makes it as written (klap/aggregate.cuh, 2026-11-29).
     */
    private Extra makeLoneLauncher(int id) {
        String name = "fz_ll" + id;
        int site = siteCount++;
        int form = pick(3);
        boolean loop = chance(0.5);
        boolean twice = chance(0.4);
        String stream = chance(0.3) ? "cudaStreamFireAndForget" : null;
        features.add("lone-launcher:" + new String[] {"warp", "block", "one-thread-blocks"}[form] + (loop ? ":loop" : "")
                + (twice ? ":twice" : "") + (stream != null ? ":fire-and-forget" : ""));
        String r = loop ? " + r * 7919" : "";
        String in = loop ? "    " : "  ";
        String guard = new String[] {"if (lt % 32 == 0) ", "if (lt == 0) ", ""}[form];
        List<Code> body = new ArrayList<>();
        if (chance(0.3)) {
            body.add(Code.same("  if (gt >= n) return;"));
        }
        if (loop) {
            body.add(Code.same("  for (int r = 0; r < 1 + k % 3; ++r) {"));
        }
        Child c = anyChild();
        Code first = childLaunch(c, "1 + gt % 2", "1 + (gt * 5 + k) % 64", stream, "data + gt % 256", tag(site, r),
                "gt % 50", loop ? "r % 2" : "0");
        if (twice) {
            int site2 = siteCount++;
            Child c2 = anyChild();
            Code second = childLaunch(c2, "1", "32", stream, "data", tag(site2, r), "(gt + 1) % 50", "0");
            body.add(new Code(in + guard + "{\n" + in + "  " + first.device + "\n" + in + "  " + second.device + "\n" + in + "}",
                    in + guard + "{\n" + in + "  " + first.cpu + "\n" + in + "  " + second.cpu + "\n" + in + "}"));
        } else {
            body.add(new Code(in + guard + first.device, in + guard + first.cpu));
        }
        if (loop) {
            body.add(Code.same("  }"));
        }
        String[] grids = form == 2 ? new String[] {"8", "33", "dim3(4, 3)"} : GRIDS;
        String[] blocks = form == 2 ? new String[] {"1"} : new String[] {"32", "64", "96", "dim3(8, 4)", "dim3(32, 2)"};
        return perThreadExtra(name, "", "", body, 0, grids, blocks, 0);
    }

    /**
     * {@link Shape#SPACED_CHEVRONS}: one or two launches written with the spaced chevrons nvcc accepts
     * ({@code k << <g, b >> >(a)}, a tab, a comment, or a newline inside the closer), in straight
     * code, after a guard or in a loop of uniform trip count.
     */
    private Extra makeSpacedChevrons(int id) {
        String name = "fz_sc" + id;
        String[] openers = {"<< <", "<<\t<", "<< /* klap */ <", "<<  <"};
        String[] closers = {">> >", ">>\t>", ">> /* klap */ >", ">>\n        >"};
        int o = pick(openers.length);
        int cl = pick(closers.length);
        boolean loop = chance(0.4);
        boolean guard = chance(0.4);
        boolean twice = chance(0.4);
        features.add("spaced-chevrons:" + new String[] {"space", "tab", "comment", "spaces"}[o] + ":"
                + new String[] {"space", "tab", "comment", "newline"}[cl] + (loop ? ":loop" : "") + (guard ? ":guard" : "")
                + (twice ? ":twice" : ""));
        String in = loop ? "    " : "  ";
        String r = loop ? " + r * 7919" : "";
        List<Code> body = new ArrayList<>();
        guardAndLoop(body, guard, loop, "r");
        int site = siteCount++;
        body.add(spaced(childLaunch(anyChild(), "1 + gt % 2", "1 + (gt * 3 + k) % 64", chance(0.3) ? "cudaStreamFireAndForget" : null,
                "data + gt % 256", tag(site, r), "gt % 50", "0"), openers[o], closers[cl]).indent(in));
        if (twice) {
            int site2 = siteCount++;
            body.add(spaced(childLaunch(anyChild(), "1", "32", null, "data", tag(site2, r), "(gt + 1) % 50", "0"),
                    openers[(o + 1) % openers.length], closers[(cl + 1) % closers.length]).indent(in + "if (gt % 3 != 1) "));
        }
        if (loop) {
            body.add(Code.same("  }"));
        }
        return perThreadExtra(name, "", "", body, 0, GRIDS, BLOCKS, 0);
    }

    /**
     * {@link Shape#DEDUCED_TEMPLATE}: a template child {@code template <typename T, typename U>
     * __global__ void fz_tdcN(U* out, const T* src, T w, unsigned tag)} launched without template
     * arguments, with the parent's parameters {@code out} ({@code unsigned*}) and {@code data}
     * ({@code const int*}) and a weight that is the parameter {@code k} (deduces {@code int} too) or
     * a per-thread {@code (int)...} (deduces nothing; {@code data} does); sometimes {@code data +
     * offset} (a pointer plus an offset: deduces like {@code data}), with {@code k}. After a guard, in a loop of uniform trip count,
     * into {@code cudaStreamFireAndForget}. Sometimes the child has a third template parameter
     * {@code unsigned S} that scales the sum and that no parameter names, left to its default, which
     * the child's header or only a prototype gives. The CPU reference is the same template.
     */
    private Extra makeDeducedTemplate(int id) {
        String name = "fz_td" + id;
        String child = "fz_tdc" + id;
        int site = siteCount++;
        int form = pick(3);
        boolean loop = chance(0.4);
        boolean guard = chance(0.5);
        boolean ff = chance(0.3);
        String block = new String[] {"32", "1 + gt % 40", "64"}[pick(3)];
        // from a generator of its own, so that a kernel of this shape that does not draw it keeps its
        // text and the program its other draws (2026-11-30): a non-type template parameter that no
        // child parameter names, left to its default (given by the child's header or only by a prototype)
        Random own = new Random(seed * 1_000_003L + id);
        int defaulted = own.nextInt(3);
        String sv = (2 + own.nextInt(3)) + "u";
        features.add("deduced-template:" + new String[] {"all", "weight-per-thread", "offset-source"}[form]
                + (loop ? ":loop" : "") + (guard ? ":guard" : "") + (ff ? ":fire-and-forget" : "")
                + new String[] {"", ":default", ":prototype-default"}[defaulted]);
        String tp = defaulted == 0 ? "typename T, typename U" : "typename T, typename U, unsigned S";
        String scale = defaulted == 0 ? "" : " * S";
        String proto = defaulted == 2 ? "template <" + tp + " = " + sv + ">\n__global__ void " + child
                + "(U* out, const T* src, T w, unsigned tag);\n" : "";
        String dev = proto + "template <" + tp + (defaulted == 1 ? " = " + sv : "") + ">\n__global__ void " + child
                + "(U* out, const T* src, T w, unsigned tag) {\n"
                + "  unsigned t = threadIdx.x, b = blockIdx.x;\n"
                + "  atomicAdd(&out[(tag * 31u + b * blockDim.x + t) % " + OUT_N + "u], (unsigned)src[(t + b) % 64u] * (unsigned)w" + scale + " + t);\n}\n";
        String cpu = "template <" + tp + (defaulted == 0 ? "" : " = " + sv) + ">\nstatic void " + child
                + "_cpu(dim3 gD, dim3 bD, U* out, const T* src, T w, unsigned tag) {\n"
                + "  ++fz_launches;\n"
                + "  for (unsigned b = 0; b < gD.x; ++b) for (unsigned t = 0; t < bD.x; ++t)\n"
                + "    out[(tag * 31u + b * bD.x + t) % " + OUT_N + "u] += (unsigned)src[(t + b) % 64u] * (unsigned)w" + scale + " + t;\n}\n";
        String r = loop ? " + r * 7919" : "";
        String in = loop ? "    " : "  ";
        String src = form == 2 ? "data + gt % 128" : "data";
        String w = form == 1 ? "(int)(gt % 13)" : "k";
        String grid = "1 + gt % 2";
        List<Code> body = new ArrayList<>();
        guardAndLoop(body, guard, loop, "r");
        String args = "(out, " + src + ", " + w + ", " + tag(site, r) + ");";
        body.add(new Code(in + child + "<<<" + grid + ", " + block + (ff ? ", 0, cudaStreamFireAndForget" : "") + ">>>" + args,
                in + child + "_cpu(dim3(" + grid + "), dim3(" + block + "), " + args.substring(1)));
        if (loop) {
            body.add(Code.same("  }"));
        }
        return perThreadExtra(name, dev + "\n", cpu + "\n", body, 0, GRIDS, BLOCKS, 0);
    }

    /**
     * {@link Shape#EXCLUSIVE_LAUNCHES}: a launch and another that no thread runs both of, the second
     * in a loop of per-thread trip count (in place: it goes out at once): the two branches of an
     * {@code if}/{@code else}, of an {@code if}/{@code else if}, two cases of a {@code switch} with
     * a {@code break} between them, or an {@code if} whose launch is followed by a {@code return}
     * with the loop after it. Sometimes after a guard, or in a loop of uniform trip count (the
     * region is then in the loop, flushed on every pass).
     */
    private Extra makeExclusiveLaunches(int id) {
        String name = "fz_ex" + id;
        int form = pick(4);
        boolean guard = chance(0.4);
        boolean loop = form != 3 && chance(0.3);
        features.add("exclusive-launches:" + new String[] {"if-else", "else-if", "switch", "if-return"}[form]
                + (guard ? ":guard" : "") + (loop ? ":loop" : ""));
        String in = loop ? "    " : "  ";
        String r = loop ? " + q * 7919" : "";
        List<Code> body = new ArrayList<>();
        guardAndLoop(body, guard, loop, "q");
        int site = siteCount++;
        Code first = childLaunch(anyChild(), "1 + gt % 2", "1 + (gt * 5 + k) % 48", null, "data + gt % 256", tag(site, r),
                "gt % 50", "0");
        int site2 = siteCount++;
        Code second = childLaunch(anyChild(), "1", "1 + gt % 32", null, "data + (gt + 3) % 256",
                tag(site2, r + " + rr * 131"), "(gt + rr) % 50", "0");
        String loopHead = "for (int rr = 0; rr < gt % 3; ++rr) ";
        String cond = "(gt * 7 + k) % 3 == 0";
        switch (form) {
            case 0, 1 -> {
                String otherCond = form == 0 ? " else { " : " else if (gt % 2 == 1) { ";
                body.add(new Code(in + "if (" + cond + ") { " + first.device + " }" + otherCond + loopHead + second.device + " }",
                        in + "if (" + cond + ") { " + first.cpu + " }" + otherCond + loopHead + second.cpu + " }"));
            }
            case 2 -> body.add(new Code(in + "switch ((gt * 7 + k) % 4) { case 0: " + first.device + " break; case 2: "
                    + loopHead + second.device + " break; default: break; }",
                    in + "switch ((gt * 7 + k) % 4) { case 0: " + first.cpu + " break; case 2: " + loopHead + second.cpu
                    + " break; default: break; }"));
            default -> {
                body.add(new Code(in + "if (" + cond + ") { " + first.device + " return; }",
                        in + "if (" + cond + ") { " + first.cpu + " return; }"));
                body.add(new Code(in + loopHead + second.device, in + loopHead + second.cpu));
            }
        }
        if (loop) {
            body.add(Code.same("  }"));
        }
        return perThreadExtra(name, "", "", body, 0, GRIDS, BLOCKS, 0);
    }

    /**
     * {@link Shape#IMPLICIT_CALLS}: calls that C++ makes without a call expression. In the parent, a
     * child argument that an overloaded operator computes from uniform-looking operands ({@code a + b}
     * whose {@code operator+} adds {@code threadIdx.x % 5}) or writes ({@code ia << gt % 7} through a
     * non-const member, {@code gt % 5 >> ia} through {@code operator>>(int, FzIa&)}) or a conversion
     * function converts ({@code int iv = il;} with {@code operator int()} adding {@code threadIdx.x % 3}, or
     * {@code operator T()} of a class template), or a non-const {@code operator->} writes; or a child of
     * its own that reads the indices through a constructor, a functor's {@code operator()} or a
     * default member initializer. The CPU reference has twin classes of its own, whose operators read
     * the thread index from a static the reference sets per thread.
     */
    private Extra makeImplicitCalls(int id) {
        String name = "fz_ic" + id;
        int form = pick(9);
        boolean guard = chance(0.4);
        boolean loop = chance(0.3);
        features.add("implicit-calls:" + new String[] {"operator-reads-indices", "member-operator-writes",
            "operator-writes-reference", "child-constructor", "child-functor", "child-member-initializer",
            "conversion-reads-indices", "template-conversion", "arrow-writes"}[form]
                + (guard ? ":guard" : "") + (loop ? ":loop" : ""));
        String in = loop ? "    " : "  ";
        String r = loop ? " + q * 7919" : "";
        String cls = "FzI" + id;
        String tx = "fz_ic_tx" + id;
        StringBuilder dev = new StringBuilder();
        StringBuilder cpu = new StringBuilder(form == 0 || form == 6 || form == 7 ? "static unsigned " + tx + ";\n" : "");
        List<Code> body = new ArrayList<>();
        guardAndLoop(body, guard, loop, "q");
        int site = siteCount++;
        if (form < 3 || form >= 6) {
            String value;
            switch (form) {
                case 7 -> {
                    twinClasses(dev, cpu, "template <class T> struct @C { T b; @Qoperator T() const { return b + (T)(@T % 3u); } };\n",
                            cls, tx, "");
                    body.add(twinCode(in + cls + "<int> il; il.b = k; int iv = (il);", cls, tx));
                    value = "iv % 50";
                }
                case 8 -> {
                    twinClasses(dev, cpu, "struct @C { int v; @Q@C* operator->() { return this; } };\n", cls, tx, "");
                    body.add(twinCode(in + cls + " is; is.v = k; is->v += (int)(gt % 7);", cls, null));
                    value = "is.v % 50";
                }
                case 6 -> {
                    twinClasses(dev, cpu, "struct @C { int base; @Qoperator int() const { return base + (int)(@T % 3u); } };\n",
                            cls, tx, "");
                    boolean cast = chance(0.5);
                    body.add(twinCode(in + cls + " il; il.base = k; int iv = " + (cast ? "(int)il + 1" : "il") + ";", cls, tx));
                    value = "iv % 50";
                }
                case 0 -> {
                    twinClasses(dev, cpu, "struct @C { int x; };\n@Q@C operator+(@C a, @C b) { @C s; s.x = a.x + b.x + (int)(@T % 5u); "
                            + "return s; }\n", cls, tx, "static ");
                    body.add(twinCode(in + cls + " ia, ib; ia.x = k; ib.x = 3; " + cls + " ic = ia + ib;", cls, tx));
                    value = "ic.x % 50";
                }
                case 1 -> {
                    twinClasses(dev, cpu, "struct @C { int s; @Q@C& operator<<(int v) { s = s * 3 + v; return *this; } };\n",
                            cls, tx, "");
                    body.add(twinCode(in + cls + " ia; ia.s = k; ia << (int)(gt % 7);", cls, null));
                    value = "ia.s % 50";
                }
                default -> {
                    twinClasses(dev, cpu, "struct @C { int s; };\n@Qvoid operator>>(int v, @C& a) { a.s += 2 * v + 1; }\n",
                            cls, tx, "static ");
                    body.add(twinCode(in + cls + " ia; ia.s = 1; (int)(gt % 5) >> ia;", cls, null));
                    value = "ia.s % 50";
                }
            }
            Child ch = anyChild();
            body.add(indent(childLaunch(ch, "1 + gt % 2", "1 + (gt * 3 + k) % 48", null, "data + gt % 256",
                    tag(site, r), value, "0"), in));
            if (reviewForms.nextInt(5) < 2) {
                // a temporary whose constructor reads the thread index (review 2026-12-01: Tile(width).row was taken
                // as uniform), drawn from a generator of its own: programs that draw none stay as they were
                String tcls = cls + "T";
                if (!(form == 0 || form == 6 || form == 7)) {
                    cpu.insert(0, "static unsigned " + tx + ";\n");
                }
                twinClasses(dev, cpu, "struct @C { int v; @Q@C(int k0) : v(k0 + (int)(@T % 5u)) {} };\n", tcls, tx, "");
                body.add(twinCode(in + "int itv = " + tcls + "(k).v;", tcls, tx));
                body.add(indent(childLaunch(ch, "1 + gt % 2", "32", null, "data + (gt + 1) % 256", tag(siteCount++, r),
                        "itv % 50", "0"), in));
                features.add("implicit-calls:temporary");
            }
        } else {
            String child = "fz_icc" + id;
            String read = switch (form) {
                case 3 -> {
                    dev.append("struct ").append(cls).append(" { unsigned g; __device__ ").append(cls)
                            .append("() : g(threadIdx.x + 7u * blockIdx.x) {} };\n");
                    yield "  " + cls + " o; unsigned g = o.g;\n";
                }
                case 4 -> {
                    dev.append("struct ").append(cls)
                            .append(" { __device__ unsigned operator()(unsigned m) const { return threadIdx.x + m * blockIdx.x; } };\n");
                    yield "  " + cls + " f; unsigned g = f(7u);\n";
                }
                default -> {
                    dev.append("struct ").append(cls).append(" { unsigned g = threadIdx.x + 7u * blockIdx.x; };\n");
                    yield "  " + cls + " o; unsigned g = o.g;\n";
                }
            };
            dev.append("__global__ void ").append(child).append("(unsigned* out, unsigned tag, int a) {\n").append(read)
                    .append("  atomicAdd(&out[(tag * 31u + g) % ").append(OUT_N).append("u], g * 3u + (unsigned)a);\n}\n");
            cpu.append("static void ").append(child).append("_cpu(dim3 gD, dim3 bD, unsigned* out, unsigned tag, int a) {\n")
                    .append("  ++fz_launches;\n")
                    .append("  for (unsigned b = 0; b < gD.x; ++b) for (unsigned t = 0; t < bD.x; ++t) {\n")
                    .append("    unsigned g = t + 7u * b;\n")
                    .append("    out[(tag * 31u + g) % ").append(OUT_N).append("u] += g * 3u + (unsigned)a;\n  }\n}\n");
            String grid = "1 + gt % 2";
            String block = "1 + (gt * 3 + k) % 40";
            String args = "(out, " + tag(site, r) + ", (int)(gt % 50));";
            body.add(new Code(in + child + "<<<" + grid + ", " + block + ">>>" + args,
                    in + child + "_cpu(dim3(" + grid + "), dim3(" + block + "), " + args.substring(1)));
        }
        if (loop) {
            body.add(Code.same("  }"));
        }
        return perThreadExtra(name, dev + "\n", cpu + "\n", body, 0, GRIDS, BLOCKS, 0);
    }

    /** the forms of {@link Shape#LIBRARY_COLLECTIVES}, as its features name them */
    private static final String[] LIBRARY_FORMS = {"cg-shfl", "cg-ballot", "cg-any", "cg-all", "cub-block-reduce", "cub-warp-reduce"};

    /**
     * {@link Shape#LIBRARY_COLLECTIVES} ("Bugs found", item 13): a 1-D parent of 32 to 128 threads a
     * block (whole warps) whose {@code if (gt >= n) return;} leaves trailing threads of its last block
     * (n is never a multiple of 32: a warp keeps some lanes), then one collective of a library klap
     * does not read, then a launch whose configuration, argument and tag use its result {@code v}:
     * cooperative groups' {@code tile.shfl(x, 0)}, {@code tile.ballot(p)}, {@code tile.any(p)} or
     * {@code tile.all(p)}, the tile a {@code tiled_partition<32>} of the block taken before the
     * return (lane 0 stays whenever a lane does; exited lanes give no ballot bit and do not count in
     * {@code all}); or CUB's {@code BlockReduce<int, B>(temp).Sum(x, valid)} (B the parent's block) or
     * {@code WarpReduce<int>(temp[lt / 32]).Sum(x, valid)}, {@code valid} the threads of the block or
     * warp that stayed, whose sum only thread or lane 0 reads (the others pass their {@code x}). The
     * collective may sit in a {@code __device__} function the kernel calls, and a CUB class may be
     * named through a {@code using} alias. The CPU reference computes each from {@code x} of the
     * warp's or block's threads below n; x is a function of the global index, written once more as a
     * CPU helper.
     */
    private Extra makeLibraryCollectives(int id) {
        String name = "fz_lc" + id;
        int form = pick(LIBRARY_FORMS.length);
        int block = 32 * (1 + pick(4));
        int grid = 1 + pick(3);
        // the last block keeps r threads, r not a multiple of 32: one warp keeps some of its lanes
        int n = (grid - 1) * block + 32 * pick(block / 32) + 1 + pick(31);
        int m = new int[] {2, 3, 5, 13, 61}[pick(5)];
        boolean autoTile = chance(0.5);
        boolean divergent = chance(0.35);
        String stream = chance(0.3) ? "cudaStreamFireAndForget" : null;
        boolean cub = form >= 4;
        boolean alias = cub && chance(0.4);
        boolean inFunction = chance(0.3);
        features.add("library-collectives:" + LIBRARY_FORMS[form] + (alias ? ":alias" : "") + (inFunction ? ":device-function" : "")
                + (divergent ? ":divergent" : ""));
        String x = "data[@G % " + DATA_N + "] % 97 + @G % 5 + k";
        String xc = "fz_lcx" + id + "_cpu";
        String temp = "fz_lct" + id;
        String fn = "fz_lcf" + id;
        StringBuilder dev = new StringBuilder();
        List<String> headers = !cub ? List.of("#include <cooperative_groups.h>\n", "namespace cg = cooperative_groups;\n")
                : List.of(form == 4 ? "#include <cub/block/block_reduce.cuh>\n" : "#include <cub/warp/warp_reduce.cuh>\n");
        for (String h : headers) {
            if (libraryHeaders.add(h)) {
                dev.append(h);
            }
        }
        // the CUB class, through an alias or as written; the collective's value, in the kernel or in fn
        String type = form == 4 ? "cub::BlockReduce<int, " + block + ">" : "cub::WarpReduce<int>";
        if (alias) {
            String a = (form == 4 ? "FzBr" : "FzWr") + id;
            dev.append("using ").append(a).append(" = ").append(type).append(";\n");
            type = a;
        }
        String value = switch (form) {
            case 0 -> "tile.shfl(x, 0)";
            case 1 -> "(int)(tile.ballot(x % " + m + " == 0) % 8191u)";
            case 2 -> "(tile.any(x % " + m + " == 0) ? 1 : 0)";
            case 3 -> "(tile.all(x % " + m + " != 0) ? 1 : 0)";
            default -> type + "(t).Sum(x, valid)";
        };
        String args = cub ? (form == 4 ? temp : temp + "[lt / 32]") + ", x, valid" : "tile, x";
        if (inFunction) {
            dev.append("__device__ int ").append(fn).append("(")
                    .append(cub ? "typename " + type + "::TempStorage& t, int x, int valid" : "cg::thread_block_tile<32> tile, int x")
                    .append(") {\n  return ").append(value).append(";\n}\n");
            value = fn + "(" + args + ")";
        } else if (cub) {
            value = value.replace("(t)", "(" + args.substring(0, args.indexOf(',')) + ")");
        }
        String cpu = "static int " + xc + "(const int* data, int g, int k) { return " + x.replace("@G", "g") + "; }\n";
        // the alive lanes of the thread's warp (the CPU reference's loops)
        String lanes = "for (int g = gt - lt % 32; g < gt - lt % 32 + 32 && g < n; ++g) ";
        List<Code> body = new ArrayList<>();
        if (!cub) {
            body.add(new Code("  " + (autoTile ? "auto" : "cg::thread_block_tile<32>")
                    + " tile = cg::tiled_partition<32>(cg::this_thread_block());", ""));
        } else {
            body.add(new Code("  __shared__ typename " + type + "::TempStorage " + temp + (form == 4 ? "" : "[" + block / 32 + "]") + ";", ""));
        }
        body.add(Code.same("  if (gt >= n) return;"));
        body.add(new Code("  int x = " + x.replace("@G", "gt") + ";", "  int x = " + xc + "(data, gt, k);"));
        String p = "(" + xc + "(data, g, k) % " + m + " == 0)";
        body.add(switch (form) {
            case 0 -> new Code("  int v = " + value + ";", "  int v = " + xc + "(data, gt - lt % 32, k);");
            case 1 -> new Code("  int v = " + value + ";",
                    "  unsigned b = 0u;\n  " + lanes + "if " + p + " b |= 1u << (g - (gt - lt % 32));\n  int v = (int)(b % 8191u);");
            case 2 -> new Code("  int v = " + value + ";", "  int v = 0;\n  " + lanes + "if " + p + " v = 1;");
            case 3 -> new Code("  int v = " + value + ";", "  int v = 1;\n  " + lanes + "if " + p + " v = 0;");
            case 4 -> new Code("  int valid = min((int)blockDim.x, n - bl * (int)blockDim.x);\n  int s = " + value + ";\n  int v = lt == 0 ? s : x;",
                    "  int s = 0;\n  for (int g = bl * (int)bD.x; g < (bl + 1) * (int)bD.x && g < n; ++g) s += " + xc
                            + "(data, g, k);\n  int v = lt == 0 ? s : x;");
            default -> new Code("  int valid = min(32, n - (gt - lt % 32));\n  int s = " + value + ";\n  int v = lt % 32 == 0 ? s : x;",
                    "  int s = 0;\n  " + lanes + "s += " + xc + "(data, g, k);\n  int v = lt % 32 == 0 ? s : x;");
        });
        int site = siteCount++;
        Code launch = childLaunch(anyChild(), "1 + gt % 2", "1 + (v + gt) % 48", stream, "data + (v + gt) % 256",
                tag(site, " + v * 13"), "(v * 7 + gt) % 50", "v % 2");
        body.add(launch.indent(divergent ? "  if ((v + gt) % 3 != 0) " : "  "));
        Extra e = perThreadExtra(name, dev + "\n", cpu + "\n", body, 0, new String[] {String.valueOf(grid)},
                new String[] {String.valueOf(block)}, 0);
        return new Extra(e.name(), e.device(), e.cpu(), 0, e.grid(), e.block(), n, e.k(), 0);
    }

    /**
     * Adds the opening of a shape's kernel body: with {@code guard}, the divergent {@code if (gt >= n)
     * return;}; with {@code loop}, the head of a loop of uniform trip count {@code 1 + k % 3} over
     * {@code var} (the caller closes it).
     */
    private static void guardAndLoop(List<Code> body, boolean guard, boolean loop, String var) {
        if (guard) {
            body.add(Code.same("  if (gt >= n) return;"));
        }
        if (loop) {
            body.add(Code.same("  for (int " + var + " = 0; " + var + " < 1 + k % 3; ++" + var + ") {"));
        }
    }

    /**
     * Appends a class of {@link Shape#IMPLICIT_CALLS} to the device code as {@code cls} and to the CPU
     * reference as its twin {@code cls + "c"}: in {@code text}, {@code @C} is the class name, {@code @Q}
     * the function qualifier ({@code __device__ } on the device, {@code cpuQualifier} on the CPU) and
     * {@code @T} the thread index ({@code threadIdx.x} on the device, the static {@code tx} the CPU
     * reference sets per thread).
     */
    private static void twinClasses(StringBuilder dev, StringBuilder cpu, String text, String cls, String tx, String cpuQualifier) {
        dev.append(text.replace("@C", cls).replace("@Q", "__device__ ").replace("@T", "threadIdx.x"));
        cpu.append(text.replace("@C", cls + "c").replace("@Q", cpuQualifier).replace("@T", tx));
    }

    /**
     * @return the parent statement {@code device} and its CPU twin, which names the twin class {@code
     *         cls + "c"} and, where {@code tx} is not null, first sets the thread index its operators read
     */
    private static Code twinCode(String device, String cls, String tx) {
        String cpu = device.replace(cls, cls + "c");
        if (tx != null) {
            int lead = cpu.length() - cpu.stripLeading().length();
            cpu = cpu.substring(0, lead) + tx + " = tI.x; " + cpu.substring(lead);
        }
        return new Code(device, cpu);
    }

    /** {@code c} with its launch's {@code <<<} and {@code >>>} written as {@code opener} and {@code closer}. */
    private static Code spaced(Code c, String opener, String closer) {
        int i = c.device.indexOf("<<<");
        int j = c.device.indexOf(">>>(", i);
        if (i < 0 || j < 0) {
            throw new IllegalStateException("expected a launch in: " + c.device);
        }
        return new Code(c.device.substring(0, i) + " " + opener + c.device.substring(i + 3, j) + " " + closer + " "
                + c.device.substring(j + 3), c.cpu);
    }

    private static void requireLaunchOf(Child c, String device) {
        if (!device.contains(c.name() + "<<<")) {
            throw new IllegalStateException("expected a launch of " + c.name() + " in: " + device);
        }
    }

    /**
     * {@link Shape#PARAM_FORMS}: a child whose parameters are declared in the forms C++ adjusts or
     * leaves unnamed: an array ({@code const int d[8]} or {@code const int d[]}), an array of arrays,
     * a function ({@code unsigned g(unsigned)}), an unnamed {@code int}, a {@code __grid_constant__}
     * struct and a trailing default argument that one launch leaves out. The parent passes each
     * thread a different function and struct, so the forms travel per record and as scalars. The CPU
     * reference declares the same forms (plain C++, {@code __grid_constant__} dropped).
     */
    private Extra makeParamForms(int id) {
        String name = "fz_pf" + id;
        String child = "fz_pfc" + id;
        String st = "FzPf" + id;
        int site = siteCount++;
        int site2 = siteCount++;
        String dDecl = switch (pick(3)) {
            case 0 -> "const int d[8]";
            case 1 -> "const int d[]";
            default -> "const int* d";
        };
        int dflt = 1 + pick(9);
        features.add("param-forms:" + dDecl.replace("const int", "").strip().replace(" ", ""));
        // once per translation unit: a one-file program holds both the device code and the reference
        String defs = "#ifndef FZ_PF_S" + id + "\n#define FZ_PF_S" + id + "\nstruct " + st + " { unsigned c[2]; };\n#endif\n";
        String fns = "unsigned " + name + "_a(unsigned x) { return x * 3u + 1u; }\n"
                + "unsigned " + name + "_b(unsigned x) { return x ^ 0x5bd1u; }\n";
        String params = "unsigned* out, " + dDecl + ", const int m[][4], unsigned g(unsigned), int, @GC" + st
                + " s, unsigned tag, unsigned dflt = " + dflt + "u";
        String sum = "(unsigned)d[t % 8u] + (unsigned)m[t % 2u][t % 4u] + g(tag + t) + s.c[t % 2u] + dflt * 17u";
        String dev = defs + "__device__ " + fns.replace("\nunsigned ", "\n__device__ unsigned ")
                + "__global__ void " + child + "(" + params.replace("@GC", "const __grid_constant__ ") + ") {\n"
                + "  unsigned t = blockIdx.x * blockDim.x + threadIdx.x;\n"
                + "  atomicAdd(&out[(tag * 31u + t) % " + OUT_N + "u], " + sum + ");\n}\n";
        String cpu = defs + "static " + fns.replace("\nunsigned ", "\nstatic unsigned ").replace("_a(", "_a_cpu(")
                .replace("_b(", "_b_cpu(")
                + "static void " + child + "_cpu(dim3 gD, dim3 bD, " + params.replace("@GC", "const ") + ") {\n  ++fz_launches;\n"
                + "  for (unsigned b = 0; b < gD.x; ++b) for (unsigned i = 0; i < bD.x; ++i) {\n"
                + "    unsigned t = b * bD.x + i;\n    out[(tag * 31u + t) % " + OUT_N + "u] += " + sum + ";\n  }\n}\n";
        List<Code> body = new ArrayList<>();
        body.add(Code.same("  " + st + " fz_s; fz_s.c[0] = (unsigned)gt * 7u; fz_s.c[1] = (unsigned)k + 11u;"));
        body.add(Code.same("  if (gt < n) {"));
        String fn = "gt % 2 ? " + name + "_a@ : " + name + "_b@";
        String common = "out, data + gt % 64, (const int (*)[4])data, ";
        String tag1 = "(unsigned)(" + (site + 1) + " * 100003 + gt * 31)";
        body.add(new Code("    " + child + "<<<1 + gt % 2, 8>>>(" + common + fn.replace("@", "") + ", gt, fz_s, " + tag1 + ");",
                "    " + child + "_cpu(dim3(1 + gt % 2), dim3(8), " + common + fn.replace("@", "_cpu") + ", gt, fz_s, " + tag1 + ");"));
        String cond = chance(0.5) ? "gt % 3 == 0" : "(k + bl) % 2 == 0";
        String tag2 = "(unsigned)(" + (site2 + 1) + " * 100003 + gt * 31)";
        body.add(new Code("    if (" + cond + ") " + child + "<<<1, 4>>>(" + common + name + "_b, -gt, fz_s, " + tag2 + ", (unsigned)gt);",
                "    if (" + cond + ") " + child + "_cpu(dim3(1), dim3(4), " + common + name + "_b_cpu, -gt, fz_s, " + tag2
                        + ", (unsigned)gt);"));
        body.add(Code.same("  }"));
        return perThreadExtra(name, dev + "\n", cpu + "\n", body, 0, GRIDS, BLOCKS, 0);
    }

    /**
     * {@link Shape#ALIASES}: a per-thread value reaches a local only through an alias that is not
     * a plain assignment, and a launch passes that local (so klap must not scalarize it): a store
     * through a per-thread choice of target ({@code (gt % 2 ? x : y) = gt}), a class whose
     * constructor keeps a reference ({@code FzRef r(x); r.set(gt);}), an array member decayed to a
     * pointer ({@code fz_fill(s.c, gt)}), a reference range-for over an array member, and a store
     * through the decayed member ({@code *s.c = gt}). The CPU reference runs the same code.
     */
    private Extra makeAliases(int id) {
        String name = "fz_al" + id;
        String child = "fz_alc" + id;
        String st = "FzAl" + id;
        String guard = "FZ_AL_S" + id;
        String defs = "#ifndef " + guard + "\n#define " + guard + "\nstruct " + st + " { unsigned c[4]; };\n"
                + "struct FzRef" + id + " { unsigned& v; __host__ __device__ FzRef" + id + "(unsigned& x) : v(x) {} "
                + "__host__ __device__ void set(unsigned a) { v = a; } };\n"
                + "__host__ __device__ inline void fz_fill" + id + "(unsigned* p, unsigned v) { p[1] = v; }\n#endif\n";
        String dev = defs + "__global__ void " + child + "(unsigned* out, unsigned tag, unsigned v, " + st + " s) {\n"
                + "  unsigned t = threadIdx.x;\n"
                + "  atomicAdd(&out[(tag * 31u + t) % " + OUT_N + "u], v * 3u + s.c[t % 4u]);\n}\n";
        String cpu = defs + "static void " + child + "_cpu(dim3 gD, dim3 bD, unsigned* out, unsigned tag, unsigned v, " + st
                + " s) {\n  ++fz_launches;\n  for (unsigned b = 0; b < gD.x; ++b) for (unsigned i = 0; i < bD.x; ++i) {\n"
                + "    unsigned t = i;\n    out[(tag * 31u + t) % " + OUT_N + "u] += v * 3u + s.c[t % 4u];\n  }\n}\n";
        List<Code> body = new ArrayList<>();
        body.add(Code.same("  unsigned fz_x = 1u, fz_y = 2u; " + st + " fz_s; fz_s.c[0] = fz_s.c[1] = fz_s.c[2] = fz_s.c[3] = 5u;"));
        List<String> forms = new ArrayList<>();
        if (chance(0.5)) {
            forms.add("cond");
            body.add(Code.same("  (gt % 2 ? fz_x : fz_y) = (unsigned)gt;"));
        }
        if (chance(0.5)) {
            forms.add("ctor-ref");
            body.add(Code.same("  { FzRef" + id + " fz_r(fz_x); fz_r.set((unsigned)gt * 5u); }"));
        }
        if (chance(0.5)) {
            forms.add("decay");
            body.add(Code.same("  fz_fill" + id + "(fz_s.c, (unsigned)gt);"));
        }
        if (chance(0.4)) {
            forms.add("range-for");
            body.add(Code.same("  for (unsigned& fz_e : fz_s.c) fz_e += (unsigned)gt & 3u;"));
        }
        if (forms.isEmpty() || chance(0.3)) {
            forms.add("deref");
            body.add(Code.same("  *fz_s.c = (unsigned)gt * 7u;"));
        }
        features.add("aliases:" + String.join("+", forms));
        int site = siteCount++;
        String tag = "(unsigned)(" + (site + 1) + " * 100003 + gt * 31)";
        String cond = chance(0.5) ? "gt < n" : "gt < n && gt % 3 != 1";
        body.add(new Code("  if (" + cond + ") " + child + "<<<1, 4>>>(out, " + tag + ", fz_x + fz_y, fz_s);",
                "  if (" + cond + ") " + child + "_cpu(dim3(1), dim3(4), out, " + tag + ", fz_x + fz_y, fz_s);"));
        return perThreadExtra(name, dev + "\n", cpu + "\n", body, 0, GRIDS, BLOCKS, 0);
    }

    /**
     * {@link Shape#COND_ASSIGN}: a per-thread binary search whose bounds move through {@code ?:}
     * assignments, locals assigned in the right operand of {@code &&} / {@code ||} under
     * thread-dependent conditions, sometimes a skip flag set that way and returned on, then a launch
     * (or a loop of launches bounded by the search's result) passing those values.
     */
    private Extra makeCondAssign(int id) {
        String name = "fz_ca" + id;
        int site = siteCount++;
        Child c = anyChild();
        List<Code> body = new ArrayList<>();
        List<String> forms = new ArrayList<>();
        if (chance(0.5)) {
            body.add(Code.same("  if (gt >= n) return;"));
        }
        body.add(Code.same("  int lo = 0, hi = " + (16 + pick(48)) + ";"));
        body.add(Code.same("  for (int it = 0; it < 6 && lo < hi; ++it) { int m = (lo + hi) / 2; "
                + "(data[(m + k) % 1000] % 64 + 64) % 64 <= gt % 64 ? (lo = m + 1) : (hi = m); }"));
        forms.add("ternary");
        body.add(Code.same("  int fz_a = k, fz_b = k;"));
        if (chance(0.5)) {
            body.add(Code.same("  (gt % 3 == 0) && (fz_a = gt);"));
            forms.add("and");
        }
        if (chance(0.5)) {
            body.add(Code.same("  (gt % 4 == 1) || (fz_b = gt * 2);"));
            forms.add("or");
        }
        if (chance(0.35)) {
            body.add(Code.same("  int fz_skip = 0; data[(gt * 7) % 1000] % 5 == 0 ? (fz_skip = 1) : 0;"));
            body.add(Code.same("  if (fz_skip) return;"));
            forms.add("skip-return");
        }
        String cond = "if ((gt + lo) % " + (2 + pick(2)) + " != 0) ";
        if (chance(0.35)) {
            forms.add("loop-bound");
            body.add(Code.same("  for (int j = lo; j < lo + (hi - lo + fz_a) % 3; ++j) {"));
            Code launch = childLaunch(c, "1 + j % 2", "32", null, "data + (j + fz_b) % 256", tag(site, " + j * 7919"),
                    "(j + fz_a) % 50", "hi % 2");
            body.add(new Code("    " + cond + launch.device, "    " + cond + launch.cpu));
            body.add(Code.same("  }"));
        } else {
            Code launch = childLaunch(c, "1 + lo % 2", "1 + hi % 32", null, "data + lo % 256", tag(site, " + lo * 7919"),
                    "(lo + fz_a + fz_b) % 50", "hi % 2");
            body.add(new Code("  " + cond + launch.device, "  " + cond + launch.cpu));
        }
        for (String f : forms) {
            features.add("cond-assign:" + f);
        }
        return perThreadExtra(name, "", "", body, 0, GRIDS, BLOCKS, 0);
    }

    /**
     * {@link Shape#COND_DECL}: per-thread values declared in conditions and C++17 init-statements
     * ({@code if (int v = e)}, {@code if (int v = e; c)}, {@code if (w = e; c)}, {@code switch (int v
     * = e)}, {@code switch (w = e; w % 4)}, {@code while (int v = e)}), each passed to a launch in
     * its grid, block or arguments.
     */
    private Extra makeCondDecl(int id) {
        String name = "fz_cd" + id;
        Child c = anyChild();
        List<Code> body = new ArrayList<>();
        List<String> forms = new ArrayList<>();
        if (chance(0.5)) {
            body.add(Code.same("  if (gt >= n) return;"));
        }
        String value = "(data[(gt * 7 + k) % 1000] % 5 + 5) % 5";
        int count = 1 + pick(2);
        for (int i = 0; i < count; i++) {
            int site = siteCount++;
            int form = pick(6);
            String v = "fz_v" + i;
            Code launch = childLaunch(c, "1 + " + v + " % 2", "1 + (" + v + " * 3) % 32", null,
                    "data + (" + v + " + gt) % 256", tag(site, " + " + v + " * 7919"), "(" + v + " + k) % 50", v + " % 2");
            String open;
            String close = "";
            switch (form) {
                case 0 -> {
                    forms.add("if-declaration");
                    open = "if (int " + v + " = " + value + ")";
                }
                case 1 -> {
                    forms.add("if-init");
                    open = "if (int " + v + " = gt % 7 + k % 3; " + v + " % 2 == 0)";
                }
                case 2 -> {
                    forms.add("if-init-assignment");
                    body.add(Code.same("  int " + v + " = 0;"));
                    open = "if (" + v + " = " + value + " + gt % 3; " + v + " > 1)";
                }
                case 3 -> {
                    forms.add("switch-declaration");
                    open = "switch (int " + v + " = gt % 4) { case 1: case 3:";
                    close = " break; default: break; }";
                }
                case 4 -> {
                    forms.add("switch-init");
                    body.add(Code.same("  int " + v + " = 0;"));
                    open = "switch (" + v + " = " + value + "; " + v + " % 4) { case 0: case 2:";
                    close = " break; default: break; }";
                }
                default -> {
                    forms.add("while-declaration");
                    String r = "fz_r" + i;
                    body.add(Code.same("  int " + r + " = 0;"));
                    open = "while (int " + v + " = " + r + " < 1 + gt % 3 ? gt % 11 + 1 : 0) {";
                    close = " ++" + r + "; }";
                    launch = childLaunch(c, "1 + " + v + " % 2", "1 + (" + v + " * 3) % 32", null,
                            "data + (" + v + " + gt) % 256", tag(site, " + " + v + " * 7919 + " + r + " * 131"),
                            "(" + v + " + " + r + ") % 50", v + " % 2");
                }
            }
            body.add(new Code("  " + open + " " + launch.device + close, "  " + open + " " + launch.cpu + close));
        }
        for (String f : forms) {
            features.add("cond-decl:" + f);
        }
        return perThreadExtra(name, "", "", body, 0, GRIDS, BLOCKS, 0);
    }

    /**
     * {@link Shape#GOTO_LOOP}: a loop written with a backward {@code goto} whose trip count differs
     * between threads; each round launches (into the NULL stream, or fire-and-forget) with arguments
     * and configuration derived from the round counter.
     */
    private Extra makeGotoLoop(int id) {
        String name = "fz_gl" + id;
        int site = siteCount++;
        Child c = anyChild();
        List<Code> body = new ArrayList<>();
        if (chance(0.5)) {
            body.add(Code.same("  if (gt >= n) return;"));
        }
        body.add(Code.same("  int r = 0;"));
        body.add(Code.same("  int fz_cnt = 1 + (gt * 7 + k) % " + (2 + pick(3)) + ";"));
        body.add(Code.same("fz_next" + id + ":"));
        String stream = chance(0.3) ? "cudaStreamFireAndForget" : null;
        Code launch = childLaunch(c, "1 + r % 2", "32", stream, "data + (r + gt) % 256", tag(site, " + r * 7919"),
                "(r * 5 + k) % 50", "r % 2");
        String cond = chance(0.5) ? "if ((gt + r) % 2 == 0) " : "";
        body.add(new Code("  " + cond + launch.device, "  " + cond + launch.cpu));
        body.add(Code.same("  if (++r < fz_cnt) goto fz_next" + id + ";"));
        if (reviewForms.nextInt(2) == 0) {
            // r after the loop: a per-thread count set in a backward-goto loop (review 2026-12-01: such a value
            // was scalarized), drawn from a generator of its own
            Code after = childLaunch(c, "1", "32", null, "data + (r + gt) % 256", tag(siteCount++, " + r * 131"), "r % 50", "0");
            body.add(new Code("  " + after.device, "  " + after.cpu));
            features.add("goto-loop:value-after");
        }
        features.add("goto-loop:" + (stream == null ? "ordered" : "fire-and-forget"));
        if (!cond.isEmpty()) {
            features.add("goto-loop:divergent");
        }
        return perThreadExtra(name, "", "", body, 0, GRIDS, BLOCKS, 0);
    }

    /**
     * {@link Shape#FULL_SHARED}: 45 to 48 KiB of static shared memory in the parent (or in a
     * {@code __device__} helper it calls), written by every thread before a barrier that the whole
     * block reaches, read back after it, and feeding a launch under a thread-dependent condition.
     */
    private Extra makeFullShared(int id) {
        return makeBigShared(id, false);
    }

    /**
     * {@link Shape#FULL_DYN_SHARED}: the same with 45 to 48 KiB of dynamic shared memory ({@code
     * extern __shared__}), which the host launch asks for.
     */
    private Extra makeFullDynShared(int id) {
        return makeBigShared(id, true);
    }

    /**
     * A parent with 45 to 48 KiB of shared memory, static ({@code __shared__ int fz_big[W]}) or
     * {@code dynamic} ({@code extern __shared__ int fz_dyn[]}, W words asked for by the host
     * launch), in the kernel or in a {@code __device__} helper it calls: every thread writes its
     * slot, the block meets at a barrier, each reads its own back and feeds a launch with it.
     */
    private Extra makeBigShared(int id, boolean dynamic) {
        String name = (dynamic ? "fz_fd" : "fz_fs") + id;
        int site = siteCount++;
        Child c = anyChild();
        int words = 11520 + 256 * pick(4); // 45, 46, 47 or 48 KiB of ints
        boolean inHelper = chance(0.4);
        features.add((dynamic ? "full-dyn-shared:" : "full-shared:") + (inHelper ? "helper" : "kernel") + (words == 12288 ? ":48K" : ""));
        String decl = dynamic ? "extern __shared__ int fz_dyn[];" : "__shared__ int fz_big[" + words + "];";
        String arr = dynamic ? "fz_dyn" : "fz_big";
        String value = dynamic ? "gt * 5 + k" : "gt * 3 + k";
        String before = "";
        String cpuBefore = "";
        List<Code> body = new ArrayList<>();
        if (inHelper) {
            // a thread's own slot: every thread writes its slot, the block meets, each reads its own back
            before = "__device__ int " + name + "_stash(int lt, int v) {\n  " + decl + "\n"
                    + "  " + arr + "[lt % " + words + "] = v;\n  __syncthreads();\n  return " + arr + "[lt % " + words + "];\n}\n";
            cpuBefore = "static int " + name + "_stash_cpu(int lt, int v) { (void)lt; return v; }\n";
            body.add(new Code("  int fz_v = " + name + "_stash(lt, " + value + ");", "  int fz_v = " + name + "_stash_cpu(lt, " + value + ");"));
        } else {
            body.add(new Code("  " + decl + "\n  " + arr + "[lt % " + words + "] = " + value + ";\n"
                    + "  __syncthreads();\n  int fz_v = " + arr + "[lt % " + words + "];", "  int fz_v = " + value + ";"));
        }
        if (chance(0.5)) {
            body.add(Code.same("  if (gt >= n) return;"));
        }
        String cond = "if (fz_v % " + (2 + pick(3)) + " != 0) ";
        Code launch = childLaunch(c, "1 + fz_v % 2", "32", null, "data + fz_v % 256", tag(site, " + fz_v * 7919"),
                "fz_v % 50", "gt % 2");
        body.add(new Code("  " + cond + launch.device, "  " + cond + launch.cpu));
        Extra e = perThreadExtra(name, before, cpuBefore, body, 0, GRIDS, BLOCKS, 0);
        return dynamic ? e.withSmem(String.valueOf(words * 4)) : e;
    }

    /**
     * {@link Shape#SHARED_HELPERS}: helpers with {@code __shared__} arrays. {@code NAME_stage} holds
     * a large array (9216 to 10240 words), {@code NAME_rot} a small one (64 words); each stores a
     * value per thread, meets the block at {@code __syncthreads()} and returns the next thread's
     * value (the thread index and the block's thread count are parameters: no index is read). The
     * child {@code NAME_child<<<1, 32>>>} calls both; the parent calls {@code NAME_rot} with all its
     * threads (blocks of 32 or 64 threads), then threads below {@code n} launch the child with the
     * neighbour's value. Sometimes the helpers are {@code __noinline__}, sometimes the parent calls
     * the small helper through a second one.
     */
    private Extra makeSharedHelpers(int id) {
        String name = "fz_sh" + id;
        int words = 9216 + 256 * pick(5);
        int salt = pick(1000);
        boolean noinline = chance(0.5);
        boolean viaWrapper = chance(0.3);
        features.add("shared-helpers" + (noinline ? ":noinline" : "") + (viaWrapper ? ":wrapper" : ""));
        String inl = noinline ? "__noinline__ " : "";
        StringBuilder dev = new StringBuilder();
        dev.append("__device__ ").append(inl).append("unsigned ").append(name).append("_stage(unsigned v, int t, int nt) {\n")
                .append("  __shared__ unsigned ").append(name).append("_big[").append(words).append("];\n")
                .append("  ").append(name).append("_big[t] = v;\n  __syncthreads();\n")
                .append("  unsigned w = ").append(name).append("_big[(t + 1) % nt];\n  __syncthreads();\n  return w;\n}\n");
        dev.append("__device__ ").append(inl).append("unsigned ").append(name).append("_rot(unsigned v, int t, int nt) {\n")
                .append("  __shared__ unsigned ").append(name).append("_sm[64];\n")
                .append("  ").append(name).append("_sm[t % 64] = v;\n  __syncthreads();\n")
                .append("  unsigned w = ").append(name).append("_sm[(t + 1) % nt];\n  __syncthreads();\n  return w;\n}\n");
        String rot = name + "_rot";
        if (viaWrapper) {
            dev.append("__device__ unsigned ").append(name).append("_turn(unsigned v, int t, int nt) { return ").append(rot)
                    .append("(v, t, nt) ^ 0x5bd1e995u; }\n");
            rot = name + "_turn";
        }
        dev.append("__global__ void ").append(name).append("_child(unsigned* out, const int* p, int i) {\n")
                .append("  int t = (int)threadIdx.x;\n")
                .append("  unsigned v = fz_mix((unsigned)p[(i + t) % ").append(DATA_N).append("], (unsigned)i + ").append(salt).append("u);\n")
                .append("  unsigned a = ").append(name).append("_stage(v, t, 32);\n")
                .append("  unsigned b = ").append(name).append("_rot(v ^ a, t, 32);\n")
                .append("  atomicAdd(&out[((unsigned)i * 131u + (unsigned)t + ").append(salt).append("u) % ").append(OUT_N)
                .append("u], fz_mix(a, b));\n}\n");
        StringBuilder cpu = new StringBuilder();
        cpu.append("static void ").append(name).append("_child_cpu(unsigned* out, const int* p, int i) {\n  ++fz_launches;\n")
                .append("  unsigned v[32], a[32];\n")
                .append("  for (int t = 0; t < 32; ++t) v[t] = fz_mix((unsigned)p[(i + t) % ").append(DATA_N).append("], (unsigned)i + ")
                .append(salt).append("u);\n")
                .append("  for (int t = 0; t < 32; ++t) a[t] = v[(t + 1) % 32];\n")
                .append("  for (int t = 0; t < 32; ++t) {\n    int u = (t + 1) % 32;\n")
                .append("    out[((unsigned)i * 131u + (unsigned)t + ").append(salt).append("u) % ").append(OUT_N)
                .append("u] += fz_mix(a[t], v[u] ^ a[u]);\n  }\n}\n");
        String value = "(unsigned)gt * 2654435761u + (unsigned)k";
        String nt = "(int)(blockDim.x * blockDim.y * blockDim.z)";
        List<Code> body = new ArrayList<>();
        // every thread of the block calls the helper (a barrier inside), before any return
        body.add(new Code("  unsigned fz_r = " + rot + "(" + value + ", lt, " + nt + ");",
                "  int fz_nt = (int)(bD.x * bD.y * bD.z);\n  int fz_ng = bl * fz_nt + (lt + 1) % fz_nt;\n"
                        + "  unsigned fz_r = (unsigned)fz_ng * 2654435761u + (unsigned)k;"
                        + (viaWrapper ? "\n  fz_r ^= 0x5bd1e995u;" : "")));
        body.add(Code.same("  if (gt >= n) return;"));
        String cond = "if (fz_r % " + (2 + pick(3)) + " != 0) ";
        body.add(new Code("  " + cond + name + "_child<<<1, 32>>>(out, data, (int)(fz_r % 1000u));",
                "  " + cond + name + "_child_cpu(out, data, (int)(fz_r % 1000u));"));
        return perThreadExtra(name, dev + "\n", cpu + "\n", body, 0, new String[] {"1", "2", "3"},
                new String[] {"32", "64", "dim3(16, 2)", "dim3(8, 8)"}, 1);
    }

    /**
     * {@link Shape#PROTOTYPE_DEFAULTS}: defaults that only prototypes give. {@code NAME_gid(unsigned
     * scale = 1u)} reads the indices (its clone takes {@code klap_v}, and must repeat the default);
     * the child {@code NAME_child(out, p, i, w = NAME_W, salt = S)} gets its defaults from one
     * prototype or two (one per parameter, in either order); the parent's threads below {@code n}
     * launch it {@code <<<2, 32>>>}, leaving out one or both trailing arguments. Sometimes the child
     * also calls {@code NAME_lane()}, whose prototype's default is {@code blockIdx.x}: bound where the
     * prototype is, it reads the aggregated grid's index in a variant, so klap must leave that launch.
     * Sometimes the child also calls {@code NAME_gid(2.5f)}, an overload defined with the CPU
     * reference (in main.cu of a two-file program, where klap cannot see it).
     */
    private Extra makePrototypeDefaults(int id) {
        String name = "fz_pd" + id;
        int salt = pick(1000);
        int w = 2 + pick(5);
        boolean split = chance(0.4);
        boolean lane = chance(0.4);
        int passed = pick(3); // trailing arguments the launch passes: 0, w, or w and salt
        features.add("prototype-defaults" + (split ? ":split" : "") + (lane ? ":index-default" : "") + ":passes-" + passed);
        String child = name + "_child";
        StringBuilder dev = new StringBuilder();
        dev.append("#define ").append(name.toUpperCase()).append("_W ").append(w).append('\n');
        dev.append("__device__ unsigned ").append(name).append("_gid(unsigned scale = 1u);\n");
        if (lane) {
            dev.append("__device__ unsigned ").append(name).append("_lane(unsigned b = blockIdx.x);\n");
        }
        String head = "__global__ void " + child + "(unsigned* out, const int* p, int i, ";
        if (split) {
            // the later declaration adds the earlier parameter's default ([dcl.fct.default]/4)
            dev.append(head).append("int w, unsigned salt = ").append(salt).append("u);\n");
            dev.append(head).append("int w = ").append(name.toUpperCase()).append("_W, unsigned salt);\n");
        } else {
            dev.append(head).append("int w = ").append(name.toUpperCase()).append("_W, unsigned salt = ").append(salt).append("u);\n");
        }
        dev.append(head).append("int w, unsigned salt) {\n")
                .append("  unsigned g = ").append(name).append("_gid();\n")
                .append("  unsigned h = ").append(name).append("_gid((unsigned)w);\n")
                .append("  unsigned l = ").append(lane ? name + "_lane()" : "0u").append(";\n")
                .append("  atomicAdd(&out[((unsigned)i * 131u + g + salt) % ").append(OUT_N)
                .append("u], fz_mix(g + h, (unsigned)p[((unsigned)i + g) % ").append(DATA_N).append("u]) + l);\n}\n");
        dev.append("__device__ unsigned ").append(name).append("_gid(unsigned scale) { return (blockIdx.x * blockDim.x + threadIdx.x) * scale; }\n");
        if (lane) {
            dev.append("__device__ unsigned ").append(name).append("_lane(unsigned b) { return b % 5u; }\n");
        }
        StringBuilder cpu = new StringBuilder();
        cpu.append("static void ").append(child).append("_cpu(unsigned* out, const int* p, int i, int w, unsigned salt) {\n  ++fz_launches;\n")
                .append("  for (unsigned b = 0; b < 2; ++b) for (unsigned t = 0; t < 32; ++t) {\n")
                .append("    unsigned g = b * 32u + t, h = g * (unsigned)w, l = ").append(lane ? "b % 5u" : "0u").append(";\n")
                .append("    out[((unsigned)i * 131u + g + salt) % ").append(OUT_N).append("u] += fz_mix(g + h, (unsigned)p[((unsigned)i + g) % ")
                .append(DATA_N).append("u]) + l;\n  }\n}\n");
        int explicitW = 1 + pick(9);
        int explicitSalt = pick(1000);
        String args = "out, data, (int)((unsigned)gt * 7u + (unsigned)k)" + (passed >= 1 ? ", " + explicitW : "")
                + (passed >= 2 ? ", " + explicitSalt + "u" : "");
        String cpuArgs = "out, data, (int)((unsigned)gt * 7u + (unsigned)k), " + (passed >= 1 ? explicitW : w) + ", "
                + (passed >= 2 ? explicitSalt : salt) + "u";
        String cond = "if ((gt + k) % " + (2 + pick(3)) + " != 1) ";
        List<Code> body = new ArrayList<>();
        body.add(Code.same("  if (gt >= n) return;"));
        body.add(new Code("  " + cond + child + "<<<2, 32>>>(" + args + ");", "  " + cond + child + "_cpu(" + cpuArgs + ");"));
        Extra e = perThreadExtra(name, dev + "\n", cpu + "\n", body, 0, GRIDS, BLOCKS, 1);
        if (!chance(0.4)) { // (drawn last: the draws above are those of the shape's first version)
            return e;
        }
        // an overload of the index-reading helper, defined with the CPU reference: in main.cu of a
        // two-file program, which klap never sees (its clone of gid(unsigned) took gid(2.5f) there)
        features.add("prototype-defaults:overload");
        String l = "  unsigned l = " + (lane ? name + "_lane()" : "0u") + ";\n";
        String device = e.device().replace("__device__ unsigned " + name + "_gid(unsigned scale = 1u);\n",
                "__device__ unsigned " + name + "_gid(unsigned scale = 1u);\n__device__ unsigned " + name + "_gid(float x, unsigned k = 0u);\n")
                .replace(l, l.replace(";\n", " + " + name + "_gid(2.5f);\n"));
        String cpuL = "l = " + (lane ? "b % 5u" : "0u") + ";";
        String cpuText = "__device__ unsigned " + name + "_gid(float x, unsigned k) { return (unsigned)(x * 4.0f) + k; }\n"
                + e.cpu().replace(cpuL, cpuL.replace(";", " + 10u;"));
        return new Extra(e.name(), device, cpuText, e.scratchWords(), e.grid(), e.block(), e.n(), e.k(), e.sites(), e.smem(), e.attrChild());
    }

    /**
     * {@link Shape#NAMESPACES}: {@code NAME_space} declares the child {@code NAME_child} and its
     * index-reading helper {@code NAME_gid}, each defined inside it or outside it ({@code __global__
     * void NAME_space::NAME_child(...) {...}}). The parent {@code NAME} either is in the namespace
     * too, launched by {@code main} through {@code using NAME_space::NAME;} (not in a two-file
     * program, whose main.cu declares the parent at file scope), or is at file scope and launches the
     * child through {@code using NAME_space::NAME_child;} or as {@code NAME_space::NAME_child}.
     * Sometimes the helper has C linkage ({@code extern "C"}, or an {@code extern "C" { }} block
     * around its first declaration).
     */
    private Extra makeNamespaces(int id) {
        String name = "fz_ns" + id;
        String space = name + "_space";
        String child = name + "_child";
        String gid = name + "_gid";
        int salt = pick(1000);
        boolean childOutside = chance(0.6);
        boolean gidOutside = chance(0.5);
        boolean parentInside = !twoFiles && chance(0.5);
        boolean qualified = !parentInside && chance(0.4);
        boolean cLinkage = chance(0.3);
        boolean cBlock = cLinkage && chance(0.5);
        features.add("namespaces" + (cLinkage ? cBlock ? ":c-linkage-block" : ":c-linkage" : "") + (childOutside ? ":child-outside" : "") + (gidOutside ? ":helper-outside" : "")
                + (parentInside ? ":parent-using" : qualified ? ":qualified" : ":child-using"));
        String gidBody = " { return blockIdx.x * blockDim.x + threadIdx.x; }\n";
        String childHead = "(unsigned* out, const int* p, int i)";
        String childBody = " {\n  unsigned g = " + gid + "();\n  atomicAdd(&out[((unsigned)i * 131u + g + " + salt + "u) % " + OUT_N
                + "u], fz_mix(g, (unsigned)p[((unsigned)i + g) % " + DATA_N + "u]));\n}\n";
        StringBuilder in = new StringBuilder("namespace ").append(space).append(" {\n");
        // extern "C": klap's clone of the helper overloads its name, which C linkage forbids twice; in an
        // extern "C" { } block, a definition outside it (helper-outside) has C linkage from the prototype
        in.append(cBlock ? "extern \"C\" { " : cLinkage ? "extern \"C\" " : "").append("__device__ unsigned ").append(gid).append("()")
                .append(gidOutside ? ";" : gidBody.stripTrailing()).append(cBlock ? " }\n" : "\n");
        in.append("__global__ void ").append(child).append(childHead).append(childOutside ? ";\n" : childBody);
        StringBuilder outside = new StringBuilder();
        if (gidOutside) {
            outside.append("__device__ unsigned ").append(space).append("::").append(gid).append("()").append(gidBody);
        }
        if (childOutside) {
            // inside the definition, unqualified names are looked up in the namespace (the helper)
            outside.append("__global__ void ").append(space).append("::").append(child).append(childHead).append(childBody);
        }
        String cpu = "static void " + child + "_cpu(unsigned* out, const int* p, int i) {\n  ++fz_launches;\n"
                + "  for (unsigned g = 0; g < 64u; ++g) out[((unsigned)i * 131u + g + " + salt + "u) % " + OUT_N
                + "u] += fz_mix(g, (unsigned)p[((unsigned)i + g) % " + DATA_N + "u]);\n}\n";
        String before = parentInside ? in.toString()
                : in + "}\n" + outside + (qualified ? "" : "using " + space + "::" + child + ";\n");
        String callee = qualified ? space + "::" + child : child;
        String cond = "if ((gt + k) % " + (2 + pick(3)) + " != 0) ";
        String arg = "(int)((unsigned)gt * 7u + (unsigned)k)";
        List<Code> body = new ArrayList<>();
        body.add(Code.same("  if (gt >= n) return;"));
        body.add(new Code("  " + cond + callee + "<<<2, 32>>>(out, data, " + arg + ");", "  " + cond + child + "_cpu(out, data, " + arg + ");"));
        Extra e = perThreadExtra(name, before + "\n", cpu + "\n", body, 0, GRIDS, BLOCKS, 1);
        if (parentInside) {
            return new Extra(e.name(), e.device() + "}\n" + outside + "using " + space + "::" + name + ";\n",
                    e.cpu(), e.scratchWords(), e.grid(), e.block(), e.n(), e.k(), e.sites(), e.smem(), e.attrChild());
        }
        return twoFiles && chance(0.5) ? headerChild(e, name, space, body.get(1)) : e; // (drawn last: the first version's draws stay)
    }

    /**
     * Adds to a two-file {@link Shape#NAMESPACES} program {@code e} a child {@code NAME_hchild} at file
     * scope declared only in {@link #COMMON_HEADER} and defined at the end of the kernels' file, which
     * a {@code __device__} function of the namespace ({@code NAME_space::NAME_go}) or a static member of
     * a class ({@code NAME_hl::go}) launches; the parent calls it after its launch {@code launch}.
     * klap declares such a child's record and variants before the first function that uses it: it
     * put them before the first file-scope user, after the namespace's or class's (nvcc: identifier
     * "klap_args_..." is undefined), then left such a launch as written; now before the namespace or
     * class ({@code FunctionDef.fileScopeStart}, 2026-11-30).
     */
    private Extra headerChild(Extra e, String name, String space, Code launch) {
        boolean member = chance(0.5);
        int salt = pick(1000);
        String hchild = name + "_hchild";
        String params = "(unsigned* out, const int* p, int i)";
        features.add("namespaces:header-child:" + (member ? "member" : "namespace"));
        commonDecls.append("__global__ void ").append(hchild).append(params).append(";\n");
        String go = member ? name + "_hl::go" : space + "::" + name + "_go";
        String launcher = member
                ? "struct " + name + "_hl {\n  __device__ static void go" + params + " { " + hchild + "<<<1, 32>>>(out, p, i); }\n};\n"
                : "namespace " + space + " {\n__device__ void " + name + "_go" + params + " { ::" + hchild + "<<<1, 32>>>(out, p, i); }\n}\n";
        String def = "__global__ void " + hchild + params + " {\n  unsigned g = threadIdx.x;\n  atomicAdd(&out[((unsigned)i * 37u + g + "
                + salt + "u) % " + OUT_N + "u], fz_mix(g + 5u, (unsigned)p[((unsigned)i + g) % " + DATA_N + "u]));\n}\n";
        String cpu = "static void " + hchild + "_cpu(unsigned* out, const int* p, int i) {\n  ++fz_launches;\n"
                + "  for (unsigned g = 0; g < 32u; ++g) out[((unsigned)i * 37u + g + " + salt + "u) % " + OUT_N
                + "u] += fz_mix(g + 5u, (unsigned)p[((unsigned)i + g) % " + DATA_N + "u]);\n}\n";
        String arg = "(int)((unsigned)gt * 3u + (unsigned)k)";
        String device = launch.device() + "\n  if ((gt + k) % 3 != 2) " + go + "(out, data, " + arg + ");";
        String host = launch.cpu() + "\n  if ((gt + k) % 3 != 2) " + hchild + "_cpu(out, data, " + arg + ");";
        if (!e.device().contains(launch.device() + "\n") || !e.cpu().contains(launch.cpu() + "\n")) {
            throw new IllegalStateException("the parent's launch is not " + launch.device());
        }
        return new Extra(e.name(), launcher + e.device().replace(launch.device() + "\n", device + "\n") + def,
                cpu + e.cpu().replace(launch.cpu() + "\n", host + "\n"), e.scratchWords(), e.grid(), e.block(), e.n(), e.k(),
                e.sites() + 1, e.smem(), e.attrChild());
    }

    /**
     * {@link Shape#LATE_SIGNATURE}: the child {@code NAME_child} is first declared with plain types;
     * then {@code NAME_word} (a typedef, using alias or macro of {@code unsigned}) is declared, or the
     * class {@code NAME_pair} the prototype takes by value (declared {@code struct NAME_pair;} before
     * it) is defined; the child's definition names it. Sometimes the child calls {@code NAME_gid},
     * which reads the indices and is declared and defined the same way; sometimes the parent is
     * prototyped first too and defined with {@code NAME_pword* out}, a typedef after the prototypes
     * (then it gets no kernel-granularity or chunk twin). The control ({@code control})
     * declares the typedef before every prototype. Sometimes the child's {@code __launch_bounds__} name
     * a constant declared after its prototype. The parent's threads below {@code n} launch the child
     * {@code <<<2, 32>>>}. Sometimes a kernel {@code NAME_early} before the alias launches the child
     * (not for a class: it could not construct the argument), and with the parent prototyped, a host
     * function {@code NAME_run} there launches the parent; neither is launched. Sometimes the child
     * has C linkage: an {@code extern "C"} prototype, its definition in an {@code extern "C" { }} block.
     */
    private Extra makeLateSignature(int id) {
        String name = "fz_ls" + id;
        String child = name + "_child";
        String word = name + "_word";
        String pair = name + "_pair";
        String kind = new String[] {"typedef", "using", "macro", "class", "control"}[pick(5)];
        boolean cls = kind.equals("class");
        boolean helper = chance(0.4);
        boolean parentLate = chance(0.4);
        int salt = pick(1000);
        int tag = features.size();
        features.add("late-signature:" + kind + (helper ? ":helper" : "") + (parentLate ? ":parent" : ""));
        String alias = switch (kind) {
            case "using" -> "using " + word + " = unsigned;\n";
            case "macro" -> "#define " + word + " unsigned\n";
            case "class" -> "struct " + pair + " { unsigned a; unsigned b; };\n";
            default -> "typedef unsigned " + word + ";\n";
        };
        String outType = cls ? "unsigned" : word;
        String pairParam = cls ? ", " + pair + " pr" : "";
        String helperParam = cls ? pair + " hp" : "const " + word + "* base";
        StringBuilder dev = new StringBuilder();
        if (kind.equals("control")) {
            dev.append(alias);
        }
        if (cls) {
            dev.append("struct ").append(pair).append(";\n");
        }
        if (parentLate) {
            dev.append("__global__ void ").append(name).append("(unsigned* out, const int* data, int n, int k);\n");
        }
        dev.append("__global__ void ").append(child).append("(unsigned* out, const int* p, int i").append(pairParam).append(");\n");
        if (helper) {
            dev.append("__device__ unsigned ").append(name).append("_gid(").append(cls ? pair + " hp" : "const unsigned* base").append(");\n");
        }
        if (!kind.equals("control")) {
            dev.append(alias);
        }
        if (parentLate) {
            // the parent's own alias, after its prototype (the control's child is aggregated, its parent not twinned)
            dev.append("typedef unsigned ").append(name).append("_pword;\n");
        }
        if (helper) {
            dev.append("__device__ unsigned ").append(name).append("_gid(").append(helperParam).append(") { return blockIdx.x * blockDim.x + ")
                    .append("threadIdx.x").append(cls ? " + hp.a * 0u" : " + (base ? 0u : 1u)").append("; }\n");
        }
        String g = helper ? name + "_gid(" + (cls ? "pr" : "out") + ")" : "blockIdx.x * blockDim.x + threadIdx.x";
        String extra = cls ? "pr.a * 3u + pr.b" : "0u";
        dev.append("__global__ void ").append(child).append("(").append(outType).append("* out, const int* p, int i").append(pairParam)
                .append(") {\n  unsigned g = ").append(g).append(";\n")
                .append("  atomicAdd(&out[((unsigned)i * 131u + g + ").append(salt).append("u) % ").append(OUT_N)
                .append("u], fz_mix(g + ").append(extra).append(", (unsigned)p[((unsigned)i + g) % ").append(DATA_N).append("u]));\n}\n");
        String cpu = "static void " + child + "_cpu(unsigned* out, const int* p, int i, unsigned a, unsigned b) {\n  ++fz_launches;\n"
                + "  for (unsigned g = 0; g < 64u; ++g) out[((unsigned)i * 131u + g + " + salt + "u) % " + OUT_N
                + "u] += fz_mix(g + " + (cls ? "a * 3u + b" : "0u * (a + b)") + ", (unsigned)p[((unsigned)i + g) % " + DATA_N + "u]);\n}\n";
        String cond = "if ((gt + k) % " + (2 + pick(3)) + " != 0) ";
        String arg = "(int)((unsigned)gt * 7u + (unsigned)k)";
        int b = 1 + pick(9);
        if (chance(0.3)) {
            // (drawn last: the draws above are those of the shape's first version) the child's launch
            // bounds name a constant declared after its prototype: an attribute's arguments are tokens,
            // which klap looks up by name (SignatureNeeds)
            features.set(tag, features.get(tag) + ":bounds");
            String def = "__global__ void " + child + "(" + outType + "* out";
            int at = dev.lastIndexOf(def);
            dev.replace(at, at + def.length(), "constexpr unsigned " + name + "_bound = 64;\n__global__ void __launch_bounds__("
                    + name + "_bound) " + child + "(" + outType + "* out");
        }
        // (drawn last, 2026-11-30's eighth session: klap now declares after the alias where no function
        // before it uses the child) a kernel before the alias launches the child, so that launch and the
        // parent's stay as written; with :parent, a host function there launches the parent (no twins).
        // Neither runs: the program's result is that of the shape before
        int sites = 1;
        if (chance(0.5) && !kind.equals("control") && (!cls || parentLate)) {
            features.set(tag, features.get(tag) + ":early");
            StringBuilder early = new StringBuilder();
            if (!cls) {
                early.append("__global__ void ").append(name).append("_early(unsigned* out, const int* p, int n) {\n  if ((int)threadIdx.x < n) ")
                        .append(child).append("<<<1, 32>>>(out, p, (int)threadIdx.x);\n}\n");
                sites++;
            }
            if (parentLate) {
                early.append("void ").append(name).append("_run(unsigned* out, const int* data, int n, int k) { ").append(name)
                        .append("<<<1, 32>>>(out, data, n, k); }\n");
            }
            int at = dev.indexOf(alias);
            dev.insert(at, early);
        }
        if (chance(0.3)) {
            // (drawn last) the child has C linkage: an extern "C" prototype, its definition in an extern "C"
            // { } block, where klap's variants took C linkage after their C++ prototypes (nvcc 13:
            // "linkage specification is incompatible with previous", 2026-11-30)
            features.set(tag, features.get(tag) + ":c-linkage");
            String proto = "__global__ void " + child + "(unsigned* out, const int* p, int i" + pairParam + ");\n";
            int at = dev.indexOf(proto);
            dev.insert(at, "extern \"C\" ");
            int def = dev.indexOf("constexpr unsigned " + name + "_bound");
            def = def >= 0 ? def : dev.lastIndexOf("__global__ void " + child + "(");
            int end = dev.indexOf("\n}\n", def) + 3;
            dev.insert(end, "}\n");
            dev.insert(def, "extern \"C\" {\n");
        }
        List<Code> body = new ArrayList<>();
        body.add(Code.same("  if (gt >= n) return;"));
        body.add(new Code("  " + cond + child + "<<<2, 32>>>(out, data, " + arg + (cls ? ", " + pair + "{(unsigned)gt, " + b + "u}" : "") + ");",
                "  " + cond + child + "_cpu(out, data, " + arg + ", (unsigned)gt, " + b + "u);"));
        Extra e = perThreadExtra(name, dev + "\n", cpu + "\n", body, 0, GRIDS, BLOCKS, sites);
        if (!parentLate) {
            return e;
        }
        String head = "__global__ void " + name + "(unsigned* out, const int* data, int n, int k) {";
        if (!e.device().contains(head)) {
            throw new IllegalStateException("the parent's definition is not " + head);
        }
        return new Extra(e.name(), e.device().replace(head, head.replace("(unsigned* out", "(" + name + "_pword* out")), e.cpu(),
                e.scratchWords(), e.grid(), e.block(), e.n(), e.k(), e.sites(), e.smem(), e.attrChild());
    }

    /**
     * The forms of {@link Shape#MALLOC_LIFETIME}'s allocations whose shares the threads of a group may
     * free at different times: klap must leave them as written (warning {@code malloc-lifetime}).
     */
    static final List<String> MALLOC_LIFETIME_REFUSED = List.of("keep-one", "skip-free", "return-between", "copy-divergent",
            "stored-apart");
    /** The forms of {@link Shape#MALLOC_LIFETIME}'s allocations whose shares are freed together: klap aggregates them. */
    static final List<String> MALLOC_LIFETIME_AGGREGATED = List.of("same-block", "uniform-free", "lambda-free", "branch-local",
            "stored-alike");
    /** How {@link Shape#MALLOC_LIFETIME}'s {@code same-block} allocation tests for failure. */
    static final List<String> SAME_BLOCK_TESTS = List.of("call-test", "error-variable", "null-test");

    /**
     * {@link Shape#MALLOC_LIFETIME}: a parent with one or two device {@code cudaMalloc} sites, each
     * of one form of {@link #MALLOC_LIFETIME_REFUSED} or {@link #MALLOC_LIFETIME_AGGREGATED} (the
     * second of another form; {@code uniform-free}, which needs an allocation the block reaches
     * together, only first). Each thread fills its buffer of 16 to 256 words with {@code fz_mix(tag,
     * i)}, reads it back and adds the weighted sum into {@code out} (the CPU reference computes the
     * same sums without a buffer); a failed cudaMalloc skips the thread's sum (or round), so the
     * program fails where an allocation fails. Each site has a child launch (between the allocation
     * and the free where the form allows). The allocation's line ends in {@code // fz-ml site NAME
     * (FORM)}, NAME the pointer variable; the features name each form with its variants
     * ({@code malloc-lifetime:FORM[:VARIANT...]}).
     */
    private Extra makeMallocLifetime(int id) {
        String name = "fz_ml" + id;
        List<String> forms = new ArrayList<>(MALLOC_LIFETIME_REFUSED);
        forms.addAll(MALLOC_LIFETIME_AGGREGATED);
        String first = forms.get(pick(forms.size()));
        List<String> sites = new ArrayList<>(List.of(first));
        // a stored-* site stands alone: a free in the parent would refuse it whatever the later kernel does
        if (!first.startsWith("stored-") && chance(0.5)) {
            List<String> others = new ArrayList<>(forms);
            others.remove(first);
            others.remove("uniform-free");
            others.removeIf(f -> f.startsWith("stored-"));
            sites.add(others.get(pick(others.size())));
        }
        StringBuilder dev = new StringBuilder();
        List<Code> body = new ArrayList<>();
        for (int j = 0; j < sites.size(); j++) {
            mallocLifetimeSite(name, j, sites.get(j), dev, body);
        }
        String[] blocks = {"32", "64", "48", "dim3(8, 4)", "dim3(32, 2)"};
        return perThreadExtra(name, dev.length() == 0 ? "" : dev + "\n", "", body, 0, GRIDS, blocks, 0);
    }

    /** Adds site {@code j} of form {@code form} to {@code body} (and a helper it needs to {@code dev}). */
    private void mallocLifetimeSite(String name, int j, String form, StringBuilder dev, List<Code> body) {
        String p = name + "_p" + j;
        int words = new int[] {16, 32, 64, 256}[pick(4)];
        int salt = pick(100000);
        String alloc = "cudaMalloc(&" + p + ", " + words + " * sizeof(unsigned))";
        String mark = " // fz-ml site " + p + " (" + form + ")";
        Child c = anyChild();
        int site = siteCount++;
        String feature = "malloc-lifetime:" + form;
        // tag: the thread's (and round's) value; fill and use: the buffer written, read back and summed
        java.util.function.Function<String, String> tagOf = r -> "(unsigned)(" + salt + " + gt * 131 + " + j + r + ")";
        java.util.function.BiFunction<String, String, String> fill = (q, t) -> "for (int i = 0; i < " + words + "; ++i) " + q
                + "[i] = fz_mix(" + t + ", (unsigned)i);";
        java.util.function.BiFunction<String, String, String> use = (q, t) -> "{ unsigned fz_s = 0u; for (int i = 0; i < " + words
                + "; ++i) fz_s += " + q + "[i] * (unsigned)(i + 1); atomicAdd(&out[(" + t + ") % " + OUT_N + "u], fz_s); }";
        java.util.function.Function<String, String> useCpu = t -> "{ unsigned fz_s = 0u; for (int i = 0; i < " + words
                + "; ++i) fz_s += fz_mix(" + t + ", (unsigned)i) * (unsigned)(i + 1); out[(" + t + ") % " + OUT_N + "u] += fz_s; }";
        String tag = tagOf.apply("");
        Code launch = childLaunch(c, "1 + gt % 2", "32", null, "data + gt % 256", tag(site, ""), "gt % 50", "gt % 2");
        requireLaunchOf(c, launch.device);
        String in = "  ";
        switch (form) {
            case "keep-one" -> {
                // C_malloc_pin: one thread keeps its buffer of each round, the others free theirs at once
                int rounds = 2 + pick(3);
                boolean helper = chance(0.4);
                boolean warp = chance(0.4);
                feature += (helper ? ":helper" : ":array") + (warp ? ":warp-lane" : ":block-thread");
                String keeper = warp ? "lt % 32 == 0" : "lt == 0";
                String kept = name + "_kept" + j;
                String rt = tagOf.apply(" + r * 7919");
                if (helper) {
                    dev.append("__device__ void ").append(name).append("_keep").append(j).append("(unsigned** slot, unsigned* q) { *slot = q; }\n");
                }
                String keep = helper ? name + "_keep" + j + "(&" + kept + "[r], " + p + ");" : kept + "[r] = " + p + ";";
                body.add(new Code(in + "unsigned* " + kept + "[" + rounds + "] = {};\n"
                        + in + "for (int r = 0; r < " + rounds + "; ++r) {\n"
                        + in + "  unsigned* " + p + ";\n"
                        + in + "  if (" + alloc + " != cudaSuccess) continue;" + mark + "\n"
                        + in + "  " + fill.apply(p, rt) + "\n"
                        + in + "  " + use.apply(p, rt) + "\n"
                        + in + "  if (" + keeper + ") " + keep + " else cudaFree(" + p + ");\n"
                        + in + "}\n"
                        + in + launch.device + "\n"
                        + in + "if (" + keeper + ") for (int r = 0; r < " + rounds + "; ++r) if (" + kept + "[r] != nullptr) { atomicAdd(&out[("
                        + rt + " * 3u + 1u) % " + OUT_N + "u], " + kept + "[r][" + (words - 1) + "]); cudaFree(" + kept + "[r]); }",
                        in + "for (int r = 0; r < " + rounds + "; ++r) " + useCpu.apply(rt) + "\n"
                        + in + launch.cpu + "\n"
                        + in + "if (" + keeper + ") for (int r = 0; r < " + rounds + "; ++r) out[(" + rt + " * 3u + 1u) % " + OUT_N
                        + "u] += fz_mix(" + rt + ", " + (words - 1) + "u);"));
            }
            case "skip-free" -> {
                // a free some threads skip: they free later, or never (the buffer outlives the kernel)
                boolean later = chance(0.6);
                feature += later ? ":later" : ":never";
                String cond = chance(0.5) ? "gt % 3 != 0" : "(gt + k) % 4 != 1";
                body.add(new Code(in + "unsigned* " + p + ";\n"
                        + in + "if (" + alloc + " != cudaSuccess) return;" + mark + "\n"
                        + in + fill.apply(p, tag) + "\n"
                        + in + use.apply(p, tag) + "\n"
                        + in + "if (" + cond + ") cudaFree(" + p + ");\n"
                        + in + launch.device
                        + (later ? "\n" + in + "if (!(" + cond + ")) { atomicAdd(&out[(" + tag + " * 3u + 1u) % " + OUT_N + "u], " + p + "["
                                + (words - 1) + "]); cudaFree(" + p + "); }" : ""),
                        in + useCpu.apply(tag) + "\n"
                        + in + launch.cpu
                        + (later ? "\n" + in + "if (!(" + cond + ")) out[(" + tag + " * 3u + 1u) % " + OUT_N + "u] += fz_mix(" + tag + ", "
                                + (words - 1) + "u);" : "")));
            }
            case "return-between" -> {
                // some threads return between the allocation and the free (freeing first, or not at all)
                boolean freeFirst = chance(0.5);
                feature += freeFirst ? ":free-first" : ":leak";
                String cond = new String[] {"gt >= n", "gt % 4 == 3", "(gt + k) % 5 == 2"}[pick(3)];
                body.add(new Code(in + "unsigned* " + p + ";\n"
                        + in + "if (" + alloc + " != cudaSuccess) return;" + mark + "\n"
                        + in + fill.apply(p, tag) + "\n"
                        + in + "if (" + cond + ") " + (freeFirst ? "{ cudaFree(" + p + "); return; }" : "return;") + "\n"
                        + in + launch.device + "\n"
                        + in + use.apply(p, tag) + "\n"
                        + in + "cudaFree(" + p + ");",
                        in + "if (" + cond + ") return;\n"
                        + in + launch.cpu + "\n"
                        + in + useCpu.apply(tag)));
            }
            case "copy-divergent" -> {
                // the free goes through a copy, under thread-dependent control
                String q = name + "_q" + j;
                String cond = chance(0.5) ? "gt % 2 == 0" : "lt % 3 != 1";
                body.add(new Code(in + "unsigned* " + p + ";\n"
                        + in + "if (" + alloc + " != cudaSuccess) return;" + mark + "\n"
                        + in + fill.apply(p, tag) + "\n"
                        + in + "unsigned* " + q + " = " + p + ";\n"
                        + in + "if (" + cond + ") { " + use.apply(q, tag) + " cudaFree(" + q + "); }\n"
                        + in + launch.device + "\n"
                        + in + "if (!(" + cond + ")) { " + use.apply(q, tag) + " cudaFree(" + q + "); }",
                        in + "if (" + cond + ") " + useCpu.apply(tag) + "\n"
                        + in + launch.cpu + "\n"
                        + in + "if (!(" + cond + ")) " + useCpu.apply(tag)));
            }
            case "same-block" -> {
                // freed after the allocation in the same block, after a test of its failure (and a launch)
                boolean loop = chance(0.5);
                feature += loop ? ":loop" : ":straight";
                int rounds = 2 + pick(2);
                String t = loop ? tagOf.apply(" + r * 7919") : tag;
                String i2 = loop ? in + "  " : in;
                Code l = loop ? childLaunch(c, "1 + gt % 2", "32", null, "data + gt % 256", tag(site, " + r * 7919"), "gt % 50", "r % 2")
                        : launch;
                // the failure test: of the call, of its error kept in a variable (or of the pointer), or of
                // the pointer in the next statement (2026-12-01; a thread that got nullptr holds no share)
                String test = SAME_BLOCK_TESTS.get(pick(SAME_BLOCK_TESTS.size()));
                feature += ":" + test;
                String leave = loop ? "continue;" : "return;";
                String e = name + "_e" + j;
                String check = switch (test) {
                    case "call-test" -> i2 + "if (" + alloc + " != cudaSuccess) " + leave + mark + "\n";
                    case "error-variable" -> i2 + "cudaError_t " + e + " = " + alloc + ";" + mark + "\n"
                            + i2 + "if (" + e + " != cudaSuccess" + (chance(0.5) ? " || " + p + " == nullptr" : "") + ") " + leave + "\n";
                    default -> i2 + alloc + ";" + mark + "\n" + i2 + "if (" + (chance(0.5) ? "!" + p : p + " == nullptr") + ") " + leave + "\n";
                };
                // freed directly or through a free wrapper (a __device__ function whose whole body frees)
                String free = "cudaFree(" + p + ");";
                if (chance(0.3)) {
                    feature += ":wrapper";
                    dev.append("__device__ void ").append(name).append("_release").append(j).append("(unsigned* q) { cudaFree(q); }\n");
                    free = name + "_release" + j + "(" + p + ");";
                }
                body.add(new Code((loop ? in + "for (int r = 0; r < " + rounds + "; ++r) {\n" : "")
                        + i2 + "unsigned* " + p + " = nullptr;\n"
                        + check
                        + i2 + fill.apply(p, t) + "\n"
                        + i2 + l.device + "\n"
                        + i2 + use.apply(p, t) + "\n"
                        + i2 + free + (loop ? "\n" + in + "}" : ""),
                        (loop ? in + "for (int r = 0; r < " + rounds + "; ++r) {\n" : "")
                        + i2 + l.cpu + "\n"
                        + i2 + useCpu.apply(t) + (loop ? "\n" + in + "}" : "")));
            }
            case "uniform-free" -> {
                // an allocation the block reaches together, freed under a condition that is the same for all its threads
                String cond = new String[] {"n > 0", "k < 100", "k >= 0"}[pick(3)];
                boolean braced = chance(0.5);
                feature += braced ? ":braced" : ":plain";
                body.add(new Code(in + "unsigned* " + p + " = nullptr;\n"
                        + in + alloc + ";" + mark + "\n"
                        + in + "if (" + p + " != nullptr) { " + fill.apply(p, tag) + " " + use.apply(p, tag) + " }\n"
                        + in + launch.device + "\n"
                        + in + "if (" + cond + ") " + (braced ? "{ cudaFree(" + p + "); }" : "cudaFree(" + p + ");"),
                        in + useCpu.apply(tag) + "\n"
                        + in + launch.cpu));
            }
            case "lambda-free" -> {
                // freed through a lambda local that every thread that allocated calls
                boolean named = chance(0.5);
                feature += named ? ":named-capture" : ":default-capture";
                String done = name + "_done" + j;
                body.add(new Code(in + "unsigned* " + p + ";\n"
                        + in + "if (" + alloc + " != cudaSuccess) return;" + mark + "\n"
                        + in + "auto " + done + " = [" + (named ? "&" + p : "&") + "] { cudaFree(" + p + "); };\n"
                        + in + fill.apply(p, tag) + "\n"
                        + in + launch.device + "\n"
                        + in + use.apply(p, tag) + "\n"
                        + in + done + "();",
                        in + launch.cpu + "\n"
                        + in + useCpu.apply(tag)));
            }
            case "branch-local" -> {
                // a thread-dependent branch that allocates and frees straight after
                boolean test = chance(0.5);
                feature += test ? ":test-return" : ":null-check";
                String cond = chance(0.5) ? "gt % 3 != 1" : "lt % 2 == 0";
                String i2 = in + "  ";
                body.add(new Code(in + "if (" + cond + ") {\n"
                        + (test ? i2 + "unsigned* " + p + ";\n" + i2 + "if (" + alloc + " != cudaSuccess) return;" + mark + "\n"
                                + i2 + fill.apply(p, tag) + "\n" + i2 + use.apply(p, tag) + "\n"
                                : i2 + "unsigned* " + p + " = nullptr;\n" + i2 + alloc + ";" + mark + "\n"
                                + i2 + "if (" + p + " != nullptr) { " + fill.apply(p, tag) + " " + use.apply(p, tag) + " }\n")
                        + i2 + "cudaFree(" + p + ");\n"
                        + in + "}\n"
                        + in + launch.device,
                        in + "if (" + cond + ") " + useCpu.apply(tag) + "\n"
                        + in + launch.cpu));
            }
            case "stored-apart", "stored-alike" -> {
                // the pointer is stored to a table and never freed here; another kernel of the file (which
                // this program's host does not launch: klap judges the file) frees the table's pointers,
                // some threads of its grid and not others (apart), or all alike (a bound, a null test, a
                // grid-stride loop, a uniform test: bt's freeVertexMem)
                String table = name + "_table" + j;
                String idx = "int i = blockIdx.x * blockDim.x + threadIdx.x; ";
                String[] frees = form.equals("stored-apart")
                        ? new String[] {idx + "if (i % 2) cudaFree(t[i]);", idx + "if (t[i] != nullptr && t[i][0] % 3u == 1u) cudaFree(t[i]);",
                                idx + "if (i == n) return; cudaFree(t[i]);", idx + "if (threadIdx.x == 0) " + name + "_drop" + j + "(t[i]);"}
                        : new String[] {idx + "if (i < n) { if (t[i] != nullptr) cudaFree(t[i]); t[i] = nullptr; }",
                                "for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) cudaFree(t[i]);",
                                idx + "if (i >= n) return; cudaFree(t[i]);", idx + "if (n > 0) " + name + "_drop" + j + "(t[i]);"};
                int v = pick(frees.length);
                feature += ":" + new String[] {"v0", "v1", "v2", "v3"}[v];
                if (frees[v].contains("_drop")) {
                    dev.append("__device__ void ").append(name).append("_drop").append(j).append("(unsigned* q) { cudaFree(q); }\n");
                }
                dev.append("__device__ unsigned* ").append(table).append("[1024];\n");
                dev.append("__global__ void ").append(name).append("_release").append(j).append("(unsigned** t, int n) { ")
                        .append(frees[v]).append(" }\n");
                body.add(new Code(in + "unsigned* " + p + ";\n"
                        + in + "if (" + alloc + " != cudaSuccess) return;" + mark + "\n"
                        + in + fill.apply(p, tag) + "\n"
                        + in + launch.device + "\n"
                        + in + use.apply(p, tag) + "\n"
                        + in + table + "[gt % 1024u] = " + p + ";",
                        in + launch.cpu + "\n"
                        + in + useCpu.apply(tag)));
            }
            default -> throw new IllegalStateException(form);
        }
        features.add(feature);
    }

    /**
     * {@link Shape#STREAM_EVENT}: a thread creates streams on the device, launches a producer into
     * the first and consumers (rounds in a loop) either into a second stream that waits on an event
     * recorded into the first after the producer, or into the first stream itself; it then destroys
     * what it created. The consumers read what the producer wrote (the producer/consumer pair of
     * {@link Shape#DEPENDENT}), so running one before the other changes the result. A launch of a
     * random child into the NULL stream follows, which klap aggregates.
     */
    private Extra makeStreamEvent(int id) {
        String name = "fz_se" + id;
        String prod = name + "_produce";
        String cons = name + "_consume";
        int rounds = 1 + pick(2);
        boolean event = chance(0.7);
        boolean oneDecl = chance(0.5);
        features.add("stream-event:" + (event ? "event" : "one-stream") + (oneDecl ? ":one-declaration" : ""));
        StringBuilder dev = new StringBuilder();
        StringBuilder cpu = new StringBuilder();
        producerConsumer(prod, cons, pick(1000), "89u", "37u", dev, cpu);
        String pcfg = new String[] {"1, 32", "2, 16"}[pick(2)];
        String ccfg = new String[] {"1, 32", "2, 16"}[pick(2)];
        String cs = event ? "fz_s2" : "fz_s1";
        List<Code> body = new ArrayList<>();
        body.add(Code.same("  if (gt >= n) return;"));
        String cond = new String[] {"gt % 3 != 1", "(gt + k) % 2 == 0", "true"}[pick(3)];
        body.add(Code.same("  if (" + cond + ") {"));
        body.add(new Code((oneDecl ? "    cudaStream_t fz_s1, fz_s2;\n" : "    cudaStream_t fz_s1;\n    cudaStream_t fz_s2;\n")
                + "    cudaStreamCreateWithFlags(&fz_s1, cudaStreamNonBlocking);\n"
                + "    cudaStreamCreateWithFlags(&fz_s2, cudaStreamNonBlocking);\n"
                + (event ? "    cudaEvent_t fz_ev;\n    cudaEventCreateWithFlags(&fz_ev, cudaEventDisableTiming);\n" : "")
                + "    " + prod + "<<<" + pcfg + ", 0, fz_s1>>>(scr, data, gt);"
                + (event ? "\n    cudaEventRecord(fz_ev, fz_s1);\n    cudaStreamWaitEvent(fz_s2, fz_ev, 0);" : ""),
                "    " + prod + "_cpu(scr, data, gt);"));
        body.add(new Code("    for (int r = 0; r < " + rounds + "; ++r) " + cons + "<<<" + ccfg + ", 0, " + cs + ">>>(out, scr, gt, r);\n"
                + (event ? "    cudaEventDestroy(fz_ev);\n" : "") + "    cudaStreamDestroy(fz_s1);\n    cudaStreamDestroy(fz_s2);",
                "    for (int r = 0; r < " + rounds + "; ++r) " + cons + "_cpu(out, scr, gt, r);"));
        body.add(Code.same("  }"));
        // and a launch into the NULL stream that klap aggregates beside the ones it leaves as written
        int site = siteCount++;
        Child c = anyChild();
        String cond2 = "if ((gt + k) % 3 != 0) ";
        Code launch = childLaunch(c, "1 + gt % 2", "32", null, "data + gt % 256", tag(site, " + gt * 7919"), "gt % 50", "gt % 2");
        body.add(new Code("  " + cond2 + launch.device, "  " + cond2 + launch.cpu));
        return perThreadExtra(name, dev + "\n", cpu + "\n", body, 1, new String[] {"1", "2", "dim3(2, 1)"},
                new String[] {"32", "64", "dim3(8, 4)"}, 3);
    }

    /**
     * {@link Shape#SURVIVOR_LOOP}: divergent early returns of the kernel body (the plain guard, and
     * sometimes one whose branch writes before it returns, and a uniform one), then a loop of rounds
     * with a uniform trip count ({@code for} or {@code while}, sometimes with a uniform {@code break})
     * whose launches sit under a per-thread {@code if} or {@code switch} on the round, and sometimes a
     * further divergent return after the loop. klap aggregates them among the lanes of each warp that
     * passed the returns (a survivor region, issue 10).
     */
    private Extra makeSurvivorLoop(int id) {
        String name = "fz_sv" + id;
        Child c = anyChild();
        Child c2 = anyChild();
        List<Code> body = new ArrayList<>();
        body.add(Code.same("  if (gt >= n) return;"));
        if (chance(0.4)) {
            features.add("survivor-loop:uniform-guard");
            body.add(Code.same("  if (k > 6) return;"));
        }
        body.add(Code.same("  unsigned fz_f = (unsigned)data[((unsigned)gt * 3u) % " + DATA_N + "u] ^ (unsigned)gt;"));
        if (chance(0.5)) {
            features.add("survivor-loop:block-guard");
            body.add(new Code("  if (fz_f % 7u == 3u) { atomicAdd(&out[(unsigned)gt % " + OUT_N + "u], 5u); return; }",
                    "  if (fz_f % 7u == 3u) { out[(unsigned)gt % " + OUT_N + "u] += 5u; return; }"));
        }
        String bound = chance(0.5) ? String.valueOf(2 + pick(4)) : "(2 + k % 3)";
        boolean whileLoop = chance(0.3);
        features.add("survivor-loop:" + (whileLoop ? "while" : "for"));
        body.add(Code.same(whileLoop ? "  int r = -1;\n  while (++r < " + bound + ") {" : "  for (int r = 0; r < " + bound + "; ++r) {"));
        if (chance(0.3)) {
            features.add("survivor-loop:uniform-break");
            body.add(Code.same("    if (r == 1 + k % 4) break;"));
        }
        int site = siteCount++;
        Code launch = childLaunch(c, "1 + r % 2", "32", null, "data + (gt + r) % 256", tag(site, " + r * 7919"), "r % 50", "r % 2");
        if (chance(0.5)) {
            features.add("survivor-loop:if");
            String cond = "if ((fz_f >> r) & 1u) ";
            body.add(new Code("    " + cond + launch.device, "    " + cond + launch.cpu));
        } else {
            features.add("survivor-loop:switch");
            int site2 = siteCount++;
            Code launch2 = childLaunch(c2, "1", "1 + (gt + r) % 32", null, "data", tag(site2, " + r * 131"), "(gt + r) % 50", "0");
            String head = "    switch ((fz_f >> r) & 3u) {\n    case 1u: ";
            String mid = " break;\n    case 2u: { int fz_q = r * 3; (void)fz_q; ";
            String tail = " break; }\n    default: break;\n    }";
            body.add(new Code(head + launch.device + mid + launch2.device + tail, head + launch.cpu + mid + launch2.cpu + tail));
        }
        body.add(Code.same("  }"));
        if (chance(0.4)) {
            features.add("survivor-loop:guard-after");
            body.add(Code.same("  if (fz_f % 5u == 1u) return;"));
        }
        body.add(new Code("  atomicAdd(&out[(unsigned)gt % " + OUT_N + "u], fz_f & 3u);",
                "  out[(unsigned)gt % " + OUT_N + "u] += fz_f & 3u;"));
        return perThreadExtra(name, "", "", body, 0, GRIDS, BLOCKS, 0);
    }

    /**
     * {@link Shape#CONVERGENT_LOOP}: a {@code for} or {@code while} loop whose trip count differs
     * between threads, at the top of the kernel or after a divergent early return, whose condition
     * and step have effects (a per-thread counter that must advance exactly as often as before) and
     * whose launches sit under a per-thread {@code if} on the round, with a per-round argument; a
     * {@code switch} whose cases break comes before them. klap runs such a loop until no thread of
     * the group has an iteration left, each thread's condition, body and step only while its own
     * condition held (a convergent loop, issue 10).
     */
    private Extra makeConvergentLoop(int id) {
        String name = "fz_cl" + id;
        Child c = anyChild();
        List<Code> body = new ArrayList<>();
        boolean guard = chance(0.5);
        features.add("convergent-loop:" + (guard ? "after-guard" : "top"));
        if (guard) {
            body.add(Code.same("  if (gt >= n) return;"));
        }
        body.add(Code.same("  unsigned fz_steps = 0u;"));
        String trips = "(1u + ((unsigned)gt * 7u + (unsigned)k) % " + (2 + pick(4)) + "u)";
        boolean whileLoop = chance(0.4);
        features.add("convergent-loop:" + (whileLoop ? "while" : "for"));
        if (whileLoop) {
            body.add(Code.same("  int r = 0;\n  while (++fz_steps <= " + trips + ") {"));
        } else {
            body.add(Code.same("  for (int r = 0; ++fz_steps <= " + trips + "; r += 1 + (gt & 1)) {"));
        }
        if (chance(0.5)) {
            features.add("convergent-loop:switch");
            body.add(new Code("    switch ((gt + r) % 3) { case 0: atomicAdd(&out[(unsigned)(gt + r) % " + OUT_N + "u], 1u); break; default: break; }",
                    "    switch ((gt + r) % 3) { case 0: out[(unsigned)(gt + r) % " + OUT_N + "u] += 1u; break; default: break; }"));
        }
        int site = siteCount++;
        Code launch = childLaunch(c, "1 + r % 2", "32", null, "data + (gt + r) % 256", tag(site, " + r * 7919"), "r % 50", "r % 2");
        String cond = "if ((gt + r) % " + (2 + pick(2)) + " != 0) ";
        body.add(new Code("    " + cond + launch.device, "    " + cond + launch.cpu));
        if (whileLoop) {
            body.add(Code.same("    r += 1 + (gt & 1);"));
        }
        body.add(Code.same("  }"));
        body.add(new Code("  atomicAdd(&out[(unsigned)gt % " + OUT_N + "u], fz_steps);", "  out[(unsigned)gt % " + OUT_N + "u] += fz_steps;"));
        return perThreadExtra(name, "", "", body, 0, GRIDS, BLOCKS, 0);
    }

    /**
     * {@link Shape#LOOP_JUMPS}: a launch under a per-thread {@code if} in a {@code for},
     * {@code while} or {@code do} loop whose trip count is uniform or per thread, counted in a
     * per-thread counter of its own, summed into a step counter that reaches the output (its
     * condition must be evaluated exactly as often as before), with a
     * thread-dependent {@code continue} of the loop before the launch (an {@code if}, or a
     * {@code case} of a {@code switch}) and/or a thread-dependent {@code break}, or a {@code return}
     * that first adds the thread's steps so far, before or after it;
     * the loop at the top of the kernel, after a divergent early return, in a thread-dependent
     * branch, or inside a loop whose trip count differs between threads (whose counter the launch
     * passes on). klap makes it a convergent loop (issue 10, sixth session of 2026-11-27).
     */
    private Extra makeLoopJumps(int id) {
        String name = "fz_lj" + id;
        Child c = anyChild();
        List<Code> body = new ArrayList<>();
        String pos = new String[] {"top", "after-guard", "in-branch", "nested"}[pick(4)];
        features.add("loop-jumps:" + pos);
        if (pos.equals("after-guard")) {
            body.add(Code.same("  if (gt >= n) return;"));
        }
        body.add(Code.same("  unsigned fz_f = (unsigned)data[((unsigned)gt * 5u) % " + DATA_N + "u] ^ (unsigned)gt;"));
        body.add(Code.same("  unsigned fz_steps = 0u;"));
        String ind = "  ";
        if (pos.equals("in-branch")) {
            body.add(Code.same("  if (fz_f % 3u != 1u) {"));
            ind = "    ";
        } else if (pos.equals("nested")) {
            body.add(Code.same("  for (int q = 0; q < 1 + (int)(fz_f % 3u); ++q) {"));
            ind = "    ";
        }
        String trips = chance(0.5) ? "(1u + (fz_f >> 2) % 4u)" : (2 + pick(3)) + "u";
        String kind = new String[] {"for", "while", "do"}[pick(3)];
        features.add("loop-jumps:" + kind);
        String in = ind + "  ";
        // (a counter of its own: nested, the loop runs its full trip count in every outer iteration)
        body.add(Code.same(ind + "unsigned fz_it = 0u;"));
        switch (kind) {
            case "for" -> body.add(Code.same(ind + "for (int r = 0; ++fz_it <= " + trips + "; ++r) {"));
            case "while" -> body.add(Code.same(ind + "int r = -1;\n" + ind + "while (++fz_it <= " + trips + ") {\n" + in + "++r;"));
            default -> body.add(Code.same(ind + "int r = -1;\n" + ind + "do {\n" + in + "++r;"));
        }
        String slot = "&out[(fz_f + (unsigned)r * 7u) % " + OUT_N + "u]";
        boolean cont = chance(0.7);
        if (cont && chance(0.35)) {
            features.add("loop-jumps:switch-continue");
            String head = in + "switch ((fz_f + (unsigned)r) % 3u) { case 0u: continue; case 1u: ";
            body.add(new Code(head + "atomicAdd(" + slot + ", 1u); break; default: break; }",
                    head + "*(" + slot + ") += 1u; break; default: break; }"));
        } else if (cont) {
            features.add("loop-jumps:continue");
            body.add(Code.same(in + "if (((fz_f >> (r % 8)) & 1u) != 0u) continue;"));
        }
        String leave = in + "if ((fz_f + (unsigned)r * 3u) % 5u == 4u) ";
        boolean breaks = !cont || chance(0.5);
        boolean before = breaks && chance(0.4);
        // (a return instead of the break, since the seventh session: the thread adds its steps so far and
        // leaves the kernel, which skips the sum after the loop; klap takes the return after the loop)
        boolean returns = breaks && chance(0.35);
        String jump = returns ? "return" : "break";
        String step = "&out[(unsigned)gt % " + OUT_N + "u]";
        Code brk = returns ? new Code(leave + "{ atomicAdd(" + step + ", fz_steps + fz_it); return; }",
                leave + "{ *(" + step + ") += fz_steps + fz_it; return; }") : Code.same(leave + "break;");
        if (before) {
            features.add("loop-jumps:" + jump + "-before");
            body.add(brk);
        }
        int site = siteCount++;
        boolean nested = pos.equals("nested");
        Code launch = childLaunch(c, "1 + r % 2", "32", null, "data + (gt + r) % 256",
                tag(site, " + r * 7919" + (nested ? " + q * 131" : "")), (nested ? "(r + q)" : "r") + " % 50", "r % 2");
        String cond = "if ((gt + r) % " + (2 + pick(2)) + " != 0) ";
        body.add(new Code(in + cond + launch.device, in + cond + launch.cpu));
        if (breaks && !before) {
            features.add("loop-jumps:" + jump + "-after");
            body.add(brk);
        }
        body.add(Code.same(kind.equals("do") ? ind + "} while (++fz_it < " + trips + ");" : ind + "}"));
        body.add(Code.same(ind + "fz_steps += fz_it;"));
        if (!ind.equals("  ")) {
            body.add(Code.same("  }"));
        }
        body.add(new Code("  atomicAdd(&out[(unsigned)gt % " + OUT_N + "u], fz_steps);", "  out[(unsigned)gt % " + OUT_N + "u] += fz_steps;"));
        return perThreadExtra(name, "", "", body, 0, GRIDS, BLOCKS, 0);
    }

    /**
     * The producer and consumer kernels of one thread's dependent launches, and their CPU versions:
     * {@code prod(a, p, i)} writes the thread's 32 scratch words {@code a[i * 32 + t]}, {@code
     * cons(out, a, i, r)} reads and rewrites them and adds to {@code out} at a slot mixed from {@code
     * i * mi + r * mr}: running them out of order changes the result.
     */
    private static void producerConsumer(String prod, String cons, int salt, String mi, String mr, StringBuilder dev,
            StringBuilder cpu) {
        dev.append("__global__ void ").append(prod).append("(unsigned* a, const int* p, int i) {\n");
        dev.append("  int t = (int)(blockIdx.x * blockDim.x + threadIdx.x);\n");
        dev.append("  a[i * 32 + t] = fz_mix((unsigned)p[(i + t) % ").append(DATA_N).append("], (unsigned)i + ").append(salt).append("u);\n}\n");
        dev.append("__global__ void ").append(cons).append("(unsigned* out, unsigned* a, int i, int r) {\n");
        dev.append("  int t = (int)(blockIdx.x * blockDim.x + threadIdx.x);\n");
        dev.append("  unsigned x = a[i * 32 + t];\n");
        dev.append("  a[i * 32 + t] = fz_mix(x, (unsigned)r + ").append(salt + 1).append("u);\n");
        dev.append("  atomicAdd(&out[((unsigned)i * ").append(mi).append(" + (unsigned)r * ").append(mr).append(" + (unsigned)t + ")
                .append(salt).append("u) % ").append(OUT_N).append("u], fz_mix(x, (unsigned)r));\n}\n");
        cpu.append("static void ").append(prod).append("_cpu(unsigned* a, const int* p, int i) {\n  ++fz_launches;\n");
        cpu.append("  for (int t = 0; t < 32; ++t) a[i * 32 + t] = fz_mix((unsigned)p[(i + t) % ").append(DATA_N).append("], (unsigned)i + ")
                .append(salt).append("u);\n}\n");
        cpu.append("static void ").append(cons).append("_cpu(unsigned* out, unsigned* a, int i, int r) {\n  ++fz_launches;\n");
        cpu.append("  for (int t = 0; t < 32; ++t) {\n    unsigned x = a[i * 32 + t];\n");
        cpu.append("    a[i * 32 + t] = fz_mix(x, (unsigned)r + ").append(salt + 1).append("u);\n");
        cpu.append("    out[((unsigned)i * ").append(mi).append(" + (unsigned)r * ").append(mr).append(" + (unsigned)t + ")
                .append(salt).append("u) % ").append(OUT_N).append("u] += fz_mix(x, (unsigned)r);\n  }\n}\n");
    }

    /**
     * {@link Shape#LAUNCH_MACRO}: dependent launches of one thread (a producer, then consumers in a
     * loop, through the scratch words the thread owns, into the NULL stream or stream 0) of which
     * some are written in a macro: in the macro's body ({@code FZ_LM_GO(k, ...)}) or in its argument
     * ({@code FZ_LM_CHECK((k<<<...>>>(...), cudaGetLastError()))}). klap leaves those as written and
     * must keep the thread's order with the launches it does aggregate.
     */
    private Extra makeLaunchMacro(int id) {
        String name = "fz_lm" + id;
        String prod = name + "_produce";
        String cons = name + "_consume";
        int rounds = 1 + pick(3);
        int salt = pick(1000);
        String stream = chance(0.4) ? ", 0, 0" : "";
        String defs = "#ifndef FZ_LM_GO\n#define FZ_LM_GO(kern, g, b, ...) kern<<<g, b>>>(__VA_ARGS__)\n"
                + "#define FZ_LM_CHECK(x) do { if ((x) != cudaSuccess) atomicAdd(&out[0], 1u << 20); } while (0)\n#endif\n";
        StringBuilder dev = new StringBuilder(defs);
        StringBuilder cpu = new StringBuilder();
        producerConsumer(prod, cons, salt, "89u", "37u", dev, cpu);
        // which launches are written in a macro, and how: 0 in its body, 1 in its argument, 2 written out;
        // one of the two is written out, so that klap has a launch to aggregate
        int p = pick(3);
        int c = p == 2 ? pick(2) : 2;
        features.add("launch-macro:producer-" + new String[] {"body", "argument", "written"}[p]);
        features.add("launch-macro:consumer-" + new String[] {"body", "argument", "written"}[c]);
        String[] cfg = {"1, 32" + stream, "2, 16" + stream};
        String pc = cfg[pick(2)];
        String cc = cfg[pick(2)];
        String[] pForm = {
            "FZ_LM_GO(" + prod + ", " + pc.replace(stream, "") + ", scr, data, gt);",
            "FZ_LM_CHECK((" + prod + "<<<" + pc + ">>>(scr, data, gt), cudaGetLastError()));",
            prod + "<<<" + pc + ">>>(scr, data, gt);"};
        String[] cForm = {
            "FZ_LM_GO(" + cons + ", " + cc.replace(stream, "") + ", out, scr, gt, r);",
            "FZ_LM_CHECK((" + cons + "<<<" + cc + ">>>(out, scr, gt, r), cudaGetLastError()));",
            cons + "<<<" + cc + ">>>(out, scr, gt, r);"};
        List<Code> body = new ArrayList<>();
        body.add(Code.same("  if (gt >= n) return;"));
        String cond = new String[] {"gt % 3 != 1", "(gt + k) % 2 == 0", "true"}[pick(3)];
        body.add(Code.same("  if (" + cond + ") {"));
        body.add(new Code("    " + pForm[p], "    " + prod + "_cpu(scr, data, gt);"));
        String loop = "for (int r = 0; r < " + rounds + "; ++r) ";
        body.add(new Code("    " + loop + "{ " + cForm[c] + " }", "    " + loop + cons + "_cpu(out, scr, gt, r);"));
        body.add(Code.same("  }"));
        return perThreadExtra(name, dev + "\n", cpu + "\n", body, 1, new String[] {"1", "2"}, new String[] {"32", "64"}, 2);
    }

    // ------------------------------------------------------------------ program

    /** How main.cu of a two-file program declares and launches one kernel. */
    private enum HostUse {
        PLAIN, CACHE_CONFIG, FUNCTION_POINTER, LAUNCH_KERNEL
    }

    /** One kernel {@code main} launches: a random parent or a shape kernel. */
    /** @param smem dynamic shared memory of the launch (bytes, a C++ expression), or null for none */
    private record Top(String name, String params, String grid, String block, int n, int k, int scratchOffset, boolean scratch,
            HostUse use, String smem) {
        /** the launch configuration: grid, block and dynamic shared memory if any */
        String config() {
            return grid + ", " + block + (smem != null ? ", " + smem : "");
        }

        String types() {
            return params.replaceAll(" (out|data|scr|n|k)(,|$)", "$2");
        }

        String args() {
            return "out, ddata, " + (scratch ? "fz_scr + " + scratchOffset + ", " : "") + n + ", " + k;
        }
    }

    /**
     * A host launch of {@code t} in {@code main}, written as {@code t.use} says in a two-file
     * program. There a launch with dynamic shared memory first raises the kernel's limit itself
     * (klap does not see that file, and the program asks for nearly 48 KiB).
     */
    private String hostLaunch(Top t) {
        String plain = "  " + t.name + "<<<" + t.config() + ">>>(" + t.args() + ");\n";
        String raise = t.smem == null ? "" : "  FZ_CHECK(cudaFuncSetAttribute(" + t.name
                + ", cudaFuncAttributeMaxDynamicSharedMemorySize, (int)(" + t.smem + ")));\n";
        return raise + switch (t.use) {
            case PLAIN -> plain;
            case CACHE_CONFIG -> "  FZ_CHECK(cudaFuncSetCacheConfig(" + t.name + ", cudaFuncCachePreferL1));\n" + plain;
            case FUNCTION_POINTER -> "  {\n    void (*fz_fp)(" + t.types() + ") = " + t.name + ";\n"
                    + "    cudaFuncAttributes fz_attr;\n    FZ_CHECK(cudaFuncGetAttributes(&fz_attr, (const void*)fz_fp));\n"
                    + "    fz_fp<<<" + t.config() + ">>>(" + t.args() + ");\n  }\n";
            case LAUNCH_KERNEL -> "  {\n    unsigned* fz_a0 = out;\n    const int* fz_a1 = ddata;\n"
                    + (t.scratch ? "    unsigned* fz_as = fz_scr + " + t.scratchOffset + ";\n" : "")
                    + "    int fz_an = " + t.n + ", fz_ak = " + t.k + ";\n"
                    + "    void* fz_args[] = {&fz_a0, &fz_a1, " + (t.scratch ? "&fz_as, " : "") + "&fz_an, &fz_ak};\n"
                    + "    FZ_CHECK(cudaLaunchKernel((const void*)" + t.name + ", dim3(" + t.grid + "), dim3(" + t.block
                    + "), fz_args, " + (t.smem == null ? "0" : t.smem) + ", 0));\n  }\n";
        };
    }

    /** @return the generator of shape {@code s}'s draws ({@link Shape#generation}) */
    private Random generator(Shape s) {
        return switch (s.generation()) {
            case 1 -> late;
            case 2 -> later;
            case 3 -> latest;
            case 4 -> fifth;
            case 5 -> sixth;
            case 6 -> seventh;
            case 7 -> eighth;
            case 8 -> ninth;
            case 9 -> tenth;
            case 10 -> eleventh;
            case 11 -> twelfth;
            case 12 -> thirteenth;
            case 13 -> fourteenth;
            case 14 -> fifteenth;
            case 15 -> sixteenth;
            case 16 -> seventeenth;
            case 17 -> eighteenth;
            case 18 -> nineteenth;
            case 19 -> twentieth;
            case 20 -> twentyFirst;
            case 21 -> twentySecond;
            case 22 -> twentyThird;
            case 23 -> twentyFourth;
            case 24 -> twentyFifth;
            case 25 -> twentySixth;
            case 26 -> twentySeventh;
            case 27 -> twentyEighth;
            default -> rnd;
        };
    }

    private Program build(Set<Shape> requested) {
        makeHelpers();
        makeChildren();
        boolean random = requested == null || requested.contains(Shape.RANDOM) || requested.stream().noneMatch(Shape::addsKernels);
        List<Parent> parents = new ArrayList<>();
        if (random) {
            makeLaunchers();
            int np = 1 + pick(2);
            for (int i = 0; i < np; i++) {
                parents.add(makeParent(i));
            }
        }
        // every random draw of the random parents is made above, so they do not depend on the shapes
        Set<Shape> shapes = EnumSet.noneOf(Shape.class);
        if (random) {
            shapes.add(Shape.RANDOM);
        }
        for (Shape s : Shape.values()) {
            // a shape added after the GPU run of 2026-11-22 draws from its own generator, so that every
            // other draw of a seed stays the same (a seed that draws it only gains its kernel)
            if (s != Shape.RANDOM && (requested == null
                    ? (s.generation() > 0 ? generator(s).nextDouble() < s.probability : chance(s.probability))
                    : requested.contains(s))) {
                shapes.add(s);
            }
        }
        List<Extra> extras = new ArrayList<>();
        twoFiles = shapes.contains(Shape.TWO_FILES);
        for (Shape s : shapes) {
            if (s == Shape.RANDOM || !s.addsKernels()) {
                continue;
            }
            Random main = rnd;
            if (s.generation() > 0) {
                rnd = generator(s);
            }
            int count = chance(0.25) ? 2 : 1;
            for (int i = 0; i < count; i++) {
                int id = extras.size();
                extras.add(switch (s) {
                    case REF_OUT -> makeRefOut(id);
                    case BARRIER_RETURN -> makeBarrier(id, false);
                    case BARRIER_SPELLINGS -> makeBarrier(id, true);
                    case DEPENDENT -> makeDependent(id);
                    case FF_LOOP -> makeFfLoop(id);
                    case EXIT_AFTER_LAUNCH -> makeExit(id);
                    case IN_PLACE_LOOP -> makeInPlaceLoop(id);
                    case MACROS -> makeMacros(id);
                    case PARAM_FORMS -> makeParamForms(id);
                    case ALIASES -> makeAliases(id);
                    case COND_ASSIGN -> makeCondAssign(id);
                    case GOTO_LOOP -> makeGotoLoop(id);
                    case FULL_SHARED -> makeFullShared(id);
                    case LAUNCH_MACRO -> makeLaunchMacro(id);
                    case COND_DECL -> makeCondDecl(id);
                    case FULL_DYN_SHARED -> makeFullDynShared(id);
                    case STREAM_EVENT -> makeStreamEvent(id);
                    case SURVIVOR_LOOP -> makeSurvivorLoop(id);
                    case CONVERGENT_LOOP -> makeConvergentLoop(id);
                    case LOOP_JUMPS -> makeLoopJumps(id);
                    case DEPENDENT_AFTER_RETURN -> makeDependentAfterReturn(id);
                    case KERNEL_NAME_MACRO -> makeKernelNameMacro(id);
                    case LAUNCH_ERROR -> makeLaunchError(id);
                    case HIDDEN_ATTRIBUTE -> makeHiddenAttribute(id);
                    case LONE_LAUNCHER -> makeLoneLauncher(id);
                    case SPACED_CHEVRONS -> makeSpacedChevrons(id);
                    case DEDUCED_TEMPLATE -> makeDeducedTemplate(id);
                    case EXCLUSIVE_LAUNCHES -> makeExclusiveLaunches(id);
                    case IMPLICIT_CALLS -> makeImplicitCalls(id);
                    case LIBRARY_COLLECTIVES -> makeLibraryCollectives(id);
                    case SHARED_HELPERS -> makeSharedHelpers(id);
                    case PROTOTYPE_DEFAULTS -> makePrototypeDefaults(id);
                    case NAMESPACES -> makeNamespaces(id);
                    case LATE_SIGNATURE -> makeLateSignature(id);
                    case MALLOC_LIFETIME -> makeMallocLifetime(id);
                    default -> throw new IllegalStateException(s.toString());
                });
            }
            rnd = main;
        }
        boolean two = shapes.contains(Shape.TWO_FILES);
        boolean declInHeader = two && chance(0.5);
        String declPrefix = two && !declInHeader && chance(0.5) ? "extern " : "";
        if (two) {
            features.add(declInHeader ? "two-files:header" : "two-files:declared-in-main" + (declPrefix.isEmpty() ? "" : "-extern"));
        }
        List<Top> tops = new ArrayList<>();
        String parentParams = "unsigned* out, const int* data, int n, int k";
        int scratchWords = 0;
        for (Parent p : parents) {
            tops.add(new Top(p.name, parentParams, p.grid, p.block, p.n, p.k, 0, false, hostUse(two), null));
        }
        for (Extra e : extras) {
            tops.add(new Top(e.name, e.params(), e.grid, e.block, e.n, e.k, scratchWords, e.scratchWords > 0, hostUse(two), e.smem));
            scratchWords += e.scratchWords;
        }
        List<String> featureList = features.stream().distinct().toList();
        List<String> shapeNames = shapes.stream().map(s -> s.cliName).toList();
        boolean onlyRandom = shapes.equals(EnumSet.of(Shape.RANDOM));

        // --- the parts of the program, in the order of the single-file program
        StringBuilder single = new StringBuilder();
        StringBuilder kern = new StringBuilder();
        StringBuilder host = new StringBuilder();
        StringBuilder common = new StringBuilder();
        single.append("// Generated by klap.fuzz.ProgramGenerator, seed ").append(seed).append(".\n");
        single.append("// Features: ").append(String.join(" ", featureList)).append("\n");
        if (!onlyRandom) {
            single.append("// Shapes: ").append(String.join(" ", shapeNames)).append("\n");
        }
        single.append("// Self-checking: prints RESULT <hash> and PASS or FAIL. nvcc -std=c++17 -rdc=true -arch=sm_90\n");
        single.append("#include <cstdio>\n#include <vector>\n#include <cuda_runtime.h>\n\n");
        String mix = "__host__ __device__ inline unsigned fz_mix(unsigned a, unsigned b) {\n"
                + "  unsigned h = a * 0x9e3779b1u ^ (b + 0x7f4a7c15u);\n"
                + "  h ^= h >> 16; h *= 0x85ebca6bu; h ^= h >> 13; h *= 0xc2b2ae35u; h ^= h >> 16;\n"
                + "  return h;\n}\n\n";
        single.append(mix);
        single.append("static long long fz_launches = 0;\n\n");
        String gen = "// Generated by klap.fuzz.ProgramGenerator, seed " + seed + ": a two-file program, " + KERNELS_FILE
                + " (the CDP kernels,\n// what klap transforms), " + MAIN_FILE + " (host code and CPU reference, which klap never sees) and "
                + COMMON_HEADER + ".\n";
        kern.append(gen).append("// This is ").append(KERNELS_FILE).append(".\n");
        kern.append("// Features: ").append(String.join(" ", featureList)).append("\n");
        kern.append("// Shapes: ").append(String.join(" ", shapeNames)).append("\n");
        kern.append("// Self-checking: the program prints RESULT <hash> and PASS or FAIL. nvcc -std=c++17 -rdc=true -arch=sm_90 ")
                .append(KERNELS_FILE).append(' ').append(MAIN_FILE).append("\n");
        kern.append("#include <cuda_runtime.h>\n#include \"").append(COMMON_HEADER).append("\"\n\n");
        host.append(gen).append("// This is ").append(MAIN_FILE).append(": it launches the kernels of ").append(KERNELS_FILE)
                .append(" and checks them against the CPU.\n");
        host.append("#include <cstdio>\n#include <vector>\n#include <cuda_runtime.h>\n#include \"").append(COMMON_HEADER).append("\"\n\n");
        host.append("static long long fz_launches = 0;\n\n");
        StringBuilder decls = new StringBuilder();
        for (Top t : tops) {
            decls.append(declPrefix).append("__global__ void ").append(t.name).append('(').append(t.params).append(");\n");
        }
        if (two && !declInHeader) {
            host.append("// the kernels of ").append(KERNELS_FILE).append("\n").append(decls).append('\n');
        }
        for (Extra e : extras) {
            if (two && e.attrChild() != null) {
                host.append("// a child kernel of ").append(KERNELS_FILE).append(", for its attribute (klap never sees this file)\n")
                        .append("__global__ void ").append(e.attrChild()).append("(unsigned* out, unsigned tag, unsigned words);\n\n");
            }
        }
        common.append(gen).append("// This is ").append(COMMON_HEADER).append(", included by both.\n#pragma once\n#include <cuda_runtime.h>\n\n");
        common.append(mix);
        if (commonDecls.length() > 0) {
            common.append("// kernels of ").append(KERNELS_FILE).append(" declared only here, defined after their first use there\n")
                    .append(commonDecls).append('\n');
        }
        if (declInHeader) {
            common.append("// the kernels of ").append(KERNELS_FILE).append(", launched from ").append(MAIN_FILE).append("\n").append(decls);
        }
        // device and CPU parts: both go to the single file, in this order
        java.util.function.BiConsumer<String, String> part = (d, c) -> {
            single.append(d).append(c);
            kern.append(d);
            host.append(c);
        };
        for (String h : helpers) {
            part.accept(h, "");
        }
        for (String h : helpersCpu) {
            part.accept("", h);
        }
        part.accept("\n", "");
        for (Child c : children) {
            part.accept(childDevice(c) + "\n", childCpu(c) + "\n");
        }
        for (Launcher l : launchers) {
            part.accept(l.device + "\n", l.cpu + "\n");
        }
        for (Parent p : parents) {
            StringBuilder g = new StringBuilder();
            g.append("static void ").append(p.name).append("_grid_cpu(dim3 gD, dim3 bD, unsigned* out, const int* data, int n, int k) {\n");
            g.append("  for (unsigned bz = 0; bz < gD.z; ++bz) for (unsigned by = 0; by < gD.y; ++by) for (unsigned bx = 0; bx < gD.x; ++bx)\n");
            g.append("    for (unsigned tz = 0; tz < bD.z; ++tz) for (unsigned ty = 0; ty < bD.y; ++ty) for (unsigned tx = 0; tx < bD.x; ++tx)\n");
            g.append("      ").append(p.name).append("_cpu(dim3(tx, ty, tz), dim3(bx, by, bz), bD, gD, out, data, n, k);\n}\n\n");
            part.accept(p.device + "\n", p.cpu + "\n" + g);
        }
        for (Extra e : extras) {
            part.accept(e.device + "\n", e.cpu + "\n");
        }
        StringBuilder m = new StringBuilder();
        m.append("#define FZ_CHECK(x) do { cudaError_t fz_e = (x); if (fz_e != cudaSuccess) { "
                + "std::printf(\"FAIL cuda %s at line %d: %s\\n\", #x, __LINE__, cudaGetErrorString(fz_e)); return 1; } } while (0)\n\n");
        m.append("int main() {\n");
        m.append("  std::vector<int> data(").append(DATA_N).append(");\n");
        m.append("  for (int i = 0; i < ").append(DATA_N).append("; ++i) data[i] = (int)(fz_mix(i, ").append(seed % 100000)
                .append("u) % 1000u);\n");
        m.append("  std::vector<unsigned> expected(").append(OUT_N).append(", 0u), got(").append(OUT_N).append(", 0u);\n");
        if (scratchWords > 0) {
            m.append("  std::vector<unsigned> fz_scr_expected(").append(scratchWords).append(", 0u), fz_scr_got(").append(scratchWords)
                    .append(", 0u);\n");
        }
        for (Top t : tops) {
            m.append("  ").append(t.name).append("_grid_cpu(dim3(").append(t.grid).append("), dim3(").append(t.block)
                    .append("), expected.data(), data.data(), ").append(t.scratch ? "fz_scr_expected.data() + " + t.scratchOffset + ", " : "")
                    .append(t.n).append(", ").append(t.k).append(");\n");
        }
        m.append("  size_t fz_pending = (size_t)(fz_launches * 2 + 4096);\n");
        m.append("  if (fz_pending < 32768) fz_pending = 32768;\n");
        m.append("  FZ_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, fz_pending));\n");
        m.append("  unsigned* out = nullptr; int* ddata = nullptr;\n");
        m.append("  FZ_CHECK(cudaMalloc(&out, sizeof(unsigned) * ").append(OUT_N).append("));\n");
        m.append("  FZ_CHECK(cudaMalloc(&ddata, sizeof(int) * ").append(DATA_N).append("));\n");
        m.append("  FZ_CHECK(cudaMemset(out, 0, sizeof(unsigned) * ").append(OUT_N).append("));\n");
        m.append("  FZ_CHECK(cudaMemcpy(ddata, data.data(), sizeof(int) * ").append(DATA_N).append(", cudaMemcpyHostToDevice));\n");
        if (scratchWords > 0) {
            m.append("  unsigned* fz_scr = nullptr;\n");
            m.append("  FZ_CHECK(cudaMalloc(&fz_scr, sizeof(unsigned) * ").append(scratchWords).append("));\n");
            m.append("  FZ_CHECK(cudaMemset(fz_scr, 0, sizeof(unsigned) * ").append(scratchWords).append("));\n");
        }
        for (Extra e : extras) {
            if (e.attrChild() == null) {
                continue;
            }
            // the child's own limit, raised where klap cannot see it (Shape.HIDDEN_ATTRIBUTE)
            String set = "cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024";
            m.append(two ? "  FZ_CHECK(cudaFuncSetAttribute(" + e.attrChild() + ", " + set + "));\n"
                    : "  {\n    const void* fz_hk = (const void*)" + e.attrChild() + ";\n    FZ_CHECK(cudaFuncSetAttribute(fz_hk, "
                            + set + "));\n  }\n");
        }
        for (int i = 0; i < tops.size(); i++) {
            Top t = tops.get(i);
            m.append(two ? hostLaunch(t) : "  " + t.name + "<<<" + t.config() + ">>>(" + t.args() + ");\n");
            m.append("  FZ_CHECK(cudaGetLastError());\n");
        }
        m.append("  FZ_CHECK(cudaDeviceSynchronize());\n");
        m.append("  FZ_CHECK(cudaMemcpy(got.data(), out, sizeof(unsigned) * ").append(OUT_N).append(", cudaMemcpyDeviceToHost));\n");
        if (scratchWords > 0) {
            m.append("  FZ_CHECK(cudaMemcpy(fz_scr_got.data(), fz_scr, sizeof(unsigned) * ").append(scratchWords)
                    .append(", cudaMemcpyDeviceToHost));\n");
            m.append("  FZ_CHECK(cudaFree(fz_scr));\n");
        }
        m.append("  FZ_CHECK(cudaFree(out));\n  FZ_CHECK(cudaFree(ddata));\n");
        m.append("  unsigned h = 2166136261u; int bad = -1;\n");
        m.append("  for (int i = 0; i < ").append(OUT_N).append("; ++i) {\n");
        m.append("    h = (h ^ got[i]) * 16777619u;\n");
        m.append("    if (bad < 0 && got[i] != expected[i]) bad = i;\n  }\n");
        if (scratchWords > 0) {
            m.append("  int bad_scr = -1;\n");
            m.append("  for (int i = 0; i < ").append(scratchWords).append("; ++i) {\n");
            m.append("    h = (h ^ fz_scr_got[i]) * 16777619u;\n");
            m.append("    if (bad_scr < 0 && fz_scr_got[i] != fz_scr_expected[i]) bad_scr = i;\n  }\n");
        }
        m.append("  std::printf(\"RESULT %08x\\n\", h);\n");
        m.append("  if (bad >= 0) {\n");
        m.append("    std::printf(\"FAIL fz seed ").append(seed).append(": slot %d is %u, expected %u (%lld child launches on the CPU)\\n\", "
                + "bad, got[bad], expected[bad], fz_launches);\n    return 1;\n  }\n");
        if (scratchWords > 0) {
            m.append("  if (bad_scr >= 0) {\n");
            m.append("    std::printf(\"FAIL fz seed ").append(seed).append(": scratch word %d is %u, expected %u (%lld child launches on the CPU)\\n\", "
                    + "bad_scr, fz_scr_got[bad_scr], fz_scr_expected[bad_scr], fz_launches);\n    return 1;\n  }\n");
        }
        m.append("  std::printf(\"PASS fz seed ").append(seed).append(" (%lld child launches)\\n\", fz_launches);\n");
        m.append("  return 0;\n}\n");
        single.append(m);
        host.append(m);
        int sites = siteCount + launchers.size() + (int) children.stream().filter(c -> c.recursive).count();
        for (Extra e : extras) {
            sites += e.sites;
        }
        Map<String, String> files = new LinkedHashMap<>();
        String kernelFile;
        if (two) {
            files.put(KERNELS_FILE, kern.toString());
            files.put(MAIN_FILE, host.toString());
            files.put(COMMON_HEADER, common.toString());
            kernelFile = KERNELS_FILE;
        } else {
            kernelFile = String.format("fz_%06d.cu", seed);
            files.put(kernelFile, single.toString());
        }
        return new Program(seed, Collections.unmodifiableSet(shapes), Collections.unmodifiableMap(files), kernelFile, sites,
                String.join(" ", featureList));
    }

    private HostUse hostUse(boolean two) {
        if (!two) {
            return HostUse.PLAIN;
        }
        HostUse u = HostUse.values()[pick(HostUse.values().length)];
        features.add("two-files:" + u.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-'));
        return u;
    }
}
