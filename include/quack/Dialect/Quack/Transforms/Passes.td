//===- Passes.td - quack dialect passes --------------------*- tablegen -*-===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#ifndef QUACK_DIALECT_QUACK_TRANSFORMS_PASSES_TD
#define QUACK_DIALECT_QUACK_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def QuackSelectConfig : Pass<"quack-select-config", "::mlir::ModuleOp"> {
  let summary = "chooses how each kernel's rows are spread over threads";
  let description = [{
    Attaches a `quack.config` dictionary to every `quack.kernel`: the vector
    width in elements (`vector`, 128-bit accesses when N and the alignment
    class allow), threads per row, vectors per thread, rows per CTA and the
    CTA size. The choice follows from N, the element types, the alignment
    class of the pointers and strides, and the target. Every knob can be
    forced with an option; a forced value that cannot work is an error.

    The model: a row is split into N / vector vectors; a thread owns about
    four of them (tens of bytes in flight per thread), threads per row is
    the power of two that gives that, and small rows are packed several to a
    CTA of at least 128 threads so that each SM keeps enough bytes in flight.
    Rows longer than one CTA holds in registers (16384 elements) are split
    over the CTAs of a thread-block cluster (`cluster_size`, a power of two
    up to 16, sm_90 and later), each owning a contiguous chunk of at most
    16384 elements.

    Before the model, the CTA-level path consults the target's table of
    measured configs (kernels/tuning/<arch>.tsv, compiled in): an entry for
    the kernel's name, its widest element size and N's power-of-two bucket
    gives the vectors per thread and rows per CTA. Forced knobs win over the
    table.
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", /*default=*/"16",
           "byte alignment guaranteed for every pointer and row stride">,
    Option<"vector", "vector", "int64_t", /*default=*/"0",
           "elements per vector access (0: choose)">,
    Option<"threadsPerRow", "threads-per-row", "int64_t", /*default=*/"0",
           "threads that share one row (0: choose)">,
    Option<"rowsPerCta", "rows-per-cta", "int64_t", /*default=*/"0",
           "rows handled by one CTA (0: choose)">,
    Option<"clusterSize", "cluster-size", "int64_t", /*default=*/"0",
           "CTAs of a cluster that split each row (0: choose)">,
    Option<"minCtasPerSm", "min-ctas-per-sm", "int64_t", /*default=*/"-1",
           "CTAs each SM must hold at once, capping registers (-1: choose, "
           "0: no cap)">,
    Option<"prefetch", "prefetch", "int64_t", /*default=*/"-1",
           "persistent kernels (sums over rows) load the next row group "
           "while the current one is processed (-1: choose, 0: no, 1: yes)">,
    Option<"remat", "remat", "int64_t", /*default=*/"0",
           "keep 16-bit rows packed across exchanges, recomputing cheap "
           "values over them (0: no, 1: yes; quackc chooses by occupancy)">,
    Option<"sink", "sink", "int64_t", /*default=*/"0",
           "after the last exchange, finish and store each fragment of the "
           "row before the next (0: no, 1: yes)">,
    Option<"copy", "copy", "int64_t", /*default=*/"-1",
           "how matrix inputs reach the threads (-1: choose, 0: 128-bit "
           "ld.global into registers, 1: cp.async.bulk into shared memory, "
           "2: cp.async.bulk.tensor into shared memory)">,
    Option<"sums", "sums", "int64_t", /*default=*/"-1",
           "kernels with sums over rows keep their partial sums in "
           "registers (0) or, for the last K sums over rows in program "
           "order, in shared memory (K; K at least the kernel's sums: all "
           "of them; quackc chooses it where registers spill); -1: the "
           "table entry's count where it gives one, else registers">,
    Option<"earlySums", "early-sums", "bool", /*default=*/"false",
           "the pipeline accumulates sums over rows before the reductions "
           "they do not depend on (quack-hoist-row-sums): refused on a "
           "kernel without sums over rows, noted in the reason otherwise">,
    Option<"earlyVectors", "early-vectors", "bool", /*default=*/"false",
           "the pipeline issues row-vector loads with the row's loads "
           "(quack-schedule-loads early-vectors): refused on a kernel "
           "without row-vector loads, noted in the reason otherwise">,
    Option<"stages", "stages", "int64_t", /*default=*/"0",
           "shared-memory buffers a prefetching loop with bulk copies "
           "cycles through (0: choose, 2-8)">,
    Option<"arch", "arch", "std::string", /*default=*/"\"sm_90\"",
           "target architecture">,
    Option<"useTuned", "tuned", "bool", /*default=*/"true",
           "take threads per row and rows per CTA from the architecture's "
           "table of measured configs (kernels/tuning/) where it has an "
           "entry">,
    Option<"tuning", "tuning", "std::string", /*default=*/"\"\"",
           "a tuning target of the architecture (e.g. h100): its table's "
           "entries take precedence over the architecture's">
  ];
}

