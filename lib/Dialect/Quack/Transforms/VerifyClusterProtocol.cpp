//===- VerifyClusterProtocol.cpp - quack-verify-cluster-protocol ----------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//
//
// An abstract interpretation of the quack.cluster.* ops of a function: the
// state of each mbarrier (initialised, armed for how many bytes, which
// phase, whether its initialisation and its slots' last reads have been
// ordered before the peers' next writes by a cluster arrive + wait) and of
// the cluster barrier (an arrive pending its wait). The rules are listed in
// Passes.td.
//
//===----------------------------------------------------------------------===//

#include "quack/Dialect/Quack/IR/QuackOps.h"
#include "quack/Dialect/Quack/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::quack {
#define GEN_PASS_DEF_QUACKVERIFYCLUSTERPROTOCOL
#include "quack/Dialect/Quack/Transforms/Passes.h.inc"
} // namespace mlir::quack

using namespace mlir;
using namespace mlir::quack;

namespace {

/// How far an event (an mbarrier's initialisation, or this CTA's reads of
/// its slots) is ordered before the peers' next writes: not yet, by an
/// arrive whose wait is still to come, or by an arrive and its wait.
enum class Ordering { None, Arrived, Done };

Ordering weaker(Ordering a, Ordering b) { return a < b ? a : b; }

struct BarrierState {
  /// Bytes the armed phase expects; 0 when no phase is armed.
  int64_t armedBytes = 0;
  /// Phases completed so far; -1 when unknown (after a loop).
  int64_t phase = 0;
  Ordering init = Ordering::None;
};

/// Slots [start, end) that an exchange read, and how far those reads are
/// ordered before the peers' next writes into them.
struct SlotRange {
  int64_t start, end;
  Ordering read;
};

struct State {
  llvm::MapVector<int64_t, BarrierState> barriers;
  bool arrivePending = false;
  /// Slots read and not yet released to the peers (Done ranges dropped).
  SmallVector<SlotRange> slots;

  /// The state after either of two paths: a loop that runs or not. Both
  /// have the same barriers, armed alike, and the same arrive pending (a
  /// loop body that changed any of them fails when it is followed a second
  /// time).
  static State join(const State &a, const State &c) {
    State out = a;
    for (auto &[offset, bar] : out.barriers) {
      auto it = c.barriers.find(offset);
      if (it == c.barriers.end())
        continue;
      const BarrierState &other = it->second;
      if (bar.phase != other.phase)
        bar.phase = -1;
      bar.init = weaker(bar.init, other.init);
    }
    // A range pending on either path is pending after the loop.
    out.slots.append(c.slots.begin(), c.slots.end());
    return out;
  }
};

/// The loop context of an op inside an scf.for: the loop and, for each
/// barrier exchanged in its body, the number of exchanges per iteration.
struct LoopContext {
  scf::ForOp loop;
  llvm::SmallDenseMap<int64_t, int64_t> exchangesPerIteration;
  /// Phase of each barrier when the loop was entered.
  llvm::SmallDenseMap<int64_t, int64_t> entryPhase;
};

std::optional<int64_t> constantInt(Value v) {
  APInt value;
  if (v && matchPattern(v, m_ConstantInt(&value)))
    return value.getSExtValue();
  return std::nullopt;
}

bool isClusterOp(Operation *op) {
  return isa<ClusterBarrierInitOp, ClusterBarrierArmOp, ClusterArriveOp,
             ClusterWaitOp, ClusterExchangeOp>(op);
}

/// Loops the check follows into; deeper nests are rejected.
constexpr unsigned kMaxLoopDepth = 4;

class ProtocolChecker {
public:
  LogicalResult run(FunctionOpInterface func) {
    Region &body = func.getFunctionBody();
    if (body.empty())
      return success();
    if (!body.hasOneBlock())
      return func.emitOpError(
          "has cluster exchange ops and several blocks; the protocol check "
          "needs structured control flow");
    State state;
    if (failed(interpretBlock(body.front(), state, nullptr)))
      return failure();
    Block &entry = body.front();
    Operation *terminator =
        entry.mightHaveTerminator() ? entry.getTerminator() : nullptr;
    if (state.arrivePending)
      return (terminator ? terminator : func.getOperation())
                 ->emitError("returns with a quack.cluster.arrive that no "
                             "quack.cluster.wait matched");
    return success();
  }

private:
  LogicalResult interpretBlock(Block &block, State &state,
                               LoopContext *loop) {
    for (Operation &op : block) {
      if (failed(interpret(&op, state, loop)))
        return failure();
    }
    return success();
  }

