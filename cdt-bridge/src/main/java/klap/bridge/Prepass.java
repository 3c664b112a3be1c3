package klap.bridge;

import java.util.ArrayList;
import java.util.List;

/**
 * The offset-preserving text pre-pass run on the main file and on every project header before
 * CDT sees them. Every rewrite keeps the text length, so each offset of the rewritten text indexes
 * the same character of the original text.
 * <ul>
 * <li>{@code <<<} of a kernel launch becomes {@code (((} and its matching {@code >>>} becomes
 * {@code )))}. A {@code <<<} pairs with the first run of three or more {@code >} found at bracket
 * depth 0 (the closer is the run's last three characters, so {@code vector<vector<int>>>} works);
 * a {@code ;} before it aborts the match. Comments, string, character and raw-string literals
 * are skipped. The spaced forms that nvcc 13 also accepts are rewritten the same way, their
 * blanks kept: {@code << <} (blanks or comments between {@code <<} and {@code <} on one line, as
 * Visual Studio's formatter writes launches) and {@code >> >} (any blanks, newlines or comments
 * between {@code >>} and {@code >}); nvcc refuses {@code < <<}, {@code > >>} and a newline inside
 * the opener, and so does klap (a syntax error).</li>
 * <li>{@code __device__} / {@code __host__} written directly after the {@code ]} of a lambda
 * introducer (extended lambdas) are blanked out with spaces.</li>
 * <li>C++20 constraints, which CDT does not parse ([temp.pre]/9, [expr.prim.req], [temp.concept]):
 * a requires-clause ({@code template <typename T> requires std::integral<T>}, {@code f(T x)
 * requires C<T>}) is blanked; a requires-expression inside an expression ({@code if constexpr
 * (requires { t.x; })}) becomes {@code true}; a concept definition ({@code template <class T>
 * concept C = ...;}) is blanked whole. Constraints decide only which overloads C++ considers;
 * klap's analyses do not depend on them, and its output copies the original text, constraints
 * included. Newlines are kept. A constrained template parameter ({@code template <std::integral T>})
 * is left as written: CDT reads it as a parameter {@code T} of a type it does not know, so a launch
 * with explicit template arguments is aggregated and one that leaves them to deduction stays as
 * written ({@code klap-template-args}).</li>
 * <li>The template parameter list of a C++20 template lambda ({@code []<typename T>(T v) {...}}) is
 * blanked: CDT reads it as a generic lambda. Other C++20 that CDT does not parse: {@code consteval}
 * becomes {@code constexpr}, {@code constinit} and {@code using enum E;} are blanked, {@code <=>}
 * becomes {@code <=} (the same operands, the same implicit call of the user's operator), and the
 * init-statement of a range-based {@code for} is blanked (its variable is then unknown to klap's
 * analyses, which take it as divergent).</li>
 * </ul>
 */
final class Prepass {

    /**
     * One rewritten launch.
     *
     * @param open     offset of the first {@code <} of {@code <<<}
     * @param openEnd  offset just after the opener's third {@code <} ({@code open + 3} unless spaced)
     * @param close    offset of the first of the three {@code >} that close the configuration
     * @param closeEnd offset just after the closer's third {@code >} ({@code close + 3} unless spaced)
     * @param inDirective true if the {@code <<<} stands on a preprocessor directive line (a
     *                 {@code #define} body)
     */
    record Chevron(int open, int openEnd, int close, int closeEnd, boolean inDirective) {
    }

    /** The rewritten text (same length as the input). */
    final char[] out;
    /** The launches found, in source order. */
    final List<Chevron> chevrons = new ArrayList<>();
    /** Offsets of {@code __device__}/{@code __host__} words blanked after a lambda introducer. */
    final List<Integer> blankedLambdaAttributes = new ArrayList<>();
    /** The C++20 text rewritten ({@link #scan}: constraints, concepts, ...), as {@code {start, end}} offsets. */
    final List<int[]> cpp20 = new ArrayList<>();

    private final String src;

    private Prepass(String src) {
        this.src = src;
        this.out = src.toCharArray();
    }

    /** Runs the pre-pass over {@code text}; never throws. */
    static Prepass run(String text) {
        Prepass p = new Prepass(text);
        p.scan();
        return p;
    }

