package klap.model;

/**
 * A call of a function of the program that the source does not write as a call (review
 * 2026-11-29): an overloaded operator ({@code a + b}, {@code x += 1}, {@code s[i]}, a functor's
 * {@code f()}: C++ [over.oper]), the constructor of a declared object or of a temporary
 * ([class.ctor]), and the destructor that runs where an object's scope ends ([class.dtor]). The
 * model's expression trees do not hold these as {@link Expr.Call}s, so an analysis that follows
 * calls by name consults them through {@link CudaUnit#implicitCallsIn}. Read from CDT's implicit
 * names; a conversion function ({@code operator unsigned()}) applied implicitly has none and is not
 * among them. The compiler-generated members (an implicit copy constructor) are not either.
 *
 * @param offset where the call happens in the main file: the operator of the expression, the
 *               declarator of the object constructed, or the closing brace (end of the full
 *               expression, for a temporary) where the destructor runs
 * @param name   the called function's name as {@link FunctionDef#name()} gives it: {@code operator +},
 *               {@code Slice} (a constructor), {@code ~Slice} (a destructor)
 * @param origin where its body is
 * @param readsIndices for a function of a header ({@link Origin#HEADER}): its body reads the built-in
 *               indices ({@code threadIdx}, ...), maybe through other header functions; true for an
 *               {@link Origin#INITIALIZER}; false otherwise
 * @param synchronizes for a function of a header: its body has a barrier or warp collective; false otherwise
 */
public record ImplicitCall(int offset, String name, Origin origin, boolean readsIndices, boolean synchronizes) {

    /** A call of a function of the main file or of one whose body klap cannot follow. */
    public ImplicitCall(int offset, String name, Origin origin) {
        this(offset, name, origin, false, false);
    }

    /** Where the body of an implicitly called function is. */
    public enum Origin {
        /** a function definition of the main file (one of {@link CudaUnit#functions()}) */
        MAIN,
        /**
         * an included project header, whose body does only what klap follows: its facts are {@link
         * #readsIndices} and {@link #synchronizes}, read from the very function called (not by name)
         */
        HEADER,
        /**
         * a body klap cannot follow: nowhere in the translation unit (declared only, defined in another
         * file), or in a header doing what klap does not follow (a launch, a CUDA runtime call, ...)
         */
        UNSEEN,
        /**
         * the default member initializers that constructing an object of class {@link #name} runs
         * ({@code unsigned a = threadIdx.x;}): {@link #readsIndices} is true (only such are recorded; the
         * functions they call are calls of their own)
         */
        INITIALIZER
    }
}
