package klap.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Rewrites the make rules that {@code nvcc -M/-MM/-MD/-MMD} writes for a transformed file so that
 * they name the user's file instead of klap-nvcc's temporary copy, and drops the klap runtime
 * headers (which live in a directory that is deleted after the build step).
 *
 * <p>Shape, with {@code /tmp/k/0/a.cu -> src/a.cu} and the dropped prefix {@code /tmp/k/klap/}:
 * <pre>
 * a.o : /tmp/k/0/a.cu \          a.o : src/a.cu \
 *     /tmp/k/klap/klap.cuh \  =&gt;     src/common/check.cuh \
 *     src/common/check.cuh            /usr/include/stdio.h
 *     /usr/include/stdio.h
 * /tmp/k/klap/klap.cuh:          (phony rule of -MP dropped)
 * </pre>
 * Text that names none of the temporary paths is returned unchanged.
 */
final class DepRules {
    private DepRules() {}

    /**
     * @param text the dependency rules as nvcc wrote them
     * @param renames temporary path -&gt; original path (both as plain, unescaped paths)
     * @param dropPrefix prerequisites that start with this (unescaped) prefix are removed
     * @return the rewritten rules, or {@code text} itself when nothing needed rewriting
     */
    static String rewrite(String text, Map<String, String> renames, String dropPrefix) {
        boolean mentions = text.contains(dropPrefix) || renames.keySet().stream().anyMatch(text::contains);
        if (!mentions) {
            return text;
        }
        String joined = text.replace("\\\r\n", " ").replace("\\\n", " ");
        StringBuilder out = new StringBuilder();
        for (String line : joined.split("\n", -1)) {
            if (line.isBlank()) {
                continue;
            }
            int colon = separator(line);
            if (colon < 0) {
                out.append(line).append('\n');
                continue;
            }
            List<String> targets = new ArrayList<>();
            for (String t : words(line.substring(0, colon))) {
                String u = unescape(t);
                if (u.startsWith(dropPrefix)) {
                    continue;
                }
                targets.add(renames.containsKey(u) ? escape(renames.get(u)) : t);
            }
            if (targets.isEmpty()) {
                continue;
            }
            List<String> prereqs = new ArrayList<>();
            for (String p : words(line.substring(colon + 1))) {
                String u = unescape(p);
                if (u.startsWith(dropPrefix)) {
                    continue;
                }
                prereqs.add(renames.containsKey(u) ? escape(renames.get(u)) : p);
            }
            if (prereqs.isEmpty()) {
                out.append('\n').append(String.join(" ", targets)).append(":\n");
            } else {
                out.append(String.join(" ", targets)).append(" : ").append(String.join(" \\\n    ", prereqs))
                        .append('\n');
            }
        }
        return out.toString();
    }

    /** Index of the rule's target/prerequisite colon: the first unescaped ':' followed by a blank or the end. */
    private static int separator(String line) {
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (c == '\\') {
                i++;
            } else if (c == ':' && (i + 1 == line.length() || Character.isWhitespace(line.charAt(i + 1)))) {
                return i;
            }
        }
        return -1;
    }

    /** Splits at unescaped blanks, keeping escapes. */
    private static List<String> words(String s) {
        List<String> ws = new ArrayList<>();
        StringBuilder w = new StringBuilder();
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\' && i + 1 < s.length()) {
                w.append(c).append(s.charAt(++i));
            } else if (Character.isWhitespace(c)) {
                if (w.length() > 0) {
                    ws.add(w.toString());
                    w.setLength(0);
                }
            } else {
                w.append(c);
            }
        }
        if (w.length() > 0) {
            ws.add(w.toString());
        }
        return ws;
    }

    static String unescape(String w) {
        return w.replace("\\ ", " ").replace("\\#", "#").replace("$$", "$");
    }

    static String escape(String p) {
        return p.replace("$", "$$").replace("#", "\\#").replace(" ", "\\ ");
    }
}