    private void scan() {
        int n = src.length();
        int i = 0;
        boolean lineStart = true; // only whitespace seen since the last newline
        boolean directive = false; // inside a preprocessor directive line
        while (i < n) {
            char c = src.charAt(i);
            int skip = skipLexical(i);
            if (skip > i) {
                lineStart = false;
                i = skip;
                continue;
            }
            if (c == '\n') {
                if (!(i > 0 && src.charAt(i - 1) == '\\')) {
                    directive = false;
                }
                lineStart = true;
                i++;
                continue;
            }
            if (c == '#' && lineStart) {
                directive = true;
            }
            if (!Character.isWhitespace(c)) {
                lineStart = false;
            }
            int third = c == '<' && src.startsWith("<<", i) ? openerThird(i + 2) : -1;
            if (third >= 0) {
                int[] closer = findCloser(third + 1);
                if (closer != null) {
                    out[i] = out[i + 1] = out[third] = '(';
                    out[closer[0]] = out[closer[0] + 1] = out[closer[1]] = ')';
                    chevrons.add(new Chevron(i, third + 1, closer[0], closer[1] + 1, directive));
                }
                i = third + 1;
                continue;
            }
            if (c == ']') {
                blankLambdaAttributes(i + 1);
                int end = lambdaTemplateHead(i + 1);
                if (end > i) {
                    i = end;
                    continue;
                }
            }
            if (!directive && Character.isLetter(c) && !identChar(i - 1)) {
                int end = word(i, "requires") ? requires(i)
                        : word(i, "template") ? conceptDefinition(i)
                        : word(i, "for") ? rangeForInit(i + 3)
                        : word(i, "using") ? usingEnum(i) : -1;
                if (word(i, "consteval")) {
                    "constexpr".getChars(0, 9, out, i); // an immediate function is a constexpr one for klap
                    cpp20.add(new int[] {i, i + 9});
                } else if (word(i, "constinit")) {
                    blank(i, i + 9); // constinit only asserts static initialization
                }
                if (end > i) {
                    i = end;
                    continue;
                }
            }
            if (c == '<' && src.startsWith("<=>", i) && !directive) {
                out[i + 2] = ' '; // a <=> b read as a <= b, operator<=> as operator<=: the same operands and calls
                cpp20.add(new int[] {i, i + 3});
                i += 3;
                continue;
            }
            i++;
        }
    }

    /**
     * Blanks the requires-clause at {@code at} (or writes {@code true} over a requires-expression that
     * stands in an expression: after {@code (}, {@code =}, {@code ,}, {@code !}, {@code &&}, {@code ||},
     * {@code ?}, {@code :} or {@code return}).
     *
     * @return the offset after it, or -1 if its end is not found (left as written)
     */
    private int requires(int at) {
        int b = at - 1;
        while (b >= 0 && Character.isWhitespace(src.charAt(b))) {
            b--;
        }
        char prev = b >= 0 ? src.charAt(b) : ';';
        boolean expression = "(=,!&|?:".indexOf(prev) >= 0 || b >= 5 && src.startsWith("return", b - 5) && !identChar(b - 6);
        int end = expression ? requiresExpressionEnd(at) : constraintEnd(at + 8);
        if (end < 0) {
            return -1;
        }
        blank(at, end);
        if (expression) {
            "true".getChars(0, 4, out, at);
        }
        return end;
    }

    /** @return the offset after the concept definition whose {@code template} is at {@code at}, or -1 if none is there */
    private int conceptDefinition(int at) {
        int j = skipSpace(at + 8);
        if (j >= src.length() || src.charAt(j) != '<') {
            return -1;
        }
        j = balanced(j, '<', '>');
        j = j < 0 ? -1 : skipSpace(j);
        if (j < 0 || !src.startsWith("concept", j) || identChar(j + 7)) {
            return -1;
        }
        int depth = 0;
        for (int k = j; k < src.length(); ) {
            int skip = skipLexical(k);
            if (skip > k) {
                k = skip;
                continue;
            }
            char c = src.charAt(k);
            if (c == '(' || c == '{' || c == '[') {
                depth++;
            } else if (c == ')' || c == '}' || c == ']') {
                depth--;
            } else if (c == ';' && depth == 0) {
                blank(at, k + 1);
                return k + 1;
            }
            k++;
        }
        return -1;
    }

