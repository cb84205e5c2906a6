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
  if (isa<LoadOp>(op))
    return isLoadOf(op, ArgKind::Row);
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
  using QuackScheduleLoadsBase::QuackScheduleLoadsBase;

  void runOnOperation() override {
    getOperation().walk([&](KernelOp kernel) {
      Block &body = kernel.getBody().front();
      hoistPerRowReads(body);
      sinkRowVectors(body);
      if (earlyVectors)
        raiseRowVectorLoads(body);
    });
  }

  /// Per-row loads to the top, in order; each gather after its index and
  /// after the matrix rows loaded before its first use.
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
      if (isLoadOf(&op, ArgKind::PerRow))
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
    // Then after the row loads that come before the gather's first use: a
    // gather waits for its index (and its value is converted right after
    // it), and a thread issues in order, so a row load behind it would wait
    // two memory latencies before it is even sent.
    for (Operation *op : gathers) {
      Operation *firstUse = nullptr;
      for (Operation *user : op->getUsers()) {
        Operation *inBody = body.findAncestorOpInBlock(*user);
        if (inBody && (!firstUse || inBody->isBeforeInBlock(firstUse)))
          firstUse = inBody;
      }
      Operation *lastRowLoad = nullptr;
      for (Operation *it = op->getNextNode(); it && it != firstUse;
           it = it->getNextNode()) {
        if (isLoadOf(it, ArgKind::Matrix))
          lastRowLoad = it;
        // Not past a store: the gathered matrix may be an output's storage
        // too (in-place gradients).
        if (isa<StoreOp>(it))
          break;
      }
      if (lastRowLoad)
        op->moveAfter(lastRowLoad);
    }
  }

  /// Each row-vector load (alone: what depends on it stays at its first
  /// use) right after the nearest matrix load before it; with none, where
  /// it is (there is nothing to overlap). Stores are passed: nothing
  /// stores to a row vector (the verifier refuses it) and an output
  /// aliases an input only element for element, so a store of rows or of
  /// per-row values (a residual sum, statistics) cannot write a weight.
  void raiseRowVectorLoads(Block &body) {
    SmallVector<Operation *> loads;
    for (Operation &op : body)
      if (isLoadOf(&op, ArgKind::Row))
        loads.push_back(&op);
    // Last first: loads raised to the same matrix load keep their order.
    for (Operation *op : llvm::reverse(loads)) {
      Operation *anchor = nullptr;
      for (Operation *it = op->getPrevNode(); it; it = it->getPrevNode()) {
        if (isLoadOf(it, ArgKind::Matrix)) {
          anchor = it;
          break;
        }
      }
      if (anchor)
        op->moveAfter(anchor);
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
