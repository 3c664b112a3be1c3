package klap.model;

import java.util.EnumSet;
import java.util.Set;

/**
 * What calls into the CUDA libraries whose headers klap does not read do that klap must know:
 * their collectives synchronize threads (a block barrier or a warp collective inside), CUB's
 * device-wide algorithms launch kernels, and a few functions read the hardware grid's indices
 * ({@link #readsIndices}), although klap sees no body (review 2026-11-29;
 * docs/robustness.md, "Bugs found", item 13). Angle includes get no content in klap's
 * front end, so {@code cub::BlockReduce<int, 128>(temp).Sum(x, valid)} or {@code tile.shfl(x, 0)} is
 * a call of an unknown function; taken as harmless, a parent with such a call after a
 * thread-dependent {@code return} had its guard rewritten at warp and block granularity (at kernel
 * granularity the returned threads went on to {@code kfinish}'s block barrier), and the threads that
 * returned, kept alive, met klap's barrier and shuffles while the others were in the library's: the
 * hang or wrong result of issue 10, case 1.
 *
 * <p>A call counts when the translation unit includes the library (any of its headers, also through
 * a project header) and the called name is one of the library's collectives below, and CDT resolved
 * no function for the call (the caller checks that: a function of the file or of a project header is
 * judged by its body). Names, not types: klap cannot see the type of the object, so a member call
 * {@code s.Sum(x)} on an object of an unseen class counts in a unit that includes CUB. That is an
 * over-approximation, which costs a coarser aggregation, never a wrong result.
 * <ul>
 * <li>Cooperative groups (CUDA C++ programming guide, "Cooperative Groups"; the collective operations
 * that every thread of the group must call): the group members {@code sync}, {@code shfl},
 * {@code shfl_up}, {@code shfl_down}, {@code shfl_xor}, {@code any}, {@code all}, {@code ballot},
 * {@code match_any}, {@code match_all}, {@code barrier_arrive}, {@code barrier_wait}, and the
 * functions {@code sync}, {@code reduce}, {@code reduce_update_async}, {@code reduce_store_async},
 * {@code inclusive_scan}, {@code exclusive_scan}, {@code inclusive_scan_update},
 * {@code exclusive_scan_update}, {@code wait}, {@code wait_prior}, {@code memcpy_async},
 * {@code invoke_one}, {@code invoke_one_broadcast}, {@code tiled_partition},
 * {@code labeled_partition} and {@code binary_partition}.</li>
 * <li>CUB (CUB documentation, "Block-wide" and "Warp-wide" collective primitives): the methods of
 * {@code BlockAdjacentDifference}, {@code BlockDiscontinuity}, {@code BlockExchange},
 * {@code BlockHistogram}, {@code BlockLoad}, {@code BlockMergeSort}, {@code BlockRadixRank},
 * {@code BlockRadixSort}, {@code BlockReduce}, {@code BlockRunLengthDecode}, {@code BlockScan},
 * {@code BlockShuffle}, {@code BlockStore}, {@code WarpExchange}, {@code WarpLoad},
 * {@code WarpMergeSort}, {@code WarpReduce}, {@code WarpScan} and {@code WarpStore} (e.g.
 * {@code Sum}, {@code ExclusiveSum}, {@code Load}, {@code Sort}), and the warp and block functions
 * of {@code util_ptx.cuh} ({@code ShuffleIndex}, {@code ShuffleUp}, {@code ShuffleDown},
 * {@code MatchAny}, and CUDA 12's {@code CTA_SYNC}, {@code WARP_SYNC}, {@code WARP_ANY}, ...). A
 * CUB include also comes with Thrust. Not counted: the constructor of {@code BlockRunLengthDecode},
 * which synchronizes too (klap sees no call there).</li>
 * <li>libcu++ barriers and pipelines ({@code <cuda/barrier>}, {@code <cuda/std/barrier>},
 * {@code <cuda/pipeline>}): the members {@code arrive_and_wait}, {@code wait},
 * {@code wait_parity}, {@code producer_acquire}, {@code producer_commit}, {@code consumer_wait},
 * {@code consumer_release}, and {@code pipeline_consumer_wait_prior}.</li>
 * </ul>
 * Launches ({@link #launches}): CUB's device-wide algorithms ({@code cub::DeviceReduce::Sum},
 * {@code cub::DeviceScan::ExclusiveSum}, ...: any function of a {@code cub::Device*} class) launch
 * their kernels when called from device code of a relocatable build (CUB's {@code CUB_RDC_ENABLED};
 * CUB documentation, "CUDA dynamic parallelism"), so a call of one is a launch of the calling thread:
 * a launch of that thread before it must not be deferred past it. Thrust's algorithms run
 * sequentially when called from device code on sm_90 (Thrust 2.0.1 release notes) and are not counted.
 */
