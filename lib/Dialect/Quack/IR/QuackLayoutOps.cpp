//===- QuackLayoutOps.cpp - quack layout operations -----------------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//
//
// Folders and verifiers of quack.layout.size, quack.layout.cosize and
// quack.layout.apply, and the dialect's constant materializer that their
// folds need.
//
//===----------------------------------------------------------------------===//

#include "quack/Dialect/Quack/IR/QuackOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::quack;

Operation *QuackDialect::materializeConstant(OpBuilder &builder,
                                             Attribute value, Type type,
                                             Location loc) {
  return arith::ConstantOp::materialize(builder, value, type, loc);
}

//===----------------------------------------------------------------------===//
// LayoutSizeOp, LayoutCosizeOp
//===----------------------------------------------------------------------===//

OpFoldResult LayoutSizeOp::fold(FoldAdaptor) {
  return Builder(getContext()).getIndexAttr(getLayout().getLayout().size());
}

OpFoldResult LayoutCosizeOp::fold(FoldAdaptor) {
  return Builder(getContext()).getIndexAttr(getLayout().getLayout().cosize());
}

//===----------------------------------------------------------------------===//
// LayoutApplyOp
//===----------------------------------------------------------------------===//

LogicalResult LayoutApplyOp::verify() {
  ::quack::layout::Layout layout = getLayout().getLayout();
  size_t numCoords = getCoords().size();
  if (numCoords == 1 || numCoords == layout.rank())
    return success();
  return emitOpError("expects one linear index or ")
         << layout.rank() << " coordinates (one per mode of " << layout.str()
         << "), got " << numCoords;
}

OpFoldResult LayoutApplyOp::fold(FoldAdaptor adaptor) {
  ::quack::layout::Layout layout = getLayout().getLayout();
  Builder builder(getContext());

  // Every offset of an all-zero-stride layout is 0.
  std::vector<int64_t> strides = layout.getStride().leaves();
  if (llvm::all_of(strides, [](int64_t s) { return s == 0; }))
    return builder.getIndexAttr(0);
  // n:1 is the identity, also past its size.
  if (layout.getShape().isLeaf() && strides.front() == 1)
    return getCoords().front();

  std::vector<::quack::layout::IntTuple> coords;
  for (Attribute attr : adaptor.getCoords()) {
    auto value = dyn_cast_if_present<IntegerAttr>(attr);
    if (!value)
      return {};
    coords.push_back(value.getValue().getSExtValue());
  }
  // Only coordinates within the shape fold, so that the offset cannot
  // overflow; evaluate() checks the range of each one.
  ::quack::layout::IntTuple coord =
      coords.size() == 1 ? coords.front()
                         : ::quack::layout::IntTuple::tuple(std::move(coords));
  ::quack::layout::Result<int64_t> offset = layout.evaluate(coord);
  if (!offset)
    return {};
  return builder.getIndexAttr(*offset);
}
