package klap.model;

/**
 * A {@code #pragma} directive of the main file.
 *
 * @param range   the directive's range
 * @param text    the text after {@code #pragma}, trimmed (e.g. {@code np parallel for})
 */
public record Pragma(SourceRange range, String text) {
}
