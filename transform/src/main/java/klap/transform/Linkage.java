package klap.transform;

import klap.model.FunctionDef;

/**
 * The language linkage of the code klap adds for a function (C++ [dcl.link]).
 */
public final class Linkage {
    private Linkage() {
    }

    /**
     * @param f    a function of the unit
     * @param code declarations or definitions klap adds for {@code f} (a clone, an argument record,
     *             aggregated or CUDA-NP variants, twins and their helpers)
     * @return {@code code} with C++ language linkage, {@code extern "C++" { code }}, where {@code f}
     *         has C linkage ({@link FunctionDef#externC}: {@code extern "C"}, or in an {@code extern
     *         "C" { }} block); otherwise {@code code} as it is. A clone overloads {@code f}'s name, and
     *         at most one function of a name may have C linkage ([dcl.link]/6; nvcc: more than one
     *         instance of overloaded function "gid" has "C" linkage); and klap may declare the others
     *         outside the block and define them inside it, after {@code f}, where they took C linkage
     *         (nvcc 13: "linkage specification is incompatible with previous", 2026-11-30: a kernel
     *         defined in an {@code extern "C" { }} block after an {@code extern "C"} prototype).
     *         Nested linkage specifications are valid; the innermost one applies. A {@code #line}
     *         directive that ends {@code code} stays last, after the closing brace (it numbers the
     *         original lines that follow).
     */
    public static String cpp(FunctionDef f, String code) {
        if (!f.externC() || code.isBlank()) {
            return code;
        }
        String body = code.strip();
        String tail = "";
        int last = body.lastIndexOf('\n');
        if (body.startsWith("#line ", last + 1)) {
            tail = body.substring(last + 1) + "\n";
            body = body.substring(0, last).strip();
        }
        return "extern \"C++\" {\n" + body + "\n}\n" + tail;
    }
}