  LogicalResult interpret(Operation *op, State &state, LoopContext *loop) {
    if (auto forOp = dyn_cast<scf::ForOp>(op))
      return interpretLoop(forOp, state);
    if (op->getNumRegions() > 0) {
      // Any other region (scf.if, scf.while, ...) may run in some CTAs
      // and not in others.
      WalkResult found = op->walk([](Operation *inner) {
        return isClusterOp(inner) ? WalkResult::interrupt()
                                  : WalkResult::advance();
      });
      if (!found.wasInterrupted())
        return success();
      Operation *inner = nullptr;
      op->walk([&](Operation *o) {
        if (!inner && isClusterOp(o))
          inner = o;
      });
      return inner->emitOpError(
                 "is executed conditionally (inside '")
             << op->getName()
             << "'): every thread of every CTA of the cluster must execute "
                "it, or a CTA that skips an exchange may exit while its "
                "peers still write into it";
    }
    if (auto init = dyn_cast<ClusterBarrierInitOp>(op))
      return interpretInit(init, state);
    if (auto arm = dyn_cast<ClusterBarrierArmOp>(op))
      return interpretArm(arm, state);
    if (auto arrive = dyn_cast<ClusterArriveOp>(op)) {
      if (state.arrivePending)
        return arrive.emitOpError("arrives on the cluster barrier again "
                                  "before a quack.cluster.wait matched the "
                                  "previous arrive");
      state.arrivePending = true;
      for (auto &[offset, bar] : state.barriers) {
        if (bar.init == Ordering::None)
          bar.init = Ordering::Arrived;
        // A relaxed arrive does not release this CTA's reads.
      }
      if (!arrive.getRelaxed())
        for (SlotRange &range : state.slots)
          if (range.read == Ordering::None)
            range.read = Ordering::Arrived;
      return success();
    }
    if (auto wait = dyn_cast<ClusterWaitOp>(op)) {
      if (!state.arrivePending)
        return wait.emitOpError("waits on the cluster barrier without a "
                                "quack.cluster.arrive to match");
      state.arrivePending = false;
      for (auto &[offset, bar] : state.barriers) {
        if (bar.init == Ordering::Arrived)
          bar.init = Ordering::Done;
      }
      llvm::erase_if(state.slots, [](const SlotRange &range) {
        return range.read == Ordering::Arrived;
      });
      return success();
    }
    if (auto exchange = dyn_cast<ClusterExchangeOp>(op))
      return interpretExchange(exchange, state, loop);
    return success();
  }

  LogicalResult interpretInit(ClusterBarrierInitOp init, State &state) {
    for (auto [offset, bytes] :
         llvm::zip(init.getBarriers(), init.getExpectTx())) {
      if (state.barriers.count(offset))
        return init.emitOpError("initialises the mbarrier at offset ")
               << offset << " again";
      BarrierState bar;
      bar.armedBytes = bytes;
      state.barriers[offset] = bar;
    }
    return success();
  }

  LogicalResult interpretArm(ClusterBarrierArmOp arm, State &state) {
    for (auto [offset, bytes] :
         llvm::zip(arm.getBarriers(), arm.getExpectTx())) {
      auto it = state.barriers.find(offset);
      if (it == state.barriers.end())
        return arm.emitOpError("arms the mbarrier at offset ")
               << offset
               << ", which no quack.cluster.barrier_init initialised";
      if (it->second.armedBytes != 0)
        return arm.emitOpError("arms the mbarrier at offset ")
               << offset
               << " while its armed phase is not complete: the expected "
                  "bytes would add up and the phase never completes";
      it->second.armedBytes = bytes;
    }
    return success();
  }

