package klap.aggregation;

import java.util.ArrayList;
import java.util.List;
import klap.model.FunctionDef;
import klap.transform.EditSet;

/**
 * Kernel granularity (KLAP II-B, Fig. 12, rebuilt for CDP2): the launches of a whole parent grid
 * become one launch per site, made by the parent grid's last block. The paper launched the
 * aggregated grid from the host after the parent ended, which excluded device-launched parents
 * and launches in loops.
 * <h2>Input</h2>
 * <pre>
 * __global__ void parent(float* p, int* cnt, int n) {
 *   int i = blockIdx.x * blockDim.x + threadIdx.x; if (i &gt;= n) return;
 *   if (cnt[i] &gt; 0) child&lt;&lt;&lt;cnt[i], 32&gt;&gt;&gt;(p + i, n);
 * }
 * </pre>
 * <h2>Output</h2>
 * <pre>
 * __global__ void parent_klap_grid(float* p, int* cnt, int n, klap::kstate* klap_ks);
 * __global__ void parent(float* p, int* cnt, int n) { ...unchanged, for code klap does not see... }
 * __global__ void parent_klap_grid(float* p, int* cnt, int n, klap::kstate* klap_ks) { [&amp;]() {
 *   int i = ...; if (i &gt;= n) return;                       // returns reach the epilogue
 *   if (cnt[i] &gt; 0) klap::krecord&lt;klap_args_child&gt;(klap_ks, 0u, dim3(cnt[i]), dim3(32), ...);
 * }(); klap::kfinish(klap_ks, 0u, [&amp;](const klap::ksite* s, dim3 g, dim3 b, ...) { child_klap_kagg_vu&lt;&lt;&lt;g, b&gt;&gt;&gt;(s, ...); }); }
 * </pre>
 * {@code krecord} is the paper's out-of-order atomic scan (one 64-bit atomic gives the record's
 * index and block offset; threads that do not launch store nothing); {@code kfinish} makes each
 * block take an acq_rel ticket, and the last one launches one grid per site. The state
 * ({@code klap::kstate}, one per parent-grid instance) is the twin's trailing parameter: host
 * launches pass {@code klap::host_kstate(N)} ({@link HostLaunches}), and an aggregated child that
 * aggregates its own launches (recursion) gets a fresh one from the pool. Launches in loops:
 * launches into {@code cudaStreamFireAndForget} are aggregated across all rounds (one grid per
 * site); in a kernel with a launch in a loop into an ordered stream, every ordered launch is
 * aggregated per round instead: each thread numbers its ordered launches ({@code klap_seq},
 * {@code krecord_seq}), launch j goes to bucket (j, site), and the last block launches the buckets
 * round by round into its NULL stream, so each thread's launches keep their order (at most
 * {@code KLAP_KERNEL_MAX_ORDERED} per thread, else a run-time error suggesting block granularity).
 */
final class GridAggregation {
    private final AggregationContext ctx;
    private final SitePlans plans;
    private final CudaText cuda;

    /** Emits the grid-wide sites of {@code plans} with the calls of {@code cuda}. */
    GridAggregation(AggregationContext ctx, SitePlans plans, CudaText cuda) {
        this.ctx = ctx;
        this.plans = plans;
        this.cuda = cuda;
    }

    /** Wraps the body of {@code f}, if it has grid-wide sites, in the lambda that returns reach and the kfinish epilogue. */
    void wrap(FunctionDef f, EditSet e) {
        if (plans.hasKernelState(f)) {
            // kernel granularity (KLAP II-B on CDP2): every return of the body comes back here, then the
            // last block of the grid to finish launches the aggregated grids
            e.insert(f.body().range().offset() + 1, plans.roundSites(f).isEmpty() ? " [&]() {"
                    : " [&]() { unsigned klap_seq = 0;");
            e.insert(f.body().range().end() - 1, "}(); " + cuda.kfinishCall(f) + " ");
        }
    }

    /** Replaces the launch of grid-wide site {@code s} by its record (klap::krecord or klap::krecord_seq). */
    void record(SitePlan s, EditSet e, EditSet fine) {
        e.replace(s.stmt().range().offset(), s.stmt().range().end(), cuda.krecordCall(s, fine));
    }

