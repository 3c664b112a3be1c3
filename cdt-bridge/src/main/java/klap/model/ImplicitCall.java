package klap.model;

/**
 * A call of a function of the program that the source does not write as a call (review
 * 2026-11-29): an overloaded operator ({@code a + b}, {@code x += 1}, {@code s[i]}, a functor's
 * {@code f()}: C++ [over.oper]), the constructor of a declared object or of a temporary
 * ([class.ctor]), and the destructor that runs where an object's scope ends ([class.dtor]). The
 * model's expression trees do not hold these as {@link Expr.Call}s, so an analysis that follows
 * calls by name consults them through {@link CudaUnit#implicitCallsIn}. Read from CDT's implicit
 * names, and, where the program writes a conversion function ({@code operator unsigned()}), one call of
 * it at each expression of its class whose value may be converted ({@link #isConversion}; CDT names
 * none). The compiler-generated members (an implicit copy constructor) are not among them.
 *
 * @param offset where the call happens in the main file: the operator of the expression, the
 *               expression converted (for a conversion function), the declarator of the object constructed, or the closing brace (end of the full
 *               expression, for a temporary) where the destructor runs
 * @param name   the called function's name as {@link FunctionDef#name()} gives it: {@code operator +},
 *               {@code Slice} (a constructor), {@code ~Slice} (a destructor)
 * @param origin where its body is
 * @param readsIndices for a function of a header ({@link Origin#HEADER}): its body reads the built-in
 *               indices ({@code threadIdx}, ...), maybe through other header functions; true for an
 *               {@link Origin#INITIALIZER}; false otherwise
 * @param synchronizes for a function of a header: its body has a barrier or warp collective; false otherwise
 * @param operandModes for an overloaded operator: how it receives each operand, in the order the
 *               expression writes them ({@code a << b}: {@code a}, then {@code b}; {@code s[i]}: {@code s},
 *               then {@code i}), one character each as {@link Expr.Call#paramModes}: {@code 'w'} a
 *               non-const reference, or the object of a non-const member operator (it may write the
 *               variable), {@code 'r'} by value, by const reference or the object of a const member;
 *               computed by CDT from the declared types. Null for a constructor, destructor or
 *               initializer, and for an operator whose parameter types CDT could not give (then every
 *               operand may be written)
 */
public record ImplicitCall(int offset, String name, Origin origin, boolean readsIndices, boolean synchronizes,
                           String operandModes) {

    /** A call of a function of the main file or of one whose body klap cannot follow. */
    public ImplicitCall(int offset, String name, Origin origin) {
        this(offset, name, origin, false, false, null);
    }

    /** A call that is not an operator's, or an operator's whose operand modes are not known. */
    public ImplicitCall(int offset, String name, Origin origin, boolean readsIndices, boolean synchronizes) {
        this(offset, name, origin, readsIndices, synchronizes, null);
    }

    /** @return true if this calls an overloaded operator ({@code operator +}, {@code operator []}, ...) */
    public boolean isOperator() {
        return FunctionDef.isOperatorName(name);
    }

    /**
     * @return true if this applies a conversion function ({@code operator int()} of the class of the
     *         expression at {@link #offset}: C++ [class.conv.fct]); its {@link #operandModes} is its object's
     */
    public boolean isConversion() {
        return FunctionDef.isConversionName(name);
    }

    /** @return this call at {@code other} offset, with the same function and facts */
    public ImplicitCall at(int other) {
        return new ImplicitCall(other, name, origin, readsIndices, synchronizes, operandModes);
    }

    /** @return this call with the operand modes {@code modes} */
    public ImplicitCall withOperandModes(String modes) {
        return new ImplicitCall(offset, name, origin, readsIndices, synchronizes, modes);
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
