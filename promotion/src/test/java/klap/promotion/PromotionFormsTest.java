package klap.promotion;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * The inputs of the review of the promotion pass (2026-11-23), each the smallest program that showed
 * one problem, in {@code src/test/resources/promote/forms/}: what klap must decide for each (promote,
 * refuse with a reason, postpone an argument, keep or drop the overlap), and that every promoted
 * output compiles with nvcc (device code, {@code -cubin}; PAO-128).
 */
class PromotionFormsTest {
    private static final Path FORMS = Path.of("src/test/resources/promote/forms");

    private static PromotionPass.Result run(String file, PromoteMode mode) throws IOException {
        String code = Files.readString(FORMS.resolve(file + ".cu"), StandardCharsets.UTF_8);
        return PromotionPassTest.run(code, mode, 128);
    }

    private static String diags(PromotionPass.Result r) {
        StringBuilder sb = new StringBuilder();
        r.diagnostics().forEach(d -> sb.append(d.format()).append('\n'));
        return sb.toString();
    }

    private static void refused(String file, PromoteMode mode, String why) throws IOException {
        PromotionPass.Result r = run(file, mode);
        assertTrue(r.promoted().isEmpty() && diags(r).contains(why), file + " " + mode + ": " + diags(r));
    }

    private static void noOverlap(String file, String why) throws IOException {
        PromotionPass.Result r = run(file, PromoteMode.PAO);
        assertTrue(!r.promoted().isEmpty() && !klap.transform.Lexical.blankCommentsAndLiterals(r.text())
                .contains("await_exists") && diags(r).contains(why),
                file + ": " + diags(r));
    }

    /**
     * Checks the postponed-arguments struct: {@code struct} is written as the members' declarations
     * ({@code struct K_klap_post { int t; int acc; };}); the output holds each as bytes of its
     * parameter's type ({@code klap::promote::bytes<klap::promote::param_t<void(...), 3u>> t;}), in order.
     */
    private static void postponed(String file, String struct) throws IOException {
        PromotionPass.Result r = run(file, PromoteMode.PA);
        assertEquals(PromotionPassTest.memberNames(struct), PromotionPassTest.postMembers(r.text()),
                file + ": expected " + struct + "\n" + r.text());
    }

    @Test
    void theOverlapNeedsEveryReadAndWriteTraced() throws IOException {
        noOverlap("ov_arrow", "writes through 'st'");      // st->total read before, written after the pragma
        noOverlap("ov_call", "condition 2");             // put(buf + t + 1, ...) may write through its pointer
        noOverlap("ov_store", "condition 2");             // cub::BlockStore::Store writes through its pointer
        noOverlap("ov_struct", "writes through 'a'");      // a.data[t] read, a.data[t + 1] written
        noOverlap("ov_global", "writes through 'g_last'"); // a __device__ scalar
        noOverlap("ov_alias", "writes through 'buf'");     // read through a local copy of buf
        // the second review (helper 12)
        noOverlap("sharedptr", "condition 2");             // __shared__ int* dst = buf + ...; dst[tid] = ...
        noOverlap("ptrarr", "condition 2");                // int* bufs[2]; bufs[0][t + 1] = ...
        noOverlap("pi_sharedptr", "writes 'src[threadIdx.x]'"); // a write through a __shared__ pointer before the pragma
        noOverlap("recwrite", "writes through 'recs'");    // recs[t + 1].v = ...
        noOverlap("derefwrite", "writes through 'recs'");  // (*recs).v = ...
        noOverlap("refwrite2", "condition 2");             // int& slot = p[...]; slot = ...
        noOverlap("refarg", "condition 2");                // set(buf[t + 1], v) with set(int&, int)
        noOverlap("calleewrite3", "condition 2");          // put() writes a __device__ array
        noOverlap("argwrite", "writes through 'buf'");     // atomicExch(&buf[t + 1], ...) in the launch's arguments
        noOverlap("calleeread", "calls 'get'");            // get() reads a global the dependent prologue writes
        noOverlap("intfirst", "writes through 'buf'");     // *(t + buf): the pointer is the second operand
        PromotionPass.Result autot = run("autot", PromoteMode.PAO);  // auto base = t * 64 does not write t
        assertTrue(autot.text().contains("await_exists"), diags(autot));
    }

