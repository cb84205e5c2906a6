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

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::quack;

/// Largest cluster the hardware launches (non-portable sizes included).
static constexpr int64_t kMaxClusterSize = 16;
/// Offsets past this lie beyond any CTA's shared memory (and keep the
/// verifiers' arithmetic far from overflow).
static constexpr int64_t kMaxSharedOffset = int64_t(1) << 24;

static bool inSharedRange(int64_t offset) {
  return offset >= 0 && offset < kMaxSharedOffset;
}

/// Checks that `smem` names a shared-memory (address space 3) byte array of
/// at least `bytes` bytes in the nearest symbol table.
static LogicalResult verifySharedGlobal(Operation *op,
                                        SymbolTableCollection &tables,
                                        FlatSymbolRefAttr smem,
                                        int64_t bytes) {
  Operation *table = SymbolTable::getNearestSymbolTable(op->getParentOp());
  if (!table)
    return op->emitOpError("is not inside a symbol table");
  auto global = tables.lookupSymbolIn<LLVM::GlobalOp>(table, smem.getAttr());
  if (!global)
    return op->emitOpError("'") << smem.getValue()
                                << "' is not an llvm.mlir.global";
  // The global's attributes are read untyped: symbol uses may be verified
  // before the global itself, so they may not have the types its accessors
  // assume.
  Attribute spaceAttr =
      global->getInherentAttr(global.getAddrSpaceAttrName())
          .value_or(Attribute());
  std::optional<int64_t> space = 0; // The default: generic memory.
  if (spaceAttr) {
    auto integer = dyn_cast<IntegerAttr>(spaceAttr);
    space = integer ? std::optional<int64_t>(integer.getInt()) : std::nullopt;
  }
  if (space != 3)
    return op->emitOpError("'") << smem.getValue()
                                << "' is not in shared memory (address space "
                                << (space ? std::to_string(*space)
                                          : std::string("unknown"))
                                << ", expected 3)";
  auto type = dyn_cast_if_present<TypeAttr>(
      global->getInherentAttr(global.getGlobalTypeAttrName()).value_or(
          Attribute()));
  auto array = type ? dyn_cast<LLVM::LLVMArrayType>(type.getValue())
                    : LLVM::LLVMArrayType();
  if (!array || !array.getElementType().isInteger(8))
    return op->emitOpError("'") << smem.getValue()
                                << "' is not an array of i8";
  if (static_cast<int64_t>(array.getNumElements()) < bytes)
    return op->emitOpError("needs ")
           << bytes << " bytes of '" << smem.getValue() << "', which has "
           << array.getNumElements();
  return success();
}

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
