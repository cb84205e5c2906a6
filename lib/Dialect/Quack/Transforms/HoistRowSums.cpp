//===- HoistRowSums.cpp - quack-hoist-row-sums -----------------------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#include "quack/Dialect/Quack/IR/QuackOps.h"
#include "quack/Dialect/Quack/Transforms/Passes.h"

#include "MovableSlice.h"

namespace mlir::quack {
#define GEN_PASS_DEF_QUACKHOISTROWSUMS
#include "quack/Dialect/Quack/Transforms/Passes.h.inc"
} // namespace mlir::quack

using namespace mlir;
using namespace mlir::quack;

namespace {

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
              getMovableSlice(reduction, sum, /*exclusive=*/true);
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
