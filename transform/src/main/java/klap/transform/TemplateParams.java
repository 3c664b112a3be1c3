package klap.transform;

import java.util.ArrayList;
import java.util.List;
import klap.model.FunctionDef;

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
     * The template header of the first declaration klap adds of a function derived from template
     * {@code f} (a variant, clone, twin, argument record or deduction helper), placed where {@code f}'s
     * first declaration in the file is (before it, or right after it).
     *
     * @param f        a function (a template or not)
     * @param text     the unit's text (every range refers to it)
     * @param forClass for a class template (the argument record): its defaults must be trailing
     *                 ([temp.param]/11), so a default before a parameter without one is dropped (no launch
     *                 klap aggregates leaves such a parameter out: the arguments name a prefix,
     *                 TemplateDeduction.notLeftToDefaults); a function template keeps it (a call of a
     *                 clone may leave it to its default and deduce the later ones)
     * @return {@code f}'s template header and a newline, or "" for a function that is not a template:
     *         the definition's, with the default template arguments of the first declaration in the file
     *         where that is a prototype ({@link #defaultsFrom}), else those of the definition and of a
     *         declaration in a header ({@link FunctionDef#declaredTemplateDefaults})
     */
    public static String declarationHeader(FunctionDef f, String text, boolean forClass) {
        if (f.templateHeader() == null) {
            return "";
        }
        String header = text.substring(f.templateHeader().offset(), f.templateHeader().end());
        List<String> parts = inner(header);
        if (parts == null) {
            return header + "\n";
        }
        List<String> defaults = new ArrayList<>();
        if (f.firstDeclaration() != null) {
            // klap's declarations go next to the first declaration (aggregation's CudaText.declStart puts them
            // before it, CUDA-NP's right after it): they repeat its defaults,
            // which name what is visible there (but for those naming its parameters where it names them
            // otherwise), and no other (a default the definition or a later declaration gives may name
            // what is declared after it: review 2026-11-30, "identifier kS is undefined"; launches that
            // need one are left as written, TemplateDeduction.notLeftToDefaults)
            defaults.addAll(defaultsFrom(header, headerOf(text.substring(f.firstDeclaration().offset(), f.firstDeclaration().end()))));
        } else {
            // the definition's own, and a header's prototype's ([temp.param]/10): a call that leaves
            // them to their defaults would not deduce without them (gid() of template <int S = 2>
            // __device__ int gid(); defined as template <int S> ...)
            List<String> given = f.declaredTemplateDefaults();
            for (int i = 0; i < parts.size(); i++) {
                int eq = topLevelIndex(parts.get(i), '=');
                defaults.add(eq >= 0 ? "= " + parts.get(i).substring(eq + 1).strip() : i < given.size() ? given.get(i) : "");
            }
        }
        boolean trailing = true;
        for (int i = parts.size() - 1; forClass && i >= 0; i--) {
            trailing &= i < defaults.size() && !defaults.get(i).isEmpty();
            if (!trailing && i < defaults.size()) {
                defaults.set(i, "");
            }
        }
        List<String> out = new ArrayList<>();
        for (int i = 0; i < parts.size(); i++) {
            int eq = topLevelIndex(parts.get(i), '=');
            String decl = (eq >= 0 ? parts.get(i).substring(0, eq) : parts.get(i)).strip();
            out.add(decl + (i < defaults.size() && !defaults.get(i).isEmpty() ? " " + defaults.get(i) : ""));
        }
        int lt = header.indexOf('<');
        int gt = header.lastIndexOf('>');
        return header.substring(0, lt + 1) + String.join(", ", out) + header.substring(gt) + "\n";
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
