//===- GroupReductions.cpp - quack-group-reductions ------------------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#include "quack/Dialect/Quack/IR/QuackOps.h"
#include "quack/Dialect/Quack/Transforms/Passes.h"

#include "MovableSlice.h"

namespace mlir::quack {
#define GEN_PASS_DEF_QUACKGROUPREDUCTIONS
#include "quack/Dialect/Quack/Transforms/Passes.h.inc"
} // namespace mlir::quack

using namespace mlir;
using namespace mlir::quack;

namespace {

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
              getMovableSlice(first, later, /*exclusive=*/false);
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