    @Test
    void valuesThatChangeOrRoundDifferentlyArePostponed() throws IOException {
        postponed("fstep", "struct K_klap_post { int t; };");          // t + f with a float step
        postponed("mut_cast", "struct K_klap_post { int t; };");       // const_cast<int&>(t) += 1
        postponed("mut", "struct K_klap_post { int t; };");            // struct W { int& r; }; W w{t};
        postponed("shadow_const", "struct K_klap_post { int t; int acc; };"); // a local STEP shadows the global
        postponed("ldouble", "struct K_klap_post { int t; };");        // const long double STEP is no integer
        postponed("autot", "struct K_klap_post { int acc; };");        // t stays an induction argument
    }

    /**
     * Review 2026-11-25 (rv_*.cu, the review's programs): code klap cannot see or shadow. With PA a
     * pool block's hardware blockIdx is its position in the pool, so a static member, a qualified
     * helper, a constructor, a default argument, a helper reading the index through a macro and asm
     * written by a macro that read it gave wrong tiles; texture fetches and __ldg behind a qualified
     * name read stale data in every mode; a helper only declared here may do either.
     */
    @Test
    void reviewUnseenIndexReadsAndNonCoherentLoadsAreRefused() throws IOException {
        for (String f : List.of("rv_static_bid", "rv_ns_bid", "rv_defarg_bid", "rv_macro_bid")) {
            refused(f, PromoteMode.PA, "which reads blockIdx");
        }
        refused("rv_ctor_bid", PromoteMode.PA, "whose class reads blockIdx");
        refused("rv_ctor0_bid", PromoteMode.PAO, "whose class reads blockIdx");
        refused("rv_asm_ctaid", PromoteMode.PA, "asm reads %ctaid");
        refused("rv_proto_bid", PromoteMode.P, "whose body klap does not see");
        refused("rv_tex", PromoteMode.P, "tex1Dfetch");
        refused("rv_ns_ldg", PromoteMode.PO, "__ldg");
        // P shadows nothing and needs nothing shadowed: the same helpers are fine there
        assertEquals(List.of("K"), run("rv_static_bid", PromoteMode.P).promoted());
    }

    /**
     * Review 2026-11-25: a parameter written through a typedef'd reference, through a helper only
     * declared here (named like a CUDA built-in: now refused, its body is not seen), or by asm written by a macro is postponed, not an
     * induction (descendant j computed t + j while the original skipped ahead).
     */
    @Test
    void reviewParametersWrittenBehindKlapsBackArePostponed() throws IOException {
        postponed("rv_refparam_typedef", "struct K_klap_post { int t; };");
        refused("rv_refparam_proto", PromoteMode.P, "'make_nonempty', whose body klap does not see");
        postponed("rv_mac_asm_write", "struct K_klap_post { unsigned t; };");
    }

    /**
     * Review 2026-11-27: work the original orders before the next link in the NULL stream (a device
     * cudaMemcpyAsync, a worker launched from a helper or a lambda) is refused; a parameter written
     * through a structured binding or a by-reference init-capture is postponed (it was passed as
     * at the start of the link); ld.global with cache qualifiers before .nc is a non-coherent load.
     */
    @Test
    void reviewStreamWorkBeforeTheSuccessorAndAliasedWrites() throws IOException {
        for (PromoteMode m : PromoteMode.values()) {
            refused("rv2_memcpy_async", m, "makes the stream operation cudaMemcpyAsync");
            // review 2026-11-29: a CUB device-wide algorithm launches its kernels there (it passed as a library call)
            refused("rv3_cub_device", m, "cub::DeviceReduce::Sum, a CUB device-wide algorithm");
            refused("rv2_helper_launch", m, "it launches 'work'");
            refused("rv2_lam_launch", m, "it launches 'work'");
        }
        PromotionPass.Result r = run("rv2_pass_written", PromoteMode.P);
        assertEquals(List.of("KS", "KL"), r.promoted(), diags(r));
        assertTrue(r.text().contains("struct KS_klap_post { klap::promote::bytes<klap::promote::param_t<void(Range r, "
                + "int* out, int t, int n), 0u>> r; };"), r.text());
        assertTrue(r.text().contains("struct KL_klap_post { klap::promote::bytes<klap::promote::param_t<void(int base, "
                + "int* out, int t, int n), 0u>> base; };"), r.text());
        // the overlap check sees the write through the binding after the pragma (KLAP III-C, condition 2)
        noOverlap("rv2_overlap_binding", "writes through a pointer klap cannot trace");
        PromotionPass.Result nc = run("rv2_nc_qualified", PromoteMode.P);
        assertTrue(nc.promoted().isEmpty(), diags(nc));
        assertEquals(2, nc.diagnostics().stream().filter(d -> d.message().contains("non-coherent")).count(), diags(nc));
    }

