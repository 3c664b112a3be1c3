package klap.model;

/**
 * One compiler message in gcc/clang form: {@code file:line:col: error|warning|note: message [klap-id]}.
 *
 * @param severity error (exit 1), warning or note
 * @param file     the file as the user named it
 * @param line     1-based line
 * @param column   1-based column
 * @param message  what is wrong and, where possible, what to do
 * @param id       a stable identifier such as {@code parse} or {@code launch-in-macro}
 */
public record Diagnostic(Severity severity, String file, int line, int column, String message, String id) {

    /** Message severities, gcc/clang style. */
    public enum Severity {
        ERROR, WARNING, NOTE;

        @Override
        public String toString() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** @return a diagnostic located at {@code offset} of {@code src} */
    public static Diagnostic at(Severity s, SourceFile src, int offset, String message, String id) {
        return new Diagnostic(s, String.valueOf(src.path()), src.line(offset), src.column(offset), message, id);
    }

    /** @return the gcc/clang formatted line */
    public String format() {
        return file + ":" + line + ":" + column + ": " + severity + ": " + message + " [klap-" + id + "]";
    }

    @Override
    public String toString() {
        return format();
    }
}
