//===- AssignLayouts.cpp - thread-value layouts on every tile -------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#include "quack/Dialect/Quack/IR/QuackAttrs.h"
#include "quack/Dialect/Quack/IR/QuackOps.h"
#include "quack/Dialect/Quack/Transforms/KernelConfig.h"
#include "quack/Dialect/Quack/Transforms/Passes.h"
#include "quack/Layout/TVLayout.h"

namespace mlir::quack {
#define GEN_PASS_DEF_QUACKASSIGNLAYOUTS
#include "quack/Dialect/Quack/Transforms/Passes.h.inc"
} // namespace mlir::quack

using namespace mlir;
using namespace mlir::quack;

FailureOr<TVLayoutAttr> mlir::quack::buildRowTVLayoutAttr(
    KernelOp kernel, const KernelConfig &config) {
  namespace ql = ::quack::layout;
  ql::RowPartition spec;
  spec.numCols = kernel.getRowLength().value_or(1);
  spec.threadsPerRow = config.threadsPerRow;
  spec.vecSize = config.vector;
  spec.rowsPerCta = config.rowsPerCta;
  spec.clusterSize = config.clusterSize;
  ql::Result<ql::RowTVLayout> tv = ql::makeRowTVLayout(spec);
  if (!tv.ok())
    return kernel.emitOpError("cannot build the thread-value layout: ")
           << tv.error();
  MLIRContext *ctx = kernel.getContext();
  return TVLayoutAttr::get(ctx, LayoutAttr::get(ctx, tv->tv),
                           LayoutAttr::get(ctx, tv->tile));
}

bool mlir::quack::isTileOp(Operation *op, int64_t rowLength) {
  auto isTile = [&](Type type) {
    auto vector = dyn_cast<VectorType>(type);
    return vector && vector.getRank() == 1 &&
           vector.getDimSize(0) == rowLength;
  };
  return llvm::any_of(op->getResultTypes(), isTile) ||
         llvm::any_of(op->getOperandTypes(), isTile);
}

namespace {

struct QuackAssignLayoutsPass
    : public mlir::quack::impl::QuackAssignLayoutsBase<
          QuackAssignLayoutsPass> {
  void runOnOperation() override {
    getOperation().walk([&](KernelOp kernel) {
      FailureOr<KernelConfig> config = KernelConfig::fromKernel(kernel);
      if (failed(config))
        return signalPassFailure();
      FailureOr<TVLayoutAttr> layout = buildRowTVLayoutAttr(kernel, *config);
      if (failed(layout))
        return signalPassFailure();
      kernel->setAttr(kTVLayoutAttrName, *layout);
      int64_t rowLength = kernel.getRowLength().value_or(1);
      kernel.getBody().walk([&](Operation *op) {
        if (isTileOp(op, rowLength))
          op->setAttr(kTVLayoutAttrName, *layout);
      });
    });
  }
};

} // namespace
