package klap.model;

import java.util.List;

/**
 * A function definition of the main file: kernel, device, host or host-device function.
 *
 * @param name             the unqualified name
 * @param kind             which execution space it belongs to
 * @param range            the whole definition, template header included, body's closing brace included
 * @param templateHeader   the {@code template<...>} header text range, or null
 * @param nameRange        the range of the name in the declarator
 * @param params           the parameters in order
 * @param paramsRange      the range strictly inside the parameter list's parentheses
 * @param body             the body
 * @param firstDeclaration the range of the earliest declaration of the same function in the main
 *                         file (a prototype, template header included, terminating semicolon
 *                         included), or null if the definition is the first
 * @param isStatic         declared {@code static}
 * @param externC          has C language linkage: inside or declared with {@code extern "C"}, or
 *                         first declared so (a prototype with it, or in an {@code extern "C" { }}
 *                         block; C++ [dcl.link]/5)
 * @param namespace        the enclosing namespace qualifier ({@code a::b}), empty at global scope
 * @param memberOf         the enclosing class name for member functions, or null
 * @param fileScopeStart   main-file offset where the file-scope declaration that holds the definition
 *                         begins: the outermost namespace definition or class around it (an {@code
 *                         extern "C" { }} block at file scope does not count: what it holds is at file
 *                         scope), or {@code range().offset()} for a function at file scope. Text
 *                         inserted there is at file scope and before the function (klap declares a
 *                         child's argument record there when a namespace's function or a class member
 *                         is the child's first user)
 * @param bounded          the definition, or a declaration of the same function anywhere in the
 *                         translation unit, gives launch bounds or a register limit ({@code
 *                         __launch_bounds__}, {@code __maxnreg__}), also where a macro writes them
 *                         (read from the attributes CDT parsed, not from the text)
 * @param declaredDefaults for each parameter, the default argument that another declaration of the
 *                         function gives (a prototype in the main file or a header), with its
 *                         {@code =} as written ({@code "= 1"}), or empty; empty for every parameter
 *                         whose default the definition gives itself. A default argument may be given
 *                         once per parameter, in any declaration (C++ [dcl.fct.default]/4), and calls
 *                         after that declaration may leave the parameter out
 * @param declaredTemplateDefaults for a function template, the same for each template parameter
 *                         ({@code "= 2"} of {@code template <int S = 2> __device__ int f();}, where
 *                         the definition's header has none: [temp.param]/10 merges the defaults of
 *                         every declaration); empty for a function that is no template
 * @param signatureNeeds   the last declarations of the main file that the definition's signature text
 *                         (template header, return type, parameters with their defaults) needs, one of
 *                         each {@link NeedKind} it has, latest first: a name it uses, a class it takes by
 *                         value (its definition), a macro it expands; empty if it needs none. Text
 *                         copied from the signature to an earlier point of the file is valid only after
 *                         them ({@link #signatureUndeclaredAt}, {@link #lateNeed})
 * @param scalarTypes      for each parameter and local variable of the function whose type is an
 *                         arithmetic type once typedefs, aliases and macros are resolved (by CDT): the
 *                         offset of its name in the main file -> that type as CDT spells it, cv-qualifiers
 *                         kept ({@code "float"}, {@code "const unsigned int"}, {@code "long long int"});
 *                         {@code real x} of {@code typedef float real;} and {@code REAL x} of {@code
 *                         #define REAL double} are there, pointers, classes and dependent types not
 */