    /**
     * Leaves kernel {@code f} exactly as written and adds its aggregated form {@code f_klap_grid},
     * with {@code body} and the trailing {@code klap::kstate*} parameter, right after it: code klap
     * does not see (other files, function pointers, {@code cudaFuncSetAttribute},
     * {@code cudaLaunchKernel}) keeps {@code f}'s name and signature and runs it as written; the host
     * launches klap sees use the twin.
     */
    void addTwin(FunctionDef f, EditSet body, EditSet out) {
        int declStart = cuda.declStartBeforeUses(f);
        // the arena helper is defined after the twin; a host launch before the kernel's definition names it
        String arena = hasArenaHelper(f) ? arenaHead(f) + ";\n" : "";
        out.insert(declStart, cuda.prototypeWhereDeclared(f, klap.transform.Linkage.cpp(f, twinHead(f, false) + ";\n"
                + (declStart < CudaText.declStart(f) ? arena : ""))) + cuda.lineDirective(declStart));
        out.insert(f.range().end(), klap.transform.Linkage.cpp(f, "\n/* klap: '" + f.name() + "' at kernel granularity (KLAP II-B); '"
                + f.name() + "' itself stays as written for code klap does not see */\n" + twinHead(f, true) + "\n"
                + cuda.lineDirective(f.body().range().offset()) + body.render(f.body().range().offset(), f.body().range().end())
                + "\n" + cuda.inDefinitionNamespace(f, arenaHelper(f))) + cuda.lineDirective(f.range().end()));
    }

    /**
     * @return true if the twin of {@code f} gets {@link #arenaName its record-arena helper}: a
     *         kernel that is not a template (a host launch may deduce its template arguments, which
     *         the helper could not), not a class member, not one of several kernels of that name
     *         (overloads: their helpers would have one signature; such host launches run as written
     *         anyway), and whose sites' template arguments name none of its parameters
     *         ({@code child<decltype(+*p)>}: the helper, outside the kernel, cannot name them)
     */
    boolean hasArenaHelper(FunctionDef f) {
        if (f.templateHeader() != null || f.memberOf() != null || ctx.ambiguous(f.name())) {
            return false;
        }
        return plans.kernelSites(f).stream().noneMatch(s -> cuda.templateArgsNameParams(s, f));
    }

    /** @return the name of the record-arena helper of the twin of {@code f}: {@code f_klap_grid_karena} */
    static String arenaName(FunctionDef f) {
        return CudaText.twinName(f) + "_karena";
    }

    /**
     * The record-arena helper of {@code f}'s twin, defined right after it where the sites' record
     * types are in scope, for host launches ({@link HostLaunches}: {@code klap::host_kstate(N, f_klap_grid_karena)}):
     * <pre>
     * static inline unsigned long long parent_klap_grid_karena(unsigned long long klap_threads) {
     *   return klap::karena_bytes&lt;klap_args_child, klap_args_other&gt;(klap_threads); }
     * </pre>
     * the bytes of the base chunks of a grid of {@code klap_threads} threads (kernel.cuh, "LARGE
     * HOST-LAUNCHED GRIDS"): one per plain site, then one per per-round site (its first round), in
     * the order of the state's slots ({@link SitePlans#kernelSites}). Empty if {@code f} gets none.
     */
    private String arenaHelper(FunctionDef f) {
        if (!hasArenaHelper(f)) {
            return "";
        }
        List<String> types = plans.kernelSites(f).stream().map(cuda::argsType).toList();
        return arenaHead(f) + " { return klap::karena_bytes<" + String.join(", ", types) + ">(klap_threads); }\n";
    }

    /** @return the declaration of {@code f}'s arena helper up to its parameter list */
    private static String arenaHead(FunctionDef f) {
        return "static inline unsigned long long " + arenaName(f) + "(unsigned long long klap_threads)";
    }

    /**
     * Declaration of the twin of {@code f}: its head, name {@code f_klap_grid}, parameters plus
     * {@code klap::kstate* klap_ks}; {@code definition}: without default template arguments.
     */
    private String twinHead(FunctionDef f, boolean definition) {
        StringBuilder sb = new StringBuilder(definition ? cuda.templateHeaderOfDefinition(f) : cuda.templateHeader(f)).append(cuda.boundedDeclaration(f, definition ? f.nameRange().offset() : cuda.qualifiedNameStart(f)))
                .append(CudaText.twinName(f)).append(ctx.text, f.nameRange().end(), f.paramsRange().offset());
        List<String> ps = new ArrayList<>(cuda.paramDecls(f));
        ps.add("klap::kstate* klap_ks");
        return sb.append(String.join(", ", ps)).append(cuda.afterParams(f).trim()).toString();
    }
}
