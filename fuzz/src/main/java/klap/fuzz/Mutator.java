package klap.fuzz;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Mutants of real CUDA sources, for adversarial tests of klap's input handling (guide: "test like an
 * adversary"; the bad-input rules of docs/robustness.md: a diagnostic and a non-zero exit, never a
 * stack trace or a hang). The generators of {@link ProgramGenerator} write valid programs only; a
 * user's file is often one token away from them.
 *
 * <ul>
 * <li>{@link #tokens}: one to three token edits (delete, duplicate, swap with the next, replace or
 *     precede by a CUDA-flavoured fragment: braces, {@code <<<}, a guard {@code return}, a label, a
 *     lambda, a directive, an unterminated comment or string). Most mutants are invalid C++: klap must
 *     reject them with a diagnostic; the rest must be transformed without a crash.</li>
 * <li>{@link #statements}: one to three edits at statement boundaries inside function bodies (an
 *     inserted statement, or the next statement wrapped in a block, {@code if}, {@code else}, {@code
 *     do}/{@code while (0)}, one-trip {@code for} or {@code while}, {@code switch} or a label, braced
 *     or not). Most mutants stay valid
 *     CUDA with the same meaning; for those, klap's output must compile wherever the mutant does.</li>
 * </ul>
 * Both are deterministic functions of the text and the {@link Random}'s state.
 */
public final class Mutator {
    private Mutator() {
    }

    /** A mutant: its text and a one-line description of each edit, in the order applied. */
    public record Mutant(String text, List<String> edits) {
    }

    /** Identifiers, numbers, the multi-character operators klap reads (<<<, >>>, ::, ->), any other character. */
    static final Pattern TOKEN = Pattern.compile("[A-Za-z_][A-Za-z_0-9]*|0[xX][0-9a-fA-F]+|[0-9]+(\\.[0-9]*)?[fFuUlL]*"
        + "|<<<|>>>|->|::|\\+\\+|--|&&|\\|\\||[<>=!+\\-*/%&|^]=|<<|>>|\\S");

    /** Fragments a token edit puts in: the constructs klap's passes look for, and broken ones. */
    static final List<String> FRAGMENTS = List.of("{", "}", "(", ")", ";", ",", "return;", "<<<", ">>>",
        "__syncthreads();", "__syncwarp();", "goto L;", "L:", "[&]", "template<int N>", "\n#define X 1\n", "0",
        "threadIdx.x", "if (threadIdx.x) return;", "break;", "continue;", "child<<<1,32>>>(p);",
        "cudaMalloc(&p, 4);", "cudaFree(p);", "__device__", "__global__", "__shared__", "static", "const", "&", "*",
        "int", "auto", "::", "switch (threadIdx.x) { case 0: ", "do {", "} while (0);", "\n#pragma np parallel for\n",
        "\n#if 0\n", "\n#endif\n", "\"", "'", "/*", "*/", "//", "\\\n", "extern \"C\"",
        "asm volatile(\"\" : \"=r\"(x));", "[=] __device__ (int v) { return v; }", "for (;;)", "while (1)",
        "cudaDeviceSynchronize();", "cudaStreamTailLaunch", "cudaStreamFireAndForget", "dim3", "<<<g, b, 0, s>>>",
        "...", "typename", "using T = int;", "extern __shared__ int d[];", "struct S { int a; };", "operator",
        "new", "delete", "throw", "try {", "catch (...) {}", "__launch_bounds__(256)", "template", "<", ">");

    /** Statements {@link #statements} inserts; {@code @} becomes a name unique in the mutant. */
    static final List<String> STATEMENTS = List.of(";", "{ }", "L@:;", "if (threadIdx.x == 12345) return;",
        "__syncthreads();", "{ int t@ = threadIdx.x; (void)t@; }", "do { } while (0);",
        "for (int q@ = 0; q@ < 1; ++q@) { }", "__syncwarp();", "if (blockIdx.x > 100000) return;",
        "switch (threadIdx.x) { default: break; }", "while (false) { }", "{ volatile int z@ = 0; if (z@) return; }");

    /**
     * Prefix and suffix {@link #statements} wraps a statement in, braced and unbraced (the branch of an
     * {@code if} or {@code else}, a loop's body, a labelled statement); {@code @} as in {@link #STATEMENTS}.
     */
    static final List<List<String>> WRAPS = List.of(List.of("{ ", " }"), List.of("if (1) { ", " }"),
        List.of("do { ", " } while (0);"), List.of("for (int w@ = 0; w@ < 1; ++w@) { ", " }"),
        List.of("if (threadIdx.x < 100000) { ", " }"), List.of("switch (0) { case 0: { ", " } }"),
        List.of("{ L@: ", " }"), List.of("if (threadIdx.x < 100000) ", ""), List.of("for (int v@ = 0; v@ < 1; ++v@) ", ""),
        List.of("if (blockIdx.x > 100000) { } else ", ""), List.of("while (true) { ", " break; }"),
        List.of("L@: ", ""));

