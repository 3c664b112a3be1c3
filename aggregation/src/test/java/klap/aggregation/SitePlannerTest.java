package klap.aggregation;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import klap.model.FunctionDef;
import klap.transform.Granularity;
import org.junit.jupiter.api.Test;

/** The plans alone, before any text is emitted (KLAP II-A, II-B, II-C). */
class SitePlannerTest {

    /** Plans {@code code} at granularity {@code g}, scalarizing, with the context it was planned in. */
    private record Planned(AggregationContext ctx, SitePlans plans) {
        FunctionDef kernel(String name) {
            return ctx.kernel(name);
        }
    }

    private static Planned plan(String code, Granularity g) {
        AggregationContext ctx = new AggregationContext(Check.parse(code), new AggregationPass.Options(g, true, null));
        SitePlanner planner = new SitePlanner(ctx, new MallocAggregation(ctx));
        planner.planFunctions();
        return new Planned(ctx, planner.keepLaunchOrder());
    }

    @Test
    void aLaunchAfterADivergentReturnIsDeferredToTheRegionWithItsScalarMask() {
        Planned p = plan(AggregationPassTest.BFS, Granularity.BLOCK);
        List<SitePlan> all = p.plans().all();
        assertEquals(1, all.size());
        SitePlan s = all.get(0);
        assertEquals("uuvvu", s.mask());
        assertFalse(s.gridWide());
        assertTrue(s.region() != null && s.deferred());
        assertEquals("agg_uuvvu", s.variantKey());
        assertEquals(0, p.plans().unaggregated());
    }

    @Test
    void kernelGranularityPlansAGridWideSiteAndItsState() {
        Planned p = plan(AggregationPassTest.BFS, Granularity.KERNEL);
        SitePlan s = p.plans().all().get(0);
        assertTrue(s.gridWide() && s.ordered() && !s.inLoop());
        assertNull(s.placement());
        assertEquals("kagg_uuvvu", s.variantKey());
        assertTrue(p.plans().hasKernelState(p.kernel("parent")));
        assertFalse(p.plans().hasKernelState(p.kernel("child")));
        assertEquals("1", p.plans().stateSize(p.kernel("parent")));
    }

    @Test
    void orderedLaunchesInALoopAreNumberedPerRoundAfterThePlainSites() {
        String code = """
                __global__ void child(int* p, int r) { p[r] = r; }
                __global__ void tag(int* p) { p[0] = 1; }
                __global__ void parent(int* p, int rounds) {
                  child<<<1, 32>>>(p, -1);
                  tag<<<1, 1, 0, cudaStreamFireAndForget>>>(p);
                  for (int r = 0; r < rounds; r++) child<<<1, 32>>>(p, r);
                }
                """;
        Planned p = plan(code, Granularity.KERNEL);
        FunctionDef parent = p.kernel("parent");
        List<SitePlan> ks = p.plans().kernelSites(parent);
        assertEquals(List.of("tag", "child", "child"), ks.stream().map(s -> s.child().name()).toList());
        assertEquals(ks.subList(1, 3), p.plans().roundSites(parent));
        assertEquals("1 + KLAP_KERNEL_MAX_ORDERED * 2", p.plans().stateSize(parent));
        assertEquals("vv", ks.get(2).mask(), "rounds are merged: nothing is read from one record");
    }

    @Test
    void aRefusedLaunchHasNoPlanAndCountsAsLeftAsWritten() {
        String code = """
                __global__ void ext(int* p);
                __global__ void parent(int* p) { ext<<<1, 1>>>(p); }
                """;
        Planned p = plan(code, Granularity.BLOCK);
        assertTrue(p.plans().all().isEmpty());
        assertEquals(1, p.plans().unaggregated());
        assertTrue(p.ctx().diags.stream().anyMatch(d -> d.id().equals("child-not-defined")));
    }
}
