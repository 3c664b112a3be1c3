package klap.regress;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The raw results that {@code run.sh} writes, one row per benchmark and variant (RFC 4180 quoting):
 * {@code name,variant,status,time_ms,first_ms,warm_ms,launches,runs,detail}. Files from before the
 * first and warm times were separated ({@code name,variant,status,time_ms,launches,runs,detail},
 * {@link #HEADER_V1}) are still read; their rows have no first or warm time.
 */
public final class RawCsv {
    /** The header line of raw.csv. */
    public static final String HEADER = "name,variant,status,time_ms,first_ms,warm_ms,launches,runs,detail";
    /** The header of raw.csv files written before first_ms and warm_ms existed. */
    public static final String HEADER_V1 = "name,variant,status,time_ms,launches,runs,detail";

    private RawCsv() {}

    /**
     * One benchmark variant's outcome.
     *
     * @param name the benchmark
     * @param variant the variant's name
     * @param status {@code pass}, {@code fail}, {@code timeout}, {@code crash}, {@code compile-error},
     *     {@code compiled}, {@code refused}, {@code missing}, {@code klap-error} or {@code skipped}
     * @param timeMs the median over the process runs of the time_ms each printed (the median of all
     *     its repetitions), or null if it did not pass
     * @param firstMs the median over the process runs of the first repetition's time, or null
     *     (not passed, or not reported)
     * @param warmMs the median over the process runs of the median of repetitions 2..R, or null
     *     (not passed, a single repetition, or not reported)
     * @param launches the device-side launch count the program reported, or null
     * @param runs how many process runs passed
     * @param detail why it did not pass (klap's first diagnostic, the FAIL line, ...), or ""
     */
    public record Row(String name, String variant, String status, Double timeMs, Double firstMs, Double warmMs,
            Long launches, int runs, String detail) {

        /** A row without first and warm times (the format of {@link #HEADER_V1}). */
        public Row(String name, String variant, String status, Double timeMs, Long launches, int runs, String detail) {
            this(name, variant, status, timeMs, null, null, launches, runs, detail);
        }

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

        /** @return the row as a raw.csv line ({@link #HEADER}) */
        public String toCsv() {
            return String.join(",", field(name), field(variant), field(status), number(timeMs), number(firstMs),
                    number(warmMs), launches == null ? "" : launches.toString(), Integer.toString(runs), field(detail));
        }
    }

    /**
     * Reads raw.csv in either format ({@link #HEADER} or {@link #HEADER_V1}).
     *
     * @throws IOException if it cannot be read
     * @throws IllegalArgumentException if its header or a row is malformed (the message names the line)
     */
    public static List<Row> read(Path file) throws IOException {
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        String header = lines.isEmpty() ? "" : lines.get(0).strip();
        boolean v1 = header.equals(HEADER_V1);
        if (!v1 && !header.equals(HEADER)) {
            throw new IllegalArgumentException(file + ":1: expected the header '" + HEADER + "' (or, from older "
                    + "runs, '" + HEADER_V1 + "')");
        }
        int fields = v1 ? 7 : 9;
        List<Row> rows = new ArrayList<>();
        for (int i = 1; i < lines.size(); i++) {
            if (lines.get(i).isBlank()) {
                continue;
            }
            List<String> f = split(lines.get(i));
            if (f.size() != fields) {
                throw new IllegalArgumentException(file + ":" + (i + 1) + ": expected " + fields + " fields, got "
                        + f.size());
            }
            try {
                rows.add(v1 ? new Row(f.get(0), f.get(1), f.get(2), dbl(f.get(3)), lng(f.get(4)), integer(f.get(5)),
                        f.get(6))
                        : new Row(f.get(0), f.get(1), f.get(2), dbl(f.get(3)), dbl(f.get(4)), dbl(f.get(5)),
                                lng(f.get(6)), integer(f.get(7)), f.get(8)));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(file + ":" + (i + 1) + ": bad number: " + e.getMessage());
            }
        }
        return rows;
    }

    /** @return true if {@code file}'s first line is the header of the older format {@link #HEADER_V1} */
    public static boolean isV1(Path file) throws IOException {
        return firstLine(file).equals(HEADER_V1);
    }

    /** @return the first line of {@code file}, stripped ("" for an empty file) */
    static String firstLine(Path file) throws IOException {
        try (var r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            String l = r.readLine();
            return l == null ? "" : l.strip();
        }
    }

    static Double dbl(String s) {
        return s.isEmpty() ? null : Double.valueOf(s);
    }

    static Long lng(String s) {
        return s.isEmpty() ? null : Long.valueOf(s);
    }

    static int integer(String s) {
        return s.isEmpty() ? 0 : Integer.parseInt(s);
    }

    static String number(Double d) {
        return d == null ? "" : String.format(Locale.ROOT, "%s", d);
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
