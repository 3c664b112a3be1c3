package klap.aggregation;

import klap.model.Expr;
import klap.model.FunctionDef;
import klap.model.Stmt;
import klap.transform.Convergence;

/**
 * The plan of one device-side launch site that will be aggregated, made by {@link SitePlanner}.
 * <pre>
 * if (cnt[i] &gt; 0) child&lt;&lt;&lt;cnt[i], 32&gt;&gt;&gt;(p + i, n);     // fn: parent, stmt: the launch statement, child: child
 *   block/warp (II-A): placement Deferred(region) | Immediate(reason), mask "vu" (p + i per thread, n uniform)
 *   kernel (II-B):     gridWide, placement null, ordered (not cudaStreamFireAndForget), inLoop
 * </pre>
 *
 * @param id           unique per unit: names the site's generated variables ({@code klap_s<id>}, {@code klap_g<id>})
 * @param fn           the function that launches
 * @param stmt         the launch statement
 * @param launch       the launch
 * @param child        the launched kernel
 * @param mask         one letter per argument: {@code u} passed as a scalar (uniform across the group, KLAP
 *                     II-C), {@code v} passed through the per-parent record
 * @param placement    warp/block granularity: deferred to the end of a convergent region, or in place among
 *                     the threads of a warp that arrive together; null when {@code gridWide}
 * @param streamToNull the stream argument is thread-dependent: launch into the block's NULL stream instead
 * @param gridWide     aggregated across the whole parent grid (kernel granularity): recorded, launched by the
 *                     grid's last block
 * @param ordered      kernel granularity: the launch's stream orders launches (not cudaStreamFireAndForget)
 * @param inLoop       kernel granularity: the launch is inside a loop
 */
record SitePlan(int id, FunctionDef fn, Stmt.ExprStmt stmt, Expr.Launch launch, FunctionDef child, String mask,
                Convergence.Placement placement, boolean streamToNull, boolean gridWide, boolean ordered,
                boolean inLoop) {

    /** @return the variant the site launches: {@code agg[_mask]} (warp/block) or {@code kagg[_mask]} (kernel) */
    String variantKey() {
        return (gridWide ? "kagg" : "agg") + (mask.isEmpty() ? "" : "_" + mask);
    }

    /** @return the region the launch is deferred to, or null if it is launched in place or grid-wide */
    Convergence.Region region() {
        return placement instanceof Convergence.Placement.Deferred d ? d.region() : null;
    }

    /** @return true if the launch is deferred: to its region's end, or to the end of the grid */
    boolean deferred() {
        return gridWide || region() != null;
    }

    /** @return this plan deferred to another region ({@code placement}), with the same mask and stream */
    SitePlan withPlacement(Convergence.Placement.Deferred placement) {
        return new SitePlan(id, fn, stmt, launch, child, mask, placement, streamToNull, gridWide, ordered, inLoop);
    }

    /**
     * @return this plan launched in place instead, for {@code reason}, with the given mask and stream
     *         (recomputed for a grid-wide site, whose mask was made across the grid)
     */
    SitePlan inPlace(String reason, String newMask, boolean newStreamToNull) {
        return new SitePlan(id, fn, stmt, launch, child, newMask, new Convergence.Placement.Immediate(reason),
                newStreamToNull, false, ordered, inLoop);
    }
}
