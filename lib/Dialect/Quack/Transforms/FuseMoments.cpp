//===- FuseMoments.cpp - quack-fuse-moments --------------------------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#include "quack/Dialect/Quack/IR/QuackOps.h"
#include "quack/Dialect/Quack/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"

namespace mlir::quack {
#define GEN_PASS_DEF_QUACKFUSEMOMENTS
#include "quack/Dialect/Quack/Transforms/Passes.h.inc"
} // namespace mlir::quack

using namespace mlir;
using namespace mlir::quack;

namespace {

/// The row `x` whose mean `mean` is: `arith.divf (quack.reduce <add> x), N`
/// with N the row's length as a constant. Sets `sum` to the reduction.
Value meanOf(Value mean, ReduceOp &sum) {
  auto div = mean.getDefiningOp<arith::DivFOp>();
  if (!div)
    return {};
  auto reduce = div.getLhs().getDefiningOp<ReduceOp>();
  if (!reduce || reduce.getKind() != CombiningKind::Add)
    return {};
  FloatAttr divisor;
  if (!matchPattern(div.getRhs(), m_Constant(&divisor)))
    return {};
  auto type = cast<VectorType>(reduce.getInput().getType());
  if (divisor.getValueAsDouble() != static_cast<double>(type.getDimSize(0)))
    return {};
  sum = reduce;
  return reduce.getInput();
}

/// The row that `diff` centres: `x - broadcast(mean(x))` or
/// `broadcast(mean(x)) - x`. Sets `sum` to the reduction of x.
Value centredRow(Value diff, ReduceOp &sum) {
  auto sub = diff.getDefiningOp<arith::SubFOp>();
  if (!sub)
    return {};
  for (auto [row, other] : {std::pair(sub.getLhs(), sub.getRhs()),
                            std::pair(sub.getRhs(), sub.getLhs())}) {
    auto splat = other.getDefiningOp<vector::BroadcastOp>();
    if (!splat)
      continue;
    if (meanOf(splat.getSource(), sum) == row)
      return row;
  }
  return {};
}

struct QuackFuseMomentsPass
    : public mlir::quack::impl::QuackFuseMomentsBase<QuackFuseMomentsPass> {
  void runOnOperation() override {
    SmallVector<ReduceOp> squares;
    getOperation()->walk([&](ReduceOp op) {
      if (op.getKind() == CombiningKind::Add)
        squares.push_back(op);
    });
    for (ReduceOp squaresSum : squares) {
      auto mul = squaresSum.getInput().getDefiningOp<arith::MulFOp>();
      if (!mul || mul.getLhs() != mul.getRhs())
        continue;
      ReduceOp sum;
      Value row = centredRow(mul.getLhs(), sum);
      if (!row || sum->getBlock() != squaresSum->getBlock())
        continue;
      OpBuilder b(sum);
      auto moments = MomentsOp::create(b, sum.getLoc(), b.getF32Type(),
                                       b.getF32Type(), row);
      sum.getResult().replaceAllUsesWith(moments.getSum());
      squaresSum.getResult().replaceAllUsesWith(moments.getM2());
      squaresSum.erase();
      if (mul->use_empty())
        mul.erase();
      sum.erase();
    }
  }
};

} // namespace
