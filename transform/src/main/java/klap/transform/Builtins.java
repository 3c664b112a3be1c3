package klap.transform;

/**
 * The callees whose behaviour klap knows without seeing a body: the CUDA math library and the
 * intrinsics ({@code __shfl_sync}, {@code __popc}, ...), atomics, the device runtime API, the vector
 * constructors and a few C library functions. A call of any other function that the unit does not
 * define runs code klap cannot check (defined in a header, in another file with {@code -rdc}, or
 * unresolved).
 */
public final class Builtins {
    private Builtins() {
    }

    /**
     * @param name a callee's name as written, possibly qualified ({@code cuda::std::min})
     * @return true if it names a function of the CUDA toolkit or the C library that klap knows
     *         ({@link Uniformity#PURE}, {@link Writes#BY_VALUE_NAME}): it reads and writes only its
     *         arguments and what they point to (atomics, {@code memcpy}), and the runtime API's state
     */
    public static boolean known(String name) {
        String simple = name.contains("::") ? name.substring(name.lastIndexOf("::") + 2) : name;
        return Uniformity.PURE.contains(name) || Uniformity.PURE.contains(simple)
                || Writes.BY_VALUE_NAME.matcher(simple).matches();
    }

    /** @return the class a declaration's type text names ({@code const ns::Ref<int> } -> {@code Ref}), or null */
    public static String className(String typeText) {
        return Writes.className(typeText);
    }
}
