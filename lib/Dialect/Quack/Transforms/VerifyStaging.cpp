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

/// Ops that every thread of a CTA (or cluster) must execute together: the
/// quack ops of that kind and the barriers and shuffles they lower to.
bool isCollective(Operation *op) {
  if (isa<StageInitOp, StageFillOp, StageWaitOp, AllReduceOp,
          ClusterBarrierInitOp, ClusterBarrierArmOp, ClusterArriveOp,
          ClusterWaitOp, ClusterExchangeOp>(op))
    return true;
  StringRef name = op->getName().getStringRef();
  return llvm::is_contained({"gpu.barrier", "gpu.shuffle", "nvvm.barrier",
                             "nvvm.barrier0", "nvvm.shfl.sync",
                             "nvvm.bar.warp.sync", "nvvm.cluster.arrive",
                             "nvvm.cluster.arrive.relaxed",
                             "nvvm.cluster.wait"},
                            name);
}

/// Rule 2: the offset `barrier` of a fill or wait names one of `init`'s
/// mbarriers.
LogicalResult checkOffset(Operation *op, Value barrier, StageInitOp init,
                          DataFlowSolver &solver) {
  ArrayRef<int64_t> barriers = init.getBarriers();
  int64_t low = *llvm::min_element(barriers);
  int64_t high = *llvm::max_element(barriers);
  std::optional<ConstantIntRanges> range = rangeOf(solver, barrier);
  // The analysis gives every value it reaches a range (the widest where it
  // knows nothing); a value without one is in code that never runs.
  if (!range)
    return success();
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

/// The waits on `smem` directly in `block`, after `after`.
SmallVector<StageWaitOp> waitsAfter(Block *block, Operation *after,
                                    StringRef smem) {
  SmallVector<StageWaitOp> waits;
  for (Operation *op = after->getNextNode(); op; op = op->getNextNode())
    if (auto wait = dyn_cast<StageWaitOp>(op); wait && wait.getSmem() == smem)
      waits.push_back(wait);
  return waits;
}

/// Rule 4: on every path from `fill` to the function's end, a wait on an
/// mbarrier the fill may have armed. Structured control flow: a wait after
/// the fill (or after an op enclosing it) in the same block, not inside a
/// branch. A wait that may be on another mbarrier does not close a fill in
/// a loop: the fill of the last iteration is then waited on after the loop.
LogicalResult checkWaited(StageFillOp fill, DataFlowSolver &solver) {
  std::optional<ConstantIntRanges> filled = rangeOf(solver, fill.getBarrier());
  auto overlaps = [&](StageWaitOp wait) {
    std::optional<ConstantIntRanges> waited =
        rangeOf(solver, wait.getBarrier());
    if (!filled || !waited)
      return true; // Rule 2 reports unbounded offsets.
    return !(waited->smax().slt(filled->smin()) ||
             filled->smax().slt(waited->smin()));
  };
  auto same = [&](StageWaitOp wait) {
    std::optional<ConstantIntRanges> waited =
        rangeOf(solver, wait.getBarrier());
    return wait.getBarrier() == fill.getBarrier() ||
           (filled && waited && filled->getConstantValue() &&
            waited->getConstantValue() &&
            *filled->getConstantValue() == *waited->getConstantValue());
  };
  // Whether `block` lies in the body of a loop of the function.
  auto inLoop = [](Block *block) {
    for (Operation *p = block->getParentOp();
         p && !isa<FunctionOpInterface>(p); p = p->getParentOp())
      if (isa<LoopLikeOpInterface>(p))
        return true;
    return false;
  };
  for (Operation *at = fill; at && !isa<FunctionOpInterface>(at);
       at = at->getParentOp()) {
    Block *block = at->getBlock();
    if (!block)
      break;
    // In a loop's body, only a wait on the fill's own mbarrier closes it
    // in the same iteration; otherwise a wait after the loop must close
    // the last iteration's fill.
    bool loopBody = inLoop(block);
    for (StageWaitOp wait : waitsAfter(block, at, fill.getSmem()))
      if (loopBody ? same(wait) : overlaps(wait))
        return success();
  }
  return fill.emitOpError("is followed by no quack.stage.wait on an "
                          "mbarrier it may arm ('")
         << fill.getSmem()
         << "'), on some path: the CTA could exit while its copies land";
}

LogicalResult verifyFunction(FunctionOpInterface func) {
  if (func.isExternal())
    return success();
  Block &entry = func.getFunctionBody().front();
  llvm::StringMap<StageInitOp> inits;
  SmallVector<Operation *> users;
  bool failedInit = false;
  func->walk<WalkOrder::PreOrder>([&](Operation *op) -> WalkResult {
    // Functions nested in this one are checked on their own.
    if (op != func.getOperation() && isa<FunctionOpInterface>(op))
      return WalkResult::skip();
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
    return WalkResult::advance();
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
      if (isCollective(inner)) {
        inner->emitOpError("is collective and may not be in the body of a "
                           "quack.stage.fill, which thread 0 runs alone");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (collective.wasInterrupted())
      return failure();
    // Rule 4.
    if (failed(checkWaited(fill, solver)))
      return failure();
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
