//===- LayoutAlgebra.cpp - CuTe-style layout algebra ----------------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//
//
// Composition, complement, inverses, divides and products, following the
// definitions of CuTe's layout algebra. Every operation reduces to
// composition, complement and concatenation; the conditions under which
// CuTe's construction is exact are checked and reported as errors.
//
//===----------------------------------------------------------------------===//

#include "Detail.h"
#include "quack/Layout/Layout.h"

#include <algorithm>
#include <numeric>
#include <utility>

using namespace quack::layout;
using detail::CheckedMath;

static Error overflowError(const char *op) {
  return Error{std::string(op) + ": intermediate value overflows 64 bits"};
}

/// Builds a depth <= 1 layout from leaves, then coalesces it.
static Layout coalescedFromLeaves(const std::vector<int64_t> &shapes,
                                  const std::vector<int64_t> &strides) {
  if (shapes.size() == 1)
    return coalesce(Layout(shapes[0], strides[0]));
  std::vector<IntTuple> s(shapes.begin(), shapes.end());
  std::vector<IntTuple> d(strides.begin(), strides.end());
  return coalesce(
      Layout(IntTuple::tuple(std::move(s)), IntTuple::tuple(std::move(d))));
}

static bool hasNegativeStride(const Layout &layout) {
  for (int64_t d : layout.getStride().leaves())
    if (d < 0)
      return true;
  return false;
}

//===----------------------------------------------------------------------===//
// Composition
//===----------------------------------------------------------------------===//

/// A o (s:d) for integral s:d, with A given as the leaves of coalesce(A).
static Result<Layout> composeIntegral(const Layout &a,
                                      const std::vector<int64_t> &aShape,
                                      const std::vector<int64_t> &aStride,
                                      int64_t s, int64_t d) {
  if (s == 1)
    return Layout(1, 0);
  if (d == 0)
    return Layout(s, 0);
  if (d < 0)
    return Error{"composition: negative stride " + std::to_string(d) +
                 " in the right operand is not supported"};
  CheckedMath math;
  size_t r = aShape.size();
  if (r == 1) {
    Layout result(s, math.mul(aStride[0], d));
    if (math.overflow)
      return overflowError("composition");
    return result;
  }

  std::string context =
      " for " + a.str() + " o " + std::to_string(s) + ":" + std::to_string(d);
  // Divide the stride d out of the leading extents of A: the result walks
  // every d-th element of A.
  std::vector<int64_t> divShape(r - 1), divStride(r - 1);
  int64_t restStride = d;
  for (size_t i = 0; i + 1 < r; ++i) {
    int64_t extent = aShape[i];
    if (extent % restStride == 0) {
      divShape[i] = extent / restStride;
      divStride[i] = math.mul(aStride[i], restStride);
      restStride = 1;
    } else if (restStride % extent == 0) {
      divShape[i] = 1;
      divStride[i] = math.mul(aStride[i], extent);
      restStride /= extent;
    } else {
      return Error{"composition is not admissible (stride divisibility "
                   "condition): remaining stride " +
                   std::to_string(restStride) + " and extent " +
                   std::to_string(extent) +
                   " of the left operand do not divide one another" + context};
    }
  }
  // Keep the first s elements of the strided layout ("mod out" s).
  std::vector<int64_t> shapes, strides;
  int64_t restShape = s;
  for (size_t i = 0; i + 1 < r; ++i) {
    int64_t extent = divShape[i];
    shapes.push_back(std::min(extent, restShape));
    strides.push_back(divStride[i]);
    if (restShape % extent == 0) {
      restShape /= extent;
    } else if (extent % restShape == 0) {
      restShape = 1;
    } else {
      return Error{
          "composition is not admissible (shape divisibility "
          "condition): remaining size " +
          std::to_string(restShape) + " and extent " + std::to_string(extent) +
          " of the strided left operand do not divide one another" + context};
    }
  }
  // The last mode of A takes whatever is left (it extends A linearly).
  shapes.push_back(restShape);
  strides.push_back(math.mul(aStride[r - 1], restStride));
  if (math.overflow)
    return overflowError("composition");
  return coalescedFromLeaves(shapes, strides);
}

