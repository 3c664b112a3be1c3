package klap.bench;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import klap.aggregation.AggregationPass;
import klap.bridge.CudaParser;
import klap.model.CudaUnit;
import klap.transform.Granularity;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Warm speed of the whole transformation (parse + analyses + block-granularity aggregation +
 * rendering) of a generated CDP program of about 2000 lines ({@link LargeInput}). Run with
 * {@code java -jar bench/target/benchmarks.jar}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class TransformBenchmark {
    /** number of generated units (33 lines each: 61 units = 2030 lines) */
    @Param({"61"})
    public int units;

    private String text;
    private CudaUnit unit;

    @Setup
    public void setup() {
        text = LargeInput.program(units);
        unit = CudaParser.parse(Path.of("large.cu"), text, List.of());
        if (unit.hasErrors()) {
            throw new IllegalStateException(unit.diagnostics().toString());
        }
    }

    /** parse only */
    @Benchmark
    public CudaUnit parse() {
        return CudaParser.parse(Path.of("large.cu"), text, List.of());
    }

    /** parse + transform + render */
    @Benchmark
    public String parseAndTransform() {
        CudaUnit u = CudaParser.parse(Path.of("large.cu"), text, List.of());
        return AggregationPass.run(u, new AggregationPass.Options(Granularity.BLOCK, true, null)).text();
    }
}
