//===- QuackCopyToNVVM.cpp - quack.copy to loads, stores and TMA ----------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//
//
// Lowers quack.copy by its atom: a vector copy to one llvm.load or
// llvm.store carrying its alignment (NVPTX makes it ld/st.global or
// .shared, .v4.b32 at 16 bytes); bulk and tensor copies to
// cp.async.bulk(.tensor.3d) completing on their mbarrier. A predicate
// becomes an scf.if around the copy; a predicated load yields zeros where
// it is false. The staging ops around asynchronous copies become mbarrier
// inits, arms (in thread 0, after an async-proxy fence) and waits.
//
//===----------------------------------------------------------------------===//

#include "quack/Conversion/Passes.h"
#include "quack/Dialect/Quack/IR/QuackOps.h"

#include "../TargetInfo.h"

namespace mlir::quack {
#define GEN_PASS_DEF_CONVERTQUACKCOPYTONVVM
#include "quack/Conversion/Passes.h.inc"
} // namespace mlir::quack

using namespace mlir;
using namespace mlir::quack;

namespace {

/// Emits the copy itself (no predicate); returns a load's value.
Value emitCopy(OpBuilder &b, CopyOp op) {
  Location loc = op.getLoc();
  ValueRange src = op.getSources();
  NVVMTargetInfo target(b, loc);
  switch (op.getAtom()) {
  case CopyAtom::Vector: {
    unsigned alignment = *op.getAlignment();
    if (Value result = op.getResult())
      return LLVM::LoadOp::create(b, loc, result.getType(), src[0], alignment);
    LLVM::StoreOp::create(b, loc, src[0], src[1], alignment);
    return Value();
  }
  case CopyAtom::Bulk:
    target.bulkCopyToShared(src[0], src[1], src[2], src[3]);
    return Value();
  case CopyAtom::Tensor:
    target.tensorCopyToShared(src[0], src[1], src[2], src[3], src[4], src[5]);
    return Value();
  }
  llvm_unreachable("unknown copy atom");
}

void lowerCopy(CopyOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value predicate = op.getPredicate();
  if (!predicate) {
    Value result = emitCopy(b, op);
    if (result)
      op.getResult().replaceAllUsesWith(result);
    op.erase();
    return;
  }
  Value result = op.getResult();
  // (A TypeRange of one type would point at a temporary.)
  SmallVector<Type, 1> types;
  if (result)
    types.push_back(result.getType());
  auto ifOp = scf::IfOp::create(b, loc, types, predicate,
                                /*withElseRegion=*/static_cast<bool>(result));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value copied = emitCopy(b, op);
    if (result) {
      scf::YieldOp::create(b, loc, copied);
      b.setInsertionPointToStart(ifOp.elseBlock());
      Value zero = arith::ConstantOp::create(
          b, loc, cast<TypedAttr>(b.getZeroAttr(result.getType())));
      scf::YieldOp::create(b, loc, zero);
    }
  }
  if (result)
    result.replaceAllUsesWith(ifOp.getResult(0));
  op.erase();
}

/// The address of the mbarrier at byte `offset` (an i64) of the
/// shared-memory global `smem`.
Value barrierAddress(OpBuilder &b, Location loc, FlatSymbolRefAttr smem,
                     Value offset) {
  return NVVMTargetInfo(b, loc).sharedAddress(smem, b.getI8Type(), offset);
}

/// Thread 0 initialises the mbarriers and fences the inits; a CTA barrier.
void lowerStageInit(StageInitOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  {
    OpBuilder::InsertionGuard guard(b);
    NVVMTargetInfo target(b, loc);
    target.beginThreadZero();
    for (int64_t offset : op.getBarriers())
      target.mbarrierInit(
          barrierAddress(b, loc, op.getSmemAttr(),
                         arith::ConstantIntOp::create(b, loc, offset, 64)),
          /*count=*/1);
    target.fenceMbarrierInit();
  }
  NVVMTargetInfo(b, loc).barrier();
  op.erase();
}

/// Thread 0 fences the async proxy, arms the mbarrier and runs the body
/// with the mbarrier's address.
void lowerStageFill(StageFillOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  NVVMTargetInfo target(b, loc);
  scf::IfOp ifOp = target.beginThreadZero();
  target.fenceProxyAsyncShared();
  Value bar = barrierAddress(b, loc, op.getSmemAttr(), op.getBarrier());
  target.mbarrierArriveExpectTx(bar, op.getBytes());
  Block &body = op.getBody().front();
  body.getArgument(0).replaceAllUsesWith(bar);
  Block *then = ifOp.thenBlock();
  then->getOperations().splice(std::prev(then->end()), body.getOperations());
  op.erase();
}

void lowerStageWait(StageWaitOp op) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  NVVMTargetInfo(b, loc).mbarrierWait(
      barrierAddress(b, loc, op.getSmemAttr(), op.getBarrier()),
      op.getParity());
  op.erase();
}

struct ConvertQuackCopyToNVVMPass
    : public mlir::quack::impl::ConvertQuackCopyToNVVMBase<
          ConvertQuackCopyToNVVMPass> {
  void runOnOperation() override {
    // The staging protocol first: a fill's body moves into thread 0's
    // branch, its copies with it.
    SmallVector<Operation *> stageOps;
    getOperation()->walk([&](Operation *op) {
      if (isa<StageInitOp, StageFillOp, StageWaitOp>(op))
        stageOps.push_back(op);
    });
    for (Operation *op : stageOps) {
      if (auto init = dyn_cast<StageInitOp>(op))
        lowerStageInit(init);
      else if (auto fill = dyn_cast<StageFillOp>(op))
        lowerStageFill(fill);
      else
        lowerStageWait(cast<StageWaitOp>(op));
    }
    SmallVector<CopyOp> ops;
    getOperation()->walk([&](CopyOp op) { ops.push_back(op); });
    for (CopyOp op : ops)
      lowerCopy(op);
  }
};

} // namespace
