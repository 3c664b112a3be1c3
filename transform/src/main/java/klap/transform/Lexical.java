package klap.transform;

import java.util.regex.Pattern;

/** Text helpers that must not be fooled by comments and literals. */
public final class Lexical {
    private Lexical() {
    }

    private static final Pattern COMMENT_OR_LITERAL = Pattern.compile(
            "//[^\\n]*|/\\*.*?\\*/|\"(?:\\\\.|[^\"\\\\\\n])*\"|'(?:\\\\.|[^'\\\\\\n])*'", Pattern.DOTALL);

    /**
     * @param s C++ source text
     * @return {@code s} with every comment and string or character literal replaced by spaces (same
     *         length, so offsets still index {@code s}); a digit separator ({@code 1'000}) may blank
     *         a little too much, which only hides text from a search
     */
    public static String blankCommentsAndLiterals(CharSequence s) {
        StringBuilder sb = new StringBuilder(s);
        var m = COMMENT_OR_LITERAL.matcher(s);
        while (m.find()) {
            for (int i = m.start(); i < m.end(); i++) {
                if (sb.charAt(i) != '\n') {
                    sb.setCharAt(i, ' ');
                }
            }
        }
        return sb.toString();
    }
}
