package klap.cli;

import java.util.ArrayList;
import java.util.List;

/**
 * Splits text into words the way a POSIX shell does without expansions, and quotes words back for
 * display. Used for {@code KLAP_FLAGS}, response files and {@code -v} echo lines.
 *
 * <p>{@code split("-I 'my dir' \"a b\" c\\ d")} gives {@code [-I, my dir, a b, c d]}: blanks and
 * newlines separate words, single quotes keep everything, double quotes keep everything except that
 * a backslash escapes {@code " \ $ `}, an unquoted backslash escapes the next character. An
 * unterminated quote ends at the end of the text.
 */
final class Words {
    private Words() {}

    /** The words of {@code text} (never null, possibly empty). */
    static List<String> split(String text) {
        List<String> words = new ArrayList<>();
        if (text == null) {
            return words;
        }
        StringBuilder w = new StringBuilder();
        boolean inWord = false;
        int n = text.length();
        for (int i = 0; i < n; i++) {
            char c = text.charAt(i);
            if (Character.isWhitespace(c)) {
                if (inWord) {
                    words.add(w.toString());
                    w.setLength(0);
                    inWord = false;
                }
            } else if (c == '\'') {
                inWord = true;
                int end = text.indexOf('\'', i + 1);
                end = end < 0 ? n : end;
                w.append(text, i + 1, end);
                i = end;
            } else if (c == '"') {
                inWord = true;
                i++;
                for (; i < n && text.charAt(i) != '"'; i++) {
                    char d = text.charAt(i);
                    if (d == '\\' && i + 1 < n && "\"\\$`".indexOf(text.charAt(i + 1)) >= 0) {
                        d = text.charAt(++i);
                    }
                    w.append(d);
                }
            } else if (c == '\\' && i + 1 < n) {
                inWord = true;
                char d = text.charAt(++i);
                if (d != '\n') {
                    w.append(d);
                }
            } else {
                inWord = true;
                w.append(c);
            }
        }
        if (inWord) {
            words.add(w.toString());
        }
        return words;
    }

    /** {@code args} joined by blanks, each quoted for a POSIX shell where needed. */
    static String join(List<String> args) {
        StringBuilder sb = new StringBuilder();
        for (String a : args) {
            if (sb.length() > 0) {
                sb.append(' ');
            }
            sb.append(quote(a));
        }
        return sb.toString();
    }

    /** One word quoted for a POSIX shell if it contains anything but safe characters. */
    static String quote(String a) {
        if (!a.isEmpty() && a.matches("[A-Za-z0-9_@%+=:,./-]+")) {
            return a;
        }
        return "'" + a.replace("'", "'\\''") + "'";
    }
}