def QuackAssignLayouts : Pass<"quack-assign-layouts", "::mlir::ModuleOp"> {
  let summary = "puts the thread-value layout of its config on every tile of "
                "each kernel";
  let description = [{
    A row kernel's tiles (its rows: every `vector<N x T>` a `quack.load`
    produces, an elementwise op computes, a `quack.store` or `quack.sum_rows`
    writes or a reduction reads) are spread over the CTA's threads, and over
    the CTAs of a cluster, by one thread-value layout, which follows from the
    kernel's `quack.config`: a thread owns `vectors_per_thread` vectors of
    `vector` consecutive elements, `threads_per_row` threads (times the
    cluster size) share a row, `rows_per_cta` rows make the CTA's tile. This
    pass builds that layout with the layout library (`makeRowTVLayout`) and
    attaches it, as a `#quack.tv_layout`, to the kernel and to every op that
    produces or reads a tile (`quack.tv_layout`). convert-quack-to-gpu lowers
    the tiles by it and refuses a kernel whose layouts it cannot lower.

    ```mlir
    quack.kernel @k(...) attributes {quack.config = {threads_per_row = 2,
        vector = 4, vectors_per_thread = 1, rows_per_cta = 1, ...}} {
      %row = quack.load %x : memref<?x8xf32, ...> -> vector<8xf32>
    ```
    gets `quack.tv_layout = #quack.tv_layout<((2,1,1),(4,1)):((4,0,0),(1,0)),
    tile = (1,8):(8,1)>` on the kernel and on the load (thread modes: the
    threads of a row, the rows of the CTA, the CTAs of a cluster; value
    modes: the elements of a vector, the vectors of a thread): thread t holds
    elements 4 t .. 4 t + 3.

    Run it after quack-select-config.
  }];
}

def QuackFuseMoments : Pass<"quack-fuse-moments", "::mlir::ModuleOp"> {
  let summary = "computes a row's mean and its squared deviations in one "
                "exchange";
  let description = [{
    A variance from the centred row is two dependent reductions: the sum
    of the row, then, once its mean is known everywhere, the sum of the
    squared deviations from it. Each is an exchange between threads (a
    barrier, and in a cluster a round between CTAs). This pass finds

    ```mlir
    %s  = quack.reduce <add> %x : vector<4096xf32> -> f32
    %mu = arith.divf %s, %n : f32          // %n: the constant 4096.0
    %b  = vector.broadcast %mu : f32 to vector<4096xf32>
    %d  = arith.subf %x, %b : vector<4096xf32>     // or %b - %x
    %sq = arith.mulf %d, %d : vector<4096xf32>
    %q  = quack.reduce <add> %sq : vector<4096xf32> -> f32
    ```

    and replaces the two reductions with one `quack.moments %x`, placed
    where the first one was: its `sum` takes the place of `%s` and its `m2`
    that of `%q` (the squared deviations from the exact mean instead of from
    `%mu` rounded to f32). Everything else stays: `%d` still centres the
    row for its other uses. Other shapes (a mean by another divisor, a
    square of two different values, a reduction of something else) are left
    alone.
  }];
}

