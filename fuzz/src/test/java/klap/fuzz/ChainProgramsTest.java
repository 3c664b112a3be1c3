package klap.fuzz;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import klap.bridge.CudaParser;
import klap.model.CudaUnit;
import klap.promotion.PromoteMode;
import klap.promotion.PromotionPass;
import org.junit.jupiter.api.Test;

/**
 * Launch promotion over random chain programs ({@link ChainGenerator}, issue 12): every program is
 * promoted in P, PA-2, PO and PAO-3 exactly when the generator made it promotable (else it stays as
 * written, with a klap-promote warning), the overlap is kept exactly when the program allows it,
 * and a sample of programs compiles with nvcc in every variant. {@code -Dklap.fuzz.chains=N}
 * changes the count (default 400, seeds from {@code -Dklap.fuzz.chainFirst}, default 12000001).
 */
class ChainProgramsTest {
    private static final List<PromotionPass.Options> MODES = List.of(new PromotionPass.Options(PromoteMode.P, 1),
            new PromotionPass.Options(PromoteMode.PA, 2), new PromotionPass.Options(PromoteMode.PO, 1),
            new PromotionPass.Options(PromoteMode.PAO, 3));

    /** @return {@code p} parsed; one unit serves every mode (the pass does not change it) */
    private static CudaUnit parse(ChainGenerator.Program p) {
        CudaUnit u = CudaParser.parse(Path.of("fz_chain.cu"), p.text(), List.of());
        assertTrue(!u.hasErrors(), "seed " + p.seed() + ": does not parse: " + u.diagnostics());
        return u;
    }

    @Test
    void everyChainIsPromotedExactlyWhenItMayBe() {
        int count = Integer.getInteger("klap.fuzz.chains", 250);
        long first = Long.getLong("klap.fuzz.chainFirst", 12_000_001L);
        int promoted = 0;
        int overlapped = 0;
        for (long seed = first; seed < first + count; seed++) {
            ChainGenerator.Program p = ChainGenerator.generate(seed);
            CudaUnit u = parse(p);
            for (PromotionPass.Options o : MODES) {
                PromotionPass.Result r = PromotionPass.run(u, o);
                String where = "seed " + seed + " " + o.name() + ": " + r.diagnostics();
                if (!p.promotable()) {
                    assertEquals(p.text(), r.text(), where);
                    assertTrue(r.diagnostics().stream().anyMatch(d -> d.id().equals("promote")), where);
                    continue;
                }
                assertEquals(List.of("fz_chain"), r.promoted(), where);
                boolean overlapWarning = r.diagnostics().stream().anyMatch(d -> d.id().equals("overlap"));
                if (o.mode().overlaps()) {
                    assertEquals(!p.overlaps(), overlapWarning, where);
                    assertEquals(p.overlaps(), r.text().contains("klap::promote::await_exists"), where);
                } else {
                    assertTrue(!overlapWarning && !r.text().contains("await_exists"), where);
                }
                assertTrue(r.diagnostics().stream().noneMatch(d -> d.id().equals("promote")), where);
            }
            promoted += p.promotable() ? 1 : 0;
            overlapped += p.overlaps() ? 1 : 0;
        }
        // the generator must keep producing all three outcomes
        assertTrue(promoted > count / 2 && promoted < count, "promotable: " + promoted + " of " + count);
        assertTrue(overlapped > count / 5 && overlapped < promoted, "with overlap: " + overlapped);
    }

    @Test
    void aSampleCompilesWithNvccInEveryVariant() throws Exception {
        Path out = Path.of("target", "chain-sample").toAbsolutePath();
        List<java.util.concurrent.CompletableFuture<Nvcc.Result>> procs = new ArrayList<>();
        List<String> names = new ArrayList<>();
        int compiled = 0;
        for (long seed = 12_100_001L; compiled < 3; seed++) {
            ChainGenerator.Program p = ChainGenerator.generate(seed);
            if (!p.promotable() || (compiled == 0 && !p.overlaps())) {
                continue;
            }
            compiled++;
            Path dir = out.resolve(p.dirName());
            Files.createDirectories(dir);
            p.writeTo(dir, "original.cu");
            klap.runtime.RuntimeHeaders.writeTo(dir); // once, before any nvcc of this folder reads them
            names.add(p.dirName() + "/original");
            // compiled (-cubin), not linked, as ShapeFixturesTest's one-file programs: the regress
            // compile tier links every promotion variant of the promotion benchmarks
            procs.add(Nvcc.cubin(dir.resolve("original.cu"), dir.resolve("original.cubin")));
            CudaUnit u = parse(p);
            for (PromotionPass.Options o : MODES) {
                String v = o.name().toLowerCase().replace("-", "");
                Path cu = dir.resolve(v + ".cu");
                Files.writeString(cu, PromotionPass.run(u, o).text());
                names.add(p.dirName() + "/" + v);
                procs.add(Nvcc.cubin(cu, dir.resolve(v + ".cubin")));
            }
        }
        for (int i = 0; i < procs.size(); i++) {
            Nvcc.Result res = procs.get(i).get(10, TimeUnit.MINUTES);
            assertTrue(res.linked(), names.get(i) + ":\n" + res.log());
        }
    }
}