static Result<Layout> composeImpl(const Layout &a,
                                  const std::vector<int64_t> &aShape,
                                  const std::vector<int64_t> &aStride,
                                  const Layout &b) {
  if (b.getShape().isLeaf())
    return composeIntegral(a, aShape, aStride, b.getShape().value(),
                           b.getStride().value());
  // Left-distributivity over concatenation: compose each mode of B.
  std::vector<Layout> modes;
  for (const Layout &m : b.modes()) {
    Result<Layout> sub = composeImpl(a, aShape, aStride, m);
    if (!sub)
      return sub;
    modes.push_back(std::move(*sub));
  }
  return makeLayout(modes);
}

Result<Layout> quack::layout::composition(const Layout &a, const Layout &b) {
  Layout flat = coalesce(a);
  return composeImpl(a, flat.getShape().leaves(), flat.getStride().leaves(), b);
}

Result<Layout> quack::layout::composition(const Layout &a, const Tiler &tiler) {
  if (tiler.size() > a.rank())
    return Error{"composition: tiler has " + std::to_string(tiler.size()) +
                 " modes but layout " + a.str() + " has rank " +
                 std::to_string(a.rank())};
  std::vector<Layout> modes;
  for (size_t i = 0; i < a.rank(); ++i) {
    if (i >= tiler.size()) {
      modes.push_back(a.mode(i));
      continue;
    }
    Result<Layout> m = composition(a.mode(i), tiler[i]);
    if (!m)
      return m;
    modes.push_back(std::move(*m));
  }
  return makeLayout(modes);
}

Result<Layout> quack::layout::withShape(const Layout &layout,
                                        const IntTuple &shape) {
  Result<Layout> b = Layout::get(shape, compactColMajor(shape));
  if (!b)
    return Error{"withShape: " + b.error()};
  return composition(layout, *b);
}

//===----------------------------------------------------------------------===//
// Complement and inverses
//===----------------------------------------------------------------------===//

Result<Layout> quack::layout::complement(const Layout &layout,
                                         int64_t cosizeHi) {
  if (cosizeHi < 1)
    return Error{"complement: the cosize bound must be positive, got " +
                 std::to_string(cosizeHi)};
  if (hasNegativeStride(layout))
    return Error{"complement: negative strides are not supported in " +
                 layout.str()};
  Layout f = filter(layout);
  std::vector<int64_t> fs = f.getShape().leaves(), fd = f.getStride().leaves();
  std::vector<std::pair<int64_t, int64_t>> modes; // (stride, shape)
  for (size_t i = 0; i < fs.size(); ++i)
    if (fs[i] > 1 && fd[i] != 0)
      modes.emplace_back(fd[i], fs[i]);
  std::sort(modes.begin(), modes.end());

  CheckedMath math;
  std::vector<int64_t> shapes, strides;
  int64_t covered = 1; // Span of the modes placed so far.
  for (auto [d, s] : modes) {
    if (d % covered != 0)
      return Error{"complement: " + layout.str() + " has no complement: mode " +
                   std::to_string(s) + ":" + std::to_string(d) +
                   " has a stride that is not a multiple of the span " +
                   std::to_string(covered) +
                   " of the smaller modes (the modes overlap or leave an "
                   "irregular gap)"};
    shapes.push_back(d / covered);
    strides.push_back(covered);
    covered = math.mul(s, d);
  }
  shapes.push_back((cosizeHi + covered - 1) / covered);
  strides.push_back(covered);
  if (math.overflow)
    return overflowError("complement");
  return coalescedFromLeaves(shapes, strides);
}

Result<Layout> quack::layout::complement(const Layout &layout) {
  return complement(layout, layout.cosize());
}

