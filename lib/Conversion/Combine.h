//===- Combine.h - how reductions combine two values ------------*- C++ -*-===//
//
// Part of the quack project.
//
// The arithmetic that quack's lowerings share when they reduce: combining
// two values of a reduction (NaN-propagating for floats), the shift of an
// online logsumexp pair, and the order of argmax pairs. A thread's own
// values (convert-quack-to-gpu) and threads' values across a warp or a
// block (convert-quack-allreduce-to-nvvm) combine the same way.
//
//===----------------------------------------------------------------------===//

#ifndef QUACK_LIB_CONVERSION_COMBINE_H
#define QUACK_LIB_CONVERSION_COMBINE_H

#include "quack/Dialect/Quack/IR/QuackOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

#include <limits>

namespace mlir::quack {

/// `a kind c`: addition, or the NaN-propagating maximum or minimum of
/// floats, the signed one of integers.
inline Value combineValues(OpBuilder &b, Location loc, CombiningKind kind,
                           Value a, Value c) {
  bool isFloat = isa<FloatType>(a.getType());
  switch (kind) {
  case CombiningKind::Add:
    return isFloat ? Value(arith::AddFOp::create(b, loc, a, c))
                   : Value(arith::AddIOp::create(b, loc, a, c));
  case CombiningKind::Max:
    return isFloat ? Value(arith::MaximumFOp::create(b, loc, a, c))
                   : Value(arith::MaxSIOp::create(b, loc, a, c));
  case CombiningKind::Min:
    return isFloat ? Value(arith::MinimumFOp::create(b, loc, a, c))
                   : Value(arith::MinSIOp::create(b, loc, a, c));
  }
  llvm_unreachable("unknown combining kind");
}

/// The shift of an online logsumexp pair whose maximum is `max` (f32):
/// `max`, or 0 where it is -inf (a thread or row whose elements are all
/// -inf), so that no -inf - -inf makes a NaN.
inline Value onlineShift(OpBuilder &b, Location loc, Value max) {
  Type f32 = b.getF32Type();
  Value negInf = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(f32, -std::numeric_limits<double>::infinity()));
  Value zero = arith::ConstantOp::create(b, loc, b.getFloatAttr(f32, 0.0));
  Value empty = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, max,
                                      negInf);
  return arith::SelectOp::create(b, loc, empty, zero, max);
}

} // namespace mlir::quack

#endif // QUACK_LIB_CONVERSION_COMBINE_H
