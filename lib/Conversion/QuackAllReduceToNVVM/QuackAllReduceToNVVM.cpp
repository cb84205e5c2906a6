//===- QuackAllReduceToNVVM.cpp - quack.allreduce to shuffles -------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//
//
// Lowers quack.allreduce: in a warp, a butterfly of shfl.sync.bfly; in a
// block, a butterfly in each warp, one exchange of the warps' values
// through shared memory behind a CTA barrier, and a second butterfly. Every
// step combines the same two values in every lane, and each combination is
// symmetric in its operands, so every thread of a group ends with the same
// bits.
//
//===----------------------------------------------------------------------===//

#include "quack/Conversion/Passes.h"
#include "quack/Dialect/Quack/IR/QuackOps.h"

#include "../Combine.h"
#include "../TargetInfo.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/MathExtras.h"

#include <tuple>

namespace mlir::quack {
#define GEN_PASS_DEF_CONVERTQUACKALLREDUCETONVVM
#include "quack/Conversion/Passes.h.inc"
} // namespace mlir::quack

using namespace mlir;
using namespace mlir::quack;

namespace {

constexpr int64_t kWarpSize = 32;

class AllReduceLowering {
public:
  AllReduceLowering(OpBuilder &b, AllReduceOp op)
      : b(b), loc(op.getLoc()), op(op), terms(op.getTermKinds()) {}

  SmallVector<Value> lower() {
    SmallVector<Value> values(op.getValues());
    if (op.getScope() == ReduceScope::Warp)
      return butterfly(values, op.getLanes());
    return acrossWarps(butterfly(values, kWarpSize));
  }

private:
  Value constI32(int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 32); }