    /**
     * @return the offset after the constraint-logical-or-expression that starts at {@code from}
     *         (primaries joined by {@code &&} and {@code ||}: a parenthesized expression, a
     *         requires-expression, {@code true}/{@code false}, or a qualified name with template
     *         arguments and {@code ::value}-style members), or -1 if none starts there
     */
    private int constraintEnd(int from) {
        int j = from;
        while (true) {
            j = skipSpace(j);
            while (j < src.length() && src.charAt(j) == '!') {
                j = skipSpace(j + 1);
            }
            if (j >= src.length()) {
                return -1;
            }
            char c = src.charAt(j);
            if (c == '(') {
                j = balanced(j, '(', ')');
            } else if (src.startsWith("requires", j) && !identChar(j + 8)) {
                j = requiresExpressionEnd(j);
            } else if (Character.isLetter(c) || c == '_' || c == ':') {
                j = qualifiedName(j);
            } else {
                return -1;
            }
            if (j < 0) {
                return -1;
            }
            int k = skipSpace(j);
            if (src.startsWith("&&", k) || src.startsWith("||", k)) {
                j = k + 2;
            } else {
                return j;
            }
        }
    }

    /** @return the offset after the requires-expression {@code requires (params) { ... }} at {@code at}, or -1 */
    private int requiresExpressionEnd(int at) {
        int j = skipSpace(at + 8);
        if (j < src.length() && src.charAt(j) == '(') {
            j = balanced(j, '(', ')');
            if (j < 0) {
                return -1;
            }
            j = skipSpace(j);
        }
        return j < src.length() && src.charAt(j) == '{' ? balanced(j, '{', '}') : -1;
    }

    /** @return the offset after {@code a::b<T>::c} that starts at {@code j}, or -1 */
    private int qualifiedName(int j) {
        int end = -1;
        while (j < src.length()) {
            if (src.startsWith("::", j)) {
                j = skipSpace(j + 2);
                continue;
            }
            if (!(Character.isLetter(src.charAt(j)) || src.charAt(j) == '_')) {
                break;
            }
            while (identChar(j)) {
                j++;
            }
            end = j;
            int k = skipSpace(j);
            if (k < src.length() && src.charAt(k) == '<') {
                k = balanced(k, '<', '>');
                if (k < 0) {
                    return -1;
                }
                end = k;
            }
            int m = skipSpace(k);
            if (!src.startsWith("::", m)) {
                break;
            }
            j = m;
        }
        return end;
    }

    /**
     * @return the offset after the bracket that closes the one at {@code open} ({@code close} at depth
     *         0; other brackets nest, literals and comments are skipped; for angle brackets {@code >>}
     *         closes two), or -1 if none does before a {@code ;} outside parentheses
     */
    private int balanced(int open, char opener, char closer) {
        int depth = 0;
        int paren = 0;
        for (int k = open; k < src.length(); ) {
            int skip = skipLexical(k);
            if (skip > k) {
                k = skip;
                continue;
            }
            char c = src.charAt(k);
            if (opener == '<' && (c == '(' || c == '[' || c == '{')) {
                paren++;
            } else if (opener == '<' && (c == ')' || c == ']' || c == '}')) {
                if (--paren < 0) {
                    return -1;
                }
            } else if (c == opener && paren == 0) {
                depth++;
            } else if (c == closer && paren == 0) {
                if (--depth == 0) {
                    return k + 1;
                }
            } else if (c == ';' && opener != '{' && paren == 0) {
                return -1;
            }
            k++;
        }
        return -1;
    }

    /**
     * Blanks the template parameter list of a C++20 template lambda ({@code []<typename T>(T v) {...}},
     * [expr.prim.lambda]) that follows the introducer's {@code ]} at {@code from}: a {@code <} whose first
     * word is {@code typename}, {@code class} or {@code auto} (no comparison can have those after its
     * {@code <}), closed before a {@code (}, a {@code {} or a requires-clause. CDT parses the lambda
     * as a generic one.
     *
     * @return the offset after the list, or -1 if none is there
     */
    private int lambdaTemplateHead(int from) {
        int j = skipSpace(from);
        if (j >= src.length() || src.charAt(j) != '<') {
            return -1;
        }
        int w = skipSpace(j + 1);
        boolean head = false;
        for (String word : List.of("typename", "class", "auto")) {
            head |= src.startsWith(word, w) && !identChar(w + word.length());
        }
        int end = head ? balanced(j, '<', '>') : -1;
        int k = end < 0 ? -1 : skipSpace(end);
        if (k < 0 || k >= src.length() || !(src.charAt(k) == '(' || src.charAt(k) == '{' || src.startsWith("requires", k))) {
            return -1;
        }
        blank(j, end);
        return end;
    }

    /** @return true if the identifier {@code w} starts at {@code i} (and ends there) */
    private boolean word(int i, String w) {
        return src.startsWith(w, i) && !identChar(i + w.length());
    }

