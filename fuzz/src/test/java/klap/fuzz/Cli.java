package klap.fuzz;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.stream.Stream;
import klap.cli.Klap;

/** Runs the real {@code klap} command in-process and checks the invariants every run must keep. */
final class Cli {
    private Cli() {
    }

    /** One run: exit code, stdout, stderr. */
    record Run(int rc, String out, String err) {
        /** @return true if stderr shows a crash rather than a diagnostic */
        boolean crashed() {
            return err.contains("internal error") || err.contains("Exception") || err.contains("\tat ")
                    || err.contains("Error:") && err.contains("java.");
        }

        @Override
        public String toString() {
            return "rc=" + rc + "\n--- stderr:\n" + err;
        }
    }

    /** Runs {@code klap args}; a Throwable escaping {@link Klap#run} fails the test. */
    static Run klap(String... args) {
        return klap(null, args);
    }

    /**
     * Runs {@code klap args} as {@link #klap(String...)} does, reusing the parse of an earlier run of the
     * same input held by {@code parses} ({@link Klap.Parses}; null: parsed in this run).
     */
    static Run klap(Klap.Parses parses, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int rc;
        try {
            rc = Klap.run(args, new PrintWriter(out, true), new PrintWriter(err, true), parses);
        } catch (Throwable t) {
            StringWriter st = new StringWriter();
            t.printStackTrace(new PrintWriter(st));
            return fail("klap threw instead of printing a diagnostic: " + st);
        }
        return new Run(rc, out.toString(), err.toString());
    }

    /** @return the SHA-256 of {@code p}'s bytes */
    static String sha256(Path p) throws IOException {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(p)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** @return the SHA-256 of {@code bytes} */
    static String sha256Of(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Fails if a temporary file of klap's atomic write ({@code .NAME.*.tmp}) is left in {@code dir}. */
    static void assertNoTempFiles(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            return;
        }
        try (Stream<Path> s = Files.list(dir)) {
            assertFalse(s.anyMatch(p -> p.getFileName().toString().endsWith(".tmp")), "temporary file left in " + dir);
        }
    }
}
