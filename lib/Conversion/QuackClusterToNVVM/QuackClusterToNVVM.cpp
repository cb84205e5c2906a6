//===- QuackClusterToNVVM.cpp - the cluster exchange to NVVM --------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//
//
// Lowers quack.cluster.* (the ops of one exchange between the CTAs of a
// cluster) to NVIDIA instructions: mbarriers in shared memory, mapa
// addresses of peers' shared memory, st.async stores that complete on the
// receiver's mbarrier, and the cluster barrier.
//
//===----------------------------------------------------------------------===//

#include "quack/Conversion/Passes.h"
#include "quack/Dialect/Quack/IR/QuackOps.h"

#include "../TargetInfo.h"

namespace mlir::quack {
#define GEN_PASS_DEF_CONVERTQUACKCLUSTERTONVVM
#include "quack/Conversion/Passes.h.inc"
} // namespace mlir::quack

using namespace mlir;
using namespace mlir::quack;

namespace {

Value constI32(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIntOp::create(b, loc, v, 32);
}

/// A pointer to element `index` of type `type` of the shared-memory global
/// `smem`.
Value sharedAddress(OpBuilder &b, Location loc, FlatSymbolRefAttr smem,
                    Type type, Value index) {
  return NVVMTargetInfo(b, loc).sharedAddress(smem, type, index);
}

Value barrierAddress(OpBuilder &b, Location loc, FlatSymbolRefAttr smem,
                     int64_t offset) {
  return sharedAddress(b, loc, smem, b.getI8Type(),
                       constI32(b, loc, offset));
}

/// Emits `body()` in thread 0 of the CTA only.
void inThreadZero(OpBuilder &b, Location loc, function_ref<void()> body) {
  OpBuilder::InsertionGuard guard(b);
  NVVMTargetInfo(b, loc).beginThreadZero();
  body();
}

/// Thread 0 arms each barrier's next phase for its expected bytes.
template <typename Op>
void armBarriers(OpBuilder &b, Op op) {
  Location loc = op.getLoc();
  inThreadZero(b, loc, [&] {
    NVVMTargetInfo target(b, loc);
    for (auto [offset, bytes] :
         llvm::zip(op.getBarriers(), op.getExpectTx()))
      target.mbarrierArriveExpectTx(
          barrierAddress(b, loc, op.getSmemAttr(), offset), bytes);
  });
}

void lowerInit(OpBuilder &b, ClusterBarrierInitOp op) {
  Location loc = op.getLoc();
  inThreadZero(b, loc, [&] {
    NVVMTargetInfo target(b, loc);
    for (int64_t offset : op.getBarriers())
      target.mbarrierInit(barrierAddress(b, loc, op.getSmemAttr(), offset),
                          /*count=*/1);
    target.fenceMbarrierInit();
  });
  // Orders the inits before thread 0's arrive below for tools that check
  // shared-memory hazards (ptxas makes a single init warp-uniform, and
  // compute-sanitizer's racecheck then flags the arrive of thread 0).
  NVVM::SyncWarpOp::create(b, loc, constI32(b, loc, -1));
  armBarriers(b, op);
}

SmallVector<Value> lowerExchange(OpBuilder &b, ClusterExchangeOp op) {
  Location loc = op.getLoc();
  NVVMTargetInfo target(b, loc);
  FlatSymbolRefAttr smem = op.getSmemAttr();
  int64_t clusterSize = op.getClusterSize();
  int64_t width = op.getValues().size();
  int64_t slotBase = op.getSlots() / 4;
  Value tid = NVVM::ThreadIdXOp::create(b, loc, b.getI32Type());
  Value rank = target.clusterRank();
  Value bar = barrierAddress(b, loc, smem, op.getBarrier());
  // This CTA's slots [rank][value] (4 bytes each); their addresses in a
  // peer's shared memory come from mapa.
  Value mine = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, rank, constI32(b, loc, width)),
      constI32(b, loc, slotBase));

  // Thread t < clusterSize sends this CTA's values to peer t (the verifier
  // guarantees a CTA of at least clusterSize threads), so every peer gets
  // exactly `width` 4-byte stores.
  {
    Value sends = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                        tid, constI32(b, loc, clusterSize));
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, sends,
                                  /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    NVVMTargetInfo sender(b, loc);
    Value peerBar = sender.mapToRank(bar, tid);
    for (auto [j, v] : llvm::enumerate(op.getValues())) {
      Value slot = sharedAddress(
          b, loc, smem, v.getType(),
          arith::AddIOp::create(b, loc, mine, constI32(b, loc, j)));
      sender.storeAsyncRemote(sender.mapToRank(slot, tid), v, peerBar);
    }
  }

  // The phase completes when all clusterSize CTAs' values have landed here.
  target.mbarrierWait(bar, op.getParity());
  Value source = arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, op.getSource(), constI32(b, loc, width)),
      constI32(b, loc, slotBase));
  SmallVector<Value> values;
  for (auto [j, v] : llvm::enumerate(op.getValues())) {
    Value slot = sharedAddress(
        b, loc, smem, v.getType(),
        arith::AddIOp::create(b, loc, source, constI32(b, loc, j)));
    values.push_back(LLVM::LoadOp::create(b, loc, v.getType(), slot, 4));
  }
  return values;
}

struct ConvertQuackClusterToNVVMPass
    : public mlir::quack::impl::ConvertQuackClusterToNVVMBase<
          ConvertQuackClusterToNVVMPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa<ClusterBarrierInitOp, ClusterBarrierArmOp, ClusterArriveOp,
              ClusterWaitOp, ClusterExchangeOp>(op))
        ops.push_back(op);
    });
    for (Operation *op : ops) {
      OpBuilder b(op);
      Location loc = op->getLoc();
      if (auto init = dyn_cast<ClusterBarrierInitOp>(op)) {
        lowerInit(b, init);
      } else if (auto arm = dyn_cast<ClusterBarrierArmOp>(op)) {
        armBarriers(b, arm);
      } else if (auto arrive = dyn_cast<ClusterArriveOp>(op)) {
        if (arrive.getRelaxed())
          NVVMTargetInfo(b, loc).clusterArriveRelaxed();
        else
          NVVMTargetInfo(b, loc).clusterArrive();
      } else if (isa<ClusterWaitOp>(op)) {
        NVVMTargetInfo(b, loc).clusterWait();
      } else if (auto exchange = dyn_cast<ClusterExchangeOp>(op)) {
        op->replaceAllUsesWith(lowerExchange(b, exchange));
      }
      op->erase();
    }
  }
};

} // namespace
