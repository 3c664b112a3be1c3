package klap.regress;

import java.util.ArrayList;
import java.util.List;
import klap.transform.Granularity;

/**
 * One way of building a benchmark: the original CDP program ({@code cdp}), the hand-written
 * version without dynamic parallelism ({@code flat}), or the CDP program transformed by klap at
 * one granularity (named by {@link Granularity#cliName()}: {@code warp}, {@code block}, ...).
 *
 * @param name the variant's name in options, file names and reports
 * @param granularity the klap granularity, or {@code null} for {@code cdp} and {@code flat}
 */
public record Variant(String name, Granularity granularity) {

    /** The original program with device-side launches: the baseline of every speedup. */
    public static final Variant CDP = new Variant("cdp", null);
    /** The benchmark's version without dynamic parallelism ({@code NAME_flat.cu}). */
    public static final Variant FLAT = new Variant("flat", null);

    /** @return true if this variant is made by klap */
    public boolean isKlap() {
        return granularity != null;
    }

    /**
     * Every variant: {@code cdp}, {@code flat}, then one per granularity the compiler supports
     * ({@link Granularity#values()}, so a new granularity is picked up without changes here).
     */
    public static List<Variant> all() {
        List<Variant> vs = new ArrayList<>(List.of(CDP, FLAT));
        for (Granularity g : Granularity.values()) {
            vs.add(new Variant(g.cliName(), g));
        }
        return List.copyOf(vs);
    }

    /**
     * The variants named in {@code names}, in the order of {@link #all()}.
     *
     * @throws IllegalArgumentException naming the unknown variant and the known ones
     */
    public static List<Variant> select(List<String> names) {
        List<Variant> all = all();
        for (String n : names) {
            if (all.stream().noneMatch(v -> v.name.equals(n))) {
                throw new IllegalArgumentException("unknown variant '" + n + "'; known: "
                        + String.join(", ", all.stream().map(Variant::name).toList()));
            }
        }
        return all.stream().filter(v -> names.contains(v.name)).toList();
    }
}