    /**
     * Blanks the init-statement of a C++20 range-based for ({@code for (int k = 0; int a : arr)},
     * [stmt.ranged]) whose {@code (} follows {@code from}: a {@code ;} at depth 0 followed by a
     * {@code :} (not {@code ::}) at depth 0 before the {@code )}. CDT then reads a range-for whose body
     * names {@code k} as an unknown variable (divergent for klap: conservative).
     *
     * @return the offset after the blanked init-statement, or -1 if the loop is none such
     */
    private int rangeForInit(int from) {
        int open = skipSpace(from);
        if (open >= src.length() || src.charAt(open) != '(') {
            return -1;
        }
        int depth = 0;
        int semi = -1;
        for (int k = open + 1; k < src.length(); ) {
            int skip = skipLexical(k);
            if (skip > k) {
                k = skip;
                continue;
            }
            char c = src.charAt(k);
            if (c == '(' || c == '[' || c == '{') {
                depth++;
            } else if (c == ')' || c == ']' || c == '}') {
                if (depth-- == 0) {
                    return -1;
                }
            } else if (depth == 0 && c == ';') {
                if (semi >= 0) {
                    return -1; // a classic for (;;)
                }
                semi = k;
            } else if (depth == 0 && c == ':' && semi >= 0) {
                if (src.startsWith("::", k)) {
                    k += 2;
                    continue;
                }
                blank(open + 1, semi + 1);
                return semi + 1;
            } else if (depth == 0 && c == '?' && semi >= 0) {
                return -1; // a conditional operator's ':' is not the range's
            }
            k++;
        }
        return -1;
    }

    /** Blanks a C++20 {@code using enum E;} ([enum.udecl]) at {@code at}; @return the offset after it, or -1 */
    private int usingEnum(int at) {
        int j = skipSpace(at + 5);
        if (!word(j, "enum")) {
            return -1;
        }
        int semi = src.indexOf(';', j);
        if (semi < 0 || src.substring(j, semi).indexOf('{') >= 0) {
            return -1;
        }
        blank(at, semi + 1);
        return semi + 1;
    }

    /** Blanks {@code [from, to)} but its newlines, and records it. */
    private void blank(int from, int to) {
        for (int k = from; k < to; k++) {
            if (out[k] != '\n') {
                out[k] = ' ';
            }
        }
        cpp20.add(new int[] {from, to});
    }

    /** Blanks {@code __device__}/{@code __host__} words that directly follow a {@code ]}. */
    private void blankLambdaAttributes(int from) {
        int j = skipSpace(from);
        List<int[]> words = new ArrayList<>();
        while (true) {
            if (src.startsWith("__device__", j) && !identChar(j + 10)) {
                words.add(new int[] {j, 10});
                j = skipSpace(j + 10);
            } else if (src.startsWith("__host__", j) && !identChar(j + 8)) {
                words.add(new int[] {j, 8});
                j = skipSpace(j + 8);
            } else {
                break;
            }
        }
        if (words.isEmpty() || j >= src.length()) {
            return;
        }
        char next = src.charAt(j);
        boolean lambdaFollows = next == '(' || next == '{' || src.startsWith("mutable", j) || src.startsWith("->", j);
        if (!lambdaFollows) {
            return;
        }
        for (int[] w : words) {
            for (int k = 0; k < w[1]; k++) {
                out[w[0] + k] = ' ';
            }
            blankedLambdaAttributes.add(w[0]);
        }
    }

    private boolean identChar(int i) {
        return i >= 0 && i < src.length() && (Character.isLetterOrDigit(src.charAt(i)) || src.charAt(i) == '_');
    }

    /** Skips blanks, newlines and comments from {@code j}. */
    private int skipSpace(int j) {
        while (j < src.length()) {
            int s = skipLexical(j);
            if (s > j && (src.startsWith("//", j) || src.startsWith("/*", j))) {
                j = s;
            } else if (Character.isWhitespace(src.charAt(j))) {
                j++;
            } else {
                break;
            }
        }
        return j;
    }

    /**
     * The third {@code <} of a launch opener whose {@code <<} ends at {@code from}: {@code from}
     * itself for {@code <<<}, or the first {@code <} after blanks and comments on the same line
     * ({@code << <}).
     *
     * @return its offset, or -1 if no {@code <} comes next
     */
    private int openerThird(int from) {
        int j = from;
        while (j < src.length()) {
            char d = src.charAt(j);
            int skip = src.startsWith("/*", j) || src.startsWith("//", j) ? skipLexical(j) : j;
            if (skip > j) {
                if (src.substring(j, skip).indexOf('\n') >= 0) {
                    return -1;
                }
                j = skip;
            } else if (d == ' ' || d == '\t') {
                j++;
            } else {
                return d == '<' ? j : -1;
            }
        }
        return -1;
    }

