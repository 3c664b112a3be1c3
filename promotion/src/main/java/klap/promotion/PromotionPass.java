package klap.promotion;

import java.util.ArrayList;
import java.util.List;
import klap.model.CudaUnit;
import klap.model.Diagnostic;
import klap.model.FunctionDef;
import klap.transform.EditSet;

/**
 * Kernel launch promotion over one translation unit (KLAP section III). Input: a parsed unit
 * without errors. Output: the unit's text in which every kernel that {@link PromotionPlanner}
 * proves promotable is replaced by its promoted form ({@link PromotedKernel}), with
 * {@code #include "klap/promote.cuh"} first; every other kernel and every other launch stays as
 * written. A kernel that launches itself but cannot be promoted gets a warning
 * {@code klap-promote} with the reason; an overlap that cannot be kept, {@code klap-overlap}.
 */
public final class PromotionPass {
    private PromotionPass() {
    }

    /**
     * The options of the pass.
     *
     * @param mode  P, PA, PO or PAO
     * @param depth the n of PA-n and PAO-n: descendants per launch, at least 1
     */
    public record Options(PromoteMode mode, int depth) {
        public Options {
            if (depth < 1) {
                throw new IllegalArgumentException("the promotion depth must be at least 1, got " + depth);
            }
        }

        /** @return the variant's name as the paper writes it: P, PA-2, PO, PAO-128 */
        public String name() {
            return mode.aggregates() ? mode.name() + "-" + depth : mode.name();
        }
    }

    /**
     * The result.
     *
     * @param text        the transformed text (the input text if nothing was promoted)
     * @param diagnostics warnings (never errors: a kernel that cannot be promoted stays as written)
     * @param promoted    the names of the promoted kernels, in source order
     * @param summary     one line for the user, e.g. "2 kernels promoted (PA-128): sc, pt", or ""
     */
    public record Result(String text, List<Diagnostic> diagnostics, List<String> promoted, String summary) {
        /** @return true if the output includes {@code klap/promote.cuh} */
        public boolean usesRuntime() {
            return !promoted.isEmpty();
        }
    }

    /**
     * Runs the pass.
     *
     * @param unit a parsed unit without errors
     * @param opt  the options
     * @return the result; never throws on user input
     */
    public static Result run(CudaUnit unit, Options opt) {
        List<Diagnostic> diags = new ArrayList<>();
        PromotionPlanner planner = new PromotionPlanner(unit, opt.mode(), opt.depth(), diags);
        List<PromotionPlan> plans = new ArrayList<>();
        for (FunctionDef f : unit.functions()) {
            PromotionPlan p = planner.plan(f);
            if (p != null) {
                plans.add(p);
            }
        }
        int selfLaunching = plans.size() + (int) diags.stream().filter(d -> d.id().equals("promote")).count();
        if (plans.isEmpty()) {
            return new Result(unit.file().text(), diags, List.of(), selfLaunching == 0 ? ""
                    : "no kernel promoted (" + opt.name() + "): " + selfLaunching + " launch themselves, see the warnings");
        }
        EditSet out = new EditSet(unit.file().text());
        out.insert(0, "#include \"klap/promote.cuh\" /* added by klap --promote=" + opt.name() + " */\n"
                + unit.file().lineDirective(0));
        List<String> names = new ArrayList<>();
        for (PromotionPlan p : plans) {
            out.replace(p.kernel().range().offset(), p.kernel().range().end(),
                    new PromotedKernel(p, unit.file(), klapPragmas(unit, p.kernel())).emit(opt.name()));
            names.add(p.kernel().name());
        }
        String summary = names.size() + (names.size() == 1 ? " kernel" : " kernels") + " promoted (" + opt.name() + "): "
                + String.join(", ", names)
                + (selfLaunching > names.size() ? "; " + (selfLaunching - names.size()) + " left as written" : "");
        return new Result(out.render(), diags, List.copyOf(names), summary);
    }

    /** @return the {@code #pragma klap ...} directives inside the body of {@code k} */
    private static List<klap.model.Pragma> klapPragmas(CudaUnit unit, FunctionDef k) {
        return unit.pragmas().stream().filter(p -> k.body().range().contains(p.range())
                && p.text().strip().startsWith("klap")).toList();
    }
}
