package klap.transform;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The object-like and function-like macros a file defines with {@code #define}, for the textual
 * checks that must also read what a macro expands to ({@code #define RELEASE(p) delete[] p},
 * {@code #define TAG klap_x0}; reviews of 2026-12-01). Only the file's own definitions: a macro of
 * a header is not seen.
 *
 * <p>Input: the file's text. Output, for a piece of it ({@link #used}): the replacement texts, with
 * comments and literals blanked, of the macros it names and of those they name, transitively.
 */
public final class MacroTexts {
    private static final Pattern DEFINE = Pattern.compile("(?m)^\\s*#\\s*define\\s+(\\w+)(.*(?:\\\\\\n.*)*)");

    /** {name, replacement text} of each {@code #define}, in file order (continuation lines included) */
    private final List<String[]> defines = new ArrayList<>();

    /** @param fileText the whole file */
    public MacroTexts(String fileText) {
        Matcher d = DEFINE.matcher(fileText);
        while (d.find()) {
            defines.add(new String[] {d.group(1), Lexical.blankCommentsAndLiterals(d.group(2))});
        }
    }

    /**
     * @param text a piece of the file (a function's text)
     * @return the replacement texts of the macros {@code text} names, transitively, one per line
     *         (empty if none)
     */
    public String used(String text) {
        StringBuilder out = new StringBuilder();
        Set<String> done = new HashSet<>();
        List<String> todo = new ArrayList<>(List.of(text));
        while (!todo.isEmpty()) {
            String t = todo.remove(todo.size() - 1);
            for (String[] d : defines) {
                if (!done.contains(d[0]) && Pattern.compile("\\b" + Pattern.quote(d[0]) + "\\b").matcher(t).find()) {
                    done.add(d[0]);
                    out.append(d[1]).append('\n');
                    todo.add(d[1]);
                }
            }
        }
        return out.toString();
    }
}
