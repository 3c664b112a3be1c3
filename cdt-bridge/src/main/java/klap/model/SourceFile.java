package klap.model;

import java.nio.file.Path;
import java.util.Arrays;

/**
 * The exact text of one input file and a line map for {@code file:line:col} diagnostics.
 * Lines and columns are 1-based; a column counts characters from the line start.
 */
public final class SourceFile {
    private final Path path;
    private final String text;
    private final int[] lineStarts;

    /**
     * @param path the file's path as the user named it (used in diagnostics)
     * @param text the whole content, exactly as read
     */
    public SourceFile(Path path, String text) {
        this.path = path;
        this.text = text;
        int[] starts = new int[16];
        int n = 0;
        starts[n++] = 0;
        for (int i = 0; i < text.length(); i++) {
            if (text.charAt(i) == '\n') {
                if (n == starts.length) {
                    starts = Arrays.copyOf(starts, n * 2);
                }
                starts[n++] = i + 1;
            }
        }
        this.lineStarts = Arrays.copyOf(starts, n);
    }

    public Path path() {
        return path;
    }

    public String text() {
        return text;
    }

    /** @return the text of {@code r} */
    public String slice(SourceRange r) {
        return text.substring(r.offset(), r.end());
    }

    /**
     * @return true if the text of {@code r} starts with {@code word} as a whole word: a construct
     *         written out in the source, not produced by a macro (every node of a macro's expansion
     *         carries the range of the macro's use, e.g. {@code CHECK(x)} for {@code if (!(x)) return;})
     */
    public boolean startsWithWord(SourceRange r, String word) {
        String t = slice(r);
        return t.startsWith(word) && (t.length() == word.length() || !Character.isJavaIdentifierPart(t.charAt(word.length())));
    }

    /**
     * {@link #startsWithWord} after the statement's attribute specifiers: {@code [[unlikely]] return;}
     * starts with {@code return} (C++20 [dcl.attr.likelihood]; the attributes belong to the statement).
     */
    public boolean startsWithWordAfterAttributes(SourceRange r, String word) {
        String t = slice(r);
        int i = 0;
        while (true) {
            while (i < t.length() && Character.isWhitespace(t.charAt(i))) {
                i++;
            }
            int close = t.startsWith("[[", i) ? t.indexOf("]]", i + 2) : -1;
            if (close < 0) {
                break;
            }
            i = close + 2;
        }
        return startsWithWord(new SourceRange(r.offset() + i, r.length() - i), word);
    }

    /** @return the 1-based line of {@code offset} */
    public int line(int offset) {
        int i = Arrays.binarySearch(lineStarts, offset);
        return (i >= 0 ? i : -i - 2) + 1;
    }

    /** @return the 1-based column of {@code offset} */
    public int column(int offset) {
        return offset - lineStarts[line(offset) - 1] + 1;
    }

    /**
     * A {@code #line} directive (on a line of its own) saying that the next line is the line of
     * {@code offset} in this file, so that nvcc's diagnostics on the user's code, copied into
     * generated functions or following inserted declarations, name the user's file and line
     * (C++ [cpp.line]).
     */
    public String lineDirective(int offset) {
        String name = String.valueOf(path).replace("\\", "\\\\").replace("\"", "\\\"");
        return "#line " + line(offset) + " \"" + name + "\"\n";
    }

    /** @return the offset of the first character of 1-based {@code line} */
    public int lineStart(int line) {
        return lineStarts[line - 1];
    }
}
