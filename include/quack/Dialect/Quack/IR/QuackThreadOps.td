//===- QuackThreadOps.td - thread-level quack operations ----*- tablegen -*-===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//
//
// Operations of the thread level, between the row level (quack.kernel and
// its row values) and NVVM. convert-quack-to-gpu emits them inside gpu.func
// kernels, where every value is one thread's; each says which threads
// cooperate, and its own conversion pass picks the instructions. This file
// is included at the end of QuackOps.td (it uses Quack_Op).
//
//===----------------------------------------------------------------------===//

#ifndef QUACK_DIALECT_QUACK_IR_QUACKTHREADOPS_TD
#define QUACK_DIALECT_QUACK_IR_QUACKTHREADOPS_TD

include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

def Quack_AllReduceOp : Quack_Op<"allreduce",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
     DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "combines each thread's values across a group of threads";
  let description = [{
    The threads of the CTA form groups of `lanes` consecutive threads (by
    `%tid.x`). Each thread gives its partial `values`; every thread of a
    group gets back the group's combined values, the same bits in every
    thread of the group (the combination order depends only on the group's
    shape). The `terms` say how: each term combines one value or a pair.

    - `add`, `max`, `min`: one `f32` or `i32` value (`max` and `min`
      propagate NaN);
    - `logsumexp`: the online pair (`m`, `s`), both `f32`: a thread's
      maximum `m` and its sum of `exp(x - m)`; pairs combine as
      `(M, s1 * exp(m1 - M) + s2 * exp(m2 - M))` with `M = max(m1, m2)`,
      taking `M` as 0 where it is -inf, so that rows of -inf give a sum of
      0, not NaN (a +inf maximum gives NaN, as exp(inf - inf) does);
    - `argmax`: the pair (`value` `f32`, `index` `i32`): the larger value
      wins, the smaller index on a tie, NaN over numbers and the earlier NaN
      over a later one;
    - `moments`: the triple (`n`, `s`, `m2`), all `f32`: a count of
      elements, their sum and the sum of their squared deviations from
      their mean `s / n`. Triples combine as `(n1 + n2, s1 + s2, m1 + m2 +
      (s2 / n2 - s1 / n1)^2 * n1 * n2 / (n1 + n2))` (Chan, Golub and
      LeVeque's update), the last term 0 where either count is 0; every
      operation is symmetric in the two triples.

    Independent terms share one exchange: one shuffle per value and step in
    a warp, one barrier per block exchange. A block exchange has no barrier
    after its loads: before another one writes the same scratch, the
    caller separates them with a CTA barrier (or gives each its own
    scratch, as convert-quack-to-gpu does within a row).

    The `scope` is how far a group reaches:
    - `warp`: `lanes` is a power of two up to 32; a butterfly of
      `shfl.sync.bfly` over offsets `lanes / 2`, ..., 1. Every lane of the
      warp must execute it.
    - `block`: `lanes` is a power of two from 64 to 1024, so a group is
      `lanes / 32` whole warps; a butterfly in each warp, then lane 0 of each
      warp writes its values to scratch shared memory, a CTA barrier, lane
      `j` of each warp reads warp `j mod (lanes / 32)`'s values and a second
      butterfly combines them. The scratch is `groups * (lanes / 32) *
      |values| * 4` bytes at byte offset `scratch` of the shared-memory
      global `smem` (`groups` is the CTA's thread count over `lanes`). Every
      thread of the CTA must execute it.

    A thread's own values (scope `thread`) are reduced with
    `vector.reduction` before it; a cluster's partials are exchanged with
    `quack.cluster.exchange` after it, and combined with a `warp`
    allreduce over `cluster_size` lanes.

    ```mlir
    %s = quack.allreduce warp lanes 32 [add] (%x) : f32
    %m, %s, %v, %i = quack.allreduce block lanes 256 [logsumexp, argmax]
        (%m0, %s0, %v0, %i0) scratch @smem[64] {groups = 2}
        : f32, f32, f32, i32
    ```
  }];
  let arguments = (ins Quack_ReduceScopeAttr:$scope, I64Attr:$lanes,
                       DenseI32ArrayAttr:$terms,
                       Variadic<AnyTypeOf<[F32, I32]>>:$values,
                       OptionalAttr<FlatSymbolRefAttr>:$smem,
                       OptionalAttr<I64Attr>:$scratch,
                       OptionalAttr<I64Attr>:$groups);
  let results = (outs Variadic<AnyTypeOf<[F32, I32]>>:$results);
  let assemblyFormat = [{
    custom<Scope>($scope) `lanes` $lanes custom<Terms>($terms)
    ` ` `(` $values `)` (`scratch` $smem^ `[` $scratch `]`)? attr-dict
    `:` type($values)
  }];
  let extraClassDeclaration = [{
    /// The terms, in order.
    SmallVector<ReductionTerm> getTermKinds();
    /// How many values term `term` combines (1, 2 for a pair, 3 for the
    /// moments triple).
    static int64_t getTermWidth(ReductionTerm term);
    /// Bytes of scratch shared memory a block exchange uses (0 in a warp).
    int64_t getScratchBytes();
  }];
  let hasVerifier = 1;
}

def Quack_CopyOp : Quack_Op<"copy", [AttrSizedOperandSegments]> {
  let summary = "one thread's copy with a given atom";
  let description = [{
    A copy by this thread, with the instruction family `atom`. Where the
    optional `predicate` (`i1`) is false, the copy does not happen: a load
    gives zeros, a store or an asynchronous copy is not issued. Offsets are
    the caller's (64-bit in `llvm.getelementptr`), so tensors over 4 GB
    work.

    - `vector`: a fragment through registers (`ld.global`, `ld.shared`,
      `st.global`, `st.shared`; `.v4.b32` at 16 bytes): a power of two of
      bytes up to 64, one instruction up to 16 bytes and one per 16 bytes
      above. A load has one operand, the pointer, and the fragment as its
      result; a store has two, the fragment and the pointer. `alignment` is
      the byte alignment the access may assume: a power of two, at least the
      element's size and at most the fragment's (the widest instructions
      where it is at least 16 or the fragment's size).
    - `bulk`: `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::
      bytes`; operands (shared destination, global source, bytes (`i32`, a
      multiple of 16), shared mbarrier). Both addresses 16-byte aligned. The
      copy completes its bytes on the mbarrier.
    - `tensor`: `cp.async.bulk.tensor.3d...tile.mbarrier::complete_tx::bytes`;
      operands (shared destination, 128-byte aligned; the tensor map, a
      generic pointer to a grid-constant parameter; the box's coordinates,
      three `i32`, innermost first; shared mbarrier). The copy engine fills
      what lies outside the tensor with zeros and completes the box's bytes
      on the mbarrier.

    ```mlir
    %f = quack.copy <vector> %p if %valid {alignment = 16 : i64}
        : (!llvm.ptr<1>) -> vector<8xbf16>
    quack.copy <vector> %f, %q if %valid {alignment = 16 : i64}
        : (vector<8xbf16>, !llvm.ptr<1>) -> ()
    quack.copy <bulk> %dst, %src, %bytes, %bar
        : (!llvm.ptr<3>, !llvm.ptr<1>, i32, !llvm.ptr<3>) -> ()
    quack.copy <tensor> %dst, %map, %c0, %g, %row, %bar
        : (!llvm.ptr<3>, !llvm.ptr, i32, i32, i32, !llvm.ptr<3>) -> ()
    ```
  }];
  let arguments = (ins Quack_CopyAtomAttr:$atom,
                       Variadic<AnyType>:$sources,
                       Optional<I1>:$predicate,
                       OptionalAttr<I64Attr>:$alignment);
  let results = (outs Optional<AnyType>:$result);
  let assemblyFormat = [{
    $atom $sources (`if` $predicate^)? attr-dict `:`
    functional-type($sources, results)
  }];
  let hasVerifier = 1;
}

#endif // QUACK_DIALECT_QUACK_IR_QUACKTHREADOPS_TD
