//===- QuackClusterOps.td - the cluster exchange protocol --*- tablegen -*-===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//
//
// CTA-level operations of the exchange between the CTAs of a thread-block
// cluster. convert-quack-to-gpu emits them inside gpu.func kernels whose rows
// span a cluster; quack-verify-cluster-protocol checks how they are ordered;
// convert-quack-cluster-to-nvvm lowers them to mbarriers, mapa, st.async
// and barrier.cluster. Every one of them is collective: every thread of
// every CTA of the cluster executes it, in the same order. This file is
// included at the end of QuackOps.td (it uses Quack_Op).
//
//===----------------------------------------------------------------------===//

#ifndef QUACK_DIALECT_QUACK_IR_QUACKCLUSTEROPS_TD
#define QUACK_DIALECT_QUACK_IR_QUACKCLUSTEROPS_TD

include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

class Quack_ClusterBarrierOp<string mnemonic>
    : Quack_Op<mnemonic, [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let arguments = (ins FlatSymbolRefAttr:$smem,
                       DenseI64ArrayAttr:$barriers,
                       DenseI64ArrayAttr:$expect_tx);
  let assemblyFormat =
      "$smem `barriers` $barriers `expect_tx` $expect_tx attr-dict";
  let hasVerifier = 1;
}

def Quack_ClusterBarrierInitOp
    : Quack_ClusterBarrierOp<"cluster.barrier_init"> {
  let summary = "initialises and arms the mbarriers of a cluster exchange";
  let description = [{
    Thread 0 of the CTA initialises one mbarrier (arrival count 1) at each
    byte offset of `barriers` in the shared-memory global `smem`, makes the
    initialisations visible to the cluster (`fence.mbarrier_init`), and arms
    phase 0 of barrier `i` to complete once `expect_tx[i]` bytes of
    asynchronous stores have landed in this CTA.

    Peers may write into a barrier only once its initialisation is visible
    to them: a `quack.cluster.arrive` after this op and the matching
    `quack.cluster.wait` must come before the first exchange on it
    (quack-verify-cluster-protocol checks it).

    ```mlir
    quack.cluster.barrier_init @smem barriers [0, 8] expect_tx [32, 64]
    ```
  }];
}

def Quack_ClusterBarrierArmOp
    : Quack_ClusterBarrierOp<"cluster.barrier_arm"> {
  let summary = "arms the next phase of the mbarriers of a cluster exchange";
  let description = [{
    Thread 0 arms the next phase of each mbarrier of `barriers` to complete
    once `expect_tx[i]` bytes have landed, so that a later exchange may use
    the barrier again (the persistent row loop does this once per row group).

    ```mlir
    quack.cluster.barrier_arm @smem barriers [0] expect_tx [32]
    ```
  }];
}

def Quack_ClusterArriveOp : Quack_Op<"cluster.arrive"> {
  let summary = "arrives on the cluster barrier";
  let description = [{
    `barrier.cluster.arrive.aligned`: this CTA's threads arrive on the
    cluster barrier with release semantics (`relaxed`: without ordering
    memory, enough after a `fence.mbarrier_init`). Every arrive is matched by
    one `quack.cluster.wait` before the next arrive and before the kernel
    returns; placing the wait late lets the CTA work while its peers arrive.

    ```mlir
    quack.cluster.arrive relaxed
    quack.cluster.arrive
    ```
  }];
  let arguments = (ins UnitAttr:$relaxed);
  let assemblyFormat = "(`relaxed` $relaxed^)? attr-dict";
}

def Quack_ClusterWaitOp : Quack_Op<"cluster.wait"> {
  let summary = "waits on the cluster barrier";
  let description = [{
    `barrier.cluster.wait.aligned` (acquire): returns once every CTA of the
    cluster has arrived since this CTA's last wait.

    ```mlir
    quack.cluster.wait
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def Quack_ClusterExchangeOp : Quack_Op<"cluster.exchange",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
     DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "exchanges per-CTA partials between the CTAs of a cluster";
  let description = [{
    Every CTA of the cluster sends its `values` (32-bit, the same in every
    thread) to every CTA of the cluster, itself included: they land in the
    receiver's slots `[rank][value]` (4 bytes each) starting at byte offset
    `slots` of `smem`, with `st.async` completing on the receiver's mbarrier
    at byte offset `barrier`. Then every thread waits for phase `parity` (an
    `i32`, 0 or 1) of this CTA's mbarrier, which completes when all
    `cluster_size` CTAs' values have landed, and reads the values of rank
    `source` (an `i32` below `cluster_size`). The threads of a CTA read
    different ranks and combine them with shuffles, so that every CTA
    combines the cluster's partials in the same order.

    `cta_threads` is the CTA's thread count, at least `cluster_size`:
    thread `t < cluster_size` sends to peer `t`, and the threads of each
    warp read ranks `lane mod cluster_size`.

    Each exchange completes one phase of its barrier, which was armed for
    `4 * cluster_size * |values|` bytes by a `quack.cluster.barrier_init`
    or `quack.cluster.barrier_arm` (quack-verify-cluster-protocol checks it).

    ```mlir
    %m, %s = quack.cluster.exchange @smem barrier 0 slots 16 parity %c0
        from %rank (%max, %sum) {cluster_size = 4, cta_threads = 256}
        : f32, f32
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$smem, I64Attr:$barrier,
                       I64Attr:$slots, I32:$parity, I32:$source,
                       Variadic<AnyTypeOf<[F32, I32]>>:$values,
                       I64Attr:$cluster_size, I64Attr:$cta_threads);
  let results = (outs Variadic<AnyTypeOf<[F32, I32]>>:$results);
  let assemblyFormat = [{
    $smem `barrier` $barrier `slots` $slots `parity` $parity `from` $source
    ` ` `(` $values `)` attr-dict `:` type($values)
  }];
  let extraClassDeclaration = [{
    /// Bytes every CTA of the cluster stores into each receiver.
    int64_t getBytesPerSender() { return 4 * getValues().size(); }
    /// Bytes that land in each CTA per exchange.
    int64_t getBytesPerReceiver() {
      return getBytesPerSender() * getClusterSize();
    }
  }];
  let hasVerifier = 1;
}

#endif // QUACK_DIALECT_QUACK_IR_QUACKCLUSTEROPS_TD
