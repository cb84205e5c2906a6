//===- LayoutPrinter.cpp - Pictures of layouts ----------------------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#include "quack/Layout/LayoutPrinter.h"
#include "quack/Layout/TVLayout.h"

#include <algorithm>
#include <functional>

using namespace quack::layout;

namespace {
/// A rows x cols picture: a label and a colour key per cell (-1: no colour).
struct Grid {
  std::string title;
  int64_t rows = 0, cols = 0;
  std::vector<std::string> labels;
  std::vector<int64_t> keys;
};
} // namespace

/// Rows and columns of a rank-1 or rank-2 layout, or an error.
static Result<std::pair<int64_t, int64_t>> gridExtents(const Layout &layout,
                                                       const char *what) {
  int64_t rows, cols;
  if (layout.getShape().isLeaf() || layout.rank() == 1) {
    rows = 1;
    cols = layout.size();
  } else if (layout.rank() == 2) {
    rows = layout.mode(0).size();
    cols = layout.mode(1).size();
  } else {
    return Error{std::string(what) +
                 ": can only draw rank-1 or rank-2 "
                 "layouts, got " +
                 layout.str()};
  }
  if (rows > kMaxPictureCells || cols > kMaxPictureCells ||
      rows * cols > kMaxPictureCells)
    return Error{std::string(what) + ": " + layout.str() +
                 " has too many cells to draw"};
  return std::make_pair(rows, cols);
}

/// Evaluates a rank-1 or rank-2 function at grid cell (m, n).
template <typename Fn>
static int64_t evalCell(const Layout &shapeOf, const Fn &fn, int64_t m,
                        int64_t n) {
  if (shapeOf.getShape().isLeaf() || shapeOf.rank() == 1)
    return fn(n);
  return fn(m, n);
}

template <typename L>
static Result<Grid> layoutGrid(const L &layout, const Layout &shapeOf,
                               const char *what) {
  auto extents = gridExtents(shapeOf, what);
  if (!extents)
    return Error{extents.error()};
  Grid g;
  g.title = layout.str();
  std::tie(g.rows, g.cols) = *extents;
  for (int64_t m = 0; m < g.rows; ++m)
    for (int64_t n = 0; n < g.cols; ++n) {
      int64_t index = evalCell(shapeOf, layout, m, n);
      g.labels.push_back(std::to_string(index));
      g.keys.push_back(index);
    }
  return g;
}

static Result<Grid> tvGrid(const Layout &tv, const Layout &tile,
                           const char *what) {
  if (tile.getShape().isLeaf() || tile.rank() != 2)
    return Error{std::string(what) +
                 ": the tile must be a rank-2 layout, got " + tile.str()};
  auto extents = gridExtents(tile, what);
  if (!extents)
    return Error{extents.error()};
  if (tv.size() > kMaxPictureCells * 64)
    return Error{std::string(what) + ": " + tv.str() + " is too large to draw"};
  int64_t codomain = 0;
  for (int64_t i = 0; i < tile.size(); ++i)
    codomain = std::max(codomain, tile(i) + 1);
  auto owners = tvOwners(tv, codomain);
  if (!owners)
    return Error{std::string(what) + ": " + owners.error()};
  Grid g;
  g.title = tv.str() + " over " + tile.str();
  std::tie(g.rows, g.cols) = *extents;
  for (int64_t m = 0; m < g.rows; ++m)
    for (int64_t n = 0; n < g.cols; ++n) {
      int64_t index = tile(m, n);
      const std::optional<ThrVal> &o =
          index >= 0 ? (*owners)[index] : std::optional<ThrVal>();
      if (o) {
        g.labels.push_back("T" + std::to_string(o->thread) + "V" +
                           std::to_string(o->value));
        g.keys.push_back(o->thread);
      } else {
        g.labels.push_back(".");
        g.keys.push_back(-1);
      }
    }
  return g;
}

//===----------------------------------------------------------------------===//
// Text
//===----------------------------------------------------------------------===//

