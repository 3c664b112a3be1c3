package klap.regress;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import klap.runtime.NvccBuildRecord;

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

    private final NvccBuildRecord record;

    private KnownBuilds(NvccBuildRecord record) {
        this.record = record;
    }

    /** @return the record ({@link #FILE}; empty if absent), lines starting with {@code #} skipped */
    static KnownBuilds load() throws IOException {
        return new KnownBuilds(NvccBuildRecord.load(FILE));
    }

    /** @return true if the record has {@code b}'s variant {@code v} of {@code set} with {@code key} */
    boolean contains(Path set, Benchmark b, Variant v, String key) {
        return record.contains(line(set, b.name(), v.name(), key));
    }

    /** @return the record's line: the set's folder name, the benchmark, the variant and the key, tab-separated */
    static String line(Path set, String bench, String variant, String key) {
        return set.getFileName() + "\t" + bench + "\t" + variant + "\t" + key;
    }

    /**
     * @return the {@link NvccBuildRecord#key} of what a build of {@code b}'s hand-written variants
     *         reads: {@link #FLAGS}, and every file under the set's {@code common/} folder and under
     *         {@code b}'s folder (paths relative to the set)
     * @throws IOException if a file cannot be read or nvcc cannot be run
     */
    static String key(Path set, Benchmark b) throws IOException {
        List<Path> files = new ArrayList<>();
        for (Path dir : List.of(set.resolve("common"), b.dir())) {
            if (Files.isDirectory(dir)) {
                try (Stream<Path> s = Files.walk(dir)) {
                    s.filter(Files::isRegularFile).forEach(files::add);
                }
            }
        }
        return NvccBuildRecord.key(FLAGS, set, files);
    }
}
