//===- MathToNVVM.cpp - f32 math to NVPTX instructions ----------------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#include "quack/Conversion/Passes.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::quack {
#define GEN_PASS_DEF_CONVERTQUACKMATHTONVVM
#include "quack/Conversion/Passes.h.inc"
} // namespace mlir::quack

using namespace mlir;

namespace {

Value intrinsic(OpBuilder &b, Location loc, StringRef name, Value x) {
  return LLVM::CallIntrinsicOp::create(b, loc, x.getType(),
                                       b.getStringAttr(name), ValueRange{x})
      .getResult(0);
}

Value constant(OpBuilder &b, Location loc, double v) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
}

/// The scalar f32 expansion of one math op.
Value expandScalar(OpBuilder &b, Location loc, Operation *op, Value x,
                   bool ftz) {
  constexpr double kLog2E = 1.4426950408889634;
  constexpr double kLn2 = 0.6931471805599453;
  const char *kEx2 =
      ftz ? "llvm.nvvm.ex2.approx.ftz.f32" : "llvm.nvvm.ex2.approx.f32";
  if (isa<math::SqrtOp>(op))
    return intrinsic(b, loc, "llvm.nvvm.sqrt.rn.f", x);
  // rsqrt.approx (not ftz): relative error under 2^-22, no slow path. The
  // IEEE 1 / sqrt.rn(x) costs two subroutine calls for out-of-range
  // operands, whose saved registers ptxas reports as spills.
  if (isa<math::RsqrtOp>(op))
    return intrinsic(b, loc, "llvm.nvvm.rsqrt.approx.f", x);
  // ex2.approx.ftz: one MUFU.EX2. Without ftz, ptxas wraps each in a test
  // and two conditional multiplies that keep results below 2^-126
  // subnormal (softmax over 262144 bf16: 68 exponentials, 204 of the
  // kernel's 792 instructions, in a kernel that issues an instruction on
  // three of every four cycles). With it those results are 0: an absolute
  // error under 1.2e-38, in outputs of f32 or narrower types. quackc
  // compiles without ftz where that fits more CTAs per SM (lib/Compiler).
  if (isa<math::Exp2Op>(op))
    return intrinsic(b, loc, kEx2, x);
  if (isa<math::ExpOp>(op))
    return intrinsic(
        b, loc, kEx2,
        arith::MulFOp::create(b, loc, x, constant(b, loc, kLog2E)));
  if (isa<math::LogOp>(op))
    return arith::MulFOp::create(b, loc,
                                 intrinsic(b, loc, "llvm.nvvm.lg2.approx.f", x),
                                 constant(b, loc, kLn2));
  if (isa<math::TanhOp>(op)) {
    Value twoX = arith::MulFOp::create(b, loc, x, constant(b, loc, 2.0 * kLog2E));
    Value e = intrinsic(b, loc, kEx2, twoX);
    Value den = arith::AddFOp::create(b, loc, e, constant(b, loc, 1.0));
    Value frac = arith::DivFOp::create(b, loc, constant(b, loc, 2.0), den);
    return arith::SubFOp::create(b, loc, constant(b, loc, 1.0), frac);
  }
  return {};
}

struct ExpandF32Math : public RewritePattern {
  ExpandF32Math(MLIRContext *context, bool ftz)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, context),
        ftz(ftz) {}
  bool ftz;

  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!isa<math::SqrtOp, math::RsqrtOp, math::Exp2Op, math::ExpOp,
             math::LogOp, math::TanhOp>(op))
      return failure();
    Value x = op->getOperand(0);
    Type type = x.getType();
    if (!getElementTypeOrSelf(type).isF32())
      return rewriter.notifyMatchFailure(op, "only f32 is expanded");
    Location loc = op->getLoc();
    auto vectorType = dyn_cast<VectorType>(type);
    if (!vectorType) {
      rewriter.replaceOp(op, expandScalar(rewriter, loc, op, x, ftz));
      return success();
    }
    if (vectorType.getRank() != 1 || vectorType.isScalable())
      return rewriter.notifyMatchFailure(op, "only 1-D fixed vectors");
    // NVPTX has no vector forms: apply lane by lane.
    SmallVector<Value> lanes;
    for (int64_t i = 0; i < vectorType.getDimSize(0); ++i) {
      Value lane = vector::ExtractOp::create(rewriter, loc, x, i);
      lanes.push_back(expandScalar(rewriter, loc, op, lane, ftz));
    }
    rewriter.replaceOpWithNewOp<vector::FromElementsOp>(op, vectorType, lanes);
    return success();
  }
};

struct ConvertQuackMathToNVVMPass
    : public mlir::quack::impl::ConvertQuackMathToNVVMBase<
          ConvertQuackMathToNVVMPass> {
  using ConvertQuackMathToNVVMBase::ConvertQuackMathToNVVMBase;
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ExpandF32Math>(&getContext(), ftz);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
