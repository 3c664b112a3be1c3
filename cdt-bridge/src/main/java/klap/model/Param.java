package klap.model;

/**
 * One function parameter.
 *
 * <p>A parameter declared with an array or function type has the adjusted pointer type (C++
 * [dcl.fct]/5): {@code int a[4]} is an {@code int*}, {@code void f(int)} a {@code void (*)(int)}.
 * Text that declares a variable or a struct member of the parameter's type must use that adjusted
 * type ({@link #declaration}), since {@code int a[4];} as a member is an array and cannot be
 * initialized from the argument.
 *
 * @param name       the parameter's name (empty for an unnamed parameter)
 * @param range      the whole parameter declaration, e.g. {@code const float* __restrict__ a},
 *                   its default argument included
 * @param nameRange  the range of the name inside {@code range}, or null if unnamed
 * @param nameOffset where the name is, or where a name would go in an unnamed parameter
 *                   ({@code const float[2]}: before the {@code [}; {@code void (*)(int)}: after the {@code *})
 * @param declEnd    where the declaration ends without its default argument ({@code = ...})
 * @param decay      whether the declared type is an array or function type that is adjusted to a pointer
 * @param firstBound for {@link Decay#ARRAY}, the range of the first array bound ({@code [4]}); else null
 */
public record Param(String name, SourceRange range, SourceRange nameRange, int nameOffset, int declEnd,
        Decay decay, SourceRange firstBound) {

    /** The adjustment of a parameter's declared type (C++ [dcl.fct]/5). */
    public enum Decay {
        /** the declared type is the parameter's type */
        NONE,
        /** declared as an array of T: the parameter is a pointer to T */
        ARRAY,
        /** declared as a function: the parameter is a pointer to it */
        FUNCTION
    }

    public Param {
        if (decay == null || (decay == Decay.ARRAY) != (firstBound != null)) {
            throw new IllegalArgumentException("array bound given iff the parameter decays as an array");
        }
        if (nameOffset < range.offset() || declEnd < nameOffset || declEnd > range.end()) {
            throw new IllegalArgumentException("name offset " + nameOffset + " or end " + declEnd + " outside " + range);
        }
    }

    /** A parameter without default whose declared type is its type: the name at {@code nameRange} or, if unnamed, at the end. */
    public Param(String name, SourceRange range, SourceRange nameRange) {
        this(name, range, nameRange, nameRange != null ? nameRange.offset() : range.end(), range.end(), Decay.NONE, null);
    }

    /**
     * The parameter's declaration with the adjusted type and the name {@code newName}, without
     * its default argument, trimmed: {@code int a[4][5]} -> {@code int (*x)[5]}; {@code void f(int)} ->
     * {@code void (*x)(int)}; {@code const float*} -> {@code const float* x}. With an empty
     * {@code newName} it is the adjusted type alone.
     *
     * @param unitText the text of the file that holds the parameter
     * @param newName  an identifier, or empty
     */
    public String declaration(String unitText, String newName) {
        int afterName = nameRange != null ? nameRange.end() : nameOffset;
        String before = unitText.substring(range.offset(), nameOffset);
        String after = decay == Decay.ARRAY
                ? unitText.substring(afterName, firstBound.offset()) + unitText.substring(firstBound.end(), declEnd)
                : unitText.substring(afterName, declEnd);
        String n = decay == Decay.NONE ? newName : "(*" + newName + ")";
        boolean gap = !n.isEmpty() && !before.isEmpty() && Character.isJavaIdentifierPart(before.charAt(before.length() - 1));
        return (before + (gap ? " " : "") + n + after).strip();
    }

    /**
     * The parameter as a variable or struct member of its type: {@link #declaration} on one line,
     * without {@code __grid_constant__}, which only a kernel's own parameter may carry (nvcc rejects
     * it elsewhere): {@code const __grid_constant__ S s} -> {@code const S x}.
     *
     * @param unitText the text of the file that holds the parameter
     * @param newName  an identifier
     */
    public String variableDeclaration(String unitText, String newName) {
        return GRID_CONSTANT.matcher(declaration(unitText, newName)).replaceAll(" ").replaceAll("\\s+", " ").strip();
    }

    private static final java.util.regex.Pattern GRID_CONSTANT =
            java.util.regex.Pattern.compile("(?<![A-Za-z0-9_])__grid_constant__(?![A-Za-z0-9_])");

    /** @return true if the declaration gives a default argument */
    public boolean hasDefault() {
        return declEnd < range.end();
    }

    /** @return the default argument with its {@code =} ({@code "= 7"}), or empty */
    public String defaultArgument(String unitText) {
        return unitText.substring(declEnd, range.end()).strip();
    }

    /** @return the adjusted type of the parameter, without default argument, e.g. {@code int (*)} for {@code int a[4]} */
    public String type(String unitText) {
        return declaration(unitText, "");
    }
}