public final class LibraryCalls {

    /** A library whose collectives klap knows by name. */
    public enum Library {
        /** {@code <cooperative_groups.h>} and {@code <cooperative_groups/...>} */
        COOPERATIVE_GROUPS,
        /** {@code <cub/...>}, also through {@code <thrust/...>} */
        CUB,
        /** {@code <cuda/barrier>}, {@code <cuda/std/barrier>}, {@code <cuda/pipeline>} */
        LIBCUDACXX_SYNC
    }

    private static final Set<String> CG_MEMBERS = Set.of("sync", "shfl", "shfl_up", "shfl_down", "shfl_xor", "any",
        "all", "ballot", "match_any", "match_all", "barrier_arrive", "barrier_wait");
    private static final Set<String> CG_FUNCTIONS = Set.of("sync", "reduce", "reduce_update_async",
        "reduce_store_async", "inclusive_scan", "exclusive_scan", "inclusive_scan_update", "exclusive_scan_update",
        "wait", "wait_prior", "memcpy_async", "invoke_one", "invoke_one_broadcast", "tiled_partition",
        "labeled_partition", "binary_partition", "barrier_arrive", "barrier_wait");
    private static final Set<String> CUB_MEMBERS = Set.of(
        // BlockAdjacentDifference, BlockDiscontinuity
        "SubtractLeft", "SubtractLeftPartialTile", "SubtractRight", "SubtractRightPartialTile", "FlagHeads",
        "FlagTails", "FlagHeadsAndTails",
        // BlockExchange, WarpExchange
        "StripedToBlocked", "BlockedToStriped", "WarpStripedToBlocked", "BlockedToWarpStriped", "ScatterToBlocked",
        "ScatterToStriped", "ScatterToStripedGuarded", "ScatterToStripedFlagged",
        // BlockHistogram, BlockLoad/WarpLoad, BlockStore/WarpStore
        "InitHistogram", "Histogram", "Composite", "Load", "Store",
        // BlockMergeSort/WarpMergeSort, BlockRadixRank, BlockRadixSort
        "Sort", "StableSort", "RankKeys", "SortDescending", "SortBlockedToStriped", "SortDescendingBlockedToStriped",
        // BlockReduce/WarpReduce, BlockRunLengthDecode
        "Reduce", "Sum", "HeadSegmentedSum", "TailSegmentedSum", "HeadSegmentedReduce", "TailSegmentedReduce",
        "RunLengthDecode",
        // BlockScan/WarpScan, BlockShuffle
        "ExclusiveSum", "ExclusiveScan", "InclusiveSum", "InclusiveScan", "Scan", "Broadcast", "Offset", "Rotate",
        "Up", "Down");
    private static final Set<String> CUB_FUNCTIONS = Set.of("ShuffleIndex", "ShuffleUp", "ShuffleDown", "MatchAny",
        "CTA_SYNC", "CTA_SYNC_AND", "CTA_SYNC_OR", "WARP_SYNC", "WARP_ANY", "WARP_ALL", "WARP_BALLOT", "SHFL_UP_SYNC",
        "SHFL_DOWN_SYNC", "SHFL_IDX_SYNC");
    private static final Set<String> LIBCUDACXX_MEMBERS = Set.of("arrive_and_wait", "wait", "wait_parity",
        "producer_acquire", "producer_commit", "consumer_wait", "consumer_release");
    private static final Set<String> LIBCUDACXX_FUNCTIONS = Set.of("pipeline_consumer_wait_prior");
    /** Namespaces whose functions of a collective's name are not the library's ({@code thrust::reduce}). */
    private static final Set<String> OTHER_NAMESPACES = Set.of("std", "thrust", "cuda");

    private LibraryCalls() {
    }

