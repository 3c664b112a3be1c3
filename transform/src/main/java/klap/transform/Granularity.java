package klap.transform;

/**
 * The scope of threads across which child launches are aggregated (KLAP section II): the launches
 * of all threads of a warp, or of a block, become one launch.
 */
public enum Granularity {
    /** one aggregated launch per warp (KLAP II-A) */
    WARP,
    /** one aggregated launch per block (KLAP II-A) */
    BLOCK,
    /** one aggregated launch per parent grid, by its last block to finish (KLAP II-B on CDP2) */
    KERNEL;

    /** @return the lower-case name used on the command line */
    public String cliName() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
