package klap.fuzz;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

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
 * <p>Compile with {@code nvcc -std=c++17 -rdc=true -arch=sm_90}.
 */
public final class ProgramGenerator {
    /** number of output slots (a prime) */
    static final int OUT_N = 4093;
    /** number of input data words */
    static final int DATA_N = 1024;

    /** A generated program. */
    public record Program(long seed, String source, int deviceLaunchSites, String summary) {
        /** @return a file name such as {@code fz_000042.cu} */
        public String fileName() {
            return String.format("fz_%06d.cu", seed);
        }
    }

    private final Random rnd;
    private final long seed;
    private final List<Child> children = new ArrayList<>();
    private final List<String> helpers = new ArrayList<>();
    private final List<String> helpersCpu = new ArrayList<>();
    private final List<Launcher> launchers = new ArrayList<>();
    private int siteCount;
    private int varCount;
    private int launchesInBody;
    private final List<String> features = new ArrayList<>();

    private ProgramGenerator(long seed) {
        this.seed = seed;
        this.rnd = new Random(seed * 0x9E3779B97F4A7C15L + 12345);
    }

    /** @return the program for {@code seed} */
    public static Program generate(long seed) {
        return new ProgramGenerator(seed).build();
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

    // ------------------------------------------------------------------ program

    private Program build() {
        makeHelpers();
        makeChildren();
        makeLaunchers();
        int np = 1 + pick(2);
        List<Parent> parents = new ArrayList<>();
        for (int i = 0; i < np; i++) {
            parents.add(makeParent(i));
        }
        StringBuilder sb = new StringBuilder();
        sb.append("// Generated by klap.fuzz.ProgramGenerator, seed ").append(seed).append(".\n");
        sb.append("// Features: ").append(String.join(" ", features.stream().distinct().toList())).append("\n");
        sb.append("// Self-checking: prints RESULT <hash> and PASS or FAIL. nvcc -std=c++17 -rdc=true -arch=sm_90\n");
        sb.append("#include <cstdio>\n#include <vector>\n#include <cuda_runtime.h>\n\n");
        sb.append("__host__ __device__ inline unsigned fz_mix(unsigned a, unsigned b) {\n");
        sb.append("  unsigned h = a * 0x9e3779b1u ^ (b + 0x7f4a7c15u);\n");
        sb.append("  h ^= h >> 16; h *= 0x85ebca6bu; h ^= h >> 13; h *= 0xc2b2ae35u; h ^= h >> 16;\n");
        sb.append("  return h;\n}\n\n");
        sb.append("static long long fz_launches = 0;\n\n");
        for (String h : helpers) {
            sb.append(h);
        }
        for (String h : helpersCpu) {
            sb.append(h);
        }
        sb.append('\n');
        for (Child c : children) {
            sb.append(childDevice(c)).append('\n').append(childCpu(c)).append('\n');
        }
        for (Launcher l : launchers) {
            sb.append(l.device).append('\n').append(l.cpu).append('\n');
        }
        for (Parent p : parents) {
            sb.append(p.device).append('\n').append(p.cpu).append('\n');
            sb.append("static void ").append(p.name).append("_grid_cpu(dim3 gD, dim3 bD, unsigned* out, const int* data, int n, int k) {\n");
            sb.append("  for (unsigned bz = 0; bz < gD.z; ++bz) for (unsigned by = 0; by < gD.y; ++by) for (unsigned bx = 0; bx < gD.x; ++bx)\n");
            sb.append("    for (unsigned tz = 0; tz < bD.z; ++tz) for (unsigned ty = 0; ty < bD.y; ++ty) for (unsigned tx = 0; tx < bD.x; ++tx)\n");
            sb.append("      ").append(p.name).append("_cpu(dim3(tx, ty, tz), dim3(bx, by, bz), bD, gD, out, data, n, k);\n}\n\n");
        }
        sb.append("#define FZ_CHECK(x) do { cudaError_t fz_e = (x); if (fz_e != cudaSuccess) { "
                + "std::printf(\"FAIL cuda %s at line %d: %s\\n\", #x, __LINE__, cudaGetErrorString(fz_e)); return 1; } } while (0)\n\n");
        sb.append("int main() {\n");
        sb.append("  std::vector<int> data(").append(DATA_N).append(");\n");
        sb.append("  for (int i = 0; i < ").append(DATA_N).append("; ++i) data[i] = (int)(fz_mix(i, ").append(seed % 100000)
                .append("u) % 1000u);\n");
        sb.append("  std::vector<unsigned> expected(").append(OUT_N).append(", 0u), got(").append(OUT_N).append(", 0u);\n");
        for (Parent p : parents) {
            sb.append("  ").append(p.name).append("_grid_cpu(dim3(").append(p.grid).append("), dim3(").append(p.block)
                    .append("), expected.data(), data.data(), ").append(p.n).append(", ").append(p.k).append(");\n");
        }
        sb.append("  size_t fz_pending = (size_t)(fz_launches * 2 + 4096);\n");
        sb.append("  if (fz_pending < 32768) fz_pending = 32768;\n");
        sb.append("  FZ_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, fz_pending));\n");
        sb.append("  unsigned* out = nullptr; int* ddata = nullptr;\n");
        sb.append("  FZ_CHECK(cudaMalloc(&out, sizeof(unsigned) * ").append(OUT_N).append("));\n");
        sb.append("  FZ_CHECK(cudaMalloc(&ddata, sizeof(int) * ").append(DATA_N).append("));\n");
        sb.append("  FZ_CHECK(cudaMemset(out, 0, sizeof(unsigned) * ").append(OUT_N).append("));\n");
        sb.append("  FZ_CHECK(cudaMemcpy(ddata, data.data(), sizeof(int) * ").append(DATA_N).append(", cudaMemcpyHostToDevice));\n");
        for (Parent p : parents) {
            sb.append("  ").append(p.name).append("<<<").append(p.grid).append(", ").append(p.block).append(">>>(out, ddata, ")
                    .append(p.n).append(", ").append(p.k).append(");\n");
            sb.append("  FZ_CHECK(cudaGetLastError());\n");
        }
        sb.append("  FZ_CHECK(cudaDeviceSynchronize());\n");
        sb.append("  FZ_CHECK(cudaMemcpy(got.data(), out, sizeof(unsigned) * ").append(OUT_N).append(", cudaMemcpyDeviceToHost));\n");
        sb.append("  FZ_CHECK(cudaFree(out));\n  FZ_CHECK(cudaFree(ddata));\n");
        sb.append("  unsigned h = 2166136261u; int bad = -1;\n");
        sb.append("  for (int i = 0; i < ").append(OUT_N).append("; ++i) {\n");
        sb.append("    h = (h ^ got[i]) * 16777619u;\n");
        sb.append("    if (bad < 0 && got[i] != expected[i]) bad = i;\n  }\n");
        sb.append("  std::printf(\"RESULT %08x\\n\", h);\n");
        sb.append("  if (bad >= 0) {\n");
        sb.append("    std::printf(\"FAIL fz seed ").append(seed).append(": slot %d is %u, expected %u (%lld child launches on the CPU)\\n\", "
                + "bad, got[bad], expected[bad], fz_launches);\n    return 1;\n  }\n");
        sb.append("  std::printf(\"PASS fz seed ").append(seed).append(" (%lld child launches)\\n\", fz_launches);\n");
        sb.append("  return 0;\n}\n");
        String src = sb.toString();
        return new Program(seed, src, siteCount + launchers.size() + (int) children.stream().filter(c -> c.recursive).count(),
                String.join(" ", features.stream().distinct().toList()));
    }
}
