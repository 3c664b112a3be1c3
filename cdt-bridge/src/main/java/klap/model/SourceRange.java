package klap.model;

/**
 * A half-open range {@code [offset, offset + length)} of characters (UTF-16 code units, as
 * {@link String#charAt}) in the original text of one {@link SourceFile}.
 *
 * @param offset start offset, 0-based, in characters
 * @param length number of characters, {@code >= 0}
 */
public record SourceRange(int offset, int length) {
    public SourceRange {
        if (offset < 0 || length < 0) {
            throw new IllegalArgumentException("bad range " + offset + "+" + length);
        }
    }

    /** @return the exclusive end offset */
    public int end() {
        return offset + length;
    }

    /** @return a range from {@code start} (inclusive) to {@code end} (exclusive) */
    public static SourceRange of(int start, int end) {
        return new SourceRange(start, end - start);
    }

    /** @return true if {@code other} lies entirely inside this range */
    public boolean contains(SourceRange other) {
        return other.offset >= offset && other.end() <= end();
    }

    /** @return true if offset {@code o} lies inside this range */
    public boolean contains(int o) {
        return o >= offset && o < end();
    }
}
