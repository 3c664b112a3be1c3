package klap.runtime;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * A committed record of hand-written CUDA programs that nvcc has built, as they are now: a text
 * file of tab-separated lines, each ending with the SHA-256 {@link #key} of everything the build
 * reads (the nvcc release, the flags, and the bytes and relative paths of its files); lines
 * starting with {@code #} are comments. A compile-tier test builds a program only when its line is
 * missing or its key differs, and then prints the line to add. A build of the same inputs with the
 * same nvcc release and flags has the same outcome, so a recorded build is not repeated on every CI
 * run; any change of a source, a header the key lists, the release or the flags builds it again.
 * Used for the runtime library's test programs ({@link RuntimeLibCompileTest}) and the benchmark
 * sets' hand-written variants ({@code klap.regress.KnownBuilds}); klap's own output is always built.
 * Shared through this module's test jar.
 */
public final class NvccBuildRecord {
    private static String nvccRelease;

    private final Set<String> lines;

    private NvccBuildRecord(Set<String> lines) {
        this.lines = lines;
    }

    /**
     * @param file the record (absent: an empty record)
     * @return its lines, stripped, blank lines and lines starting with {@code #} skipped
     * @throws IOException if it exists and cannot be read
     */
    public static NvccBuildRecord load(Path file) throws IOException {
        Set<String> lines = new HashSet<>();
        if (Files.isRegularFile(file)) {
            for (String l : Files.readAllLines(file, StandardCharsets.UTF_8)) {
                if (!l.isBlank() && !l.startsWith("#")) {
                    lines.add(l.strip());
                }
            }
        }
        return new NvccBuildRecord(lines);
    }

    /** @return true if the record holds {@code line} (e.g. {@code name + "\t" + key}) */
    public boolean contains(String line) {
        return lines.contains(line);
    }

    /**
     * @param flags the build's nvcc flags, as one string (part of the key)
     * @param base  the folder the files' paths in the key are relative to
     * @param files every file the build reads apart from the toolkit's (sorted here, duplicates dropped)
     * @return the SHA-256 (hex) of the nvcc release ({@link #nvccRelease}), {@code flags}, and each
     *     file's path relative to {@code base} and bytes, in path order
     * @throws IOException if a file cannot be read or nvcc cannot be run
     */
    public static String key(String flags, Path base, List<Path> files) throws IOException {
        MessageDigest md;
        try {
            md = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        md.update((nvccRelease() + "\n" + flags + "\n").getBytes(StandardCharsets.UTF_8));
        List<Path> sorted = new ArrayList<>(files.stream().map(f -> f.toAbsolutePath().normalize()).distinct().toList());
        sorted.sort(null);
        Path root = base.toAbsolutePath().normalize();
        for (Path f : sorted) {
            md.update((root.relativize(f).toString().replace('\\', '/') + "\0").getBytes(StandardCharsets.UTF_8));
            md.update(Files.readAllBytes(f));
            md.update((byte) 0);
        }
        return HexFormat.of().formatHex(md.digest());
    }

    /**
     * @return the last line of {@code nvcc --version} (the environment's {@code NVCC}, else nvcc on
     *     the PATH), e.g. {@code Build cuda_13.0.r13.0/compiler.36424714_0}
     * @throws IOException if nvcc cannot be run or fails
     */
    public static synchronized String nvccRelease() throws IOException {
        if (nvccRelease == null) {
            String env = System.getenv("NVCC");
            Process p = new ProcessBuilder(env != null && !env.isBlank() ? env : "nvcc", "--version")
                    .redirectErrorStream(true).start();
            String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            try {
                if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                    throw new IOException("nvcc --version failed: " + text);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException(e);
            }
            List<String> l = text.lines().filter(x -> !x.isBlank()).toList();
            nvccRelease = l.get(l.size() - 1).strip();
        }
        return nvccRelease;
    }
}