static std::string padLeft(const std::string &s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

static std::string renderText(const Grid &g) {
  size_t cell = 1;
  for (const std::string &l : g.labels)
    cell = std::max(cell, l.size());
  cell = std::max(cell, std::to_string(g.cols - 1).size());
  size_t rowLabel = std::to_string(g.rows - 1).size();
  std::string margin(rowLabel + 1, ' ');

  std::string separator = margin + "+";
  for (int64_t n = 0; n < g.cols; ++n)
    separator += std::string(cell + 2, '-') + "+";
  separator += "\n";

  std::string out = g.title + "\n" + margin;
  for (int64_t n = 0; n < g.cols; ++n)
    out += "  " + padLeft(std::to_string(n), cell) + " ";
  // Strip the trailing space of the header line.
  out.pop_back();
  out += "\n" + separator;
  for (int64_t m = 0; m < g.rows; ++m) {
    out += padLeft(std::to_string(m), rowLabel) + " |";
    for (int64_t n = 0; n < g.cols; ++n)
      out += " " + padLeft(g.labels[m * g.cols + n], cell) + " |";
    out += "\n" + separator;
  }
  return out;
}

Result<std::string> quack::layout::printLayout(const Layout &layout) {
  auto g = layoutGrid(layout, layout, "printLayout");
  if (!g)
    return Error{g.error()};
  return renderText(*g);
}

Result<std::string> quack::layout::printLayout(const SwizzledLayout &layout) {
  auto g = layoutGrid(layout, layout.layout, "printLayout");
  if (!g)
    return Error{g.error()};
  return renderText(*g);
}

Result<std::string> quack::layout::printTVLayout(const Layout &tv,
                                                 const Layout &tile) {
  auto g = tvGrid(tv, tile, "printTVLayout");
  if (!g)
    return Error{g.error()};
  return renderText(*g);
}

//===----------------------------------------------------------------------===//
// SVG
//===----------------------------------------------------------------------===//

/// Sixteen light colours, distinct enough side by side; keys cycle through
/// them.
static const char *const kPalette[] = {
    "#afafff", "#afffaf", "#ffffaf", "#ffafaf", "#d2d2ff", "#d2ffd2",
    "#ffffd2", "#ffd2d2", "#afe0ff", "#e0afff", "#ffe0af", "#afffe0",
    "#c8c8c8", "#e6c8ff", "#c8ffe6", "#ffc8e6"};

static std::string colourOf(int64_t key) {
  if (key < 0)
    return "#ffffff";
  return kPalette[key % (sizeof(kPalette) / sizeof(kPalette[0]))];
}

static std::string xmlEscape(const std::string &s) {
  std::string out;
  for (char c : s) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else
      out += c;
  }
  return out;
}

static std::string renderSvg(const Grid &g) {
  size_t longest = 1;
  for (const std::string &l : g.labels)
    longest = std::max(longest, l.size());
  const int64_t cellW = std::max<int64_t>(32, 8 * longest + 12);
  const int64_t cellH = 24, margin = 32;
  const int64_t width = margin + g.cols * cellW + 8;
  const int64_t height = margin + g.rows * cellH + 8;
  auto num = [](int64_t v) { return std::to_string(v); };

  std::string out;
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(width) +
         "\" height=\"" + num(height) + "\" viewBox=\"0 0 " + num(width) + " " +
         num(height) + "\" font-family=\"monospace\" font-size=\"12\">\n";
  out += "<title>" + xmlEscape(g.title) + "</title>\n";
  for (int64_t n = 0; n < g.cols; ++n)
    out += "<text x=\"" + num(margin + n * cellW + cellW / 2) + "\" y=\"" +
           num(margin / 2) +
           "\" text-anchor=\"middle\" "
           "dominant-baseline=\"central\">" +
           num(n) + "</text>\n";
  for (int64_t m = 0; m < g.rows; ++m)
    out += "<text x=\"" + num(margin / 2) + "\" y=\"" +
           num(margin + m * cellH + cellH / 2) +
           "\" text-anchor=\"middle\" "
           "dominant-baseline=\"central\">" +
           num(m) + "</text>\n";
  for (int64_t m = 0; m < g.rows; ++m)
    for (int64_t n = 0; n < g.cols; ++n) {
      int64_t x = margin + n * cellW, y = margin + m * cellH;
      size_t i = m * g.cols + n;
      out += "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" +
             num(cellW) + "\" height=\"" + num(cellH) + "\" fill=\"" +
             colourOf(g.keys[i]) + "\" stroke=\"black\"/>\n";
      out += "<text x=\"" + num(x + cellW / 2) + "\" y=\"" +
             num(y + cellH / 2) +
             "\" text-anchor=\"middle\" "
             "dominant-baseline=\"central\">" +
             g.labels[i] + "</text>\n";
    }
  out += "</svg>\n";
  return out;
}

Result<std::string> quack::layout::layoutToSvg(const Layout &layout) {
  auto g = layoutGrid(layout, layout, "layoutToSvg");
  if (!g)
    return Error{g.error()};
  return renderSvg(*g);
}

Result<std::string> quack::layout::tvLayoutToSvg(const Layout &tv,
                                                 const Layout &tile) {
  auto g = tvGrid(tv, tile, "tvLayoutToSvg");
  if (!g)
    return Error{g.error()};
  return renderSvg(*g);
}
