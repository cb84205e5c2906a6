//===- TargetInfo.h - NVIDIA instructions of quack's lowerings -*- C++ -*-===//
//
// Part of the quack project.
//
// The few NVIDIA instructions quack's lowerings need (the row lowering and
// the cluster exchange's), behind one small interface, so that they read as
// algorithms over lanes, warps, CTAs and clusters: warp shuffles, CTA barriers, the cluster
// barrier, distributed shared memory addresses (mapa), asynchronous remote
// stores that complete on the receiver's mbarrier (st.async), and mbarriers.
//
//===----------------------------------------------------------------------===//

#ifndef QUACK_LIB_CONVERSION_TARGETINFO_H
#define QUACK_LIB_CONVERSION_TARGETINFO_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace mlir::quack {

/// Builds NVIDIA (sm_90) instructions at the builder's insertion point.
class NVVMTargetInfo {
public:
  NVVMTargetInfo(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  /// Address spaces of the NVPTX backend.
  static constexpr unsigned kGlobal = 1;
  static constexpr unsigned kShared = 3;
  static constexpr unsigned kSharedCluster = 7;

  /// `shfl.sync.bfly`: the value held by lane `lane ^ offset`, all lanes
  /// taking part.
  Value shuffleXor(Value value, int64_t offset) {
    return NVVM::ShflOp::create(b, loc, value.getType(), i32(-1), value,
                                i32(offset), i32(31), NVVM::ShflKind::bfly,
                                UnitAttr());
  }

  /// Element `index` (an i32 or i64 value) of type `type` of the
  /// shared-memory global `smem`; with `type` i8, the byte at that offset.
  Value sharedAddress(FlatSymbolRefAttr smem, Type type, Value index) {
    Type ptr = LLVM::LLVMPointerType::get(b.getContext(), kShared);
    Value base = LLVM::AddressOfOp::create(b, loc, ptr, smem.getValue());
    return LLVM::GEPOp::create(b, loc, ptr, type, base, ValueRange{index});
  }
  /// Opens `if (%tid.x == 0)` and moves the builder into it: what follows
  /// runs in thread 0 of the CTA only.
  scf::IfOp beginThreadZero() {
    Value tid = NVVM::ThreadIdXOp::create(b, loc, b.getI32Type());
    Value first =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid, i32(0));
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, first,
                                  /*withElseRegion=*/false);
    b.setInsertionPointToStart(ifOp.thenBlock());
    return ifOp;
  }
  /// `bar.sync 0`: every thread of the CTA.
  void barrier() { gpu::BarrierOp::create(b, loc); }

  /// `%cluster_ctarank`: this CTA's rank in its cluster.
  Value clusterRank() { return NVVM::ClusterId::create(b, loc, b.getI32Type()); }

  /// `barrier.cluster.arrive.relaxed.aligned`: signals arrival without
  /// ordering memory (used after mbarrier init, whose fence orders it).
  void clusterArriveRelaxed() {
    NVVM::ClusterArriveRelaxedOp::create(b, loc, b.getUnitAttr());
  }
  /// `barrier.cluster.arrive.aligned` (release semantics).
  void clusterArrive() { NVVM::ClusterArriveOp::create(b, loc, b.getUnitAttr()); }
  /// `barrier.cluster.wait.aligned` (acquire semantics).
  void clusterWait() { NVVM::ClusterWaitOp::create(b, loc, b.getUnitAttr()); }

  /// `mbarrier.init.shared.b64 [bar], count`.
  void mbarrierInit(Value bar, int64_t count) {
    NVVM::MBarrierInitOp::create(b, loc, bar, i32(count), Value());
  }
  /// `fence.mbarrier_init.release.cluster`: makes prior mbarrier inits
  /// visible to the cluster before peers may signal them.
  void fenceMbarrierInit() { NVVM::FenceMbarrierInitOp::create(b, loc); }
  /// `mbarrier.arrive.expect_tx.shared.b64 _, [bar], bytes`: the phase
  /// completes once `bytes` bytes of asynchronous stores have landed.
  void mbarrierArriveExpectTx(Value bar, int64_t bytes) {
    NVVM::MBarrierArriveExpectTxOp::create(b, loc, Type(), bar, i32(bytes),
                                           NVVM::MemScopeKind::CTA,
                                           /*relaxed=*/false, Value());
  }
  /// The same, for a byte count known only at run time (an i32).
  void mbarrierArriveExpectTx(Value bar, Value bytes) {
    NVVM::MBarrierArriveExpectTxOp::create(b, loc, Type(), bar, bytes,
                                           NVVM::MemScopeKind::CTA,
                                           /*relaxed=*/false, Value());
  }
  /// `fence.proxy.async.shared::cta`: orders this thread's earlier accesses
  /// to shared memory (and, after a CTA barrier, the CTA's) before its
  /// later asynchronous-proxy operations on it, such as a bulk copy that
  /// overwrites a buffer the CTA has read.
  void fenceProxyAsyncShared() {
    LLVM::InlineAsmOp::create(
        b, loc, TypeRange{}, ValueRange{}, "fence.proxy.async.shared::cta;",
        "~{memory}", /*has_side_effects=*/true, /*is_align_stack=*/false,
        LLVM::tailcallkind::TailCallKind::None, LLVM::AsmDialectAttr(),
        ArrayAttr());
  }
  /// `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes`:
  /// copies `bytes` (an i32, a multiple of 16) from global memory at `src`
  /// to this CTA's shared memory at `dst` (both 16-byte aligned); the copy
  /// completes `bytes` transaction bytes on the mbarrier `bar` (shared).
  void bulkCopyToShared(Value dst, Value src, Value bytes, Value bar) {
    Type i32 = b.getI32Type();
    Value dstAddr = LLVM::PtrToIntOp::create(b, loc, i32, dst);
    Value srcAddr = LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), src);
    Value barAddr = LLVM::PtrToIntOp::create(b, loc, i32, bar);
    LLVM::InlineAsmOp::create(
        b, loc, TypeRange{}, ValueRange{dstAddr, srcAddr, bytes, barAddr},
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes "
        "[$0], [$1], $2, [$3];",
        "r,l,r,r,~{memory}", /*has_side_effects=*/true,
        /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
        LLVM::AsmDialectAttr(), ArrayAttr());
  }

  /// `cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::
  /// complete_tx::bytes`: copies the box of the 3-D tensor map at
  /// `tensorMap` (a generic pointer to a kernel parameter) whose first
  /// element is at coordinates (`x`, `y`, `z`) (i32, innermost first) to
  /// this CTA's shared memory at `dst` (128-byte aligned), innermost
  /// dimension fastest, elements out of bounds filled with zeros; the copy
  /// completes the box's bytes on the mbarrier `bar` (shared).
  void tensorCopyToShared(Value dst, Value tensorMap, Value x, Value y,
                          Value z, Value bar) {
    Type i32Type = b.getI32Type();
    Value dstAddr = LLVM::PtrToIntOp::create(b, loc, i32Type, dst);
    Value mapAddr = LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), tensorMap);
    Value barAddr = LLVM::PtrToIntOp::create(b, loc, i32Type, bar);
    LLVM::InlineAsmOp::create(
        b, loc, TypeRange{}, ValueRange{dstAddr, mapAddr, x, y, z, barAddr},
        "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::"
        "complete_tx::bytes [$0], [$1, {$2, $3, $4}], [$5];",
        "r,l,r,r,r,r,~{memory}", /*has_side_effects=*/true,
        /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
        LLVM::AsmDialectAttr(), ArrayAttr());
  }

  /// `mbarrier.try_wait.parity` in a loop until phase `parity` completes.
  void mbarrierWait(Value bar, int64_t parity) {
    NVVM::MBarrierTryWaitParityOp::create(b, loc, bar, i32(parity),
                                          i32(kSuspendHintNs));
  }

  /// The same, for a parity known only at run time (an i32, 0 or 1).
  void mbarrierWait(Value bar, Value parity) {
    NVVM::MBarrierTryWaitParityOp::create(b, loc, bar, parity,
                                          i32(kSuspendHintNs));
  }

  /// `mapa.shared::cluster`: the address of `local` (a shared::cta pointer)
  /// in the shared memory of the cluster's CTA `rank`.
  Value mapToRank(Value local, Value rank) {
    Type clusterPtr = LLVM::LLVMPointerType::get(b.getContext(),
                                                 kSharedCluster);
    return NVVM::MapaOp::create(b, loc, clusterPtr, local, rank);
  }

  /// `st.async.shared::cluster.mbarrier::complete_tx::bytes.b32`: stores a
  /// 32-bit value into a peer CTA's shared memory; the store completes 4
  /// transaction bytes on the peer's mbarrier `remoteBar`.
  void storeAsyncRemote(Value remote, Value value, Value remoteBar) {
    Type i64 = b.getI64Type();
    Value bits = value;
    if (!value.getType().isInteger(32))
      bits = arith::BitcastOp::create(b, loc, b.getI32Type(), value);
    Value addr = LLVM::PtrToIntOp::create(b, loc, i64, remote);
    Value bar = LLVM::PtrToIntOp::create(b, loc, i64, remoteBar);
    LLVM::InlineAsmOp::create(
        b, loc, TypeRange{}, ValueRange{addr, bits, bar},
        "st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [$0], $1, "
        "[$2];",
        "l,r,l,~{memory}", /*has_side_effects=*/true,
        /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
        LLVM::AsmDialectAttr(), ArrayAttr());
  }

private:
  /// Suspend-time hint of one try_wait, in nanoseconds.
  static constexpr int64_t kSuspendHintNs = 10000000;

  Value i32(int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 32); }

  OpBuilder &b;
  Location loc;
};

} // namespace mlir::quack

#endif // QUACK_LIB_CONVERSION_TARGETINFO_H