  LogicalResult interpretExchange(ClusterExchangeOp exchange, State &state,
                                  LoopContext *loop) {
    int64_t offset = exchange.getBarrier();
    auto it = state.barriers.find(offset);
    if (it == state.barriers.end())
      return exchange.emitOpError("exchanges through the mbarrier at offset ")
             << offset
             << ", which no quack.cluster.barrier_init initialised";
    BarrierState &bar = it->second;
    if (bar.init != Ordering::Done)
      return exchange.emitOpError("peers may write into the mbarrier at "
                                  "offset ")
             << offset
             << " before its initialisation is visible to them: a "
                "quack.cluster.arrive and a quack.cluster.wait must come "
                "between its quack.cluster.barrier_init and this exchange";
    if (bar.armedBytes == 0)
      return exchange.emitOpError("the mbarrier at offset ")
             << offset
             << " has no armed phase: an earlier exchange completed it and "
                "no quack.cluster.barrier_arm armed the next";
    if (bar.armedBytes != exchange.getBytesPerReceiver())
      return exchange.emitOpError("the mbarrier at offset ")
             << offset << " expects " << bar.armedBytes
             << " bytes, but the cluster's " << exchange.getClusterSize()
             << " CTAs send it " << exchange.getClusterSize() << " x "
             << exchange.getValues().size()
             << " x 4 = " << exchange.getBytesPerReceiver() << " bytes";
    // The slots must not hold an mbarrier, nor slots that an earlier
    // exchange read and has not yet released to the peers.
    int64_t start = exchange.getSlots();
    int64_t end = start + exchange.getBytesPerReceiver();
    for (auto &[other, otherState] : state.barriers)
      if (other < end && start < other + 8)
        return exchange.emitOpError("slots [")
               << start << ", " << end
               << ") overlap the mbarrier at offset " << other;
    for (const SlotRange &range : state.slots)
      if (range.start < end && start < range.end)
        return exchange.emitOpError("peers may overwrite slots [")
               << start << ", " << end
               << ") before this CTA has read the values an earlier exchange "
                  "left in ["
               << range.start << ", " << range.end
               << "): a quack.cluster.arrive (not relaxed) and a "
                  "quack.cluster.wait must come between the two exchanges";
    if (failed(checkParity(exchange, bar, loop)))
      return failure();
    state.slots.push_back({start, end, Ordering::None});
    bar.armedBytes = 0;
    if (bar.phase >= 0)
      ++bar.phase;
    return success();
  }

