package klap.regress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** raw.csv: RFC 4180 fields, rows, errors that name the line. */
class RawCsvTest {
    @Test
    void splitsQuotedFields() {
        assertEquals(List.of("a", "", "b,c", "say \"hi\"", ""), RawCsv.split("a,,\"b,c\",\"say \"\"hi\"\"\","));
        assertEquals("\"x, \"\"y\"\"\"", RawCsv.field("x, \"y\""));
        assertEquals("plain", RawCsv.field("plain"));
        assertEquals(List.of("x, \"y\""), RawCsv.split(RawCsv.field("x, \"y\"")));
    }

    @Test
    void readsRowsAndRoundTrips(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("raw.csv");
        Files.writeString(f, RawCsv.HEADER + "\nbfs,block,pass,1.5,9.25,1.25,12,5,\nqt,warp,fail,,,,,2,\"FAIL qt: a, b\"\n");
        List<RawCsv.Row> rows = RawCsv.read(f);
        assertEquals(new RawCsv.Row("bfs", "block", "pass", 1.5, 9.25, 1.25, 12L, 5, ""), rows.get(0));
        assertTrue(rows.get(0).passed());
        assertTrue(rows.get(1).failed());
        assertEquals("FAIL qt: a, b", rows.get(1).detail());
        assertEquals("qt,warp,fail,,,,,2,\"FAIL qt: a, b\"", rows.get(1).toCsv());
        assertEquals("bfs,block,pass,1.5,9.25,1.25,12,5,", rows.get(0).toCsv());
        assertTrue(!RawCsv.isV1(f));
        assertTrue(new RawCsv.Row("a", "warp", "refused", null, null, 0, "x").refused());
        assertTrue(!new RawCsv.Row("a", "warp", "refused", null, null, 0, "x").failed());
    }

    @Test
    void readsTheOlderFormatWithoutFirstAndWarmTimes(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("raw_reps11.csv");
        Files.writeString(f, RawCsv.HEADER_V1 + "\nbfs,cdp,pass,4.644,10000,3,\ngc,warp,fail,,,1,\"run 2: FAIL gc: x, y\"\n");
        List<RawCsv.Row> rows = RawCsv.read(f);
        assertEquals(new RawCsv.Row("bfs", "cdp", "pass", 4.644, null, null, 10000L, 3, ""), rows.get(0));
        assertEquals("run 2: FAIL gc: x, y", rows.get(1).detail());
        assertTrue(RawCsv.isV1(f));
        // a v1 row with 9 fields is malformed
        Files.writeString(f, RawCsv.HEADER_V1 + "\nbfs,cdp,pass,4.6,1,2,10000,3,\n");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> RawCsv.read(f)).getMessage()
                .contains("expected 7 fields"));
    }

    @Test
    void malformedFilesNameTheLine(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("raw.csv");
        Files.writeString(f, "oops\n");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> RawCsv.read(f)).getMessage().contains(":1:"));
        Files.writeString(f, RawCsv.HEADER + "\nbfs,block,pass,fast,,,,5,\n");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> RawCsv.read(f)).getMessage().contains(":2:"));
        Files.writeString(f, RawCsv.HEADER + "\nbfs,block\n");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> RawCsv.read(f)).getMessage()
                .contains("expected 9 fields"));
    }
}
