package klap.fuzz;

import java.util.EnumSet;
import java.util.Locale;
import java.util.Set;

/**
 * The program shapes {@link ProgramGenerator} can generate. {@link #RANDOM} is the random nest of
 * issue 6; the others are the shapes that the first GPU run (issue 10, "Correct on the GPU") found
 * klap silently miscompiling, each a bug class of its own. A default program ({@link
 * ProgramGenerator#generate(long)}) is always {@link #RANDOM} and has each other shape with its
 * {@link #probability}; {@link ProgramGenerator#generate(long, Set)} generates exactly the shapes
 * given (on the command line: {@code klap.fuzz.Main ... --shape=NAME[,NAME...]}).
 */
public enum Shape {
    /**
     * The random parents of issue 6: nests of uniform and divergent {@code if}s, loops, {@code
     * switch}, early returns and launches with constant, uniform and per-thread configurations.
     * A program of this shape alone is byte for byte the program the generator wrote before issue 10
     * (the GPU run of 2026-11-22 used them).
     */
    RANDOM("random", 1.0),
    /**
     * Issue 10, bug class 1, "reference out-parameters": a {@code __device__} helper writes
     * thread-dependent values through non-const reference or pointer parameters (e.g. {@code
     * row_range(ptr, r, b, e)}), and those values feed a launch's configuration and arguments and
     * the bound of the loop around it. An analysis that misses writes through references takes the
     * outputs for uniform and passes one thread's values to every thread's child.
     */
    REF_OUT("ref-out", 0.25),
    /**
     * Issue 10, bug class 2, "a barrier after a guarded return": {@code if (i >= n) return;} with n
     * not a multiple of the block size, then shared-memory work around a {@code __syncthreads()}
     * (inline, in a called {@code __device__} function, or {@code __syncwarp()}), then a divergent
     * launch. Rewriting the return so that the returned threads reach the aggregation's own
     * barriers breaks the original barrier's matching.
     */
    BARRIER_RETURN("barrier-return", 0.25),
    /**
     * Issue 10, bug class 3, "dependent launches of one thread": {@code produce<<<1,32>>>(a, i)}
     * then, in a loop of constant trip count, {@code consume<<<1,32>>>(a, i, k)} into the NULL
     * stream (or in a {@code __device__} helper, or into {@code cudaStreamTailLaunch}); consume
     * reads and rewrites what produce and the previous consume wrote, so reordering one thread's
     * launches changes the result.
     */
    DEPENDENT("dependent", 0.25),
    /**
     * Issue 10, bug class 4, "loop-carried arguments in fire-and-forget loops": {@code for (k ...)
     * child<<<g, b, 0, cudaStreamFireAndForget>>>(out, k, ...)} where k is the same for the whole
     * grid but different in each round and selects what the child writes (and sometimes its grid).
     * Aggregating all rounds at once must still pass each round its own k.
     */
    FF_LOOP("ff-loop", 0.25),
    /**
     * Issue 10, bug class 5, "kernels referenced from a second file": the program is {@code
     * kernels.cu} (the CDP kernels, what klap transforms), {@code main.cu} (host code klap never
     * sees: it declares the kernels through the shared header or {@code extern}, launches them with
     * {@code <<<>>>}, a function pointer or {@code cudaLaunchKernel}, and calls {@code
     * cudaFuncSetCacheConfig} or {@code cudaFuncGetAttributes} on them) and {@code fz_common.cuh};
     * built with {@code nvcc -rdc=true kernels.cu main.cu}. A variant replaces only kernels.cu.
     * This is a form of the whole program and combines with any of the others.
     */
    TWO_FILES("two-files", 0.2),
    /**
     * Issue 10, found on the GPU (random seed 3000014): "a jump out of the region after a launch".
     * A launch deferred to the end of its convergent region, then {@code if (c) return;} (or a
     * {@code break}/{@code continue} of a loop of rounds) before that end, c uniform across the
     * block or thread-dependent. The threads that jump must still launch what they recorded: klap
     * passes them through the region's end. Whether a default program has it is drawn from a
     * generator of its own, so every other draw of a seed stays what it was (a seed that draws this
     * shape gains one kernel; the rest of its program is unchanged).
     */
    EXIT_AFTER_LAUNCH("exit-after-launch", 0.25),
    /**
     * Issue 10, found on the GPU (random seeds 122, 1024): "an in-place launch in a loop". A launch
     * that klap aggregates in place among the lanes that arrive together (a loop between the early
     * return's region and the launch), inside a loop of rounds whose counter feeds an argument,
     * after a stretch whose length differs between threads. Lanes of different rounds can arrive
     * together (independent thread scheduling), so the counter must not be passed as one scalar.
     * Drawn like {@link #EXIT_AFTER_LAUNCH}. (Since the survivor regions of 2026-11-27 the loop's
     * trip count, uniform here, lets klap aggregate these launches among the lanes that passed the
     * return, all in the same round; {@link #SURVIVOR_LOOP}. The in-place form is kept by loops whose
     * trip count differs between threads.)
     */
    IN_PLACE_LOOP("in-place-loop", 0.25),
    /**
     * Found by reading, 2026-11-23: "written by a macro". A child that reads its indices through a
     * macro, a guard, a return and device cudaMalloc/cudaFree written by macros in the parent. Every
     * node of a macro's expansion carries the range of the macro's use, so klap must never edit it:
     * before, the index macro stopped klap (overlapping edits), the guard macro lost its condition
     * and a cudaFree macro became a no-op. Drawn like {@link #EXIT_AFTER_LAUNCH}.
     */
    MACROS("macros", 0.2),
    /**
     * Found by reading, 2026-11-24: a child parameter declared as an array ({@code const int d[8]}),
     * a function ({@code unsigned g(unsigned)}) or unnamed, a {@code __grid_constant__} struct, and
     * a launch that leaves a default argument out. The argument record declared {@code int d[8];}
     * and {@code int[4] klap_unnamed2;}, which do not compile, and a launch that left a default out
     * was not aggregated. Drawn from a third generator ({@link #generation}).
     */
    PARAM_FORMS("param-forms", 0.2),
    /**
     * Found by adversarial snippets, 2026-11-24: a per-thread value reaches a local only through an
     * alias that is not a plain assignment: {@code (c ? x : y) = v}, a constructor keeping a
     * reference ({@code Ref r(x); r.set(v);}), an array member decayed to a pointer, a reference
     * range-for over it, {@code *s.c = v}. Each left the local uniform, so a launch passing it was
     * scalarized (every child of a group read one thread's value). Drawn like {@link #PARAM_FORMS}.
     */
    ALIASES("aliases", 0.2),
    /**
     * Found by review, 2026-11-25: a per-thread value assigned inside {@code ?:}, {@code &&} or
     * {@code ||} ({@code cond ? (lo = m + 1) : (hi = m)} in a per-thread binary search, {@code
     * (gt % 3 == 0) && (a = gt)}, a skip flag set that way and then returned on). The analysis took
     * such assignments for unconditional: the bounds were scalarized (every child of a group read
     * one thread's), a loop on them was taken for uniform. Drawn from a fourth generator.
     */
    COND_ASSIGN("cond-assign", 0.2),
    /**
     * Found by review, 2026-11-25: a loop written with a backward {@code goto} ({@code next:
     * launch(r); if (++r < cnt) goto next;}) with a per-thread trip count. klap saw no loop: at
     * kernel granularity all rounds went into one grid with one {@code r}, in place the lanes of
     * different rounds shared one {@code r}. Drawn like {@link #COND_ASSIGN}.
     */
    GOTO_LOOP("goto-loop", 0.2),
    /**
     * Found by reading, 2026-11-25: a parent whose static shared memory is (nearly) the whole 48
     * KiB a block may declare ({@code __shared__ int fz_big[12288]}, in the kernel or in a {@code
     * __device__} helper it calls), with a launch under a thread-dependent condition. The block
     * granularity output added the block-wide scan's scratch and nvlink rejected it ("uses too much
     * shared data"). Drawn from a fifth generator.
     */
    FULL_SHARED("full-shared", 0.15),
    /**
     * Found by reading, 2026-11-27: a launch written in a macro (in its body, or in a
     * {@code CHECK((k<<<...>>>(...), cudaGetLastError()))} argument) stopped klap on the whole file.
     * klap now leaves that launch as written and aggregates the others; dependent launches of one
     * thread, some in macros, check that the thread's order survives. Drawn from a sixth generator.
     */
    LAUNCH_MACRO("launch-macro", 0.2),
    /**
     * Found by review, 2026-11-27: a per-thread value declared in a condition ({@code if (int v =
     * e)}, {@code while (int v = e)}, {@code switch (int v = e)}) or in a C++17 init-statement
     * ({@code if (int v = e; v % 2 == 0)}, {@code switch (w = e; w)}) and passed to a launch. klap's
     * model had no declaration for such a variable, so it counted as uniform and one thread's value
     * went to every child of the group. Drawn from a seventh generator.
     */
    COND_DECL("cond-decl", 0.2),
    /**
     * Found by reading, 2026-11-27: a parent launched from the host with (nearly) the whole default
     * 48 KiB of dynamic shared memory ({@code extern __shared__}, in the kernel or in a {@code
     * __device__} helper it calls), written by every thread before a barrier and feeding a launch.
     * klap's block-granularity parent adds static shared memory (the scan scratch), which lowers the
     * kernel's default dynamic limit: the launch failed with "invalid argument" unless
     * {@code klap::host_smem} raises it. In two-file programs (the launch in a file klap does not
     * see) the program raises the limit itself with {@code cudaFuncSetAttribute}, as a program must
     * for more than 48 KiB. Drawn from an eighth generator.
     */
    FULL_DYN_SHARED("full-dyn-shared", 0.15),
    /**
     * Found by review, 2026-11-27: one thread's producer launched into a stream it created, a
     * {@code cudaEventRecord} into that stream and a {@code cudaStreamWaitEvent} of a second
     * created stream, then consumers launched into the second stream. klap sent the producer's
     * aggregated launch into the block's NULL stream, so the event no longer followed it and the
     * consumers could run first. Or both launches into the one created stream (no event), which klap
     * may aggregate into the NULL stream (its order per thread is kept). Drawn from a ninth generator.
     */
    STREAM_EVENT("stream-event", 0.15),
    /**
     * Issue 10, after the GPU run of 2026-11-27 (H200): launches under a per-thread {@code if} or
     * {@code switch} in a loop of rounds with a uniform trip count, after divergent early returns of
     * the kernel (testcases/src/loops' loopUniform and nine random programs hung when such launches
     * were aggregated in place among the lanes that arrive together). klap aggregates them among the
     * lanes of each warp that passed the returns (a survivor region: a {@code __ballot_sync} at each
     * return keeps the mask). Drawn from a tenth generator.
     */
    SURVIVOR_LOOP("survivor-loop", 0.25),
    /**
     * Issue 10, after the GPU run of 2026-11-27 (H200): launches under a per-thread {@code if} in a
     * {@code for} or {@code while} loop whose trip count differs between threads (at the top of the
     * kernel, or after a divergent early return), whose condition and step have effects. klap runs
     * such a loop until no thread of the group has an iteration left, each thread's condition, body
     * and step exactly as often as before (a convergent loop). Drawn from an eleventh generator.
     */
    CONVERGENT_LOOP("convergent-loop", 0.25),
    /**
     * Issue 10 (sixth session of 2026-11-27): a launch in a {@code for}, {@code while} or {@code do}
     * loop (trip count uniform or per thread) with a thread-dependent {@code continue} of the loop
     * before it (sometimes from a {@code switch}) and/or a thread-dependent {@code break} before or
     * after it, at the top of the kernel, after a divergent early return, inside a thread-dependent
     * branch, or inside a loop whose trip count differs between threads (the last two: the lanes of
     * a warp reach the loop apart). klap makes such a loop convergent (each jump goes through the
     * body's flush, a break ends only the thread's own iterations), among the warp or block, the
     * lanes that passed the return, or the lanes that enter the loop together. Drawn from a twelfth
     * generator.
     */
    LOOP_JUMPS("loop-jumps", 0.25),
    /**
     * Issue 10 (2026-11-28): dependent launches of one thread after the kernel's divergent
     * {@code if (gt >= n) return;}: {@code produce<<<...>>>} directly after the return, in a case
     * of a {@code switch} on a uniform value, or under a thread-dependent {@code if} of its own,
     * then {@code consume<<<...>>>} in a loop of constant trip count (in the kernel or a
     * {@code __device__} helper; sometimes into {@code cudaStreamTailLaunch}), sometimes after a
     * second thread-dependent return. The guard region would flush the producer at the end of the
     * kernel, after the consumers: klap defers it only to the end of its own statement, among the
     * lanes that passed the returns. Drawn from a thirteenth generator.
     */
    DEPENDENT_AFTER_RETURN("dependent-after-return", 0.25),
    /**
     * Issue 10 (2026-11-28, a bug found by hand-written programs): the {@link #BARRIER_RETURN} kernel
     * with its barrier spelled another way: {@code asm volatile("bar.sync 0;")} through a macro (the
     * form klap missed: it read the statement's text, {@code FZ_BAR();}), a {@code do}/{@code while
     * (0)} macro around {@code barrier.sync}, {@code __barrier_sync(0)}, {@code
     * __syncthreads_count}, cooperative groups' {@code this_thread_block().sync()} or {@code
     * cg::sync}; for the warp form, {@code bar.warp.sync} through a macro or {@code
     * __syncwarp(0xffffffff)}. Each must stop the guard rewrite as {@code __syncthreads()} does.
     * Drawn from a fourteenth generator.
     */
    BARRIER_SPELLINGS("barrier-spellings", 0.2),
    /**
     * Issue 10 (a third session of 2026-11-28, a bug found by hand-written programs): launches whose
     * kernel an object-like macro names, {@code FZ_KN0_K<<<...>>>(...)}, with the namespace and
     * template arguments in the macro, sometimes through a second macro; and a random child through
     * a macro. klap took the macro's name for the kernel's ("child kernel 'K' is not defined") and
     * left the launch. Drawn from a fifteenth generator.
     */
    KERNEL_NAME_MACRO("kernel-name-macro", 0.2),
    /**
     * Issue 10 (2026-11-28, found on the H200 by the review reproducer C_launch_err): a launch whose
     * block some threads make one no device accepts (1280 threads, or a depth of 65), the program's
     * own {@code cudaGetLastError()} check after it and a fallback launch of 256-thread blocks when
     * it was refused, sometimes in a loop. klap cleared the refused launch's error, so the check saw
     * success and the fallback never ran. Drawn from a sixteenth generator.
     */
    LAUNCH_ERROR("launch-error", 0.2),
    /**
     * Issue 10/11 (2026-11-28): a child that some threads launch with 64 KiB of dynamic shared
     * memory, whose limit the program raises where klap cannot see it (through a {@code const
     * void*} variable, or in main.cu of a two-file program). klap's aggregated forms keep 48 KB, so
     * the device refuses their launch; the runtime then launches the children as written (it
     * trapped before). Drawn from a seventeenth generator.
     */
    HIDDEN_ATTRIBUTE("hidden-attribute", 0.15),
    /**
     * Issue 11 (2026-11-29): launches that one thread of a warp ({@code lt % 32 == 0}) or of a block
     * ({@code lt == 0}) makes, or every thread of blocks of one thread, sometimes twice in a row or in
     * a loop of uniform trip count: the quadtree's form. klap's warp and block forms have nothing to
     * aggregate there and make such a launch as written (a group of one thread: from the start; a
     * group whose scan finds one launch: at the flush). Drawn from an eighteenth generator.
     */
    LONE_LAUNCHER("lone-launcher", 0.2),
    /**
     * Parsing (2026-11-29): launches written with the spaced chevrons nvcc 13 accepts, {@code << <}
     * (blanks or a comment between {@code <<} and {@code <}) and {@code >> >} (blanks, a comment or a
     * newline between {@code >>} and {@code >}), as Visual Studio's formatter writes them (a public
     * BFS program): klap stopped with a syntax error. Drawn from a nineteenth generator.
     */
    SPACED_CHEVRONS("spaced-chevrons", 0.15),
    /**
     * Templates (a fourth session of 2026-11-29): launches of a template child that leave its template
     * arguments to deduction ({@code fz_tdc0<<<g, b>>>(out, data, k, tag)} with {@code template
     * <typename T, typename U> __global__ void fz_tdc0(U* out, const T* src, T w, unsigned tag)}), as
     * a public quicksort writes them. klap left them as written (klap-template-args); it now writes
     * the arguments C++ deduces from the parent's parameters ({@code <int, unsigned>}), which must
     * be the ones nvcc deduces. Drawn from a twentieth generator. Since 2026-11-30 the child sometimes
     * has a third template parameter {@code unsigned S} that no parameter names, left to its default
     * (in the child's header, or only in a prototype): klap left such launches as written; it now
     * writes the deduced prefix ({@code <int, unsigned>}) and S takes its default.
     */
    DEDUCED_TEMPLATE("deduced-template", 0.15),
    /**
     * Launch order (a fifth session of 2026-11-29): a launch and another that no thread runs both of,
     * the two branches of an {@code if}/{@code else} (or {@code else if}), cases of a {@code switch}
     * with a {@code break} between them, or a launch whose thread returns right after it, where the
     * other one goes out at once (in place, in a loop of per-thread trip count). klap made the first
     * in place ("a later launch of the same thread would go out before it", public CDP code); it now
     * stays deferred to the end of its region. Drawn from a twenty-first generator.
     */
    EXCLUSIVE_LAUNCHES("exclusive-launches", 0.15),
    /**
     * Calls not written as calls (a sixth and a seventh session of 2026-11-29): a parent whose
     * child argument an overloaded operator computes or writes ({@code a + b} whose {@code
     * operator+} reads {@code threadIdx}; {@code acc << v} with a non-const member; {@code v >> acc}
     * with {@code operator>>(int, Acc&)}; {@code int v = lane;} with {@code operator int()} reading
     * {@code threadIdx}), which klap passed as one lane's scalar; and a child that
     * reads the indices through a constructor, a functor's {@code operator()} or a default member
     * initializer, which klap aggregated with the aggregated grid's indices. Drawn from a
     * twenty-second generator.
     */
    IMPLICIT_CALLS("implicit-calls", 0.15),
    /**
     * Library collectives (an eighth session of 2026-11-29; "Bugs found", item 13): a divergent
     * {@code if (gt >= n) return;} whose returning threads are trailing (some lanes of a warp, or
     * whole warps of the last block), then one collective of a library whose headers klap does not
     * read, then a launch that passes its result: cooperative groups' {@code tile.shfl(x, 0)}, {@code
     * tile.ballot(p)}, {@code tile.any(p)} or {@code tile.all(p)} on a {@code tiled_partition<32>} taken
     * before the return, or CUB's {@code BlockReduce<int, B>(temp).Sum(x, valid)} (a barrier inside)
     * or {@code WarpReduce<int>(temp[w]).Sum(x, valid)} over the threads that stayed; in the kernel or
     * in a {@code __device__} function it calls, a CUB class sometimes named through a {@code using}
     * alias. Each is well defined with exited threads (they do not hold up {@code shfl.sync}, {@code
     * vote.sync} or {@code bar.sync}), but not with returned threads that klap keeps alive for its own
     * collectives: klap rewrote the return around them as for a parent without barriers. Drawn from a
     * twenty-third generator.
     */
    LIBRARY_COLLECTIVES("library-collectives", 0.15),
    /**
     * Shared memory in helpers (2026-11-30, a third session; random program 76000027): a child whose
     * {@code __device__} helpers declare {@code __shared__} arrays, a large one (36 to 40 KiB) and a
     * small one, and a parent that calls the small one's helper itself. nvlink gives a helper's
     * {@code __shared__} variable one offset in every kernel that reaches it; a variant of the child
     * that reached the same two helpers made the large array common too, and nvlink laid the small
     * one after it, so the parent (which never uses the large array) reserved 36-40 KiB more shared
     * memory per block (and with the block granularity's scratch, did not link). The helpers pass
     * the thread index as a parameter: they read no index, so klap had no reason to clone them.
     * The fixture also reads the parent's static shared memory at run time. Drawn from a twenty-fourth
     * generator.
     */
    SHARED_HELPERS("shared-helpers", 0.15),
    /**
     * Default arguments given only by prototypes (2026-11-30, a fourth session): C++ lets any one
     * declaration give a parameter's default ([dcl.fct.default]/4), and calls after it may leave the
     * parameter out. The child kernel's trailing parameters get theirs from one or two prototypes
     * (a launch leaves some out), an index-reading {@code __device__} helper's from its prototype
     * (its clone must declare it: without, nvcc rejected the variant), and sometimes a second helper
     * has a prototype whose default reads {@code blockIdx.x} (the variant's call would evaluate it in
     * the aggregated grid: a silent miscompile until klap saw prototypes' defaults; now that launch
     * stays as written). Sometimes the child also calls an overload of the helper that a two-file
     * program defines in main.cu, which klap never sees (klap matched calls by name, and its clone
     * of the other overload took the call: a silent wrong call). Drawn from a twenty-fifth generator.
     */
    PROTOTYPE_DEFAULTS("prototype-defaults", 0.15),
    /**
     * Kernels in a namespace (2026-11-30, a fourth session): a child, and sometimes its
     * index-reading helper, defined outside the namespace that declares them ({@code __global__
     * void ns::child(...) {...}}); either the parent is in the namespace too and the host launches it
     * through a using-declaration ({@code using ns::parent;}), or the parent is at file scope and
     * launches the child through one, or by its qualified name. klap declared its variants' and
     * clones' prototypes with the qualified name (nvcc: "should have been declared inside"), and named
     * its twin, chunk helper, record and variants unqualified where a using-declaration had brought
     * only the kernel's name (undefined identifiers). Two-file programs keep the parent at file scope
     * (main.cu declares it there). Sometimes the helper is {@code extern "C"}, or first declared in
     * an {@code extern "C" { }} block: klap's clone overloaded a C-linkage name ("more than one
     * instance ... has "C" linkage"), also where the definition outside the block had its C linkage
     * from the prototype alone. A two-file program sometimes adds a file-scope child declared only in
     * the common header and defined last, launched first by a {@code __device__} function of the
     * namespace or a static member of a class (klap's record went after that launch, then such a
     * launch was left as written; now klap declares it before the namespace or class). Drawn from a
     * twenty-sixth generator.
     */
    NAMESPACES("namespaces", 0.15),
    /**
     * Signatures that name what is declared after the prototype (2026-11-30, a seventh session): a
     * child kernel (and sometimes its index-reading {@code __device__} helper, and the parent) is
     * first declared with plain types, then a {@code typedef}, {@code using} alias or macro of
     * {@code unsigned} follows, or the definition of a class the prototype took by value (declared
     * {@code struct NAME_pair;} before it), and the definition names it. klap declares a child's
     * record and variants, a helper's clone and a parent's twins where the function is first
     * declared, copying the definition's signature: "identifier is undefined" or "incomplete type"
     * (nvcc 13). Then such a launch stayed as written ({@code klap-child-signature-late}), the parent
     * got no kernel-granularity or chunk twin; since the eighth session of that day klap declares
     * them after the alias where no function before it uses the function. Sometimes
     * ({@code :early}) a kernel before the alias launches the child, and with {@code :parent} a host
     * function there launches the parent: those launches stay as written, the parent gets no twins.
     * Sometimes ({@code :c-linkage}) the child has C linkage, its definition in an {@code extern "C"
     * { }} block (klap's variants, declared outside it, were defined inside it with C linkage: an
     * nvcc error).
     * A control draws the alias before the prototypes (klap must aggregate). Drawn from a
     * twenty-seventh generator.
     */
    LATE_SIGNATURE("late-signature", 0.15),
    /**
     * Device heap lifetimes (2026-12-01; the GPU review reproducer {@code C_malloc_pin}, H200
     * 2026-11-28): parents whose threads allocate with device {@code cudaMalloc}, write their tag into
     * the buffer, read it back and add it into {@code out}, with a child launch beside. klap
     * aggregates such calls of a group into one {@code klap::group_malloc} allocation, which goes
     * back to the heap only with its last share: where the threads of a group may free their shares
     * at different times, one kept share kept the whole group's memory (11 to 286 failed cudaMalloc
     * calls where the program as written had none). Forms klap must leave as written (warning
     * {@code malloc-lifetime}): one thread keeps its buffer of each round (in an array, or through a
     * helper's out-parameter) while the others free theirs at once ({@code keep-one}), a free that
     * some threads skip ({@code skip-free}: the others free later or never), a return of some threads
     * between the allocation and the free ({@code return-between}), a free through a copy under
     * divergent control ({@code copy-divergent}). Forms klap must still aggregate: the free after the
     * allocation in the same block, after {@code if (cudaMalloc(&p, n) != cudaSuccess) return;} (or
     * {@code continue} in a loop of rounds) ({@code same-block}), a free under a uniform condition of
     * an allocation the block reaches together ({@code uniform-free}), a free through a lambda local
     * that every thread calls ({@code lambda-free}), an allocation freed straight after inside a
     * divergent branch ({@code branch-local}). Each allocation line carries a comment
     * {@code // fz-ml site NAME (FORM)} ({@code MallocLifetimeTest}). Drawn from a twenty-eighth
     * generator.
     */
    MALLOC_LIFETIME("malloc-lifetime", 0.15);

