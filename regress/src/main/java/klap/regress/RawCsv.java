package klap.regress;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The raw results that {@code run.sh} writes: {@code name,variant,status,time_ms,launches,runs,detail}
 * (RFC 4180 quoting), one row per benchmark and variant.
 */
public final class RawCsv {
    /** The header line of raw.csv. */
    public static final String HEADER = "name,variant,status,time_ms,launches,runs,detail";

    private RawCsv() {}

    /**
     * One benchmark variant's outcome.
     *
     * @param name the benchmark
     * @param variant the variant's name
     * @param status {@code pass}, {@code fail}, {@code timeout}, {@code crash}, {@code compile-error},
     *     {@code compiled}, {@code refused}, {@code missing} or {@code klap-error}
     * @param timeMs the median time_ms over the runs, or null if it did not pass
     * @param launches the device-side launch count the program reported, or null
     * @param runs how many process runs passed
     * @param detail why it did not pass (klap's first diagnostic, the FAIL line, ...), or ""
     */
    public record Row(String name, String variant, String status, Double timeMs, Long launches, int runs,
            String detail) {
        /** @return true if the variant ran and printed PASS every time */
        public boolean passed() {
            return status.equals("pass") && timeMs != null;
        }

        /** @return true if klap refused the benchmark at this granularity (not a failure of the run) */
        public boolean refused() {
            return status.equals("refused");
        }

        /** @return true if this row is a failure: neither passed, compiled (compile-only) nor refused */
        public boolean failed() {
            return !passed() && !refused() && !status.equals("compiled");
        }

        /** @return the row as a raw.csv line */
        public String toCsv() {
            return String.join(",", field(name), field(variant), field(status),
                    timeMs == null ? "" : String.format(Locale.ROOT, "%s", timeMs),
                    launches == null ? "" : launches.toString(), Integer.toString(runs), field(detail));
        }
    }

    /**
     * Reads raw.csv.
     *
     * @throws IOException if it cannot be read
     * @throws IllegalArgumentException if its header or a row is malformed (the message names the line)
     */
    public static List<Row> read(Path file) throws IOException {
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        if (lines.isEmpty() || !lines.get(0).strip().equals(HEADER)) {
            throw new IllegalArgumentException(file + ":1: expected the header '" + HEADER + "'");
        }
        List<Row> rows = new ArrayList<>();
        for (int i = 1; i < lines.size(); i++) {
            if (lines.get(i).isBlank()) {
                continue;
            }
            List<String> f = split(lines.get(i));
            if (f.size() != 7) {
                throw new IllegalArgumentException(file + ":" + (i + 1) + ": expected 7 fields, got " + f.size());
            }
            try {
                rows.add(new Row(f.get(0), f.get(1), f.get(2), f.get(3).isEmpty() ? null : Double.valueOf(f.get(3)),
                        f.get(4).isEmpty() ? null : Long.valueOf(f.get(4)),
                        f.get(5).isEmpty() ? 0 : Integer.parseInt(f.get(5)), f.get(6)));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(file + ":" + (i + 1) + ": bad number: " + e.getMessage());
            }
        }
        return rows;
    }

    /** Splits one CSV line into its fields (RFC 4180: quoted fields, doubled quotes inside). */
    public static List<String> split(String line) {
        List<String> out = new ArrayList<>();
        StringBuilder cur = new StringBuilder();
        boolean quoted = false;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (quoted) {
                if (c == '"' && i + 1 < line.length() && line.charAt(i + 1) == '"') {
                    cur.append('"');
                    i++;
                } else if (c == '"') {
                    quoted = false;
                } else {
                    cur.append(c);
                }
            } else if (c == '"') {
                quoted = true;
            } else if (c == ',') {
                out.add(cur.toString());
                cur.setLength(0);
            } else {
                cur.append(c);
            }
        }
        out.add(cur.toString());
        return out;
    }

    /** @return {@code s} as one CSV field, quoted if it holds a comma, quote or line break */
    public static String field(String s) {
        if (s == null) {
            return "";
        }
        String t = s.replace('\n', ' ').replace('\r', ' ');
        return t.contains(",") || t.contains("\"") ? "\"" + t.replace("\"", "\"\"") + "\"" : t;
    }
}
