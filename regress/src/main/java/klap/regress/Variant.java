package klap.regress;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import klap.transform.Granularity;

/**
 * One way of building a benchmark: the original CDP program ({@code cdp}), the hand-written
 * version without dynamic parallelism ({@code flat}), the CDP program aggregated by klap at one
 * granularity (named by {@link Granularity#cliName()}: {@code warp}, {@code block}, ...), or, for the
 * promotion set, promoted by klap in one of the paper's variants (KLAP section IV-C: {@code p},
 * {@code pa2}, {@code pa128}, {@code po}, {@code pao2}, {@code pao128}).
 *
 * @param name        the variant's name in options, file names and reports
 * @param granularity the klap granularity of an aggregation variant, else {@code null}
 * @param promote     the klap promotion mode of a promotion variant (P, PA, PO or PAO), else {@code null}
 * @param depth       for PA and PAO: descendants per launch (the n of PA-n); 0 otherwise
 */
public record Variant(String name, Granularity granularity, String promote, int depth) {

    /** The original program with device-side launches: the baseline of every speedup. */
    public static final Variant CDP = new Variant("cdp", null);
    /** The benchmark's version without dynamic parallelism ({@code NAME_flat.cu}). */
    public static final Variant FLAT = new Variant("flat", null);

    /** An aggregation variant ({@code granularity} non-null), or cdp/flat. */
    public Variant(String name, Granularity granularity) {
        this(name, granularity, null, 0);
    }

    /** @return true if this variant is made by klap */
    public boolean isKlap() {
        return granularity != null || promote != null;
    }

    /** @return the klap options that make this variant, e.g. {@code --granularity=warp} or {@code --promote=PA --promote-depth=2} */
    public List<String> klapArgs() {
        if (granularity != null) {
            return List.of("--granularity=" + granularity.cliName());
        }
        if (promote == null) {
            throw new IllegalStateException(name + " is not made by klap");
        }
        return depth > 0 ? List.of("--promote=" + promote, "--promote-depth=" + depth) : List.of("--promote=" + promote);
    }

    /**
     * Every aggregation variant: {@code cdp}, {@code flat}, then one per granularity the compiler
     * supports ({@link Granularity#values()}, so a new granularity is picked up without changes here).
     */
    public static List<Variant> all() {
        List<Variant> vs = new ArrayList<>(List.of(CDP, FLAT));
        for (Granularity g : Granularity.values()) {
            vs.add(new Variant(g.cliName(), g));
        }
        return List.copyOf(vs);
    }

    /**
     * The promotion variants of KLAP section IV-C, Fig. 10: {@code cdp}, {@code flat}, basic
     * promotion {@code p}, with aggregation of 2 and 128 descendants per launch ({@code pa2},
     * {@code pa128}: the paper's PA-2 and PA), with overlap {@code po}, and both ({@code pao2},
     * {@code pao128}).
     */
    public static List<Variant> promotion() {
        return List.of(CDP, FLAT, new Variant("p", null, "P", 0), new Variant("pa2", null, "PA", 2),
                new Variant("pa128", null, "PA", 128), new Variant("po", null, "PO", 0),
                new Variant("pao2", null, "PAO", 2), new Variant("pao128", null, "PAO", 128));
    }

    /**
     * @param benchDir a benchmark set
     * @return {@link #promotion()} for the promotion set (a folder named {@code promotion}, e.g.
     *         {@code testcases/promotion}), else {@link #all()}
     */
    public static List<Variant> defaultsFor(Path benchDir) {
        Path name = benchDir.toAbsolutePath().normalize().getFileName();
        return name != null && name.toString().equals("promotion") ? promotion() : all();
    }

    /**
     * The variants named in {@code names}, in the order of {@link #all()} then {@link #promotion()}.
     *
     * @throws IllegalArgumentException naming the unknown variant and the known ones
     */
    public static List<Variant> select(List<String> names) {
        List<Variant> known = new ArrayList<>(all());
        promotion().stream().filter(v -> !known.contains(v)).forEach(known::add);
        for (String n : names) {
            if (known.stream().noneMatch(v -> v.name.equals(n))) {
                throw new IllegalArgumentException("unknown variant '" + n + "'; known: "
                        + String.join(", ", known.stream().map(Variant::name).toList()));
            }
        }
        return known.stream().filter(v -> names.contains(v.name)).toList();
    }
}
