//===- QuackStageOps.td - staging rows in shared memory -----*- tablegen -*-===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//
//
// The protocol by which a CTA stages its rows in shared memory with
// asynchronous copies (quack.copy with the bulk or tensor atom): mbarriers
// initialised once, a fill that arms one of them for the bytes it copies,
// and a wait on the phase the fill completes. convert-quack-to-gpu emits
// them; the ops' verifiers and quack-verify-staging check how they fit
// together; convert-quack-copy-to-nvvm lowers them. This file is included
// at the end of QuackOps.td (it uses Quack_Op).
//
//===----------------------------------------------------------------------===//

#ifndef QUACK_DIALECT_QUACK_IR_QUACKSTAGEOPS_TD
#define QUACK_DIALECT_QUACK_IR_QUACKSTAGEOPS_TD

include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/OpBase.td"

def Quack_StageInitOp : Quack_Op<"stage.init",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "initialises the mbarriers of the staging buffers";
  let description = [{
    Thread 0 initialises one mbarrier (arrival count 1) at each byte offset
    of `barriers` in the shared-memory global `smem` and makes the
    initialisations visible (`fence.mbarrier_init`); then a CTA barrier, so
    that no thread waits on, and no copy completes on, an mbarrier before
    it is initialised. Every thread of the CTA executes it, once, before
    any `quack.stage.fill` or `quack.stage.wait` on the same global
    (quack-verify-staging checks it).

    ```mlir
    quack.stage.init @bulk barriers [0, 8]
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$smem, DenseI64ArrayAttr:$barriers);
  let assemblyFormat = "$smem `barriers` $barriers attr-dict";
  let hasVerifier = 1;
}

def Quack_StageFillOp : Quack_Op<"stage.fill",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>, SingleBlock,
     NoTerminator]> {
  let summary = "arms a staging mbarrier and issues the copies it awaits";
  let description = [{
    Issued by thread 0 alone (the op's own predicate: every thread may
    execute it, only thread 0 does the work). Thread 0 orders the CTA's
    earlier accesses to shared memory before the copies
    (`fence.proxy.async.shared::cta`: the buffer may still hold what the CTA
    read in the previous phase, and a CTA barrier must separate those reads
    from this op), arms the mbarrier at byte offset `barrier` (an `i64`) of
    `smem` to complete once `bytes` (an `i32`) bytes have landed, and runs
    the body: the asynchronous copies (`quack.copy` with the `bulk` or
    `tensor` atom) that bring those bytes. The body's argument is the
    mbarrier's address; every bulk or tensor copy completes on it (the
    copy's verifier checks it), and no such copy exists outside a fill.

    `bytes` must equal what the body's copies bring: convert-quack-to-gpu
    computes both from the same slice bounds (the body may copy nothing,
    with `bytes` 0, for a row group past M; the arm still completes the
    phase, so the op has effects even with an empty body and is never
    erased).

    ```mlir
    quack.stage.fill @bulk barrier %off bytes %n {
    ^bb0(%bar: !llvm.ptr<3>):
      quack.copy <bulk> %dst, %src, %n, %bar
          : (!llvm.ptr<3>, !llvm.ptr<1>, i32, !llvm.ptr<3>) -> ()
    }
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$smem, I64:$barrier, I32:$bytes);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat =
      "$smem `barrier` $barrier `bytes` $bytes $body attr-dict";
  let hasVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    OpBuilder<(ins "FlatSymbolRefAttr":$smem, "Value":$barrier,
                   "Value":$bytes)>
  ];
  let extraClassDeclaration = [{
    /// The mbarrier's address inside the body.
    BlockArgument getBarrierAddress() { return getBody().getArgument(0); }
  }];
}

def Quack_StageWaitOp : Quack_Op<"stage.wait",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "waits until a staging buffer's copies have landed";
  let description = [{
    Every thread waits (`mbarrier.try_wait.parity` in a loop) until the
    phase of parity `parity` (an `i32`, 0 or 1; a constant is checked) of
    the mbarrier at byte offset `barrier`
    (an `i64`) of `smem` completes: the bytes of the fill that armed that
    phase have landed, and the thread may read the buffer.

    ```mlir
    quack.stage.wait @bulk barrier %off parity %p
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$smem, I64:$barrier, I32:$parity);
  let assemblyFormat = "$smem `barrier` $barrier `parity` $parity attr-dict";
  let hasVerifier = 1;
}

#endif // QUACK_DIALECT_QUACK_IR_QUACKSTAGEOPS_TD
