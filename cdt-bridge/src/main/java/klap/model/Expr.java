package klap.model;

import java.util.List;

/**
 * An expression of the CUDA model: a small tree with exact source ranges, enough for the
 * uniformity analysis (which names, builtins, memory loads and calls a value depends on) and for
 * slicing argument text. Constructs the model does not describe become {@link Other} with their
 * sub-expressions as children, which analyses treat conservatively (non-uniform).
 */
public sealed interface Expr {
    /** @return the exact range of the expression in the original text */
    SourceRange range();

    /** @return the direct sub-expressions, in source order */
    List<Expr> children();

    /** What a name refers to, as far as the front end could resolve it. */
    enum NameKind {
        /** a local variable of the enclosing function */
        LOCAL,
        /** a parameter of the enclosing function */
        PARAM,
        /** threadIdx, blockIdx, blockDim, gridDim, warpSize */
        BUILTIN,
        /** an enumerator, or a const/constexpr variable of integral or floating type */
        CONSTANT,
        /** any other variable outside the function (device/shared/constant globals, ...) */
        GLOBAL,
        /** a function or function template */
        FUNCTION,
        /** a type name (in a functional cast or constructor call) */
        TYPE,
        /** not resolved */
        UNKNOWN
    }

    /** An identifier or qualified name, e.g. {@code n}, {@code threadIdx}, {@code ns::f}. */
    record Name(SourceRange range, String name, NameKind kind) implements Expr {
        public List<Expr> children() {
            return List.of();
        }
    }

    /** A literal: number, character, string, {@code true}, {@code nullptr}. */
    record Literal(SourceRange range) implements Expr {
        public List<Expr> children() {
            return List.of();
        }
    }

    /**
     * {@code owner.member} or {@code owner->member}.
     *
     * @param pointer true if the member is known to have a pointer type (so {@code x.p[i] = v}
     *                stores to memory elsewhere and leaves {@code x} unchanged); false if it is not
     *                a pointer or its type is unknown (a template-dependent or unresolved member)
     * @param array   true if the member is known to be an array: used other than by subscript,
     *                {@code &} or {@code sizeof}, it decays to a pointer into {@code owner}
     */
    record Member(SourceRange range, Expr owner, String member, boolean arrow, boolean pointer, boolean array)
            implements Expr {
        public List<Expr> children() {
            return List.of(owner);
        }
    }

    /** {@code array[index]}: a memory load (or a store when assigned to). */
    record Subscript(SourceRange range, Expr array, Expr index) implements Expr {
        public List<Expr> children() {
            return List.of(array, index);
        }
    }

    /**
     * A unary expression. {@code op} is one of {@code * & - + ! ~ ++pre --pre post++ post-- sizeof alignof}.
     * {@code *} is a dereference (memory load), {@code &} takes an address.
     */
    record Unary(SourceRange range, String op, Expr operand) implements Expr {
        public List<Expr> children() {
            return operand == null ? List.of() : List.of(operand);
        }
    }

    /**
     * A binary expression, assignments included: {@code op} is the C++ operator text
     * ({@code + - * / % << >> < > <= >= == != & | ^ && || , = += -= *= /= %= <<= >>= &= |= ^=}).
     */
    record Binary(SourceRange range, String op, Expr lhs, Expr rhs) implements Expr {
        public List<Expr> children() {
            return List.of(lhs, rhs);
        }

        /** @return true for {@code =} and compound assignments */
        public boolean isAssignment() {
            return op.endsWith("=") && !op.equals("==") && !op.equals("!=") && !op.equals("<=") && !op.equals(">=");
        }
    }

    /** {@code cond ? a : b}. */
    record Conditional(SourceRange range, Expr cond, Expr then, Expr otherwise) implements Expr {
        public List<Expr> children() {
            return List.of(cond, then, otherwise);
        }
    }

    /** A C or C++ cast, {@code (T)e}, {@code static_cast<T>(e)}; {@code typeText} is {@code T}. */
    record Cast(SourceRange range, String typeText, Expr operand) implements Expr {
        public List<Expr> children() {
            return List.of(operand);
        }
    }

