package klap.regress;

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
import java.util.stream.Stream;

/**
 * The hand-written variants of the benchmark sets ({@code cdp}, {@code flat}, {@code base}) that
 * nvcc has built, as they are now, with the compile tier's nvcc and flags: {@code
 * src/test/resources/known-builds.tsv}, one line per benchmark and variant with the SHA-256 of
 * {@link #key}. {@link CompileTierTest} builds a hand-written variant only when its line is missing
 * or its key differs (its sources, the set's {@code common/} headers, the nvcc release or the
 * flags changed), and prints the line to add once it built. These sources are not klap's output:
 * every build of them is the same as the last one until one of those inputs changes (38 builds,
 * about 2 minutes of the 2-core CI machine). klap's variants are always built.
 */
final class KnownBuilds {
    /** the record, relative to the regress module */
    static final Path FILE = Path.of("src", "test", "resources", "known-builds.tsv");
    /** run.sh's compile flags, part of the key; {@link CompileTierTest} checks that run.sh still uses them */
    static final String FLAGS = "-std=c++17 -O3 -rdc=true -lineinfo -arch=\"$arch\"";
    private static String nvccRelease;

    private final Set<String> lines;

    private KnownBuilds(Set<String> lines) {
        this.lines = lines;
    }

    /** @return the record ({@link #FILE}; empty if absent), lines starting with {@code #} skipped */
    static KnownBuilds load() throws IOException {
        Set<String> lines = new HashSet<>();
        if (Files.isRegularFile(FILE)) {
            for (String l : Files.readAllLines(FILE, StandardCharsets.UTF_8)) {
                if (!l.isBlank() && !l.startsWith("#")) {
                    lines.add(l.strip());
                }
            }
        }
        return new KnownBuilds(lines);
    }

    /** @return true if the record has {@code b}'s variant {@code v} of {@code set} with {@code key} */
    boolean contains(Path set, Benchmark b, Variant v, String key) {
        return lines.contains(line(set, b.name(), v.name(), key));
    }

    /** @return the record's line: the set's folder name, the benchmark, the variant and the key, tab-separated */
    static String line(Path set, String bench, String variant, String key) {
        return set.getFileName() + "\t" + bench + "\t" + variant + "\t" + key;
    }

    /**
     * @return the SHA-256 (hex) of what a build of {@code b}'s hand-written variants reads: the nvcc
     *         release ({@code nvcc --version}'s last line), {@link #FLAGS}, and every file under the
     *         set's {@code common/} folder and under {@code b}'s folder (relative path and bytes, in
     *         path order)
     * @throws IOException if a file cannot be read or nvcc cannot be run
     */
    static String key(Path set, Benchmark b) throws IOException {
        MessageDigest md;
        try {
            md = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        md.update((nvccRelease() + "\n" + FLAGS + "\n").getBytes(StandardCharsets.UTF_8));
        List<Path> files = new ArrayList<>();
        for (Path dir : List.of(set.resolve("common"), b.dir())) {
            if (Files.isDirectory(dir)) {
                try (Stream<Path> s = Files.walk(dir)) {
                    s.filter(Files::isRegularFile).forEach(files::add);
                }
            }
        }
        files.sort(null);
        for (Path f : files) {
            md.update((set.relativize(f).toString().replace('\\', '/') + "\0").getBytes(StandardCharsets.UTF_8));
            md.update(Files.readAllBytes(f));
            md.update((byte) 0);
        }
        return HexFormat.of().formatHex(md.digest());
    }

    /** @return the last line of {@code nvcc --version} (NVCC from the environment, else nvcc on the PATH) */
    static synchronized String nvccRelease() throws IOException {
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