    /**
     * Review 2026-11-27 (second): what promotion must see but did not: an index read through
     * cuda::ptx, non-coherent loads through cuda::ptx or a file-scope CUB load modifier, code under
     * __CUDA_ARCH__, a launch in a member function, __ldg in an operator, a call through a function
     * pointer, an operator reading blockIdx, a thread-index alias too narrow for threadIdx.x; and in the
     * overlap check, writes through collectives' reference arguments and constructors, reads through
     * struct members and local structs, lambdas naming postponed parameters.
     */
    @Test
    void review3WhatPromotionDidNotSeeIsRefused() throws IOException {
        refused("rv3_1_ptx_ctaid_pool", PromoteMode.PA, "'cuda::ptx::get_sreg_ctaid_x', whose body klap does not see");
        refused("rv3_2_library_noncoherent", PromoteMode.P, "a non-coherent load modifier");
        refused("rv3_6_cuda_arch_hidden", PromoteMode.PA, "'load', whose body klap does not see");
        PromotionPass.Result arch = run("rv3_6_cuda_arch_hidden", PromoteMode.P);
        assertTrue(arch.promoted().isEmpty(), diags(arch));
        for (PromoteMode m : List.of(PromoteMode.P, PromoteMode.PO)) {
            refused("rv3_7_member_call_unchecked", m, "uses 'RO', whose 'operator []' reads blockIdx");
        }
        refused("rv3_8_operator_blockidx_pool", PromoteMode.PA, "uses 'Rows', whose 'operator []' reads blockIdx");
        refused("rv3_9_narrow_tid_alias", PromoteMode.P, "only one thread");
        noOverlap("rv3_3_overlap_missed_writes", "the prologue after the pragma writes");
        noOverlap("rv3_4_overlap_missed_reads", "reads memory through a pointer that klap cannot trace");
        noOverlap("rv3_5_overlap_lambda_postponed", "defines a lambda");
        noOverlap("rv3_5b_overlap_lambda_postponed_global", "defines a lambda");
    }

    /** Plain values passed to collectives in the independent prologue (math calls, value macros, functors) keep the overlap. */
    @Test
    void review3PlainValueArgumentsKeepTheOverlap() throws IOException {
        String code = """
                using Scan = cub::BlockScan<float, 256>;
                __global__ void k(const float* a, float* out, int n, int tile, float off) {
                  __shared__ typename Scan::TempStorage tmp;
                  float x = a[tile * 256 + threadIdx.x];
                  float2 p = make_float2(x, 1.0f);
                  float pos, cnt;
                  Scan(tmp).ExclusiveScan(fmaxf(fabsf(x), p.y), pos, -INFINITY, cuda::maximum<float>{}, cnt);
                #pragma klap overlap
                  if (threadIdx.x == 0 && tile + 1 < n) k<<<1, blockDim.x>>>(a, out, n, tile + 1, off + cnt);
                  out[tile * 256 + threadIdx.x] = pos + off;
                }
                """;
        PromotionPass.Result r = PromotionPassTest.run(code, PromoteMode.PO, 128);
        assertTrue(r.promoted().equals(List.of("k")) && r.text().contains("await_exists") && !diags(r).contains("no overlap"),
                diags(r));
    }

