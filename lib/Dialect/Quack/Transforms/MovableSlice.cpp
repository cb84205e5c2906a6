//===- MovableSlice.cpp - ops that can move above an earlier op ------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#include "MovableSlice.h"

#include "quack/Dialect/Quack/IR/QuackOps.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

FailureOr<SmallVector<Operation *>>
mlir::quack::getMovableSlice(Operation *first, Operation *later,
                             bool exclusive) {
  Block *body = first->getBlock();
  llvm::SetVector<Operation *> slice;
  SmallVector<Operation *> work = {later};
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (!def || def->getBlock() != body || def->isBeforeInBlock(first))
        continue;
      if (def == first || isRowReduction(def) || writesMemory(def) ||
          def->getNumRegions() != 0 ||
          (!readsMemory(def) && !isMemoryEffectFree(def)))
        return failure();
      if (slice.insert(def))
        work.push_back(def);
    }
  }
  if (exclusive)
    for (Operation *op : slice)
      for (Operation *user : op->getUsers())
        if (user != later && !slice.contains(user))
          return failure();
  if (llvm::any_of(slice, readsMemory))
    for (Operation *op = first->getNextNode(); op != later;
         op = op->getNextNode())
      if (writesMemory(op))
        return failure();
  SmallVector<Operation *> ordered(slice.begin(), slice.end());
  llvm::sort(ordered, [](Operation *a, Operation *c) {
    return a->isBeforeInBlock(c);
  });
  return ordered;
}
