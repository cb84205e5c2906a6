//===- QuackClusterOps.cpp - the cluster exchange protocol ----------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//
//
// Verifiers of the cluster exchange operations. Each op checks what it can
// see alone (offsets, byte counts, value types, the shared-memory global it
// names); how the ops are ordered is quack-verify-cluster-protocol's job.
//
//===----------------------------------------------------------------------===//

#include "quack/Dialect/Quack/IR/QuackOps.h"

#include "SharedMemory.h"

#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::quack;
using namespace mlir::quack::detail;

/// Largest cluster the hardware launches (non-portable sizes included).
static constexpr int64_t kMaxClusterSize = 16;

//===----------------------------------------------------------------------===//
// ClusterBarrierInitOp, ClusterBarrierArmOp
//===----------------------------------------------------------------------===//

template <typename Op>
static LogicalResult verifyBarrierList(Op op) {
  ArrayRef<int64_t> barriers = op.getBarriers();
  ArrayRef<int64_t> bytes = op.getExpectTx();
  if (barriers.empty())
    return op.emitOpError("names no mbarrier");
  if (barriers.size() != bytes.size())
    return op.emitOpError("has ")
           << barriers.size() << " mbarriers but " << bytes.size()
           << " expected byte counts";
  llvm::SmallDenseSet<int64_t> seen;
  for (auto [offset, tx] : llvm::zip(barriers, bytes)) {
    if (!inSharedRange(offset) || offset % 8 != 0)
      return op.emitOpError("mbarrier offset ")
             << offset << " is not a multiple of 8 in [0, 2^24)";
    if (!seen.insert(offset).second)
      return op.emitOpError("names the mbarrier at offset ")
             << offset << " twice";
    // mbarrier's transaction count holds at most 2^20 - 1 bytes per phase.
    if (tx <= 0 || tx >= (1 << 20))
      return op.emitOpError("expected byte count ")
             << tx << " is outside [1, 2^20)";
  }
  return success();
}

template <typename Op>
static LogicalResult verifyBarrierSymbol(Op op,
                                         SymbolTableCollection &tables) {
  int64_t end = 0;
  for (int64_t offset : op.getBarriers()) {
    if (!inSharedRange(offset))
      return success(); // The op's verifier reports it.
    end = std::max(end, offset + 8);
  }
  return verifySharedGlobal(op, tables, op.getSmemAttr(), end);
}

LogicalResult ClusterBarrierInitOp::verify() {
  return verifyBarrierList(*this);
}
LogicalResult
ClusterBarrierInitOp::verifySymbolUses(SymbolTableCollection &tables) {
  return verifyBarrierSymbol(*this, tables);
}
LogicalResult ClusterBarrierArmOp::verify() {
  return verifyBarrierList(*this);
}
LogicalResult
ClusterBarrierArmOp::verifySymbolUses(SymbolTableCollection &tables) {
  return verifyBarrierSymbol(*this, tables);
}

//===----------------------------------------------------------------------===//
// ClusterExchangeOp
//===----------------------------------------------------------------------===//

LogicalResult ClusterExchangeOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &inferred) {
  // Operands: parity, source, then the values.
  for (Value v : operands.drop_front(2))
    inferred.push_back(v.getType());
  return success();
}

LogicalResult ClusterExchangeOp::verify() {
  int64_t size = getClusterSize();
  if (size < 2 || size > kMaxClusterSize)
    return emitOpError("cluster size ")
           << size << " is outside [2, " << kMaxClusterSize << "]";
  if (getCtaThreads() < 1 || getCtaThreads() > 1024)
    return emitOpError("CTA thread count ")
           << getCtaThreads() << " is outside [1, 1024]";
  if (getValues().empty())
    return emitOpError("exchanges no value");
  // Lane j of every warp reads rank j's values: every rank needs a reader.
  if (getCtaThreads() < static_cast<uint64_t>(size))
    return emitOpError("a CTA of ")
           << getCtaThreads() << " threads cannot read the values of "
           << size << " ranks";
  if (!inSharedRange(getBarrier()) || getBarrier() % 8 != 0)
    return emitOpError("mbarrier offset ")
           << getBarrier() << " is not a multiple of 8 in [0, 2^24)";
  if (!inSharedRange(getSlots()) || getSlots() % 4 != 0)
    return emitOpError("slot offset ")
           << getSlots() << " is not a multiple of 4 in [0, 2^24)";
  int64_t slotsEnd = getSlots() + getBytesPerReceiver();
  if (getBarrier() < slotsEnd && getSlots() < getBarrier() + 8)
    return emitOpError("slots [")
           << getSlots() << ", " << slotsEnd << ") overlap the mbarrier at "
           << getBarrier();
  return success();
}

LogicalResult
ClusterExchangeOp::verifySymbolUses(SymbolTableCollection &tables) {
  if (!inSharedRange(getBarrier()) || !inSharedRange(getSlots()) ||
      getClusterSize() < 2 || getClusterSize() > kMaxClusterSize)
    return success(); // The op's verifier reports it.
  int64_t end = std::max(getBarrier() + 8, getSlots() + getBytesPerReceiver());
  return verifySharedGlobal(*this, tables, getSmemAttr(), end);
}