    /** A member function's launch or __ldg, and a call through a local function pointer, without operators in the file. */
    @Test
    void review3MemberCallsAndFunctionPointersAreFollowedOrRefused() throws IOException {
        String member = """
                __global__ void fill(int* b, int t) { b[threadIdx.x] = t; }
                struct Tile { int* b; __device__ void refill(int t) { fill<<<1, 32>>>(b, t); } };
                __global__ void K(int* b, int t, int n) {
                  Tile tile{b};
                  if (threadIdx.x == 0) tile.refill(t);
                  if (threadIdx.x == 0 && t + 1 < n) K<<<1, 32>>>(b, t + 1, n);
                }
                """;
        PromotionPass.Result r = PromotionPassTest.run(member, PromoteMode.P, 128);
        assertTrue(r.promoted().isEmpty() && diags(r).contains("it launches 'fill'"), diags(r));
        String pointer = """
                __device__ int ro_load(const int* p) { return __ldg(p); }
                __global__ void K(const int* in, int* out, int t, int n) {
                  int (*ld)(const int*) = ro_load;
                  out[t] = ld(in + t);
                  if (threadIdx.x == 0 && t + 1 < n) K<<<1, 32>>>(in, out, t + 1, n);
                }
                """;
        r = PromotionPassTest.run(pointer, PromoteMode.P, 128);
        assertTrue(r.promoted().isEmpty() && diags(r).contains("it calls through 'ld'"), diags(r));
    }

    /**
     * The fourth review (2026-12-01, {@code rv4_*}): each was promoted without a word and hung (a
     * successor polling forever), read a stale value, or computed with a name that meant something
     * else where klap evaluated it. Now refused, without the overlap, or with the argument postponed.
     */
    @Test
    void review4WhatPromotionMisreadIsRefusedOrPostponed() throws IOException {
        for (PromoteMode m : PromoteMode.values()) {
            refused("rv4_exit_hang", m, "ends threads with asm exit or ret");
            refused("rv4_fnptr_launch", m, "calls through '*spawner'");
            refused("rv4_ldg_iterator", m, "it is a template, and the file names");
            refused("rv4_tex_iterator", m, "a non-coherent load modifier or a texture iterator");
            refused("rv4_using_other", m, "declares 'using ...K;'");
            refused("rv4_name_capture", m, "names 'klap_j'");
        }
        refused("rv4_pa_clusteridx", PromoteMode.PA, "cluster index");
        refused("rv4_pa_clusteridx", PromoteMode.PAO, "cluster index");
        // a user's max(const int*, int) is not the math function: the condition reads memory
        noOverlap("rv4_pure_name_hang", "'t < max(level, 4)' uses a value computed in the kernel");
        // a user's min(int*, int) stores: the overlap check sees the write
        noOverlap("rv4_pure_name_stale", "writes through a pointer klap cannot trace");
        // a local enumerator shadows a file constant: the condition is not evaluated early, the step is postponed
        noOverlap("rv4_local_enum_cond", "'t < LIMIT' uses a value computed in the kernel");
        postponed("rv4_local_enum_step", "struct K_klap_post { int t; };");
        // sizeof of a local struct or variable: postponed (it named the file's struct, or did not compile)
        postponed("rv4_sizeof_scope", "struct K_klap_post { const char* rec; };");
        postponed("rv4_sizeof_local", "struct K_klap_post { const char* base; };");
        // a call through a parameter (a typedef'd function pointer) and through a table
        String table = """
                __global__ void fill(int* b, int t) { b[t] = t; }
                __device__ void spawn(int* b, int t) { fill<<<1, 1>>>(b, t); }
                typedef void (*Spawn)(int*, int);
                __device__ Spawn table[1] = {spawn};
                __global__ void K(int* b, int t, int n, Spawn f) {
                  if (threadIdx.x == 0 && t + 1 < n) { f(b, t); table[0](b, t); K<<<1, 32>>>(b, t + 1, n, f); }
                }
                """;
        PromotionPass.Result r = PromotionPassTest.run(table, PromoteMode.P, 128);
        assertTrue(r.promoted().isEmpty() && diags(r).contains("it calls through its parameter 'f'"), diags(r));
        r = PromotionPassTest.run(table.replace("f(b, t); ", ""), PromoteMode.P, 128);
        assertTrue(r.promoted().isEmpty() && diags(r).contains("it calls through 'table[0]'"), diags(r));
        // the needless refusal of threadIdx.x == 0u
        r = PromotionPassTest.run("""
                __global__ void K(int* out, int t, int n) {
                  if (threadIdx.x == 0u) out[t] = t;
                  if (threadIdx.x == 0u && t + 1 < n) K<<<1, 32>>>(out, t + 1, n);
                }
                """, PromoteMode.P, 128);
        assertEquals(List.of("K"), r.promoted(), diags(r));
        // and of blockDim.x in the dynamic shared memory size where the launch's block is blockDim.x: the
        // same in every descendant (with a block of 32 it is not: the host may launch the first with 64)
        String smem = """
                __global__ void K(int* out, int t, int n) {
                  extern __shared__ int buf[];
                  buf[threadIdx.x] = t;
                  __syncthreads();
                  if (threadIdx.x == 0) out[t] = buf[0];
                  if (threadIdx.x == 0 && t + 1 < n) K<<<1, blockDim.x, blockDim.x * sizeof(int)>>>(out, t + 1, n);
                }
                """;
        for (PromoteMode m : PromoteMode.values()) {
            r = PromotionPassTest.run(smem, m, 4);
            assertEquals(List.of("K"), r.promoted(), m + ": " + diags(r));
        }
        r = PromotionPassTest.run(smem.replace("K<<<1, blockDim.x,", "K<<<1, 32,"), PromoteMode.PA, 4);
        assertTrue(r.promoted().isEmpty() && diags(r).contains("dynamic shared memory size"), diags(r));
    }

