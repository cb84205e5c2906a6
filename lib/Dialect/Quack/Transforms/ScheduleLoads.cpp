//===- ScheduleLoads.cpp - quack-schedule-loads ---------------------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#include "quack/Dialect/Quack/IR/QuackOps.h"
#include "quack/Dialect/Quack/Transforms/Passes.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::quack {
#define GEN_PASS_DEF_QUACKSCHEDULELOADS
#include "quack/Dialect/Quack/Transforms/Passes.h.inc"
} // namespace mlir::quack

using namespace mlir;
using namespace mlir::quack;

namespace {

/// Whether `op` computes a value that is the same for every row from row
/// vectors, scalars and constants alone (constants included), and may be
/// moved freely.
bool isRowInvariant(Operation *op, const DenseSet<Operation *> &invariant) {
  if (auto load = dyn_cast<LoadOp>(op))
    return classifyArgType(load.getSource().getType()) == ArgKind::Row;
  if (op->getNumRegions() != 0 || op->getNumResults() != 1 ||
      !isMemoryEffectFree(op))
    return false;
  for (Value operand : op->getOperands()) {
    if (isa<BlockArgument>(operand))
      continue; // a scalar argument of the kernel
    Operation *def = operand.getDefiningOp();
    if (!invariant.contains(def))
      return false;
  }
  return true;
}

struct QuackScheduleLoadsPass
    : public mlir::quack::impl::QuackScheduleLoadsBase<
          QuackScheduleLoadsPass> {
  void runOnOperation() override {
    getOperation().walk([&](KernelOp kernel) {
      Block &body = kernel.getBody().front();
      hoistPerRowReads(body);
      sinkRowVectors(body);
    });
  }

  /// Per-row loads to the top, in order; each gather right after its index
  /// (or after the per-row loads when the index is an argument).
  void hoistPerRowReads(Block &body) {
    Operation *cursor = nullptr; // the last hoisted op
    auto place = [&](Operation *op) {
      if (cursor)
        op->moveAfter(cursor);
      else
        op->moveBefore(&body.front());
      cursor = op;
    };
    SmallVector<Operation *> perRow, gathers;
    for (Operation &op : body) {
      if (auto load = dyn_cast<LoadOp>(&op);
          load &&
          classifyArgType(load.getSource().getType()) == ArgKind::PerRow)
        perRow.push_back(&op);
      else if (isa<GatherOp>(&op))
        gathers.push_back(&op);
    }
    for (Operation *op : perRow)
      place(op);
    for (Operation *op : gathers) {
      Operation *def = cast<GatherOp>(op).getIndex().getDefiningOp();
      if (!def || def == cursor || llvm::is_contained(perRow, def))
        place(op);
      else if (def->isBeforeInBlock(op))
        op->moveAfter(def); // an index computed in the body: right after it
    }
  }

  /// Row-vector loads and what depends only on them, each right before
  /// its first use.
  void sinkRowVectors(Block &body) {
    DenseSet<Operation *> invariant;
    SmallVector<Operation *> candidates;
    for (Operation &op : body)
      if (isRowInvariant(&op, invariant)) {
        invariant.insert(&op);
        candidates.push_back(&op);
      }
    // Last first, so that a chain (load, extf, add) follows its users down
    // in order.
    for (Operation *op : llvm::reverse(candidates)) {
      Operation *first = nullptr;
      for (Operation *user : op->getUsers()) {
        Operation *inBody = body.findAncestorOpInBlock(*user);
        if (inBody && (!first || inBody->isBeforeInBlock(first)))
          first = inBody;
      }
      if (first && op->getNextNode() != first)
        op->moveBefore(first);
    }
  }
};

} // namespace
