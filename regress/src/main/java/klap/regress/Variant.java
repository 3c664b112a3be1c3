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
 * {@code pa2}, {@code pa128}, {@code po}, {@code pao2}, {@code pao128}), or, for the CUDA-NP set,
 * the program as written ({@code base}) and transformed by {@code klap --np} ({@code npi},
 * {@code npw}, {@code npalli}, {@code npallw}; see {@link #np()}).
 *
 * @param name        the variant's name in options, file names and reports
 * @param granularity the klap granularity of an aggregation variant, else {@code null}
 * @param promote     the klap promotion mode of a promotion variant (P, PA, PO or PAO), else {@code null}
 * @param depth       for PA and PAO: descendants per launch (the n of PA-n); 0 otherwise
 * @param npMode      the klap CUDA-NP mode of a CUDA-NP variant ({@code intra-warp}, {@code inter-warp} or
 *                    {@code all}), else {@code null}
 * @param env         environment assignments the binary runs with, {@code NAME=VALUE} separated by blanks
 *                    (e.g. {@code KLAP_NP=inter-warp} for a program built with {@code --np=all}); "" for none
 */
public record Variant(String name, Granularity granularity, String promote, int depth, String npMode, String env) {

    /** The original program with device-side launches: the baseline of every speedup. */
    public static final Variant CDP = new Variant("cdp", null);
    /** The benchmark's version without dynamic parallelism ({@code NAME_flat.cu}). */
    public static final Variant FLAT = new Variant("flat", null);
    /** The CUDA-NP set's baseline: {@code NAME.cu} as written, nvcc only (its np pragmas are ignored). */
    public static final Variant BASE = new Variant("base", null);

    /** The names of the variants that are baselines, never made by klap. */
    public static final List<String> BASELINES = List.of("cdp", "flat", "base");

    /** Normalizes {@code env} (null reads as ""). */
    public Variant {
        env = env == null ? "" : env.strip();
    }

    /** An aggregation or promotion variant, or cdp/flat/base. */
    public Variant(String name, Granularity granularity, String promote, int depth) {
        this(name, granularity, promote, depth, null, "");
    }

    /** An aggregation variant ({@code granularity} non-null), or cdp/flat/base. */
    public Variant(String name, Granularity granularity) {
        this(name, granularity, null, 0);
    }

    /** A CUDA-NP variant: {@code klap --np=MODE}, run with {@code env}. */
    static Variant npVariant(String name, String mode, String env) {
        return new Variant(name, null, null, 0, mode, env);
    }

    /** @return true if this variant is made by klap */
    public boolean isKlap() {
        return granularity != null || promote != null || npMode != null;
    }

    /**
     * @return the klap options that make this variant, e.g. {@code --granularity=warp},
     *     {@code --promote=PA --promote-depth=2} or {@code --np=inter-warp}
     */
    public List<String> klapArgs() {
        if (granularity != null) {
            return List.of("--granularity=" + granularity.cliName());
        }
        if (npMode != null) {
            return List.of("--np=" + npMode);
        }
        if (promote == null) {
            throw new IllegalStateException(name + " is not made by klap");
        }
        return depth > 0 ? List.of("--promote=" + promote, "--promote-depth=" + depth) : List.of("--promote=" + promote);
    }

    /**
     * @return the CUDA-NP kernel variant this variant runs: {@code intra-warp} or {@code inter-warp}
     *     ({@link #npMode}, or for {@code --np=all} the value of {@code KLAP_NP} in {@link #env}, by default
     *     intra-warp as in klap/np.cuh); null for a variant that is not a CUDA-NP one
     */
    public String npKind() {
        if (npMode == null) {
            return null;
        }
        if (!npMode.equals("all")) {
            return npMode;
        }
        for (String a : env.split("\\s+")) {
            if (a.startsWith("KLAP_NP=")) {
                return a.substring("KLAP_NP=".length());
            }
        }
        return "intra-warp";
    }

    /**
     * @return what klap's output contains when it made the kernel variant this variant runs: the
     *     suffix {@code _klap_npi} (intra-warp) or {@code _klap_npw} (inter-warp) of the transformed
     *     kernels; null for a variant that is not a CUDA-NP one
     */
    public String npMarker() {
        String k = npKind();
        return k == null ? null : k.equals("inter-warp") ? "_klap_npw" : "_klap_npi";
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
     * The CUDA-NP variants (issue 13, testcases/np): {@code base} (the program as written, the
     * baseline), {@code npi} ({@code klap --np=intra-warp}), {@code npw} ({@code --np=inter-warp}), and
     * the program with both kernel variants and the original ({@code --np=all}), which picks one at run
     * time from {@code KLAP_NP}: {@code npalli} runs it with {@code KLAP_NP=intra-warp}, {@code npallw}
     * with {@code KLAP_NP=inter-warp} (each is transformed and compiled on its own: the two binaries are
     * the same program, and their times against npi and npw show the cost of the run-time choice). All with klap's default of 8 threads per group and a 48 KB shared-memory budget.
     */
    public static List<Variant> np() {
        return List.of(BASE, npVariant("npi", "intra-warp", ""), npVariant("npw", "inter-warp", ""),
                npVariant("npalli", "all", "KLAP_NP=intra-warp"), npVariant("npallw", "all", "KLAP_NP=inter-warp"));
    }

    /**
     * @param benchDir a benchmark set
     * @return {@link #promotion()} for the promotion set (a folder named {@code promotion}, e.g.
     *         {@code testcases/promotion}), {@link #np()} for the CUDA-NP set (a folder named
     *         {@code np}), else {@link #all()}
     */
    public static List<Variant> defaultsFor(Path benchDir) {
        Path name = benchDir.toAbsolutePath().normalize().getFileName();
        String n = name == null ? "" : name.toString();
        return n.equals("promotion") ? promotion() : n.equals("np") ? np() : all();
    }

    /**
     * The variants named in {@code names}, in the order of {@link #all()}, {@link #promotion()}
     * then {@link #np()}.
     *
     * @throws IllegalArgumentException naming the unknown variant and the known ones
     */
    public static List<Variant> select(List<String> names) {
        List<Variant> known = new ArrayList<>(all());
        promotion().stream().filter(v -> !known.contains(v)).forEach(known::add);
        np().stream().filter(v -> !known.contains(v)).forEach(known::add);
        for (String n : names) {
            if (known.stream().noneMatch(v -> v.name.equals(n))) {
                throw new IllegalArgumentException("unknown variant '" + n + "'; known: "
                        + String.join(", ", known.stream().map(Variant::name).toList()));
            }
        }
        return known.stream().filter(v -> names.contains(v.name)).toList();
    }
}
