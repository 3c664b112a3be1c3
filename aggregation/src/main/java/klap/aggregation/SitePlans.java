package klap.aggregation;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import klap.model.FunctionDef;

/**
 * The final plans of a unit's launch sites (what {@link SitePlanner} decided) and the questions the
 * emitters ask about them, chiefly the layout of a kernel-granularity parent's state (KLAP II-B):
 * <pre>
 * klap::kstate of parent f:  [ plain grid-wide sites: one slot each, source order | per-round sites: Q slots each ]
 *                            host_kstate(P)  or  host_kstate(P + KLAP_KERNEL_MAX_ORDERED * Q)
 * </pre>
 */
final class SitePlans {
    private final List<SitePlan> sites;
    /** the plans of each function (by identity), in the order the sites were found */
    private final Map<FunctionDef, List<SitePlan>> byFn = new IdentityHashMap<>();
    private final int unaggregated;
    private final Set<FunctionDef> tailFallback;

    /**
     * @param sites        the plans, in the order the sites were found
     * @param unaggregated how many device launch sites are left as written
     * @param tailFallback the kernels whose kernel-granularity launches may go out as written, into
     *                     cudaStreamTailLaunch, when the pool is full ({@link #tailFallback(FunctionDef)})
     */
    SitePlans(List<SitePlan> sites, int unaggregated, Set<FunctionDef> tailFallback) {
        this.sites = List.copyOf(sites);
        for (SitePlan s : this.sites) {
            byFn.computeIfAbsent(s.fn(), k -> new ArrayList<>()).add(s);
        }
        this.unaggregated = unaggregated;
        this.tailFallback = Set.copyOf(tailFallback);
    }

    /**
     * @return true if kernel {@code k} makes no launch that may be a tail launch, so that at kernel
     *         granularity its launches may go out as written, into {@code cudaStreamTailLaunch},
     *         when klap's pool has no room for their records (kernel.cuh {@code krecord} with a
     *         direct launcher, {@code kstate_new(n, on_full::launch_as_written)}); otherwise the
     *         exhaustion is reported and traps
     */
    boolean tailFallback(FunctionDef k) {
        return tailFallback.contains(k);
    }

    /** @return every plan, in the order the sites were found */
    List<SitePlan> all() {
        return sites;
    }

    /** @return how many device launch sites are left as written (each with a warning) */
    int unaggregated() {
        return unaggregated;
    }

    /**
     * @return the kernel-granularity sites of {@code f}: the plain ones (one bucket each, slots
     *         0..P-1 of klap::kstate) in source order, then the per-round ones (Q of them)
     */
    List<SitePlan> kernelSites(FunctionDef f) {
        List<SitePlan> all = of(f).stream().filter(SitePlan::gridWide).toList();
        List<SitePlan> out = new ArrayList<>(all.stream().filter(s -> !perRound(s)).toList());
        out.addAll(all.stream().filter(this::perRound).toList());
        return out;
    }

    /**
     * Per-round aggregation: in a kernel with a launch in a loop into an ordered stream, every
     * launch into an ordered stream is numbered per thread (klap::krecord_seq) so that the
     * thread's launches keep their order.
     */
    boolean perRound(SitePlan s) {
        return s.gridWide() && s.ordered()
                && of(s.fn()).stream().anyMatch(o -> o.gridWide() && o.ordered() && o.inLoop());
    }

    /** @return the per-round sites of {@code f}, in their bucket order */
    List<SitePlan> roundSites(FunctionDef f) {
        return kernelSites(f).stream().filter(this::perRound).toList();
    }

    /** @return the C++ expression of the number of klap::ksite slots {@code f}'s state needs */
    String stateSize(FunctionDef f) {
        int q = roundSites(f).size();
        int p = kernelSites(f).size() - q;
        return q == 0 ? Integer.toString(p) : p + " + KLAP_KERNEL_MAX_ORDERED * " + q;
    }

    /** @return true if {@code k} gets the hidden {@code klap::kstate* klap_ks} parameter */
    boolean hasKernelState(FunctionDef k) {
        return of(k).stream().anyMatch(SitePlan::gridWide);
    }

    /** @return true if {@code f} has an aggregated launch site */
    boolean hasSites(FunctionDef f) {
        return !of(f).isEmpty();
    }

    /** @return true if a launch of {@code f} is deferred to the end of a region (it needs {@code klap_blk}) */
    boolean hasRegion(FunctionDef f) {
        return of(f).stream().anyMatch(s -> s.region() != null);
    }

    /** @return the plans of the sites in {@code f}, in the order they were found (a lookup, not a scan of every site) */
    List<SitePlan> of(FunctionDef f) {
        return byFn.getOrDefault(f, List.of());
    }
}
