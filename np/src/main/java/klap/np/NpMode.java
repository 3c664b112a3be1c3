package klap.np;

import java.util.Locale;

/**
 * Which CUDA-NP variants klap emits (Yang and Zhou, PPoPP 2014, section 3.4: "intra-warp" and
 * "inter-warp" thread layouts).
 * <ul>
 *   <li>{@link #INTRA_WARP}: the S threads of a group (one master, S-1 slaves) are S consecutive
 *       lanes of one warp; group collectives are warp shuffles (S a power of two, 2..32);</li>
 *   <li>{@link #INTER_WARP}: the members of a group are in S different warps (thread
 *       {@code slave * M + master}); collectives go through shared memory and barriers, so every
 *       parallel loop must be reached by the whole block;</li>
 *   <li>{@link #ALL}: both, with a host-side selector ({@code KLAP_NP}, {@code KLAP_NP_<kernel>},
 *       or {@code klap::np::select}) so a user can tune on their own GPU.</li>
 * </ul>
 */
public enum NpMode {
    INTRA_WARP, INTER_WARP, ALL;

    /** @return the CLI spelling: intra-warp, inter-warp, all */
    public String cliName() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /**
     * @param s {@code intra-warp}, {@code inter-warp} or {@code all} (case-insensitive; {@code _} for {@code -})
     * @return the mode
     * @throws IllegalArgumentException with a user-facing message for anything else
     */
    public static NpMode parse(String s) {
        String k = s.strip().toUpperCase(Locale.ROOT).replace('-', '_');
        for (NpMode m : values()) {
            if (m.name().equals(k)) {
                return m;
            }
        }
        throw new IllegalArgumentException("expected intra-warp, inter-warp or all, got '" + s + "'");
    }

    /** @return true if this mode emits the intra-warp variant */
    public boolean intra() {
        return this != INTER_WARP;
    }

    /** @return true if this mode emits the inter-warp variant */
    public boolean inter() {
        return this != INTRA_WARP;
    }
}