def QuackGroupReductions : Pass<"quack-group-reductions", "::mlir::ModuleOp"> {
  let summary = "makes independent reductions over the row adjacent, so that "
                "they share one exchange";
  let description = [{
    Each run of adjacent row reductions (`quack.reduce`, `quack.logsumexp`,
    `quack.argmax`, `quack.moments`) lowers to one exchange between threads
    (one warp butterfly, one barrier, one cluster round, several values at
    a time). This pass moves a later reduction next
    to an earlier one when it does not depend on it, together with the
    elementwise ops and loads it needs, which move before the earlier
    reduction. Nothing moves that writes memory, that depends on a
    reduction of the group, or that reads memory across a write (an output
    may alias an input).

    LayerNorm's backward reduces mean(g) and mean(xhat * g), independent of
    each other: one exchange instead of two.

    ```mlir
    %a = quack.reduce <add> %g : vector<4096xf32> -> f32
    %m = arith.divf %a, %n : f32
    %p = arith.mulf %xhat, %g : vector<4096xf32>
    %c = quack.reduce <add> %p : vector<4096xf32> -> f32
    ```

    becomes

    ```mlir
    %p = arith.mulf %xhat, %g : vector<4096xf32>
    %a = quack.reduce <add> %g : vector<4096xf32> -> f32
    %c = quack.reduce <add> %p : vector<4096xf32> -> f32
    %m = arith.divf %a, %n : f32
    ```
  }];
}