    /**
     * The review of the fourth review's fixes (2026-12-01, {@code rv5_*}): ways around each new check,
     * each promoted wrongly by f47df70 (a hang, a stale read, a value computed with another name's
     * meaning). Now refused, postponed or without the overlap.
     */
    @Test
    void review5WaysAroundTheFourthReviewsChecks() throws IOException {
        for (String f : List.of("rv5_p1a_asm_ret", "rv5_p1b_exit_in_destructor", "rv5_p1c_exit_in_lambda",
                "rv5_p1d_exit_in_operator", "rv5_p1e_exit_in_constructor")) {
            refused(f, PromoteMode.P, "ends threads with asm exit or ret");
        }
        refused("rv5_p2_invoke_launch", PromoteMode.P, "it launches 'fill'");          // cuda::std::invoke(spawn, ...)
        refused("rv5_p3_ldg_enum_value", PromoteMode.P, "it is a template, and the file names"); // CacheLoadModifier(5)
        refused("rv5_p6_using_directive_kernel", PromoteMode.P, "using-directive");
        refused("rv5_p4d_using_directive_const", PromoteMode.P, "using-directive");
        refused("rv5_p7_klap_name_macro", PromoteMode.PA, "the file names 'klap_j'");  // #define STRIDE klap_j
        refused("rv5_p8_cuda_blockidx_library", PromoteMode.PA, "hands the block index to a library");
        for (String f : List.of("rv5_p4a_enum_brace_init", "rv5_p4b_enum_attribute", "rv5_p4c_enum_macro")) {
            postponed(f, "struct K_klap_post { int t; };");
        }
        for (String f : List.of("rv5_p5a_sizeof_typedef_struct", "rv5_p5b_sizeof_struct_attribute")) {
            postponed(f, "struct K_klap_post { const char* rec; };");
        }
        // a functor object max, and a max from a header klap does not read, given a pointer
        noOverlap("rv5_p9a_pure_name_functor", "'t < max(level, 4)' uses a value computed in the kernel");
        noOverlap("rv5_p9b_pure_name_header", "'t < max(level, 4)' uses a value computed in the kernel");
    }

