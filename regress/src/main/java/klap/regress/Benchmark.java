package klap.regress;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/**
 * One benchmark of the CDP set: the directory {@code BENCH/NAME} holding {@code NAME.cu} (the
 * CDP version) and {@code NAME_flat.cu} (the version without dynamic parallelism). Shared headers
 * live in {@code BENCH/common} and are included as {@code "common/x.cuh"}. In the CUDA-NP set
 * (testcases/np) {@code NAME.cu} is the program with {@code #pragma np} loops, the input of every
 * variant, and there is no flat version.
 *
 * @param name the benchmark's name (its directory's name)
 * @param dir its directory
 */
public record Benchmark(String name, Path dir) {

    /** @return {@code NAME.cu}, the program with device-side launches (it may not exist yet) */
    public Path cdpSource() {
        return dir.resolve(name + ".cu");
    }

    /** @return {@code NAME_flat.cu}, the program without device-side launches (it may not exist yet) */
    public Path flatSource() {
        return dir.resolve(name + "_flat.cu");
    }

    /** @return the source file of {@code v}'s input: the flat file for {@code flat}, else the CDP file */
    public Path sourceFor(Variant v) {
        return v.equals(Variant.FLAT) ? flatSource() : cdpSource();
    }

    /**
     * Lists the benchmarks under {@code benchDir}: every subdirectory except {@code common} and
     * hidden ones, sorted by name. A directory counts even if its sources are still missing (the
     * runner then reports the variants as {@code missing}).
     *
     * @throws IOException if {@code benchDir} cannot be listed
     */
    public static List<Benchmark> discover(Path benchDir) throws IOException {
        try (Stream<Path> s = Files.list(benchDir)) {
            return s.filter(Files::isDirectory)
                    .map(p -> new Benchmark(p.getFileName().toString(), p))
                    .filter(b -> !b.name.equals("common") && !b.name.startsWith("."))
                    .sorted(java.util.Comparator.comparing(Benchmark::name))
                    .toList();
        }
    }
}