    /**
     * @return the generator a default program draws this shape and its kernel from: 0 for the
     *         shapes of the first GPU run (the program's own generator), 1 for those added on
     *         2026-11-23 (EXIT_AFTER_LAUNCH, IN_PLACE_LOOP, MACROS), 2 for those added on 2026-11-24
     *         (PARAM_FORMS, ALIASES), 3 for those added on 2026-11-25 (COND_ASSIGN, GOTO_LOOP), 4 for
     *         FULL_SHARED (later on 2026-11-25), 5 for LAUNCH_MACRO (2026-11-27), 6 for COND_DECL (later on
     *         2026-11-27), 7 for FULL_DYN_SHARED and 8 for STREAM_EVENT (a third session of 2026-11-27), 9 for SURVIVOR_LOOP
     *         and 10 for CONVERGENT_LOOP (a fifth session of 2026-11-27), 11 for LOOP_JUMPS (a sixth), 12 for DEPENDENT_AFTER_RETURN (2026-11-28), 13 for BARRIER_SPELLINGS (a second session of 2026-11-28), 14 for KERNEL_NAME_MACRO (a third), 15 for LAUNCH_ERROR (a fourth), 16 for HIDDEN_ATTRIBUTE (a fifth), 17 for LONE_LAUNCHER (2026-11-29), 18 for SPACED_CHEVRONS (a second session of 2026-11-29), 19 for DEDUCED_TEMPLATE (a fourth), 20 for EXCLUSIVE_LAUNCHES (a fifth), 21 for IMPLICIT_CALLS (a seventh), 22 for LIBRARY_COLLECTIVES (an eighth), 23 for SHARED_HELPERS (a third session of 2026-11-30), 24 for PROTOTYPE_DEFAULTS and 25 for NAMESPACES (a fourth), 26 for LATE_SIGNATURE (a seventh), 27 for MALLOC_LIFETIME (2026-12-01). Each later group has a generator of its own, so that adding
     *         it changes no draw of the earlier ones: an older seed's program only gains kernels
     */
    int generation() {
        return switch (this) {
            case EXIT_AFTER_LAUNCH, IN_PLACE_LOOP, MACROS -> 1;
            case PARAM_FORMS, ALIASES -> 2;
            case COND_ASSIGN, GOTO_LOOP -> 3;
            case FULL_SHARED -> 4;
            case LAUNCH_MACRO -> 5;
            case COND_DECL -> 6;
            case FULL_DYN_SHARED -> 7;
            case STREAM_EVENT -> 8;
            case SURVIVOR_LOOP -> 9;
            case CONVERGENT_LOOP -> 10;
            case LOOP_JUMPS -> 11;
            case DEPENDENT_AFTER_RETURN -> 12;
            case BARRIER_SPELLINGS -> 13;
            case KERNEL_NAME_MACRO -> 14;
            case LAUNCH_ERROR -> 15;
            case HIDDEN_ATTRIBUTE -> 16;
            case LONE_LAUNCHER -> 17;
            case SPACED_CHEVRONS -> 18;
            case DEDUCED_TEMPLATE -> 19;
            case EXCLUSIVE_LAUNCHES -> 20;
            case IMPLICIT_CALLS -> 21;
            case LIBRARY_COLLECTIVES -> 22;
            case SHARED_HELPERS -> 23;
            case PROTOTYPE_DEFAULTS -> 24;
            case NAMESPACES -> 25;
            case LATE_SIGNATURE -> 26;
            case MALLOC_LIFETIME -> 27;
            default -> 0;
        };
    }

