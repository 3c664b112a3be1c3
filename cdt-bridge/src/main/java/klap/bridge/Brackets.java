package klap.bridge;

/**
 * Finds a character at the top level of C++ text: outside parentheses, square brackets, braces,
 * comments and literals, and outside angle brackets, which count only where no parenthesis, square
 * bracket or brace is open (there a {@code >} is a comparison: {@code bool B = (3 > 2)}; a template
 * argument or parameter list ends at the first {@code >} nested in no parentheses, C++ [temp.names]/3).
 * Shared by the front end (the end of a {@code template <...>} header) and the passes (template
 * parameter lists split at their commas).
 */
public final class Brackets {
    private Brackets() {
    }

    /**
     * @param text the text
     * @param from the first index searched
     * @param to   the end of the search (exclusive)
     * @param ch   the character sought (a {@code >} at the top level is the one that closes the list
     *             the search started inside)
     * @return the index of the first {@code ch} in {@code [from, to)} at the top level, or -1
     */
    public static int topLevelIndex(String text, int from, int to, char ch) {
        int paren = 0;
        int angle = 0;
        for (int i = from; i < to; i++) {
            int s = Prepass.skipLexical(text, i);
            if (s > i) {
                i = s - 1;
                continue;
            }
            char c = text.charAt(i);
            if (c == '(' || c == '[' || c == '{') {
                paren++;
            } else if (c == ')' || c == ']' || c == '}') {
                paren--;
            } else if (paren == 0 && c == '<') {
                angle++;
            } else if (paren == 0 && c == '>' && angle > 0) {
                angle--;
            } else if (c == ch && paren == 0 && angle == 0) {
                return i;
            }
        }
        return -1;
    }
}
