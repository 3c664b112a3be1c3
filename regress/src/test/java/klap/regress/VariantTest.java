package klap.regress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import klap.transform.Granularity;
import org.junit.jupiter.api.Test;

/** The variant list follows the compiler's granularities. */
class VariantTest {
    @Test
    void cdpFlatThenEveryGranularity() {
        List<Variant> all = Variant.all();
        assertEquals(2 + Granularity.values().length, all.size());
        assertEquals("cdp", all.get(0).name());
        assertEquals("flat", all.get(1).name());
        for (Granularity g : Granularity.values()) {
            assertTrue(all.contains(new Variant(g.cliName(), g)), g.toString());
        }
    }

    @Test
    void thePromotionSetHasThePapersSixVariants() {
        List<Variant> p = Variant.promotion();
        assertEquals(List.of("cdp", "flat", "p", "pa2", "pa128", "po", "pao2", "pao128"),
                p.stream().map(Variant::name).toList());
        assertEquals(List.of("--promote=PA", "--promote-depth=2"), p.get(3).klapArgs());
        assertEquals(List.of("--promote=PO"), p.get(5).klapArgs());
        assertEquals(List.of("--granularity=warp"), Variant.all().get(2).klapArgs());
        assertEquals(p, Variant.defaultsFor(java.nio.file.Path.of("testcases", "promotion")));
        assertEquals(Variant.all(), Variant.defaultsFor(java.nio.file.Path.of("testcases", "bench")));
        assertEquals(List.of(Variant.CDP, p.get(7)), Variant.select(List.of("pao128", "cdp")));
    }

    @Test
    void theNpSetHasTheBaselineAndTheCudaNpVariants() {
        List<Variant> np = Variant.np();
        assertEquals(List.of("base", "npi", "npw", "npalli", "npallw"), np.stream().map(Variant::name).toList());
        assertEquals(np, Variant.defaultsFor(java.nio.file.Path.of("testcases", "np")));
        assertTrue(!np.get(0).isKlap());
        assertEquals(List.of("--np=intra-warp"), np.get(1).klapArgs());
        assertEquals(List.of("--np=inter-warp"), np.get(2).klapArgs());
        assertEquals(List.of("--np=all"), np.get(3).klapArgs());
        assertEquals(List.of("--np=all"), np.get(4).klapArgs());
        assertEquals(List.of("_klap_npi", "_klap_npw", "_klap_npi", "_klap_npw"),
                np.stream().skip(1).map(Variant::npMarker).toList());
        assertEquals("", np.get(1).env());
        assertEquals("KLAP_NP=intra-warp", np.get(3).env());
        assertEquals("KLAP_NP=inter-warp", np.get(4).env());
        assertEquals("inter-warp", np.get(4).npKind());
        assertEquals(null, Variant.CDP.npMarker());
        assertEquals(List.of(Variant.BASE, np.get(2)), Variant.select(List.of("npw", "base")));
    }

    @Test
    void selectKeepsTheCanonicalOrderAndRejectsUnknownNames() {
        assertEquals(List.of(Variant.CDP, new Variant("block", Granularity.BLOCK)),
                Variant.select(List.of("block", "cdp")));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Variant.select(List.of("grid")));
        assertTrue(e.getMessage().contains("unknown variant 'grid'") && e.getMessage().contains("cdp, flat"),
                e.getMessage());
    }
}
