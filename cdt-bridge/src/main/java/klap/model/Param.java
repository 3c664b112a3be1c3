package klap.model;

/**
 * One function parameter.
 *
 * @param name      the parameter's name (empty for an unnamed parameter)
 * @param range     the whole parameter declaration, e.g. {@code const float* __restrict__ a}
 * @param nameRange the range of the name inside {@code range}, or null if unnamed
 */
public record Param(String name, SourceRange range, SourceRange nameRange) {
}
