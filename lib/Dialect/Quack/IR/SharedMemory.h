//===- SharedMemory.h - checks of ops that name shared memory ---*- C++ -*-===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//
//
// What the verifiers of the cluster exchange and the thread-level ops check
// about the shared-memory global and the byte offsets they name.
//
//===----------------------------------------------------------------------===//

#ifndef QUACK_LIB_DIALECT_QUACK_IR_SHAREDMEMORY_H
#define QUACK_LIB_DIALECT_QUACK_IR_SHAREDMEMORY_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::quack::detail {

/// Offsets past this lie beyond any CTA's shared memory (and keep the
/// verifiers' arithmetic far from overflow).
inline constexpr int64_t kMaxSharedOffset = int64_t(1) << 24;

inline bool inSharedRange(int64_t offset) {
  return offset >= 0 && offset < kMaxSharedOffset;
}

/// Checks that `smem` names a shared-memory (address space 3) byte array of
/// at least `bytes` bytes in the nearest symbol table of `op`. With
/// `allowDynamic`, a zero-sized array (the declaration of dynamic shared
/// memory, whose size comes at launch) passes too.
LogicalResult verifySharedGlobal(Operation *op, SymbolTableCollection &tables,
                                 FlatSymbolRefAttr smem, int64_t bytes,
                                 bool allowDynamic = false);

} // namespace mlir::quack::detail

#endif // QUACK_LIB_DIALECT_QUACK_IR_SHAREDMEMORY_H
