//===- HoistRowSums.cpp - quack-hoist-row-sums -----------------------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#include "quack/Dialect/Quack/IR/QuackOps.h"
#include "quack/Dialect/Quack/Transforms/Passes.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::quack {
#define GEN_PASS_DEF_QUACKHOISTROWSUMS
#include "quack/Dialect/Quack/Transforms/Passes.h.inc"
} // namespace mlir::quack

using namespace mlir;
using namespace mlir::quack;

namespace {

/// The ops strictly between `reduction` and `sum` that `sum` depends on, in
/// block order, when moving them and `sum` before `reduction` shortens
/// every live range it changes: none is a reduction, writes memory or has
/// regions; each is used by the others or by `sum` alone (a value also
/// used after the reduction would stay live across its exchange); and
/// none reads memory where a write lies between `reduction` and `sum` (an
/// output may alias an input). Fails otherwise.
FailureOr<SmallVector<Operation *>> hoistableSlice(Operation *reduction,
                                                   SumRowsOp sum) {
  Block *body = reduction->getBlock();
  llvm::SetVector<Operation *> slice;
  SmallVector<Operation *> work = {sum};
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (!def || def->getBlock() != body ||
          def->isBeforeInBlock(reduction))
        continue;
      if (def == reduction || isRowReduction(def) || writesMemory(def) ||
          def->getNumRegions() != 0 ||
          (!readsMemory(def) && !isMemoryEffectFree(def)))
        return failure();
      if (slice.insert(def))
        work.push_back(def);
    }
  }
  for (Operation *op : slice)
    for (Operation *user : op->getUsers())
      if (user != sum.getOperation() && !slice.contains(user))
        return failure();
  if (llvm::any_of(slice, readsMemory))
    for (Operation *op = reduction->getNextNode(); op != sum;
         op = op->getNextNode())
      if (writesMemory(op))
        return failure();
  SmallVector<Operation *> ordered(slice.begin(), slice.end());
  llvm::sort(ordered, [](Operation *a, Operation *c) {
    return a->isBeforeInBlock(c);
  });
  return ordered;
}

struct QuackHoistRowSumsPass
    : public mlir::quack::impl::QuackHoistRowSumsBase<QuackHoistRowSumsPass> {
  void runOnOperation() override {
    getOperation().walk([&](KernelOp kernel) {
      Block &body = kernel.getBody().front();
      SmallVector<Operation *> reductions;
      SmallVector<SumRowsOp> sums;
      for (Operation &op : body) {
        if (isRowReduction(&op))
          reductions.push_back(&op);
        else if (auto sum = dyn_cast<SumRowsOp>(&op))
          sums.push_back(sum);
      }
      // Each sum goes before the earliest reduction it can pass, in
      // order: the sums hoisted before one reduction keep their order.
      for (SumRowsOp sum : sums)
        for (Operation *reduction : reductions) {
          if (!reduction->isBeforeInBlock(sum))
            break;
          FailureOr<SmallVector<Operation *>> slice =
              hoistableSlice(reduction, sum);
          if (failed(slice))
            continue;
          for (Operation *op : *slice)
            op->moveBefore(reduction);
          sum->moveBefore(reduction);
          break;
        }
    });
  }
};

} // namespace