  /// `(v, i)` beats `(w, j)` in an argmax: the larger value, the smaller
  /// index on a tie; a NaN beats a number and a later NaN.
  Value argmaxBeats(Value v, Value i, Value w, Value j) {
    Value greater =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, v, w);
    Value equal =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, v, w);
    Value earlier =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i, j);
    // Both numbers (OGT and OEQ are false when either is NaN).
    Value asNumbers = arith::OrIOp::create(
        b, loc, greater, arith::AndIOp::create(b, loc, equal, earlier));
    Value vNaN = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, v, v);
    Value wNumber =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ORD, w, w);
    Value asNaN = arith::OrIOp::create(b, loc, wNumber, earlier);
    return arith::SelectOp::create(b, loc, vNaN, asNaN, asNumbers);
  }

  /// Combines the terms' values across groups of `lanes` consecutive lanes
  /// (a power of two up to 32) with shuffles. The plain values and the
  /// online maxima go first, in one round of shuffles per step; then the
  /// online sums, rescaled to the group's maximum; then the argmax pairs
  /// and the moments triples.
  SmallVector<Value> butterfly(SmallVector<Value> acc, int64_t lanes) {
    NVVMTargetInfo target(b, loc);
    auto steps = [&](SmallVector<Value> &values,
                     ArrayRef<CombiningKind> kinds) {
      for (int64_t offset = lanes / 2; offset >= 1; offset /= 2)
        for (auto [v, kind] : llvm::zip(values, kinds))
          v = combineValues(b, loc, kind, v, target.shuffleXor(v, offset));
    };
    // Where each term's values start in acc.
    SmallVector<size_t> start;
    for (size_t i = 0, t = 0; t < terms.size();
         i += AllReduceOp::getTermWidth(terms[t++]))
      start.push_back(i);
    SmallVector<Value> out(acc);

    SmallVector<Value> first;
    SmallVector<CombiningKind> kinds;
    SmallVector<size_t> termOf;
    for (auto [t, term] : llvm::enumerate(terms)) {
      std::optional<CombiningKind> kind = firstKind(term);
      if (!kind)
        continue;
      first.push_back(acc[start[t]]);
      kinds.push_back(*kind);
      termOf.push_back(t);
    }
    SmallVector<Value> ownMax(first);
    steps(first, kinds);
    for (auto [j, t] : llvm::enumerate(termOf))
      out[start[t]] = first[j];

    // Each online sum, from the lane's own maximum m to the group's M:
    // s * e^(m - M), with the shift keeping -inf - -inf out.
    SmallVector<Value> sums;
    SmallVector<size_t> sumAt;
    for (auto [j, t] : llvm::enumerate(termOf)) {
      if (terms[t] != ReductionTerm::LogSumExp)
        continue;
      Value shift = onlineShift(b, loc, first[j]);
      Value scale = math::ExpOp::create(
          b, loc, arith::SubFOp::create(b, loc, ownMax[j], shift));
      sums.push_back(arith::MulFOp::create(b, loc, acc[start[t] + 1], scale));
      sumAt.push_back(start[t] + 1);
    }
    steps(sums, SmallVector<CombiningKind>(sums.size(), CombiningKind::Add));
    for (auto [k, at] : llvm::enumerate(sumAt))
      out[at] = sums[k];

    // Argmax pairs: each step keeps the better of the lane's pair and its
    // partner's. The order is total (indices differ, or the pairs are
    // equal), so every lane ends with the same bits.
    for (auto [t, term] : llvm::enumerate(terms)) {
      if (term != ReductionTerm::ArgMax)
        continue;
      Value v = acc[start[t]], i = acc[start[t] + 1];
      for (int64_t offset = lanes / 2; offset >= 1; offset /= 2) {
        Value w = target.shuffleXor(v, offset);
        Value j = target.shuffleXor(i, offset);
        Value beats = argmaxBeats(w, j, v, i);
        v = arith::SelectOp::create(b, loc, beats, w, v);
        i = arith::SelectOp::create(b, loc, beats, j, i);
      }
      out[start[t]] = v;
      out[start[t] + 1] = i;
    }

    // Moments triples: each step combines the lane's triple with its
    // partner's by Chan's update, symmetric in the two.
    for (auto [t, term] : llvm::enumerate(terms)) {
      if (term != ReductionTerm::Moments)
        continue;
      Value n = acc[start[t]], s = acc[start[t] + 1], m = acc[start[t] + 2];
      FloatAttr fixed;
      if (matchPattern(n, m_Constant(&fixed))) {
        // Every lane counts the same constant c: no shuffle of the counts,
        // and the update is (s1 + s2, m1 + m2 + (s2 - s1)^2 / (2 c)).
        double count = fixed.getValueAsDouble();
        for (int64_t offset = lanes / 2; offset >= 1; offset /= 2) {
          Value s2 = target.shuffleXor(s, offset);
          Value m2 = target.shuffleXor(m, offset);
          std::tie(s, m) = combineEqualMoments(count, s, m, s2, m2);
          count *= 2;
        }
        n = arith::ConstantOp::create(b, loc,
                                      b.getFloatAttr(b.getF32Type(), count));
      } else {
        for (int64_t offset = lanes / 2; offset >= 1; offset /= 2) {
          Value n2 = target.shuffleXor(n, offset);
          Value s2 = target.shuffleXor(s, offset);
          Value m2 = target.shuffleXor(m, offset);
          std::tie(n, s, m) = combineMoments(n, s, m, n2, s2, m2);
        }
      }
      out[start[t]] = n;
      out[start[t] + 1] = s;
      out[start[t] + 2] = m;
    }
    return out;
  }

  /// combineMoments for two triples of the same count `count` > 0: the
  /// mean difference is (s2 - s1) / count and the weight count / 2. The
  /// square of the difference is the same bits in both lanes.
  std::pair<Value, Value> combineEqualMoments(double count, Value s1, Value m1,
                                              Value s2, Value m2) {
    Value s = arith::AddFOp::create(b, loc, s1, s2);
    if (count <= 0)
      return {s, arith::AddFOp::create(b, loc, m1, m2)};
    Value delta = arith::SubFOp::create(b, loc, s2, s1);
    Value square = arith::MulFOp::create(b, loc, delta, delta);
    Value scale = arith::ConstantOp::create(
        b, loc, b.getFloatAttr(b.getF32Type(), 1.0 / (2.0 * count)));
    Value shift = arith::MulFOp::create(b, loc, square, scale);
    Value m = arith::AddFOp::create(
        b, loc, arith::AddFOp::create(b, loc, m1, m2), shift);
    return {s, m};
  }

  /// Chan, Golub and LeVeque's update of two (count, sum, squared
  /// deviations) triples: counts and sums add; the squared deviations add
  /// plus (mean2 - mean1)^2 * n1 * n2 / (n1 + n2), which is 0 where either
  /// count is 0. Each operation is symmetric in the two triples (a sum, a
  /// product, the square of a difference), so both lanes get the same bits.
  std::tuple<Value, Value, Value> combineMoments(Value n1, Value s1, Value m1,
                                                 Value n2, Value s2,
                                                 Value m2) {
    Value zero =
        arith::ConstantOp::create(b, loc, b.getFloatAttr(b.getF32Type(), 0.0));
    Value n = arith::AddFOp::create(b, loc, n1, n2);
    Value s = arith::AddFOp::create(b, loc, s1, s2);
    // The means and the weight only scale the correction, whose rounding
    // is far below m2's own: approximate divisions (a few ulp, and the same
    // bits for the same operands) keep the exchange's steps short.
    auto approx = arith::FastMathFlagsAttr::get(b.getContext(),
                                                arith::FastMathFlags::afn);
    auto divide = [&](Value x, Value y) {
      return arith::DivFOp::create(b, loc, x, y, approx);
    };
    Value mean1 = divide(s1, n1);
    Value mean2 = divide(s2, n2);
    Value delta = arith::SubFOp::create(b, loc, mean2, mean1);
    Value weight = divide(arith::MulFOp::create(b, loc, n1, n2), n);
    Value square = arith::MulFOp::create(b, loc, delta, delta);
    Value shift = arith::MulFOp::create(b, loc, square, weight);
    Value some1 =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, n1, zero);
    Value some2 =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, n2, zero);
    Value both = arith::AndIOp::create(b, loc, some1, some2);
    shift = arith::SelectOp::create(b, loc, both, shift, zero);
    Value m = arith::AddFOp::create(
        b, loc, arith::AddFOp::create(b, loc, m1, m2), shift);
    return {n, s, m};
  }

  /// How the first value of `term` combines in the first round (none for
  /// an argmax pair, which combines on its own).
  static std::optional<CombiningKind> firstKind(ReductionTerm term) {
    switch (term) {
    case ReductionTerm::Add:
      return CombiningKind::Add;
    case ReductionTerm::Max:
    case ReductionTerm::LogSumExp:
      return CombiningKind::Max;
    case ReductionTerm::Min:
      return CombiningKind::Min;
    case ReductionTerm::ArgMax:
    case ReductionTerm::Moments:
      return std::nullopt;
    }
    llvm_unreachable("unknown reduction term");
  }

  /// Across the warps of each group: lane 0 of each warp writes the warp's
  /// values into the group's scratch slots [warp][value] (4 bytes each), a
  /// barrier, then lane j of every warp reads warp j mod W's values and a
  /// butterfly over W lanes combines them: one load and log2(W) shuffles per
  /// value.
  SmallVector<Value> acrossWarps(SmallVector<Value> acc) {
    NVVMTargetInfo target(b, loc);
    int64_t lanes = op.getLanes();
    int64_t warps = lanes / kWarpSize;
    int64_t width = acc.size();
    Type smemPtr =
        LLVM::LLVMPointerType::get(b.getContext(), NVVMTargetInfo::kShared);
    Value smem = LLVM::AddressOfOp::create(b, loc, smemPtr,
                                           op.getSmemAttr().getValue());
    Value tid = NVVM::ThreadIdXOp::create(b, loc, b.getI32Type());
    Value lane = arith::AndIOp::create(b, loc, tid, constI32(kWarpSize - 1));
    Value warp = arith::ShRUIOp::create(
        b, loc, arith::AndIOp::create(b, loc, tid, constI32(lanes - 1)),
        constI32(llvm::Log2_64(kWarpSize)));
    Value group =
        arith::ShRUIOp::create(b, loc, tid, constI32(llvm::Log2_64(lanes)));
    Value groupBase = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, group, constI32(warps * width)),
        constI32(*op.getScratch() / 4));
    auto slot = [&](Value w, int64_t j, Type type) {
      Value index = arith::AddIOp::create(
          b, loc, groupBase,
          arith::AddIOp::create(
              b, loc, arith::MulIOp::create(b, loc, w, constI32(width)),
              constI32(j)));
      return LLVM::GEPOp::create(b, loc, smemPtr, type, smem,
                                 ValueRange{index});
    };
    Value isLeader = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                           lane, constI32(0));
    // A constant is the same in every warp: it stays in registers (and a
    // constant moments count keeps the second butterfly's count known).
    auto isConstant = [](Value v) { return matchPattern(v, m_Constant()); };
    {
      auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, isLeader,
                                    /*withElseRegion=*/false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      for (auto [j, v] : llvm::enumerate(acc))
        if (!isConstant(v))
          LLVM::StoreOp::create(b, loc, v, slot(warp, j, v.getType()), 4);
    }
    target.barrier();
    Value source = arith::AndIOp::create(b, loc, lane, constI32(warps - 1));
    SmallVector<Value> part;
    for (auto [j, v] : llvm::enumerate(acc))
      part.push_back(isConstant(v)
                         ? v
                         : Value(LLVM::LoadOp::create(
                               b, loc, v.getType(), slot(source, j, v.getType()),
                               4)));
    return butterfly(part, warps);
  }

  OpBuilder &b;
  Location loc;
  AllReduceOp op;
  SmallVector<ReductionTerm> terms;
};

struct ConvertQuackAllReduceToNVVMPass
    : public mlir::quack::impl::ConvertQuackAllReduceToNVVMBase<
          ConvertQuackAllReduceToNVVMPass> {
  void runOnOperation() override {
    SmallVector<AllReduceOp> ops;
    getOperation()->walk([&](AllReduceOp op) { ops.push_back(op); });
    for (AllReduceOp op : ops) {
      OpBuilder b(op);
      op->replaceAllUsesWith(AllReduceLowering(b, op).lower());
      op->erase();
    }
  }
};

} // namespace
