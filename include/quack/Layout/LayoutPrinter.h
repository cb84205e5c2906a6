//===- LayoutPrinter.h - Pictures of layouts --------------------*- C++ -*-===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//
//
// Text grids and SVG pictures of 2-D layouts and of TV layouts over 2-D
// tiles. People read layouts faster as pictures. Output is deterministic.
//
// printLayout(parseLayout("(2,3):(3,1)")) gives
//
//   (2,3):(3,1)
//       0   1   2
//     +---+---+---+
//   0 | 0 | 1 | 2 |
//     +---+---+---+
//   1 | 3 | 4 | 5 |
//     +---+---+---+
//
//===----------------------------------------------------------------------===//

#ifndef QUACK_LAYOUT_LAYOUTPRINTER_H
#define QUACK_LAYOUT_LAYOUTPRINTER_H

#include "quack/Layout/Layout.h"
#include "quack/Layout/Result.h"
#include "quack/Layout/Swizzle.h"

#include <string>

namespace quack {
namespace layout {

/// Largest number of cells a picture may have.
constexpr int64_t kMaxPictureCells = 1 << 20;

/// A text grid of a rank-1 or rank-2 layout: row m, column n shows L(m, n)
/// (a rank-1 layout is drawn as a single row). Fails for other ranks or
/// pictures larger than kMaxPictureCells.
Result<std::string> printLayout(const Layout &layout);
/// A text grid of a swizzled layout (rank 1 or 2).
Result<std::string> printLayout(const SwizzledLayout &layout);
/// A text grid of the rank-2 `tile` ((m, n) -> element index), each cell
/// showing the thread and value of the rank-2 TV layout `tv` that hold the
/// element as `T<thread>V<value>` ('.' when no thread holds it).
Result<std::string> printTVLayout(const Layout &tv, const Layout &tile);

/// An SVG picture of a rank-1 or rank-2 layout: one labelled rectangle per
/// coordinate, coloured by the index it maps to.
Result<std::string> layoutToSvg(const Layout &layout);
/// An SVG picture of a TV layout over a rank-2 tile: one rectangle per
/// element, coloured by thread and labelled `T<thread>V<value>`.
Result<std::string> tvLayoutToSvg(const Layout &tv, const Layout &tile);

} // namespace layout
} // namespace quack

#endif // QUACK_LAYOUT_LAYOUTPRINTER_H
