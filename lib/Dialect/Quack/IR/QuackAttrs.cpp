//===- QuackAttrs.cpp - quack attributes ----------------------------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//
//
// #quack.layout and #quack.tv_layout: parsing CuTe notation with the MLIR
// assembly parser (errors point at the offending token), printing, and
// verification through the layout library.
//
//===----------------------------------------------------------------------===//

#include "quack/Dialect/Quack/IR/QuackAttrs.h"
#include "quack/Dialect/Quack/IR/QuackOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::quack;
using ::quack::layout::IntTuple;

namespace quack {
namespace layout {
llvm::hash_code hash_value(const IntTuple &tuple) {
  if (tuple.isLeaf())
    return llvm::hash_combine(true, tuple.value());
  return llvm::hash_combine(false,
                            llvm::hash_combine_range(tuple.getElements()));
}
} // namespace layout
} // namespace quack

#define GET_ATTRDEF_CLASSES
#include "quack/Dialect/Quack/IR/QuackAttrs.cpp.inc"

//===----------------------------------------------------------------------===//
// Parsing CuTe notation
//===----------------------------------------------------------------------===//

/// Deepest tuple nesting accepted in an attribute (as in the layout library).
static constexpr int kMaxTupleDepth = 64;

/// Parses an integer or a parenthesized, comma-separated list of tuples.
/// `what` names the part of the layout ("shape" or "stride") in errors.
static ParseResult parseIntTuple(AsmParser &parser, IntTuple &result,
                                 StringRef what, int depth = 0) {
  SMLoc loc = parser.getCurrentLocation();
  if (depth > kMaxTupleDepth)
    return parser.emitError(loc)
           << "layout " << what << " is nested deeper than " << kMaxTupleDepth;
  if (succeeded(parser.parseOptionalLParen())) {
    if (succeeded(parser.parseOptionalRParen()))
      return parser.emitError(loc)
             << "empty tuple '()' is not allowed in a layout " << what;
    std::vector<IntTuple> elements;
    do {
      IntTuple element;
      if (failed(parseIntTuple(parser, element, what, depth + 1)))
        return failure();
      elements.push_back(std::move(element));
    } while (succeeded(parser.parseOptionalComma()));
    if (failed(parser.parseOptionalRParen()))
      return parser.emitError(parser.getCurrentLocation())
             << "expected ',' or ')' in the layout " << what;
    result = IntTuple::tuple(std::move(elements));
    return success();
  }
  int64_t value = 0;
  OptionalParseResult parsed = parser.parseOptionalInteger(value);
  if (!parsed.has_value())
    return parser.emitError(loc)
           << "expected an integer or '(' in the layout " << what;
  if (failed(*parsed))
    return failure();
  result = IntTuple(value);
  return success();
}

/// Parses a layout body, `shape[:stride]` or a string holding it, and builds
/// the verified attribute; returns null after reporting an error.
static LayoutAttr parseLayoutBody(AsmParser &parser) {
  SMLoc loc = parser.getCurrentLocation();
  auto emitError = [&] { return parser.emitError(loc); };
  MLIRContext *ctx = parser.getContext();

  std::string text;
  if (succeeded(parser.parseOptionalString(&text))) {
    // The library's messages name the column within the string.
    ::quack::layout::Result<::quack::layout::Layout> layout =
        ::quack::layout::parseLayout(text);
    if (!layout) {
      emitError() << layout.error() << " in \"" << text << "\"";
      return {};
    }
    return LayoutAttr::getChecked(emitError, ctx, layout->getShape(),
                                  layout->getStride());
  }

  IntTuple shape, stride;
  if (failed(parseIntTuple(parser, shape, "shape")))
    return {};
  if (succeeded(parser.parseOptionalColon())) {
    if (failed(parseIntTuple(parser, stride, "stride")))
      return {};
  } else {
    // A bare shape is compact and column-major, as in the library's parser.
    ::quack::layout::Result<::quack::layout::Layout> layout =
        ::quack::layout::parseLayout(shape.str());
    if (!layout) {
      emitError() << layout.error();
      return {};
    }
    stride = layout->getStride();
  }
  return LayoutAttr::getChecked(emitError, ctx, shape, stride);
}

