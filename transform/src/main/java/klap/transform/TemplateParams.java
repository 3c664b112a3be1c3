package klap.transform;

import java.util.ArrayList;
import java.util.List;

/** Reads the parameter names of a {@code template<...>} header, to name a template's own instantiation. */
public final class TemplateParams {
    private TemplateParams() {
    }

    /**
     * @param header the header text, e.g. {@code template <typename T, int N = 4, class... Ts>}
     * @return the argument list naming the parameters, e.g. {@code <T, N, Ts...>}
     */
    public static String argumentList(String header) {
        int lt = header.indexOf('<');
        int gt = header.lastIndexOf('>');
        if (lt < 0 || gt <= lt) {
            return "";
        }
        List<String> parts = splitTopLevel(header.substring(lt + 1, gt));
        List<String> names = new ArrayList<>();
        for (String p : parts) {
            String s = p;
            int eq = topLevelIndex(s, '=');
            if (eq >= 0) {
                s = s.substring(0, eq);
            }
            s = s.trim();
            boolean pack = s.contains("...");
            s = s.replace("...", " ").trim();
            String[] toks = s.split("[^A-Za-z0-9_]+");
            String name = toks.length == 0 ? "" : toks[toks.length - 1];
            names.add(pack ? name + "..." : name);
        }
        return "<" + String.join(", ", names) + ">";
    }

    /**
     * @param header the header text, e.g. {@code template <typename T, int N = 4>}
     * @return the header without default template arguments, e.g. {@code template <typename T, int N>}:
     *         for the definition of a function whose prototype (with the defaults) comes first; C++
     *         forbids repeating a default template argument ([temp.param]/12)
     */
    public static String withoutDefaults(String header) {
        int lt = header.indexOf('<');
        int gt = header.lastIndexOf('>');
        if (lt < 0 || gt <= lt || !header.contains("=")) {
            return header;
        }
        List<String> parts = new ArrayList<>();
        for (String p : splitTopLevel(header.substring(lt + 1, gt))) {
            int eq = topLevelIndex(p, '=');
            parts.add((eq >= 0 ? p.substring(0, eq) : p).trim());
        }
        return header.substring(0, lt + 1) + String.join(", ", parts) + header.substring(gt);
    }

    /**
     * @param declaration a declaration's text that starts with its template header, e.g.
     *                    {@code template <typename T, int N = 4> __global__ void k(T*);}
     * @return the header ({@code template <typename T, int N = 4>}), or null if it has none; its
     *         {@code >} is the first one outside parentheses that closes the first {@code <}
     */
    public static String headerOf(String declaration) {
        int lt = declaration.indexOf('<');
        if (lt < 0 || !declaration.substring(0, lt).strip().equals("template")) {
            return null;
        }
        int end = topLevelIndex(declaration.substring(lt + 1), '>');
        return end < 0 ? null : declaration.substring(0, lt + 1 + end + 1);
    }

    /**
     * @param header the definition's template header, e.g. {@code template <typename T, int N>}
     * @param first  the header of the function's first declaration, e.g. {@code template <typename X,
     *               int N = 4>}, or null
     * @return for each parameter of {@code header}, the default {@code first} gives it with its
     *         {@code =} ({@code "= 4"}), or empty: where {@code first} names the parameters otherwise,
     *         only defaults that name none of {@code first}'s parameters (such a name would mean another
     *         parameter, or nothing, in {@code header}); every default empty where the two differ in
     *         their number of parameters or {@code first} is null
     */
    public static List<String> defaultsFrom(String header, String first) {
        List<String> own = inner(header);
        List<String> theirs = first == null ? null : inner(first);
        List<String> out = new ArrayList<>();
        boolean same = theirs != null && argumentList(header).equals(argumentList(first));
        List<String> names = theirs == null ? List.of() : splitTopLevel(argumentList(first).replaceAll("^<|>$", ""));
        for (int i = 0; own != null && i < own.size(); i++) {
            String d = "";
            if (theirs != null && theirs.size() == own.size()) {
                int eq = topLevelIndex(theirs.get(i), '=');
                String text = eq < 0 ? "" : theirs.get(i).substring(eq + 1).strip();
                boolean renamed = !same && names.stream().map(String::strip)
                        .anyMatch(n -> java.util.regex.Pattern.compile("(?<![A-Za-z0-9_])"
                                + java.util.regex.Pattern.quote(n.replace("...", "")) + "(?![A-Za-z0-9_])").matcher(text).find());
                d = text.isEmpty() || renamed ? "" : "= " + text;
            }
            out.add(d);
        }
        return out;
    }

    /** @return the parameters of template header {@code header} as written, or null if it has no list */
    public static List<String> inner(String header) {
        int lt = header.indexOf('<');
        int gt = header.lastIndexOf('>');
        return lt < 0 || gt <= lt ? null : splitTopLevel(header.substring(lt + 1, gt));
    }

    /** @return the parts of {@code s} between its commas outside brackets (a blank last part is dropped) */
    public static List<String> splitTopLevel(String s) {
        List<String> out = new ArrayList<>();
        int start = 0;
        for (int comma = topLevelIndex(s, ','); comma >= 0; comma = topLevelIndex(s.substring(start), ',')) {
            out.add(s.substring(start, start + comma));
            start += comma + 1;
        }
        if (!s.substring(start).isBlank()) {
            out.add(s.substring(start));
        }
        return out;
    }

    /**
     * @return the index of {@code ch} outside brackets, comments and literals, or -1
     *         ({@link klap.bridge.Brackets#topLevelIndex}: angle brackets count only outside
     *         parentheses, where a {@code >} is a comparison)
     */
    public static int topLevelIndex(String s, char ch) {
        return klap.bridge.Brackets.topLevelIndex(s, 0, s.length(), ch);
    }
}
