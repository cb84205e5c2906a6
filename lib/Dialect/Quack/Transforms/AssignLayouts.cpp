//===- AssignLayouts.cpp - thread-value layouts on every tile -------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#include "quack/Dialect/Quack/IR/QuackAttrs.h"
#include "quack/Dialect/Quack/IR/QuackOps.h"
#include "quack/Dialect/Quack/Transforms/KernelConfig.h"
#include "quack/Dialect/Quack/Transforms/Passes.h"

namespace mlir::quack {
#define GEN_PASS_DEF_QUACKASSIGNLAYOUTS
#include "quack/Dialect/Quack/Transforms/Passes.h.inc"
} // namespace mlir::quack

using namespace mlir;
using namespace mlir::quack;

namespace {

/// Whether `op` produces or reads a tile: a vector of `rowLength` elements.
bool isTileOp(Operation *op, int64_t rowLength) {
  auto isTile = [&](Type type) {
    auto vector = dyn_cast<VectorType>(type);
    return vector && vector.getRank() == 1 &&
           vector.getDimSize(0) == rowLength;
  };
  return llvm::any_of(op->getResultTypes(), isTile) ||
         llvm::any_of(op->getOperandTypes(), isTile);
}


struct QuackAssignLayoutsPass
    : public mlir::quack::impl::QuackAssignLayoutsBase<
          QuackAssignLayoutsPass> {
  void runOnOperation() override {
    getOperation().walk([&](KernelOp kernel) {
      FailureOr<KernelConfig> config = KernelConfig::fromKernel(kernel);
      if (failed(config))
        return signalPassFailure();
      FailureOr<::quack::layout::RowTVLayout> partition =
          buildRowTVLayout(kernel, *config);
      if (failed(partition))
        return signalPassFailure();
      TVLayoutAttr layout = getTVLayoutAttr(kernel.getContext(), *partition);
      kernel->setAttr(kTVLayoutAttrName, layout);
      int64_t rowLength = kernel.getRowLength().value_or(1);
      kernel.getBody().walk([&](Operation *op) {
        if (isTileOp(op, rowLength))
          op->setAttr(kTVLayoutAttrName, layout);
      });
    });
  }
};

} // namespace