    /**
     * Finds the closing {@code >>>} (or {@code >> >}) for a launch opener whose configuration
     * starts at {@code from}.
     *
     * @return the offsets of the closer's first and third {@code >} (the second follows the first),
     *         or null
     */
    private int[] findCloser(int from) {
        int n = src.length();
        int depth = 0;
        int i = from;
        while (i < n) {
            int skip = skipLexical(i);
            if (skip > i) {
                i = skip;
                continue;
            }
            char c = src.charAt(i);
            switch (c) {
                case '(', '[', '{' -> depth++;
                case ')', ']', '}' -> {
                    if (--depth < 0) {
                        return null;
                    }
                }
                case ';' -> {
                    return null;
                }
                case '>' -> {
                    if (depth == 0) {
                        int j = i;
                        while (j < n && src.charAt(j) == '>') {
                            j++;
                        }
                        if (j - i >= 3) {
                            return new int[] {j - 3, j - 1};
                        }
                        int k = j - i == 2 ? skipSpace(j) : j; // blanks, newlines, comments
                        if (k > j && k < n && src.charAt(k) == '>') {
                            return new int[] {i, k}; // `>> >`
                        }
                        i = j;
                        continue;
                    }
                }
                default -> {
                }
            }
            i++;
        }
        return null;
    }

    /**
     * If a comment or a string, character or raw-string literal starts at {@code i}, returns the
     * offset just after it; otherwise returns {@code i}.
     */
    int skipLexical(int i) {
        return skipLexical(src, i);
    }

    /** Static form of {@link #skipLexical(int)} over any text. */
    static int skipLexical(CharSequence s, int i) {
        int n = s.length();
        char c = s.charAt(i);
        if (c == '/' && i + 1 < n) {
            char d = s.charAt(i + 1);
            if (d == '/') {
                int j = i + 2;
                while (j < n && s.charAt(j) != '\n') {
                    if (s.charAt(j) == '\\' && j + 1 < n && s.charAt(j + 1) == '\n') {
                        j += 2;
                        continue;
                    }
                    j++;
                }
                return j;
            }
            if (d == '*') {
                int j = i + 2;
                while (j + 1 < n && !(s.charAt(j) == '*' && s.charAt(j + 1) == '/')) {
                    j++;
                }
                return Math.min(n, j + 2);
            }
            return i;
        }
        if (c == 'R' && i + 1 < n && s.charAt(i + 1) == '"' && (i == 0 || !isIdent(s.charAt(i - 1))
                || rawPrefix(s, i))) {
            // raw string R"delim( ... )delim"
            int p = s.toString().indexOf('(', i + 2);
            if (p > 0 && p - (i + 2) <= 16) {
                String delim = s.subSequence(i + 2, p).toString();
                int end = s.toString().indexOf(")" + delim + "\"", p + 1);
                return end < 0 ? n : end + delim.length() + 2;
            }
            return i;
        }
        if (c == '"' || c == '\'') {
            if (c == '\'' && digitSeparator(s, i)) {
                return i; // digit separator 1'000
            }
            int j = i + 1;
            while (j < n) {
                char d = s.charAt(j);
                if (d == '\\') {
                    j += 2;
                    continue;
                }
                if (d == c || d == '\n') {
                    return j + 1;
                }
                j++;
            }
            return n;
        }
        return i;
    }

    private static boolean isIdent(char c) {
        return Character.isLetterOrDigit(c) || c == '_';
    }

    /** true for the encoding prefixes u8R, uR, UR, LR before a raw string. */
    private static boolean rawPrefix(CharSequence s, int i) {
        int b = i - 1;
        while (b >= 0 && isIdent(s.charAt(b))) {
            b--;
        }
        String p = s.subSequence(b + 1, i).toString();
        return p.equals("u8") || p.equals("u") || p.equals("U") || p.equals("L");
    }

    /** true if the quote at {@code i} continues a number token ({@code 1'000}), not a character literal. */
    private static boolean digitSeparator(CharSequence s, int i) {
        int b = i - 1;
        while (b >= 0 && (isIdent(s.charAt(b)) || s.charAt(b) == '\'' || s.charAt(b) == '.')) {
            b--;
        }
        return b + 1 < i && Character.isDigit(s.charAt(b + 1));
    }
}
