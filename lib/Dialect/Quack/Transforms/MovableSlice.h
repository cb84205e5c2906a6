//===- MovableSlice.h - ops that can move above an earlier op ---*- C++ -*-===//
//
// Part of the quack project.
//
// What quack-group-reductions and quack-hoist-row-sums both ask before they
// move an op (and what it needs) above an earlier reduction.
//
//===----------------------------------------------------------------------===//

#ifndef QUACK_LIB_DIALECT_QUACK_TRANSFORMS_MOVABLESLICE_H
#define QUACK_LIB_DIALECT_QUACK_TRANSFORMS_MOVABLESLICE_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"

namespace mlir::quack {

/// The ops strictly between `first` and `later` (of one block) that `later`
/// depends on, in block order, when all of them can move before `first`:
/// none is `first`, a reduction, a write of memory, an op with regions or
/// with other side effects than reading, and none reads memory where a
/// write lies between `first` and `later` (an output may alias an input).
/// With `exclusive`, each must also be used only by the others or by
/// `later` (a value also used after `first` would stay live across it).
/// Fails otherwise.
FailureOr<SmallVector<Operation *>> getMovableSlice(Operation *first,
                                                    Operation *later,
                                                    bool exclusive);

} // namespace mlir::quack

#endif // QUACK_LIB_DIALECT_QUACK_TRANSFORMS_MOVABLESLICE_H