def QuackHoistRowSums : Pass<"quack-hoist-row-sums", "::mlir::ModuleOp"> {
  let summary = "accumulates each sum over rows before the reductions whose "
                "result it does not need";
  let description = [{
    A sum over rows (`quack.sum_rows`, a weight's gradient) whose value does
    not depend on a reduction of the row can be accumulated before that
    reduction's exchange. The lowering writes a sum over rows once, after
    the last row, so its place in the body orders no memory access; what
    moves is where its operands are last used. Accumulated after the
    exchange, every operand (x and dy for RMSNorm's dw) stays live across
    it in registers, or is read again from shared memory; accumulated
    before, only what the rest of the row needs does (xhat and g).

    The sum moves before the earliest reduction it can pass, with the
    elementwise ops it alone uses; nothing moves that is also used after
    that reduction (its live range would grow), that depends on a
    reduction, that writes memory, or that reads memory across a write.
    RMSNorm's backward over 262144 f32 elements with a residual input,
    in the 8-byte alignment class, held x, dy and w across the exchange
    and spilled 76 bytes; with dw accumulated first it holds xhat and g.
    The longer first phase costs registers of its own, though: where rows
    come through shared memory or a loop prefetches, ptxas spilled more
    with it (layernorm_bwd bf16 at 65536: none before, 932 bytes after).
    The pipeline therefore runs this pass only with `early-sums`, which
    quackc sets as a last resort where a kernel spills (`early_sums=1`).

    ```mlir
    %s = quack.reduce <add> %p : vector<4096xf32> -> f32
    ...
    %d = arith.mulf %dy, %xhat : vector<4096xf32>
    quack.sum_rows %d, %dw : vector<4096xf32>, memref<4096xf32>
    ```

    becomes

    ```mlir
    %d = arith.mulf %dy, %xhat : vector<4096xf32>
    quack.sum_rows %d, %dw : vector<4096xf32>, memref<4096xf32>
    %s = quack.reduce <add> %p : vector<4096xf32> -> f32
    ...
    ```
  }];
}

def QuackScheduleLoads : Pass<"quack-schedule-loads", "::mlir::ModuleOp"> {
  let summary = "places each load where it costs least: per-row reads first, "
                "weights at their first use";
  let description = [{
    A description may read its inputs anywhere; where a read lands decides
    how long its latency and its registers are exposed. This pass moves:

    - every `quack.load` of a per-row vector (a target, a saved lse) to the
      top of the kernel body, and every `quack.gather` after its index and
      after the matrix rows loaded before its first use, so that these
      loads are in flight with the row's loads instead of adding two
      dependent memory latencies after the reductions (cross-entropy reads
      `target`, then `x[target]`); a thread issues in order and waits for
      the index at the gather, so the row's loads go out first;
    - every `quack.load` of a row vector (a weight), with the elementwise
      operations that depend only on such loads, scalars and constants, to
      just before its first use, so that its fragments are not live in
      registers across a reduction's exchange (RMSNorm over 65536 bf16
      elements, one CTA of 512 threads per 16384: 74 registers before, 59
      after, so two CTAs share an SM).

    ```mlir
    %w = quack.load %weight : memref<4096xbf16> -> vector<4096xbf16>
    %s = quack.reduce <add> %sq : vector<4096xf32> -> f32
    %t = quack.load %target : memref<?xi64> -> i64
    ```
    becomes a kernel that loads `%t` first and `%w` after `%s`, right before
    its first use.

    With `early-vectors` (`quackc --config=early_vectors=1`), each row
    vector's `quack.load` then moves up again, alone, to just after the
    nearest matrix load before it (past stores of rows, which cannot write
    a row vector): it is in flight with
    the row's loads instead of adding its latency after the reductions, and
    the operations on it (the widening of 16-bit weights) stay at the first
    use. Short rows are where that can pay: a thread owns a vector or two
    of the weight, and a CTA's life is a few memory latencies long.
  }];
  let options = [
    Option<"earlyVectors", "early-vectors", "bool", /*default=*/"false",
           "issue row-vector loads right after the matrix loads before "
           "them instead of at their first use">,
  ];
}

def QuackSinkToUses : Pass<"quack-sink-to-uses", "::mlir::ModuleOp"> {
  let summary = "after a kernel's last exchange, computes and stores the "
                "fragments of a row one after another";
  let description = [{
    The lowering to threads emits each operation of a description for all of
    a thread's fragments before the next operation, so that after the last
    exchange every fragment's f32 values are live at once until the stores
    at the end. In kernels whose config asks for it (`sink = true` in
    `quack.config`: quackc tries it on cluster kernels with packed 16-bit
    rows and keeps it where ptxas fits more CTAs per SM, or
    `--config=sink=1`), this
    pass moves each operation without memory effects and each register
    load of global memory in the part of a block after its last other
    operation with effects (an exchange, a barrier, a wait) to just before
    its first user, from the last such operation up; operations without
    memory effects before that point move to their first user too, across
    the exchange or the barrier in between (cross-entropy's gradient,
    computed before the barrier that lets it overwrite the gathered
    logits). Each fragment's chain then ends at its store before the next
    one starts.

    A load may move past stores to global memory: an output element is
    written by the thread and fragment that read the inputs at that
    element, so a store of another fragment never writes what the load
    reads (outputs that alias inputs, such as a gradient over the logits,
    alias element for element; gathers are ordered before the first store
    by a barrier). Loads of shared memory stay where they are.

    ```mlir
    %a0 = arith.mulf %x0, %r : vector<8xf32>
    %a1 = arith.mulf %x1, %r : vector<8xf32>
    %t0 = arith.truncf %a0 : vector<8xf32> to vector<8xbf16>
    %t1 = arith.truncf %a1 : vector<8xf32> to vector<8xbf16>
    quack.copy <vector> %t0, %p0 ...
    quack.copy <vector> %t1, %p1 ...
    ```
    becomes `%a0, %t0`, the first store, `%a1, %t1`, the second. (A
    layernorm forward over 32768 bf16 elements on a cluster of two CTAs
    of 512 threads, with packed rows: 64 registers before, 40 after, so
    three CTAs share an SM instead of two.)
  }];
}

def QuackVerifyStaging : Pass<"quack-verify-staging", "::mlir::ModuleOp"> {
  let summary = "checks how rows are staged in shared memory";
  let description = [{
    Rows staged in shared memory by asynchronous copies go wrong quietly: a
    copy that completes on an mbarrier nobody initialised or armed, a wait
    on an mbarrier no fill armed, or a CTA that exits while its copies
    still land.
    Each function's `quack.stage.*` ops are checked (the ops' verifiers
    check the rest: every bulk or tensor `quack.copy` sits in a
    `quack.stage.fill` and completes on its mbarrier). Rejected, with a
    diagnostic at the op:

    1. *init once, first*: a `quack.stage.init` outside the function's
       entry block (in a loop or a branch), or a second one of the same
       global; a fill or wait that no init of its global dominates;
    2. *mbarriers initialised*: a fill or wait whose mbarrier offset may lie
       outside the init's mbarriers (integer range analysis of the offset:
       a single value must be one of them, a range must lie within them;
       an offset the analysis knows nothing of has the widest range; code
       that never runs is not checked);
    3. *thread 0 alone in a fill*: a fill's body holding a collective op
       (a stage init, fill or wait, an allreduce, a cluster op, or the
       barriers and shuffles of gpu and nvvm), which thread 0 would run
       without the other threads;
    4. *no CTA exits while its copies land*: a fill that some path leaves
       without a wait on an mbarrier it may arm (offset ranges that
       overlap). In structured control flow: the wait comes after the fill,
       or after an op that encloses it, in the same block, not inside a
       branch; in a loop's body only a wait on the fill's own mbarrier (the
       same offset) counts, so a fill that a later iteration waits on is
       waited on after the loop too.
  }];
}