    /**
     * @param includeName the name of an include directive as written ({@code cub/block/block_reduce.cuh},
     *                    {@code cooperative_groups.h})
     * @return the library that header belongs to, or null
     */
    public static Library libraryOf(String includeName) {
        String n = includeName.replace('\\', '/').strip();
        if (n.startsWith("cooperative_groups")) {
            return Library.COOPERATIVE_GROUPS;
        }
        if (n.startsWith("cub/") || n.startsWith("thrust/") || n.equals("cub.cuh") || n.endsWith("/cub.cuh")
                || n.contains("/cub/")) {
            return Library.CUB;
        }
        if (n.equals("cuda/barrier") || n.equals("cuda/std/barrier") || n.equals("cuda/pipeline")
                || n.equals("cuda_pipeline.h")) {
            return Library.LIBCUDACXX_SYNC;
        }
        return null;
    }

    /** @return the libraries of these include names ({@link #libraryOf}) */
    public static Set<Library> librariesOf(Iterable<String> includeNames) {
        Set<Library> out = EnumSet.noneOf(Library.class);
        for (String n : includeNames) {
            Library l = libraryOf(n);
            if (l != null) {
                out.add(l);
            }
        }
        return out;
    }

    /**
     * Whether a call launches kernels: a function of a CUB device-wide algorithm class
     * ({@code cub::DeviceReduce::Sum}, also {@code DeviceScan::ExclusiveSum} after {@code using namespace
     * cub}) in a unit that includes CUB. The caller has checked that CDT resolved no function of the
     * program for the call (a program's {@code DeviceOps::store} is judged by its body).
     *
     * @param libraries  the libraries the translation unit includes
     * @param calleeName the called function's name as written, without template arguments; null for a
     *                   call through an expression or a member call
     * @return true if the call may launch kernels from the calling thread
     */
    public static boolean launches(Set<Library> libraries, String calleeName) {
        if (!libraries.contains(Library.CUB) || calleeName == null) {
            return false;
        }
        String[] parts = calleeName.replace(" ", "").split("::");
        for (int i = 0; i < parts.length - 1; i++) {
            if (DEVICE_WIDE.matcher(parts[i]).matches()) {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether a call reads the hardware grid's indices inside a library: libcu++'s PTX wrappers of the
     * special registers ({@code cuda::ptx::get_sreg_ctaid_x()}, {@code get_sreg_tid_y()},
     * {@code get_sreg_nctaid_x()}, the cluster registers, ...; CUDA C++ libcu++ documentation,
     * {@code cuda::ptx}, "Special registers"), and, in a unit that includes CUB, {@code BlockInit} of
     * {@code cub::GridEvenShare} (it reads {@code blockIdx.x} and {@code gridDim.x}) and {@code Sync}
     * of CUDA 12's {@code cub::GridBarrier} (a barrier of the whole grid). In an aggregated child these
     * would read the aggregated grid's, as {@code asm} reading {@code %ctaid} would (review 2026-11-29:
     * such a child was aggregated). The caller has checked that CDT resolved no function of the
     * program for the call.
     *
     * @param libraries  the libraries the translation unit includes
     * @param calleeName the called function's name as written, without template arguments, maybe
     *                   qualified; null for a member call
     * @param member     the member's name of a member call; null for another call
     * @return true if the call may read the hardware grid's indices
     */
    public static boolean readsIndices(Set<Library> libraries, String calleeName, String member) {
        if (member != null) {
            return libraries.contains(Library.CUB) && (member.equals("BlockInit") || member.equals("Sync"));
        }
        if (calleeName == null) {
            return false;
        }
        String name = calleeName.replace(" ", "");
        int q = name.lastIndexOf("::");
        String simple = q < 0 ? name : name.substring(q + 2);
        return SPECIAL_REGISTER.matcher(simple).matches(); // any qualifier: namespace P = cuda::ptx; P::get_sreg_...
    }

    /**
     * The three questions above for a call of the model. A call that CDT resolved to a function
     * ({@link Expr.Call#paramModes()} not null) is the program's own (of the file or of a header it
     * reads) and is judged by its body: it is none of a library's (by name alone, a program's
     * {@code reduce} or {@code Acc::Sum} hid {@code cg::reduce} and {@code BR(t).Sum}: review
     * 2026-11-29). For a collective or an index reader, a member call is asked by its member's name,
     * another call by its name as written.
     *
     * @param libraries the libraries the translation unit includes
     * @param c         the call
     * @return true if the call is a collective ({@link #isCollective(Set, String, String)})
     */
    public static boolean isCollective(Set<Library> libraries, Expr.Call c) {
        return c.paramModes() == null && isCollective(libraries, calleeNameOf(c), memberOf(c));
    }

    /** @return true if the unresolved call {@code c} launches kernels ({@link #launches(Set, String)}) */
    public static boolean launches(Set<Library> libraries, Expr.Call c) {
        return c.paramModes() == null && launches(libraries, c.calleeName());
    }

    /** @return true if the unresolved call {@code c} reads the hardware grid's indices ({@link #readsIndices(Set, String, String)}) */
    public static boolean readsIndices(Set<Library> libraries, Expr.Call c) {
        return c.paramModes() == null && readsIndices(libraries, calleeNameOf(c), memberOf(c));
    }

    private static String calleeNameOf(Expr.Call c) {
        return c.callee() instanceof Expr.Member ? null : c.calleeName();
    }

    private static String memberOf(Expr.Call c) {
        return c.callee() instanceof Expr.Member m ? m.member() : null;
    }

    /** libcu++'s readers of the special registers of the hardware grid ({@code cuda::ptx::get_sreg_*}). */
    private static final java.util.regex.Pattern SPECIAL_REGISTER = java.util.regex.Pattern.compile(
        "get_sreg_(tid|ntid|ctaid|nctaid|clusterid|nclusterid|cluster_ctaid|cluster_nctaid|cluster_ctarank"
            + "|cluster_nctarank|gridid)(_[xyz])?");

    /** A CUB device-wide algorithm class: {@code DeviceReduce}, {@code DeviceRadixSort}, ... */
    private static final java.util.regex.Pattern DEVICE_WIDE = java.util.regex.Pattern.compile("Device[A-Z]\\w*");

    /**
     * Whether a call is a collective of one of {@code libraries}. The caller has checked that CDT
     * resolved no function of the program for the call (by name alone, a program's {@code reduce} or
     * {@code Acc::Sum} hid {@code cg::reduce} and {@code BR(t).Sum}: review 2026-11-29).
     *
     * @param libraries  the libraries the translation unit includes
     * @param calleeName the called function's name as written, without template arguments, maybe
     *                   qualified ({@code cg::reduce}, {@code cub::ShuffleIndex}); null for a member call
     * @param member     the member's name of a member call ({@code tile.shfl(x, 0)}: {@code shfl}); null
     *                   for another call
     * @return true if the call synchronizes threads as that library documents it
     */
    public static boolean isCollective(Set<Library> libraries, String calleeName, String member) {
        if (libraries.isEmpty()) {
            return false;
        }
        if (member != null) {
            return libraries.contains(Library.COOPERATIVE_GROUPS) && CG_MEMBERS.contains(member)
                || libraries.contains(Library.CUB) && CUB_MEMBERS.contains(member)
                || libraries.contains(Library.LIBCUDACXX_SYNC) && LIBCUDACXX_MEMBERS.contains(member);
        }
        if (calleeName == null) {
            return false;
        }
        String name = calleeName.replace(" ", "");
        int q = name.lastIndexOf("::");
        String simple = q < 0 ? name : name.substring(q + 2);
        String qualifier = q < 0 ? "" : name.substring(0, q);
        String outer = qualifier.startsWith("::") ? qualifier.substring(2) : qualifier;
        int first = outer.indexOf("::");
        outer = first < 0 ? outer : outer.substring(0, first);
        if (libraries.contains(Library.CUB) && CUB_FUNCTIONS.contains(simple) && (q < 0 || outer.equals("cub"))) {
            return true;
        }
        if (libraries.contains(Library.LIBCUDACXX_SYNC) && LIBCUDACXX_FUNCTIONS.contains(simple)) {
            return true;
        }
        return libraries.contains(Library.COOPERATIVE_GROUPS) && CG_FUNCTIONS.contains(simple)
            && !OTHER_NAMESPACES.contains(outer) && !outer.equals("cub");
    }
}