Layout quack::layout::rightInverse(const Layout &layout) {
  Layout flat = coalesce(layout);
  std::vector<int64_t> fs = flat.getShape().leaves();
  std::vector<int64_t> fd = flat.getStride().leaves();
  // Domain strides of the flat modes: exclusive prefix products.
  std::vector<int64_t> domainStride(fs.size());
  int64_t running = 1;
  for (size_t i = 0; i < fs.size(); ++i) {
    domainStride[i] = running;
    running *= fs[i];
  }
  std::vector<int64_t> shapes, strides;
  std::vector<bool> used(fs.size(), false);
  int64_t next = 1; // The next index value the inverse must reach.
  while (true) {
    size_t found = fs.size();
    for (size_t i = 0; i < fs.size(); ++i)
      if (!used[i] && fs[i] > 1 && fd[i] == next) {
        found = i;
        break;
      }
    if (found == fs.size())
      break;
    used[found] = true;
    shapes.push_back(fs[found]);
    strides.push_back(domainStride[found]);
    next *= fs[found];
  }
  if (shapes.empty())
    return Layout();
  return coalescedFromLeaves(shapes, strides);
}

Result<Layout> quack::layout::leftInverse(const Layout &layout) {
  Layout flat = coalesce(layout);
  std::vector<int64_t> fs = flat.getShape().leaves();
  std::vector<int64_t> fd = flat.getStride().leaves();
  for (size_t i = 0; i < fs.size(); ++i)
    if (fs[i] > 1 && fd[i] == 0)
      return Error{"leftInverse: " + layout.str() +
                   " is not injective (a mode of stride 0)"};
  Result<Layout> comp = complement(layout);
  if (!comp)
    return Error{"leftInverse: " + layout.str() +
                 " is not injective or has no complement (" + comp.error() +
                 ")"};
  return rightInverse(makeLayout({layout, *comp}));
}

//===----------------------------------------------------------------------===//
// Divides
//===----------------------------------------------------------------------===//

Result<Layout> quack::layout::logicalDivide(const Layout &a, const Layout &b) {
  Result<Layout> rest = complement(b, a.size());
  if (!rest)
    return Error{"logicalDivide: " + rest.error()};
  return composition(a, makeLayout({b, *rest}));
}

Result<Layout> quack::layout::logicalDivide(const Layout &a,
                                            const Tiler &tiler) {
  if (tiler.size() > a.rank())
    return Error{"logicalDivide: tiler has " + std::to_string(tiler.size()) +
                 " modes but layout " + a.str() + " has rank " +
                 std::to_string(a.rank())};
  std::vector<Layout> modes;
  for (size_t i = 0; i < a.rank(); ++i) {
    if (i >= tiler.size()) {
      modes.push_back(a.mode(i));
      continue;
    }
    Result<Layout> m = logicalDivide(a.mode(i), tiler[i]);
    if (!m)
      return m;
    modes.push_back(std::move(*m));
  }
  return makeLayout(modes);
}

/// Splits a by-mode divide or product ((X0,Y0),(X1,Y1),...,L...) into the
/// lists (X0,X1,...) and (Y0,Y1,...,L,...), where `n` modes were tiled.
static std::pair<std::vector<Layout>, std::vector<Layout>>
unzipModes(const Layout &byMode, size_t n) {
  std::vector<Layout> first, second;
  for (size_t i = 0; i < byMode.rank(); ++i) {
    Layout m = byMode.mode(i);
    if (i < n) {
      first.push_back(m.mode(0));
      second.push_back(m.mode(1));
    } else {
      second.push_back(m);
    }
  }
  return {first, second};
}

Result<Layout> quack::layout::zippedDivide(const Layout &a,
                                           const Tiler &tiler) {
  Result<Layout> ld = logicalDivide(a, tiler);
  if (!ld)
    return ld;
  auto [tiles, rests] = unzipModes(*ld, tiler.size());
  return makeLayout({makeLayout(tiles), makeLayout(rests)});
}

Result<Layout> quack::layout::zippedDivide(const Layout &a, const Layout &b) {
  return logicalDivide(a, b);
}

Result<Layout> quack::layout::tiledDivide(const Layout &a, const Tiler &tiler) {
  Result<Layout> ld = logicalDivide(a, tiler);
  if (!ld)
    return ld;
  auto [tiles, rests] = unzipModes(*ld, tiler.size());
  std::vector<Layout> modes{makeLayout(tiles)};
  modes.insert(modes.end(), rests.begin(), rests.end());
  return makeLayout(modes);
}