    /**
     * @param src a source text
     * @param rnd the draws
     * @return {@code src} with one to three token edits (a text without tokens is returned as it is)
     */
    public static Mutant tokens(String src, Random rnd) {
        StringBuilder sb = new StringBuilder(src);
        List<String> edits = new ArrayList<>();
        int count = 1 + rnd.nextInt(3);
        for (int j = 0; j < count; j++) {
            List<int[]> toks = new ArrayList<>();
            Matcher m = TOKEN.matcher(sb);
            while (m.find()) {
                toks.add(new int[] {m.start(), m.end()});
            }
            if (toks.isEmpty()) {
                break;
            }
            int at = rnd.nextInt(toks.size());
            int[] t = toks.get(at);
            String tok = sb.substring(t[0], t[1]);
            switch (rnd.nextInt(5)) {
                case 0 -> {
                    sb.delete(t[0], t[1]);
                    edits.add("delete '" + tok + "' at " + t[0]);
                }
                case 1 -> {
                    sb.insert(t[0], tok + " ");
                    edits.add("duplicate '" + tok + "' at " + t[0]);
                }
                case 2 -> {
                    if (at + 1 < toks.size()) {
                        int[] u = toks.get(at + 1);
                        String next = sb.substring(u[0], u[1]);
                        sb.replace(u[0], u[1], tok);
                        sb.replace(t[0], t[1], next);
                        edits.add("swap '" + tok + "' and '" + next + "' at " + t[0]);
                    }
                }
                case 3 -> {
                    String f = FRAGMENTS.get(rnd.nextInt(FRAGMENTS.size()));
                    sb.replace(t[0], t[1], f);
                    edits.add("replace '" + tok + "' at " + t[0] + " by '" + f + "'");
                }
                default -> {
                    String f = FRAGMENTS.get(rnd.nextInt(FRAGMENTS.size()));
                    sb.insert(t[0], " " + f + " ");
                    edits.add("insert '" + f + "' at " + t[0]);
                }
            }
        }
        return new Mutant(sb.toString(), edits);
    }

    /**
     * @param src a source text
     * @param rnd the draws
     * @param id  a name part unique among the mutants of a run (the seed): the labels and variables the
     *            edits declare are {@code L<id>_<n>}, {@code t<id>_<n>}, ...
     * @return {@code src} with one to three statement edits; {@code src} itself where it has fewer than
     *         two statement boundaries (no function body)
     */
    public static Mutant statements(String src, Random rnd, String id) {
        List<Integer> ends = statementEnds(src);
        List<String> edits = new ArrayList<>();
        if (ends.size() < 2) {
            return new Mutant(src, edits);
        }
        // boundary index -> edit, applied from the last boundary back so earlier offsets stay valid
        TreeMap<Integer, Integer> chosen = new TreeMap<>();
        int count = 1 + rnd.nextInt(3);
        for (int j = 0; j < count; j++) {
            chosen.put(rnd.nextInt(ends.size() - 1), rnd.nextInt(STATEMENTS.size() + WRAPS.size()));
        }
        StringBuilder sb = new StringBuilder(src);
        for (var e : chosen.descendingMap().entrySet()) {
            int b = e.getKey();
            int p = ends.get(b);
            int q = ends.get(b + 1);
            String name = id + "_" + b;
            int kind = e.getValue();
            if (kind < STATEMENTS.size()) {
                String s = STATEMENTS.get(kind).replace("@", name);
                sb.insert(p, " " + s + " ");
                edits.add("insert '" + s + "' at " + p);
            } else if (src.charAt(q - 1) == ';') {
                List<String> w = WRAPS.get(kind - STATEMENTS.size());
                sb.insert(q, w.get(1).replace("@", name));
                sb.insert(p, " " + w.get(0).replace("@", name));
                edits.add("wrap " + p + ".." + q + " in '" + w.get(0).replace("@", name) + "...'");
            }
        }
        return new Mutant(sb.toString(), edits);
    }

    /**
     * @param src a source text
     * @return the offsets just after each {@code ;}, <code>{</code> and <code>}</code> inside braces and
     *         outside parentheses (a statement boundary of a function body, or of a class or namespace
     *         body), skipping comments, string and character literals and preprocessor directives;
     *         ascending
     */
    static List<Integer> statementEnds(String src) {
        List<Integer> out = new ArrayList<>();
        int depth = 0;
        int parens = 0;
        int n = src.length();
        for (int i = 0; i < n; i++) {
            char c = src.charAt(i);
            char next = i + 1 < n ? src.charAt(i + 1) : 0;
            if (c == '/' && next == '/') {
                i = lineEnd(src, i);
            } else if (c == '/' && next == '*') {
                int e = src.indexOf("*/", i + 2);
                i = e < 0 ? n : e + 1;
            } else if (c == '"' || c == '\'') {
                int j = i + 1;
                while (j < n && src.charAt(j) != c && src.charAt(j) != '\n') {
                    j += src.charAt(j) == '\\' ? 2 : 1;
                }
                i = j;
            } else if (c == '#' && atLineStart(src, i)) {
                i = lineEnd(src, i);
            } else {
                switch (c) {
                    case '{' -> depth++;
                    case '}' -> depth--;
                    case '(' -> parens++;
                    case ')' -> parens--;
                    default -> {
                    }
                }
                if ((c == ';' || c == '{' || c == '}') && depth >= 1 && parens == 0) {
                    out.add(i + 1);
                }
            }
        }
        return out;
    }

    /** @return the offset of the newline ending the logical line (backslash continuations joined) at {@code i} */
    private static int lineEnd(String src, int i) {
        int j = i;
        while (j < src.length() && !(src.charAt(j) == '\n' && (j == 0 || src.charAt(j - 1) != '\\'))) {
            j++;
        }
        return j;
    }

    private static boolean atLineStart(String src, int i) {
        for (int j = i - 1; j >= 0 && src.charAt(j) != '\n'; j--) {
            if (!Character.isWhitespace(src.charAt(j))) {
                return false;
            }
        }
        return true;
    }
}
