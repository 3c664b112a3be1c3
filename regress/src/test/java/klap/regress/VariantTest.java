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
    void selectKeepsTheCanonicalOrderAndRejectsUnknownNames() {
        assertEquals(List.of(Variant.CDP, new Variant("block", Granularity.BLOCK)),
                Variant.select(List.of("block", "cdp")));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Variant.select(List.of("grid")));
        assertTrue(e.getMessage().contains("unknown variant 'grid'") && e.getMessage().contains("cdp, flat"),
                e.getMessage());
    }
}
