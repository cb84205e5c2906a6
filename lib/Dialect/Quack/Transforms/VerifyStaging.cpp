//===- VerifyStaging.cpp - quack-verify-staging ---------------------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//
//
// Checks where a function's quack.stage.* ops sit relative to each other:
// the init first and once, fills and waits on initialised mbarriers (by an
// integer range analysis of their offsets), nothing collective in a fill's
// thread-0 body, and a wait after every fill. The rules are listed in
// Passes.td.
//
//===----------------------------------------------------------------------===//

#include "quack/Dialect/Quack/IR/QuackOps.h"
#include "quack/Dialect/Quack/Transforms/Passes.h"

#include "mlir/Analysis/DataFlow/ConstantPropagationAnalysis.h"
#include "mlir/Analysis/DataFlow/DeadCodeAnalysis.h"
#include "mlir/Analysis/DataFlow/IntegerRangeAnalysis.h"
#include "mlir/Analysis/DataFlowFramework.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

namespace mlir::quack {
#define GEN_PASS_DEF_QUACKVERIFYSTAGING
#include "quack/Dialect/Quack/Transforms/Passes.h.inc"
} // namespace mlir::quack

using namespace mlir;
using namespace mlir::quack;

namespace {

/// The signed range the solver knows for `value`, if any.
std::optional<ConstantIntRanges> rangeOf(DataFlowSolver &solver,
                                         Value value) {
  auto *lattice = solver.lookupState<dataflow::IntegerValueRangeLattice>(value);
  if (!lattice || lattice->getValue().isUninitialized())
    return std::nullopt;
  return lattice->getValue().getValue();
}

/// Rule 2: the offset `barrier` of a fill or wait names one of `init`'s
/// mbarriers.
LogicalResult checkOffset(Operation *op, Value barrier, StageInitOp init,
                          DataFlowSolver &solver) {
  ArrayRef<int64_t> barriers = init.getBarriers();
  int64_t low = *llvm::min_element(barriers);
  int64_t high = *llvm::max_element(barriers);
  std::optional<ConstantIntRanges> range = rangeOf(solver, barrier);
  if (!range)
    return op->emitOpError("mbarrier offset cannot be bounded; the init "
                           "has mbarriers at [")
           << low << ", " << high << "]";
  int64_t min = range->smin().getSExtValue();
  int64_t max = range->smax().getSExtValue();
  if (min == max) {
    if (!llvm::is_contained(barriers, min))
      return op->emitOpError("mbarrier offset ")
             << min << " is not one of the init's mbarriers";
    return success();
  }
  if (min < low || max > high)
    return op->emitOpError("mbarrier offset may lie in [")
           << min << ", " << max << "], outside the init's mbarriers at ["
           << low << ", " << high << "]";
  return success();
}

LogicalResult verifyFunction(FunctionOpInterface func) {
  if (func.isExternal())
    return success();
  Block &entry = func.getFunctionBody().front();
  llvm::StringMap<StageInitOp> inits;
  SmallVector<Operation *> users;
  bool failedInit = false;
  func.walk([&](Operation *op) {
    if (auto init = dyn_cast<StageInitOp>(op)) {
      // Rule 1: once, in the entry block.
      if (init->getBlock() != &entry) {
        init.emitOpError("must be in the function's entry block, executed "
                         "once by every thread, not in a loop or a branch");
        failedInit = true;
      } else if (!inits.try_emplace(init.getSmem(), init).second) {
        init.emitOpError("initialises the mbarriers of '")
            << init.getSmem() << "' a second time";
        failedInit = true;
      }
    } else if (isa<StageFillOp, StageWaitOp>(op)) {
      users.push_back(op);
    }
  });
  if (failedInit)
    return failure();
  if (users.empty())
    return success();

  DataFlowSolver solver;
  solver.load<dataflow::DeadCodeAnalysis>();
  solver.load<dataflow::SparseConstantPropagation>();
  solver.load<dataflow::IntegerRangeAnalysis>();
  if (failed(solver.initializeAndRun(func)))
    return func.emitError("integer range analysis failed");
  DominanceInfo dominance(func);

  SmallVector<StageWaitOp> waits;
  for (Operation *op : users)
    if (auto wait = dyn_cast<StageWaitOp>(op))
      waits.push_back(wait);

  for (Operation *op : users) {
    StringRef smem = isa<StageFillOp>(op) ? cast<StageFillOp>(op).getSmem()
                                          : cast<StageWaitOp>(op).getSmem();
    Value barrier = isa<StageFillOp>(op) ? cast<StageFillOp>(op).getBarrier()
                                         : cast<StageWaitOp>(op).getBarrier();
    // Rule 1: after the init.
    StageInitOp init = inits.lookup(smem);
    if (!init || !dominance.properlyDominates(init.getOperation(), op))
      return op->emitOpError("uses the mbarriers of '")
             << smem << "' before a quack.stage.init of them";
    // Rule 2.
    if (failed(checkOffset(op, barrier, init, solver)))
      return failure();
    auto fill = dyn_cast<StageFillOp>(op);
    if (!fill)
      continue;
    // Rule 3: nothing collective in thread 0's body.
    WalkResult collective = fill.getBody().walk([&](Operation *inner) {
      if (isa<StageInitOp, StageFillOp, StageWaitOp, AllReduceOp,
              ClusterBarrierInitOp, ClusterBarrierArmOp, ClusterArriveOp,
              ClusterWaitOp, ClusterExchangeOp>(inner)) {
        inner->emitOpError("is collective and may not be in the body of a "
                           "quack.stage.fill, which thread 0 runs alone");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (collective.wasInterrupted())
      return failure();
    // Rule 4: a wait follows, in straight-line code or in the next
    // iteration of a loop around the fill.
    bool waited = llvm::any_of(waits, [&](StageWaitOp wait) {
      if (wait.getSmem() != smem)
        return false;
      if (dominance.properlyDominates(fill.getOperation(), wait))
        return true;
      for (Operation *loop = fill->getParentOp(); loop != func;
           loop = loop->getParentOp())
        if (isa<LoopLikeOpInterface>(loop) && loop->isProperAncestor(wait))
          return true;
      return false;
    });
    if (!waited)
      return fill.emitOpError("is followed by no quack.stage.wait on '")
             << smem << "': the CTA could exit while its copies land";
  }
  return success();
}

struct QuackVerifyStagingPass
    : public mlir::quack::impl::QuackVerifyStagingBase<
          QuackVerifyStagingPass> {
  void runOnOperation() override {
    bool failed = false;
    getOperation()->walk([&](FunctionOpInterface func) {
      if (mlir::failed(verifyFunction(func)))
        failed = true;
    });
    if (failed)
      signalPassFailure();
  }
};

} // namespace