  LogicalResult checkParity(ClusterExchangeOp exchange,
                            const BarrierState &bar, LoopContext *loop) {
    Value parity = exchange.getParity();
    int64_t offset = exchange.getBarrier();
    if (!loop) {
      std::optional<int64_t> value = constantInt(parity);
      if (bar.phase < 0)
        return exchange.emitOpError("the phase of the mbarrier at offset ")
               << offset << " is not known here";
      if (!value || *value != bar.phase % 2)
        return exchange.emitOpError("waits for parity ")
               << (value ? std::to_string(*value) : "(not a constant)")
               << " of the mbarrier at offset " << offset
               << ", whose phase " << bar.phase << " has parity "
               << bar.phase % 2;
      return success();
    }
    // In a loop: the parity is a loop-carried value that starts at the
    // phase's parity on entry and flips every iteration; each iteration
    // completes exactly one phase.
    if (loop->exchangesPerIteration.lookup(offset) != 1)
      return exchange.emitOpError("exchanges through the mbarrier at offset ")
             << offset << " " << loop->exchangesPerIteration.lookup(offset)
             << " times per loop iteration; the loop-carried parity needs "
                "exactly one";
    scf::ForOp forOp = loop->loop;
    auto arg = dyn_cast<BlockArgument>(parity);
    if (!arg || arg.getOwner() != forOp.getBody() || arg.getArgNumber() == 0)
      return exchange.emitOpError(
          "waits in a loop for a parity that is not carried by the loop: "
          "the mbarrier's phase flips every iteration");
    unsigned index = arg.getArgNumber() - 1;
    int64_t entry = loop->entryPhase.lookup(offset);
    std::optional<int64_t> init = constantInt(forOp.getInitArgs()[index]);
    if (entry < 0 || !init || *init != entry % 2)
      return exchange.emitOpError("the loop-carried parity starts at ")
             << (init ? std::to_string(*init) : "a value that is not a constant")
             << ", but the mbarrier at offset " << offset
             << " enters the loop in phase "
             << (entry < 0 ? std::string("(unknown)") : std::to_string(entry));
    Value next = forOp.getBody()->getTerminator()->getOperand(index);
    auto flip = next.getDefiningOp<arith::XOrIOp>();
    bool flips = flip &&
                 ((flip.getLhs() == arg && constantInt(flip.getRhs()) == 1) ||
                  (flip.getRhs() == arg && constantInt(flip.getLhs()) == 1));
    if (!flips)
      return exchange.emitOpError(
          "the loop-carried parity is not flipped (arith.xori with 1) "
          "every iteration, as the mbarrier's phase is");
    return success();
  }

  LogicalResult interpretLoop(scf::ForOp forOp, State &state) {
    // Each loop body is followed twice: nested loops cost 2^depth.
    unsigned depth = 0;
    for (Operation *p = forOp->getParentOp(); p; p = p->getParentOp())
      depth += isa<scf::ForOp>(p);
    if (depth >= kMaxLoopDepth)
      return forOp.emitOpError("holds cluster exchange ops ")
             << depth + 1 << " loops deep; the protocol check follows at most "
             << kMaxLoopDepth;
    bool hasClusterOps = false;
    forOp.getBody()->walk([&](Operation *op) {
      hasClusterOps |= isClusterOp(op);
    });
    if (!hasClusterOps)
      return success();
    LoopContext context;
    context.loop = forOp;
    for (Operation &op : *forOp.getBody())
      if (auto exchange = dyn_cast<ClusterExchangeOp>(&op))
        ++context.exchangesPerIteration[exchange.getBarrier()];
    for (auto &[offset, bar] : state.barriers)
      context.entryPhase[offset] = bar.phase;
    // The first iteration, then a second from the state the first left,
    // which is the state of every later iteration too (the state has
    // nothing that counts iterations but the phase, which the loop-carried
    // parity covers).
    State first = state;
    if (failed(interpretBlock(*forOp.getBody(), first, &context)))
      return failure();
    State second = first;
    if (failed(interpretBlock(*forOp.getBody(), second, &context)))
      return failure();
    for (auto &[offset, bar] : second.barriers)
      if (context.exchangesPerIteration.count(offset))
        bar.phase = -1;
    state = State::join(state, second);
    return success();
  }
};

struct QuackVerifyClusterProtocolPass
    : public mlir::quack::impl::QuackVerifyClusterProtocolBase<
          QuackVerifyClusterProtocolPass> {
  void runOnOperation() override {
    bool failedAny = false;
    getOperation()->walk([&](Operation *op) {
      if (isClusterOp(op) && !op->getParentOfType<FunctionOpInterface>()) {
        op->emitOpError("is outside any function: the cluster protocol is "
                        "a kernel's");
        failedAny = true;
      }
    });
    getOperation()->walk([&](FunctionOpInterface func) {
      bool hasClusterOps = false;
      func->walk([&](Operation *op) { hasClusterOps |= isClusterOp(op); });
      if (!hasClusterOps)
        return;
      ProtocolChecker checker;
      if (failed(checker.run(func)))
        failedAny = true;
    });
    if (failedAny)
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};

} // namespace