Result<Layout> quack::layout::flatDivide(const Layout &a, const Tiler &tiler) {
  Result<Layout> ld = logicalDivide(a, tiler);
  if (!ld)
    return ld;
  auto [tiles, rests] = unzipModes(*ld, tiler.size());
  tiles.insert(tiles.end(), rests.begin(), rests.end());
  return makeLayout(tiles);
}

//===----------------------------------------------------------------------===//
// Products
//===----------------------------------------------------------------------===//

/// complement(a, size(a) * cosize(b)): the layout of A's repetitions.
static Result<Layout> repetitionsOf(const Layout &a, const Layout &b,
                                    const char *op) {
  CheckedMath math;
  int64_t bound = math.mul(a.size(), b.cosize());
  if (math.overflow)
    return overflowError(op);
  Result<Layout> rest = complement(a, bound);
  if (!rest)
    return Error{std::string(op) + ": " + rest.error()};
  return rest;
}

Result<Layout> quack::layout::logicalProduct(const Layout &a, const Layout &b) {
  Result<Layout> rest = repetitionsOf(a, b, "logicalProduct");
  if (!rest)
    return rest;
  Result<Layout> tiles = composition(*rest, b);
  if (!tiles)
    return tiles;
  return makeLayout({a, *tiles});
}

Result<Layout> quack::layout::logicalProduct(const Layout &a,
                                             const Tiler &tiler) {
  if (tiler.size() > a.rank())
    return Error{"logicalProduct: tiler has " + std::to_string(tiler.size()) +
                 " modes but layout " + a.str() + " has rank " +
                 std::to_string(a.rank())};
  std::vector<Layout> modes;
  for (size_t i = 0; i < a.rank(); ++i) {
    if (i >= tiler.size()) {
      modes.push_back(a.mode(i));
      continue;
    }
    Result<Layout> m = logicalProduct(a.mode(i), tiler[i]);
    if (!m)
      return m;
    modes.push_back(std::move(*m));
  }
  return makeLayout(modes);
}

Result<Layout> quack::layout::zippedProduct(const Layout &a,
                                            const Tiler &tiler) {
  Result<Layout> lp = logicalProduct(a, tiler);
  if (!lp)
    return lp;
  auto [blocks, reps] = unzipModes(*lp, tiler.size());
  return makeLayout({makeLayout(blocks), makeLayout(reps)});
}

Result<Layout> quack::layout::tiledProduct(const Layout &a,
                                           const Tiler &tiler) {
  Result<Layout> lp = logicalProduct(a, tiler);
  if (!lp)
    return lp;
  auto [blocks, reps] = unzipModes(*lp, tiler.size());
  std::vector<Layout> modes{makeLayout(blocks)};
  modes.insert(modes.end(), reps.begin(), reps.end());
  return makeLayout(modes);
}

/// Shared body of blocked and raked products.
static Result<Layout> rankedProduct(const Layout &a, const Layout &b,
                                    bool raked, const char *op) {
  size_t r = std::max(a.rank(), b.rank());
  Result<Layout> rest = repetitionsOf(a, b, op);
  if (!rest)
    return rest;
  std::vector<Layout> modes;
  for (size_t i = 0; i < r; ++i) {
    // Operands of lower rank are padded with 1:0 modes.
    Layout ai = i < a.rank() ? a.mode(i) : Layout();
    Layout bi = i < b.rank() ? b.mode(i) : Layout();
    Result<Layout> xi = composition(*rest, bi);
    if (!xi)
      return Error{std::string(op) + ": " + xi.error()};
    modes.push_back(
        coalesce(raked ? makeLayout({*xi, ai}) : makeLayout({ai, *xi})));
  }
  if (r == 1)
    return modes[0];
  return makeLayout(modes);
}

Result<Layout> quack::layout::blockedProduct(const Layout &a, const Layout &b) {
  return rankedProduct(a, b, /*raked=*/false, "blockedProduct");
}

Result<Layout> quack::layout::rakedProduct(const Layout &a, const Layout &b) {
  return rankedProduct(a, b, /*raked=*/true, "rakedProduct");
}