    /** the name on the command line ({@code --shape=NAME}) and in the programs' {@code Shapes:} line */
    public final String cliName;
    /** the probability that a default program has this shape */
    public final double probability;

    Shape(String cliName, double probability) {
        this.cliName = cliName;
        this.probability = probability;
    }

    /** @return true for the shapes that add kernels; false for {@link #TWO_FILES}, a form of the program */
    public boolean addsKernels() {
        return this != TWO_FILES;
    }

    /**
     * Parses a comma-separated list of {@link #cliName}s, e.g. {@code ref-out,two-files}.
     *
     * @throws IllegalArgumentException naming the known shapes if a name is unknown or the list empty
     */
    public static Set<Shape> parseList(String list) {
        Set<Shape> s = EnumSet.noneOf(Shape.class);
        for (String name : list.split(",")) {
            String n = name.trim().toLowerCase(Locale.ROOT);
            if (n.isEmpty()) {
                continue;
            }
            Shape found = null;
            for (Shape sh : values()) {
                if (sh.cliName.equals(n) || sh.name().equalsIgnoreCase(n)) {
                    found = sh;
                }
            }
            if (found == null) {
                throw new IllegalArgumentException("unknown shape '" + name + "'; known: " + names());
            }
            s.add(found);
        }
        if (s.isEmpty()) {
            throw new IllegalArgumentException("no shape named; known: " + names());
        }
        return s;
    }

    /** @return the {@link #cliName}s, comma-separated */
    public static String names() {
        StringBuilder sb = new StringBuilder();
        for (Shape s : values()) {
            sb.append(sb.length() == 0 ? "" : ",").append(s.cliName);
        }
        return sb.toString();
    }
}
