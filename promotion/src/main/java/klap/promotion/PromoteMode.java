package klap.promotion;

/**
 * The promotion variants of KLAP section III: basic promotion (P, III-A), with aggregation of n
 * descendants per launch (PA-n, III-B), with overlap of the child's independent prologue (PO,
 * III-C), and both (PAO-n, III-D).
 */
public enum PromoteMode {
    /** Basic promotion: the successor is launched at the start of its parent, one kernel per link. */
    P(false, false),
    /** Promotion with aggregation: one launch of n descendants ("vertical" aggregation, III-B). */
    PA(true, false),
    /** Promotion with overlap: the prologue before {@code #pragma klap overlap} runs before the acquire. */
    PO(false, true),
    /** Promotion with aggregation and overlap (III-D). */
    PAO(true, true);

    /** The default n of PA-n and PAO-n: the paper's "PA" and "PAO" (section IV-C, granularity 128). */
    public static final int DEFAULT_DEPTH = 128;

    private final boolean aggregates;
    private final boolean overlaps;

    PromoteMode(boolean aggregates, boolean overlaps) {
        this.aggregates = aggregates;
        this.overlaps = overlaps;
    }

    /** @return true for PA and PAO: pools of n descendants per launch */
    public boolean aggregates() {
        return aggregates;
    }

    /** @return true for PO and PAO: the independent prologue runs before the acquire */
    public boolean overlaps() {
        return overlaps;
    }

    /**
     * @param text P, PA, PO or PAO (case-insensitive)
     * @return the mode
     * @throws IllegalArgumentException for anything else
     */
    public static PromoteMode parse(String text) {
        for (PromoteMode m : values()) {
            if (m.name().equalsIgnoreCase(text.trim())) {
                return m;
            }
        }
        throw new IllegalArgumentException("expected P, PA, PO or PAO, got '" + text + "'");
    }
}
