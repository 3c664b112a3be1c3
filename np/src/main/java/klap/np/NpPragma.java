package klap.np;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One {@code #pragma np parallel for} directive with its clauses (CUDA-NP section 3.6):
 * {@code reduction(op:vars)}, {@code scan(op:vars)}, {@code copyin(vars)}, {@code num_slaves(N)},
 * {@code type(inter_warp|intra_warp)}. Operators: {@code + * - min max & | ^ && ||} ({@code -}
 * is a sum, as in OpenMP).
 *
 * @param reductions variable -> operator, in clause order
 * @param scans      variable -> operator, in clause order
 * @param copyin     the copyin variables (klap recomputes live-ins redundantly, so they are only checked)
 * @param numSlaves  the num_slaves clause, or 0
 * @param type       "intra_warp", "inter_warp" or null
 */
public record NpPragma(Map<String, Op> reductions, Map<String, Op> scans, List<String> copyin, int numSlaves,
                       String type) {
    /** Reduction and scan operators and the {@code klap/np.cuh} functor that implements each. */
    public enum Op {
        PLUS("+", "Plus"), TIMES("*", "Times"), MIN("min", "Min"), MAX("max", "Max"), AND("&", "BitAnd"),
        OR("|", "BitOr"), XOR("^", "BitXor"), LAND("&&", "LogicalAnd"), LOR("||", "LogicalOr");

        /** the operator as written in a clause */
        public final String symbol;
        /** the functor in namespace {@code klap::np} */
        public final String functor;

        Op(String symbol, String functor) {
            this.symbol = symbol;
            this.functor = functor;
        }

        /** @return the operator for a clause spelling, or null */
        static Op of(String s) {
            if (s.equals("-")) {
                return PLUS;
            }
            for (Op o : values()) {
                if (o.symbol.equals(s)) {
                    return o;
                }
            }
            return null;
        }

        /** @return the C++ expression {@code klap::np::F{}} */
        public String cpp() {
            return "klap::np::" + functor + "{}";
        }
    }

    private static final Pattern HEAD = Pattern.compile("\\s*np\\s+parallel\\s+for\\b");
    private static final Pattern CLAUSE = Pattern.compile("\\s*([A-Za-z_]+)\\s*\\(([^()]*)\\)\\s*,?");
    private static final Pattern IDENT = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

    /** @return true if the pragma text (after {@code #pragma}) is a CUDA-NP directive */
    public static boolean isNp(String pragmaText) {
        return pragmaText.strip().matches("np(\\s.*)?");
    }

    /**
     * Parses the text after {@code #pragma}.
     *
     * @param text e.g. {@code np parallel for reduction(+:sum) copyin(col)}
     * @return the directive
     * @throws IllegalArgumentException with the reason, for anything that is not a well-formed
     *         {@code np parallel for} directive
     */
    public static NpPragma parse(String text) {
        Matcher h = HEAD.matcher(text);
        if (!h.lookingAt()) {
            throw new IllegalArgumentException("only '#pragma np parallel for' is supported, got '#pragma " + text.strip() + "'");
        }
        Map<String, Op> red = new LinkedHashMap<>();
        Map<String, Op> scan = new LinkedHashMap<>();
        List<String> copyin = new ArrayList<>();
        int slaves = 0;
        String type = null;
        String rest = text.substring(h.end()).replace("\\\n", " ");
        int pos = 0;
        Matcher c = CLAUSE.matcher(rest);
        while (pos < rest.length() && !rest.substring(pos).isBlank()) {
            if (!c.find(pos) || c.start() != pos) {
                throw new IllegalArgumentException("cannot read the clauses at '" + rest.substring(pos).strip() + "'");
            }
            String name = c.group(1);
            String arg = c.group(2).strip();
            switch (name) {
                case "reduction", "scan" -> {
                    int colon = arg.lastIndexOf(':');
                    Op op = colon < 0 ? null : Op.of(arg.substring(0, colon).strip());
                    if (op == null) {
                        throw new IllegalArgumentException(name + "(" + arg + "): expected " + name
                                + "(op:vars) with op one of + - * min max & | ^ && ||");
                    }
                    for (String v : vars(name, arg.substring(colon + 1))) {
                        if (red.containsKey(v) || scan.containsKey(v)) {
                            throw new IllegalArgumentException("'" + v + "' appears in two reduction/scan clauses");
                        }
                        (name.equals("scan") ? scan : red).put(v, op);
                    }
                }
                case "copyin" -> copyin.addAll(vars(name, arg));
                case "num_slaves" -> {
                    try {
                        slaves = Integer.parseInt(arg);
                    } catch (NumberFormatException e) {
                        slaves = -1;
                    }
                    if (slaves < 2 || slaves > 32) {
                        throw new IllegalArgumentException("num_slaves(" + arg + "): expected an integer between 2 and 32");
                    }
                }
                case "type" -> {
                    if (!arg.equals("intra_warp") && !arg.equals("inter_warp")) {
                        throw new IllegalArgumentException("type(" + arg + "): expected type(intra_warp) or type(inter_warp)");
                    }
                    type = arg;
                }
                default -> throw new IllegalArgumentException("unknown clause '" + name + "' (expected reduction, scan, "
                        + "copyin, num_slaves or type)");
            }
            pos = c.end();
        }
        return new NpPragma(red, scan, List.copyOf(copyin), slaves, type);
    }

    private static List<String> vars(String clause, String list) {
        List<String> out = new ArrayList<>();
        for (String v : list.split(",")) {
            String s = v.strip();
            if (!IDENT.matcher(s).matches()) {
                throw new IllegalArgumentException(clause + ": '" + s + "' is not a variable name");
            }
            out.add(s);
        }
        return out;
    }
}