public record FunctionDef(String name, Kind kind, SourceRange range, SourceRange templateHeader,
                          SourceRange nameRange, List<Param> params, SourceRange paramsRange,
                          Stmt.Block body, SourceRange firstDeclaration, boolean isStatic, boolean externC,
                          String namespace, String memberOf, int fileScopeStart, boolean bounded, List<String> declaredDefaults,
                          List<String> declaredTemplateDefaults, List<Need> signatureNeeds,
                          java.util.Map<Integer, String> scalarTypes) {

    /**
     * A declaration a function's signature needs.
     *
     * @param name   the name it declares (a type, variable, class, macro)
     * @param offset where in the main file: the declaration's name, or the {@code #include} that reads
     *               the header that declares it
     * @param kind   what is needed there
     */
    public record Need(String name, int offset, NeedKind kind) {
        /**
         * @param file the main file
         * @return what the signature does with it, for a diagnostic: {@code names 'real', declared at line 3}
         */
        public String says(SourceFile file) {
            String line = " at line " + file.line(offset);
            return switch (kind) {
                case NAME -> "names '" + name + "', declared" + line;
                case CLASS_BY_VALUE -> "takes '" + name + "' by value, defined" + line;
                case MACRO -> "expands the macro '" + name + "', defined" + line;
            };
        }

        /** @return what the user can do, for a diagnostic: {@code declare 'real'}, {@code define 'Node'} */
        public String fix() {
            return (kind == NeedKind.NAME ? "declare '" : kind == NeedKind.MACRO ? "define the macro '" : "define '") + name + "'";
        }
    }

    /** What a signature needs of a declaration ({@link Need}). */
    public enum NeedKind {
        /** a name it uses must be declared (C++ [basic.lookup]) */
        NAME,
        /** a class it takes by value must be defined (complete, [class.mem]) */
        CLASS_BY_VALUE,
        /** a macro it expands must be defined */
        MACRO
    }

    /**
     * @param at an offset of the main file where text is to be inserted (before the declaration that
     *           starts there)
     * @return the name the signature of the definition uses that is not yet declared (or a class it
     *         takes by value not yet defined) at {@code at}, or null if the signature's text is valid there
     */
    public String signatureUndeclaredAt(int at) {
        Need n = lateNeed(at, true);
        return n == null ? null : n.name();
    }

    /** @return the latest declaration the signature needs ({@link #signatureNeeds}), or null if none */
    public Need signatureNeed() {
        return signatureNeeds.isEmpty() ? null : signatureNeeds.get(0);
    }

    /**
     * @param at             an offset of the main file where text is to be inserted
     * @param classesByValue whether the text needs the classes the signature takes by value complete (a
     *                       member or variable of that type; a function declaration does not)
     * @return the latest need of {@link #signatureNeeds} not met at {@code at}, or null
     */
    public Need lateNeed(int at, boolean classesByValue) {
        for (Need n : signatureNeeds) {
            if (at <= n.offset() && (classesByValue || n.kind() != NeedKind.CLASS_BY_VALUE)) {
                return n;
            }
        }
        return null;
    }

    public FunctionDef {
        scalarTypes = java.util.Map.copyOf(scalarTypes);
        signatureNeeds = List.copyOf(signatureNeeds);
        declaredTemplateDefaults = List.copyOf(declaredTemplateDefaults);
        if (declaredDefaults.size() != params.size()) {
            throw new IllegalArgumentException(declaredDefaults.size() + " declared defaults for " + params.size() + " parameters");
        }
        declaredDefaults = List.copyOf(declaredDefaults);
    }

    /**
     * @param i        a parameter's index
     * @param unitText the main file's text
     * @return the default argument of parameter {@code i} with its {@code =} ({@code "= 1"}), from the
     *         definition or from another declaration ({@link #declaredDefaults}), or empty if none
     */
    public String defaultArgument(int i, String unitText) {
        Param p = params.get(i);
        return p.hasDefault() ? p.defaultArgument(unitText) : declaredDefaults.get(i);
    }

    /**
     * @return true if {@code name} (as {@link #name()} gives it) is an operator function's: an
     *         overloaded operator ({@code operator +}) or a conversion function ({@code operator int});
     *         C++ [over.oper], [class.conv.fct]
     */
    public static boolean isOperatorName(String name) {
        return name.startsWith("operator") && (name.length() == 8 || !Character.isJavaIdentifierPart(name.charAt(8)));
    }

    /**
     * @return true if {@code name} (as {@link #name()} gives it) is a conversion function's ({@code
     *         operator unsigned int}, {@code operator Vec}), which C++ applies without a call
     *         ([class.conv.fct]); not {@code operator new}, {@code operator delete} or {@code operator co_await}
     */
    public static boolean isConversionName(String name) {
        // CDT names a conversion to a template parameter 'operator #0' (operator T() of a class template)
        return name.length() > 9 && name.startsWith("operator ")
                && (Character.isJavaIdentifierStart(name.charAt(9)) || name.charAt(9) == '#')
                && !name.matches("operator (new|delete|co_await)\\b.*");
    }

    /** Execution spaces. */
    public enum Kind {
        /** {@code __global__} */
        KERNEL,
        /** {@code __device__} only */
        DEVICE,
        /** {@code __host__ __device__} */
        HOST_DEVICE,
        /** host (no attribute, or {@code __host__} only) */
        HOST;

        /** @return true if code of this kind runs on the device */
        public boolean onDevice() {
            return this != HOST;
        }
    }
}