def QuackVerifyClusterProtocol
    : Pass<"quack-verify-cluster-protocol", "::mlir::ModuleOp"> {
  let summary = "checks the protocol of every cluster exchange";
  let description = [{
    A wrong cluster exchange does not fail loudly: a wrong expected byte count
    hangs, and a peer that writes too early corrupts a partial or traps. This
    analysis follows the `quack.cluster.*` ops of every function in program
    order (through `scf.for` loops, whose bodies it follows twice so that the
    second iteration sees what the first left) and reports, at the
    offending op:

    1. *init before peers write*: an exchange through an mbarrier that no
       `quack.cluster.barrier_init` initialised, or whose initialisation no
       `quack.cluster.arrive` + `quack.cluster.wait` has made visible to the
       peers (peers write as soon as they pass their own wait);
    2. *expected bytes*: an exchange whose receiver expects a byte count
       other than `4 * cluster_size * values`, the bytes the cluster's CTAs
       send it; a phase armed twice, whose counts would add up;
    3. *phases*: an exchange through an mbarrier with no armed phase (the
       last one was completed and not re-armed), or waiting for the wrong
       parity: in straight-line code the parity is the constant of the
       barrier's phase; in a loop it is a loop-carried `i32` that starts at
       the phase's parity and is flipped (`arith.xori` with 1) every
       iteration, each barrier completing exactly one phase per iteration;
    4. *slot reuse*: a second exchange through the same mbarrier and slots
       without a `quack.cluster.arrive` (not relaxed: it releases this CTA's
       reads of the slots) and a `quack.cluster.wait` after the first;
    5. *no CTA exits while peers write into it*: a cluster op under
       conditional control flow (a CTA that skips an exchange may exit while
       its peers still write into it, or leave them waiting), and a kernel
       that returns with an arrive not matched by a wait; arrives and waits
       alternate.

    The lowering of `quack.cluster.exchange` waits on this CTA's mbarrier
    before it returns, so a CTA that has completed all its exchanges has
    received every byte its peers send it.
  }];
}

#endif // QUACK_DIALECT_QUACK_TRANSFORMS_PASSES_TD