//===----------------------------------------------------------------------===//
// LayoutAttr
//===----------------------------------------------------------------------===//

::quack::layout::Layout LayoutAttr::getLayout() const {
  return ::quack::layout::Layout(getShape(), getStride());
}

LogicalResult LayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 IntTuple shape, IntTuple stride) {
  ::quack::layout::Result<::quack::layout::Layout> layout =
      ::quack::layout::Layout::get(shape, stride);
  if (!layout)
    return emitError() << "invalid layout: " << layout.error();
  return success();
}

Attribute LayoutAttr::parse(AsmParser &parser, Type) {
  if (failed(parser.parseLess()))
    return {};
  LayoutAttr attr = parseLayoutBody(parser);
  if (!attr || failed(parser.parseGreater()))
    return {};
  return attr;
}

void LayoutAttr::print(AsmPrinter &printer) const {
  printer << '<' << getShape().str() << ':' << getStride().str() << '>';
}

//===----------------------------------------------------------------------===//
// TVLayoutAttr
//===----------------------------------------------------------------------===//

/// True when every stride leaf of `layout` is non-negative.
static bool hasNonNegativeStrides(const ::quack::layout::Layout &layout) {
  for (int64_t stride : layout.getStride().leaves())
    if (stride < 0)
      return false;
  return true;
}

LogicalResult TVLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   LayoutAttr tvAttr, LayoutAttr tileAttr) {
  if (!tvAttr || !tileAttr)
    return emitError() << "tv_layout needs a tv layout and a tile layout";
  ::quack::layout::Layout tv = tvAttr.getLayout();
  ::quack::layout::Layout tile = tileAttr.getLayout();
  if (tv.getShape().isLeaf() || tv.rank() != 2)
    return emitError() << "tv layout " << tv.str()
                       << " must have rank 2 (thread, value)";
  if (!tile.getShape().isLeaf() && tile.rank() > 2)
    return emitError() << "tile layout " << tile.str()
                       << " must have rank 1 or 2";
  if (!hasNonNegativeStrides(tv))
    return emitError() << "tv layout " << tv.str() << " has a negative stride";
  if (!hasNonNegativeStrides(tile))
    return emitError() << "tile layout " << tile.str()
                       << " has a negative stride";
  // With non-negative strides the largest offset is cosize - 1.
  if (tv.cosize() > tile.cosize())
    return emitError() << "tv layout " << tv.str() << " reaches offset "
                       << tv.cosize() - 1 << ", outside the codomain [0, "
                       << tile.cosize() << ") of tile " << tile.str();
  return success();
}

Attribute TVLayoutAttr::parse(AsmParser &parser, Type) {
  SMLoc loc = parser.getCurrentLocation();
  if (failed(parser.parseLess()))
    return {};
  LayoutAttr tv = parseLayoutBody(parser);
  if (!tv)
    return {};
  if (failed(parser.parseComma()) || failed(parser.parseKeyword("tile")) ||
      failed(parser.parseEqual()))
    return {};
  LayoutAttr tile = parseLayoutBody(parser);
  if (!tile || failed(parser.parseGreater()))
    return {};
  return TVLayoutAttr::getChecked([&] { return parser.emitError(loc); },
                                  parser.getContext(), tv, tile);
}

void TVLayoutAttr::print(AsmPrinter &printer) const {
  printer << '<' << getTv().getShape().str() << ':' << getTv().getStride().str()
          << ", tile = " << getTile().getShape().str() << ':'
          << getTile().getStride().str() << '>';
}

//===----------------------------------------------------------------------===//
// Registration
//===----------------------------------------------------------------------===//

void QuackDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "quack/Dialect/Quack/IR/QuackAttrs.cpp.inc"
      >();
}