    /**
     * A function call or functional cast / constructor call ({@code dim3(x, y)}, {@code int(x)}).
     *
     * @param calleeName the called function's name as written without template arguments
     *                   ({@code min}, {@code ns::f}, {@code cudaMalloc}), or null for calls through
     *                   expressions (function pointers, lambdas, members)
     * @param argsRange  the range strictly inside the argument parentheses
     * @param paramModes how the resolved callee receives each argument, one character per argument:
     *                   {@code 'w'} a non-const lvalue reference or an rvalue/forwarding reference
     *                   (the callee may write the variable passed), {@code 'r'} by value or by const
     *                   reference; computed by CDT from the function's declared parameter types
     *                   (typedefs and aliases resolved, the function may be defined in a header or
     *                   only declared); null when CDT could not resolve the callee (a call through a
     *                   pointer, an unresolved or ambiguous name, a dependent call in a template)
     */
    record Call(SourceRange range, Expr callee, String calleeName, List<Expr> args, SourceRange argsRange,
                String paramModes) implements Expr {

        /** A call whose callee's parameters are not known. */
        public Call(SourceRange range, Expr callee, String calleeName, List<Expr> args, SourceRange argsRange) {
            this(range, callee, calleeName, args, argsRange, null);
        }

        public List<Expr> children() {
            var l = new java.util.ArrayList<Expr>();
            l.add(callee);
            l.addAll(args);
            return l;
        }
    }

    /**
     * A kernel launch {@code k<<<grid, block, sharedMem, stream>>>(args)}.
     *
     * @param kernelName   the launched kernel's name (qualified as written, without white space and
     *                     template arguments); where an object-like macro names the kernel
     *                     ({@code #define K child} ... {@code K<<<1, 32>>>(p)}), the name it expands to
     * @param calleeRange  the range of the kernel name including any template argument list (the
     *                     macro's name where a macro names the kernel)
     * @param templateArgs the explicit template argument list text including angle brackets
     *                     ({@code <float, 4>}), or null
     * @param grid         the grid dimension expression (int or dim3)
     * @param block        the block dimension expression (int or dim3)
     * @param sharedMem    dynamic shared memory bytes, or null when not given
     * @param stream       the stream, or null when not given
     * @param args         the kernel arguments
     * @param argsRange    the range strictly inside the argument parentheses
     * @param inMacro      the launch is written in a macro's body or argument: {@code range} (and the
     *                     ranges of its parts) is the whole macro expansion in the main file, and
     *                     {@code calleeRange} and {@code argsRange} are empty; no pass may edit its text,
     *                     so it is always left as written (it still counts as a launch for every analysis)
     */
    record Launch(SourceRange range, String kernelName, SourceRange calleeRange, String templateArgs, Expr grid,
                  Expr block, Expr sharedMem, Expr stream, List<Expr> args, SourceRange argsRange, boolean inMacro)
            implements Expr {
        /**
         * @return the kernel as generated code names it: {@link #kernelName} with the template
         *         arguments ({@code ns::child<float, 4>}); unlike the text at {@link #calleeRange}, it
         *         names the kernel also where a macro does
         */
        public String callee() {
            return templateArgs == null ? kernelName : kernelName + templateArgs;
        }

        public List<Expr> children() {
            var l = new java.util.ArrayList<Expr>();
            l.add(grid);
            l.add(block);
            if (sharedMem != null) {
                l.add(sharedMem);
            }
            if (stream != null) {
                l.add(stream);
            }
            l.addAll(args);
            return l;
        }
    }

    /** Anything else (lambda, new, delete, typeid, initializer list, ...): analysed conservatively. */
    /**
     * A lambda expression, from CDT's {@code ICPPASTLambdaExpression} (not from the text).
     * Its body is a statement tree of its own: {@link #children()} is empty, so walks over the
     * enclosing function do not enter it (a launch in a lambda is not a launch site of the function).
     *
     * @param range          the whole lambda, from {@code [} to the closing brace
     * @param captureAllByRef the capture default is {@code &}
     * @param refCaptures    names captured explicitly by reference ({@code [&x]}, and {@code [&b = e]})
     * @param refInitCaptures the by-reference init-captures ({@code [&b = e]}): {@code b} is an alias of
     *                       {@code e}, a write to {@code b} in the body writes {@code e}
     * @param body           the lambda's body
     */
    record Lambda(SourceRange range, boolean captureAllByRef, List<String> refCaptures,
                  java.util.Map<String, Expr> refInitCaptures, Stmt.Block body) implements Expr {

        /** A lambda without init-captures. */
        public Lambda(SourceRange range, boolean captureAllByRef, List<String> refCaptures, Stmt.Block body) {
            this(range, captureAllByRef, refCaptures, java.util.Map.of(), body);
        }

        public List<Expr> children() {
            return List.of();
        }

        /** @return true if the lambda can write a local of the enclosing function through a capture */
        public boolean capturesByReference() {
            return captureAllByRef || !refCaptures.isEmpty();
        }
    }

    record Other(SourceRange range, List<Expr> children) implements Expr {
    }
}
