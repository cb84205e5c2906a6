//===- GroupReductions.cpp - quack-group-reductions ------------------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#include "quack/Dialect/Quack/IR/QuackOps.h"
#include "quack/Dialect/Quack/Transforms/Passes.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::quack {
#define GEN_PASS_DEF_QUACKGROUPREDUCTIONS
#include "quack/Dialect/Quack/Transforms/Passes.h.inc"
} // namespace mlir::quack

using namespace mlir;
using namespace mlir::quack;

namespace {

/// The ops strictly between `first` and `later` that `later` depends on,
/// in block order, when all of them can move before `first`: none is a
/// reduction or depends on `first`, none writes memory or has regions, and
/// none reads memory where a write lies between `first` and `later`
/// (an output may alias an input). Fails otherwise.
FailureOr<SmallVector<Operation *>> movableSlice(Operation *first,
                                                 Operation *later) {
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
  bool reads = llvm::any_of(slice, readsMemory);
  if (reads)
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

struct QuackGroupReductionsPass
    : public mlir::quack::impl::QuackGroupReductionsBase<
          QuackGroupReductionsPass> {
  void runOnOperation() override {
    getOperation().walk([&](KernelOp kernel) {
      Block &body = kernel.getBody().front();
      SmallVector<Operation *> reductions;
      for (Operation &op : body)
        if (isRowReduction(&op))
          reductions.push_back(&op);
      DenseSet<Operation *> grouped;
      for (auto [i, first] : llvm::enumerate(reductions)) {
        if (grouped.contains(first))
          continue;
        Operation *last = first;
        for (Operation *later : ArrayRef(reductions).drop_front(i + 1)) {
          if (grouped.contains(later))
            continue;
          FailureOr<SmallVector<Operation *>> slice =
              movableSlice(first, later);
          if (failed(slice))
            continue;
          // What `later` needs goes before the group, in order; `later`
          // joins the group's end.
          for (Operation *op : *slice)
            op->moveBefore(first);
          later->moveAfter(last);
          last = later;
          grouped.insert(later);
        }
      }
    });
  }
};

} // namespace