    @Test
    void refusals() throws IOException {
        refused("alias_shadow", PromoteMode.P, "only one thread");          // an inner tid = threadIdx.x % 32
        refused("dim3blk", PromoteMode.P, "block size 'bs'");               // a dim3 block parameter
        refused("local_const", PromoteMode.P, "block size 'nb'");           // a constant of the kernel body
        refused("cond_local", PromoteMode.PAO, "block size 'TILE'");
        refused("overload", PromoteMode.P, "overloaded");
        refused("pingpong", PromoteMode.PA, "__restrict__");
        refused("helper_bid", PromoteMode.PA, "calls 'gtid'");              // hardware blockIdx in a pool
        refused("lam_bid", PromoteMode.PAO, "a lambda in it reads blockIdx");
        refused("aref", PromoteMode.PAO, "member function 'store'");
        refused("bid", PromoteMode.PA, "member function 'row'");
        refused("rmacro", PromoteMode.P, "through 'RESTRICT'");
        refused("fptr", PromoteMode.P, "function pointer");
        refused("ovl", PromoteMode.P, "overloaded");                        // K(int*, int, long) declared only
        assertEquals(List.of("step"), run("ovl2", PromoteMode.P).promoted()); // same name in another namespace
        assertEquals(List.of("K"), run("helper_bid", PromoteMode.P).promoted()); // one block per launch: fine
        assertEquals(List.of("K"), run("lam_bid", PromoteMode.PO).promoted());
    }

    /** A self-launch without template arguments that C++ deduces as the kernel's own (PromotionPassTest). */
    @Test
    void aTemplateSelfLaunchThatDeducesTheOwnInstantiationIsPromoted() throws IOException {
        for (PromoteMode m : PromoteMode.values()) {
            assertEquals(List.of("scan"), run("tpl_deduced", m).promoted(), m.toString());
        }
    }

    /** Every promoted form compiles with nvcc (header comments, default arguments, __grid_constant__, braced arguments, ...). */
    @TestFactory
    List<DynamicTest> everyPromotedFormCompiles() throws Exception {
        Path out = Path.of("target", "promote-forms").toAbsolutePath();
        Files.createDirectories(out);
        List<String> names = new ArrayList<>();
        List<Process> procs = new ArrayList<>();
        List<Path> files;
        try (var s = Files.list(FORMS)) {
            files = s.filter(p -> p.toString().endsWith(".cu")).sorted().toList();
        }
        for (Path f : files) {
            String base = f.getFileName().toString().replace(".cu", "");
            for (PromoteMode m : List.of(PromoteMode.PAO)) { // P shapes: PromotionCompileTest
                PromotionPass.Result r = run(base, m);
                if (r.promoted().isEmpty()) {
                    continue;
                }
                Path cu = out.resolve(base + "_" + m + ".cu");
                Files.writeString(cu, r.text());
                names.add(base + " " + m);
                String env = System.getenv("NVCC");
                if (procs.size() >= 2) {
                    procs.get(procs.size() - 2).waitFor(300, TimeUnit.SECONDS); // two at a time
                }
                // device code only (-cubin): the front end still reads the whole file, host code
                // included; the host compiler's pass over its output is left out (a quarter of the
                // time, for the CI's 30 minutes; PromotionCompileTest and the regress compile tier
                // build promoted programs whole)
                procs.add(new ProcessBuilder(env != null && !env.isBlank() ? env : "nvcc", "-std=c++17", "-rdc=true",
                        "-arch=sm_90", "-I", Path.of("..", "runtime-lib", "src", "main", "resources").toString(),
                        // the <...> headers of rv5_* forms, which klap does not read
                        "-I", FORMS.resolve("include").toString(), "-cubin", "-o",
                        out.resolve(base + "_" + m + ".cubin").toString(), cu.toString()).redirectErrorStream(true).start());
            }
        }
        assertTrue(names.size() >= 12, "too few promoted forms: " + names);
        List<DynamicTest> tests = new ArrayList<>();
        for (int i = 0; i < procs.size(); i++) {
            Process p = procs.get(i);
            String name = names.get(i);
            tests.add(DynamicTest.dynamicTest(name, () -> {
                assertTrue(p.waitFor(300, TimeUnit.SECONDS), name + ": nvcc timed out");
                String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                assertEquals(0, p.exitValue(), name + ":\n" + log);
            }));
        }
        return tests;
    }
}
