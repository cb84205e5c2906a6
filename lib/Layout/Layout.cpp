//===- Layout.cpp - CuTe-style layouts ------------------------------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//
//
// The Layout class, its parser, evaluation, and the shape-only operations
// (concatenation, flatten, coalesce, filter).
//
//===----------------------------------------------------------------------===//

#include "quack/Layout/Layout.h"
#include "Detail.h"

#include <cassert>
#include <utility>

using namespace quack::layout;

//===----------------------------------------------------------------------===//
// Construction and validation
//===----------------------------------------------------------------------===//

/// Checks the structural preconditions of a layout; returns an empty string
/// when they hold.
static std::string checkStructure(const IntTuple &shape,
                                  const IntTuple &stride) {
  if (!congruent(shape, stride))
    return "shape " + shape.str() + " and stride " + stride.str() +
           " are not congruent";
  // Empty tuples: a tuple with no elements anywhere in the tree.
  std::vector<const IntTuple *> work{&shape};
  while (!work.empty()) {
    const IntTuple *t = work.back();
    work.pop_back();
    if (t->isLeaf())
      continue;
    if (t->rank() == 0)
      return "empty tuple in shape " + shape.str();
    for (const IntTuple &e : t->getElements())
      work.push_back(&e);
  }
  for (int64_t s : shape.leaves())
    if (s < 1)
      return "shape " + shape.str() + " has a non-positive extent " +
             std::to_string(s);
  return "";
}

/// Checks that size and the index range fit in int64_t.
static std::string checkExtents(const IntTuple &shape, const IntTuple &stride) {
  detail::CheckedMath math;
  std::vector<int64_t> shapes = shape.leaves(), strides = stride.leaves();
  int64_t size = 1, hi = 0, lo = 0;
  for (size_t i = 0; i < shapes.size(); ++i) {
    size = math.mul(size, shapes[i]);
    int64_t span = math.mul(shapes[i] - 1, strides[i]);
    if (span > 0)
      hi = math.add(hi, span);
    else
      lo = math.add(lo, span);
  }
  // cosize = hi - lo + 1 must be representable too.
  math.add(math.add(hi, math.mul(lo, -1)), 1);
  if (math.overflow)
    return "layout " + shape.str() + ":" + stride.str() +
           " is too large: its size or index range overflows 64 bits";
  return "";
}

Layout::Layout(IntTuple shape, IntTuple stride)
    : shape(std::move(shape)), stride(std::move(stride)) {
  assert(checkStructure(this->shape, this->stride).empty() &&
         "malformed layout");
}

Result<Layout> Layout::get(IntTuple shape, IntTuple stride) {
  std::string message = checkStructure(shape, stride);
  if (message.empty())
    message = checkExtents(shape, stride);
  if (!message.empty())
    return Error{message};
  return Layout(std::move(shape), std::move(stride));
}

Layout Layout::columnMajor(const IntTuple &shape) {
  return Layout(shape, compactColMajor(shape));
}

Layout Layout::rowMajor(const IntTuple &shape) {
  return Layout(shape, compactRowMajor(shape));
}

//===----------------------------------------------------------------------===//
// Queries and evaluation
//===----------------------------------------------------------------------===//

int64_t Layout::cosize() const {
  std::vector<int64_t> shapes = shape.leaves(), strides = stride.leaves();
  int64_t hi = 0, lo = 0;
  for (size_t i = 0; i < shapes.size(); ++i) {
    int64_t span = (shapes[i] - 1) * strides[i];
    if (span > 0)
      hi += span;
    else
      lo += span;
  }
  return hi - lo + 1;
}

Layout Layout::mode(size_t i) const {
  if (shape.isLeaf()) {
    assert(i == 0 && "mode index out of range");
    return *this;
  }
  assert(i < rank() && "mode index out of range");
  return Layout(shape[i], stride[i]);
}

std::vector<Layout> Layout::modes() const {
  std::vector<Layout> out;
  for (size_t i = 0; i < rank(); ++i)
    out.push_back(mode(i));
  return out;
}

/// CuTe's crd2idx for an integer coordinate: split colexicographically, the
/// last mode of every tuple keeps the remaining quotient.
static int64_t evalIndex(int64_t index, const IntTuple &shape,
                         const IntTuple &stride) {
  if (shape.isLeaf())
    return index * stride.value();
  int64_t result = 0;
  size_t r = shape.rank();
  for (size_t i = 0; i + 1 < r; ++i) {
    int64_t extent = product(shape[i]);
    result += evalIndex(index % extent, shape[i], stride[i]);
    index /= extent;
  }
  return result + evalIndex(index, shape[r - 1], stride[r - 1]);
}

int64_t Layout::operator()(int64_t index) const {
  return evalIndex(index, shape, stride);
}

int64_t Layout::operator()(int64_t c0, int64_t c1) const {
  assert(rank() == 2 && shape.rank() == 2 && !shape.isLeaf() &&
         "two coordinates need a rank-2 layout");
  return evalIndex(c0, shape[0], stride[0]) +
         evalIndex(c1, shape[1], stride[1]);
}

static Result<int64_t> evalCoord(const IntTuple &coord, const IntTuple &shape,
                                 const IntTuple &stride) {
  if (coord.isLeaf()) {
    int64_t c = coord.value(), extent = product(shape);
    if (c < 0 || c >= extent)
      return Error{"coordinate " + std::to_string(c) +
                   " is out of range for extent " + std::to_string(extent) +
                   " of mode " + shape.str()};
    return evalIndex(c, shape, stride);
  }
  if (shape.isLeaf() || coord.rank() != shape.rank())
    return Error{"coordinate " + coord.str() + " does not match shape " +
                 shape.str()};
  int64_t result = 0;
  for (size_t i = 0; i < coord.rank(); ++i) {
    Result<int64_t> sub = evalCoord(coord[i], shape[i], stride[i]);
    if (!sub)
      return sub;
    result += *sub;
  }
  return result;
}

Result<int64_t> Layout::evaluate(const IntTuple &coord) const {
  return evalCoord(coord, shape, stride);
}

IntTuple Layout::coordinate(int64_t index) const {
  return idx2crd(index, shape);
}

std::string Layout::str() const { return shape.str() + ":" + stride.str(); }

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

Result<Layout> quack::layout::parseLayout(std::string_view text) {
  size_t pos = 0;
  Result<IntTuple> shape = detail::parseIntTuplePrefix(text, pos);
  if (!shape)
    return Error{"invalid layout shape: " + shape.error()};
  if (pos == text.size()) {
    std::string message = checkStructure(*shape, *shape);
    if (message.empty())
      message = checkExtents(*shape, compactColMajor(*shape));
    if (!message.empty())
      return Error{"invalid layout: " + message};
    return Layout::columnMajor(*shape);
  }
  if (text[pos] != ':')
    return Error{"invalid layout: column " + std::to_string(pos + 1) +
                 ": expected ':' after the shape but found '" +
                 std::string(1, text[pos]) + "'"};
  ++pos;
  Result<IntTuple> stride = detail::parseIntTuplePrefix(text, pos);
  if (!stride)
    return Error{"invalid layout stride: " + stride.error()};
  if (pos != text.size())
    return Error{"invalid layout: column " + std::to_string(pos + 1) +
                 ": unexpected '" + std::string(1, text[pos]) +
                 "' after the stride"};
  Result<Layout> layout = Layout::get(std::move(*shape), std::move(*stride));
  if (!layout)
    return Error{"invalid layout: " + layout.error()};
  return layout;
}

//===----------------------------------------------------------------------===//
// Shape operations
//===----------------------------------------------------------------------===//

Layout quack::layout::makeLayout(const std::vector<Layout> &modes) {
  if (modes.empty())
    return Layout();
  std::vector<IntTuple> shapes, strides;
  for (const Layout &m : modes) {
    shapes.push_back(m.getShape());
    strides.push_back(m.getStride());
  }
  return Layout(IntTuple::tuple(std::move(shapes)),
                IntTuple::tuple(std::move(strides)));
}

Layout quack::layout::flatten(const Layout &layout) {
  return Layout(flatten(layout.getShape()), flatten(layout.getStride()));
}

/// Builds a depth <= 1 layout from leaf lists: 1:0 when empty, an integral
/// layout for one mode, a flat tuple otherwise.
static Layout fromLeaves(const std::vector<int64_t> &shapes,
                         const std::vector<int64_t> &strides) {
  if (shapes.empty())
    return Layout();
  if (shapes.size() == 1)
    return Layout(shapes[0], strides[0]);
  std::vector<IntTuple> s(shapes.begin(), shapes.end());
  std::vector<IntTuple> d(strides.begin(), strides.end());
  return Layout(IntTuple::tuple(std::move(s)), IntTuple::tuple(std::move(d)));
}

Layout quack::layout::coalesce(const Layout &layout) {
  std::vector<int64_t> inShape = layout.getShape().leaves();
  std::vector<int64_t> inStride = layout.getStride().leaves();
  std::vector<int64_t> shapes, strides;
  for (size_t i = 0; i < inShape.size(); ++i) {
    int64_t s = inShape[i], d = inStride[i];
    if (s == 1)
      continue;
    if (!shapes.empty() && shapes.back() * strides.back() == d) {
      shapes.back() *= s;
      continue;
    }
    shapes.push_back(s);
    strides.push_back(d);
  }
  return fromLeaves(shapes, strides);
}

Result<Layout> quack::layout::coalesce(const Layout &layout,
                                       const IntTuple &profile) {
  if (profile.isLeaf())
    return coalesce(layout);
  if (layout.getShape().isLeaf() || profile.rank() > layout.rank())
    return Error{"coalesce profile " + profile.str() +
                 " does not match layout " + layout.str()};
  std::vector<Layout> modes;
  for (size_t i = 0; i < layout.rank(); ++i) {
    if (i >= profile.rank()) {
      modes.push_back(layout.mode(i));
      continue;
    }
    Result<Layout> m = coalesce(layout.mode(i), profile[i]);
    if (!m)
      return m;
    modes.push_back(std::move(*m));
  }
  return makeLayout(modes);
}

Layout quack::layout::coalesceByMode(const Layout &layout) {
  if (layout.getShape().isLeaf())
    return coalesce(layout);
  std::vector<Layout> modes;
  for (const Layout &m : layout.modes())
    modes.push_back(coalesce(m));
  return makeLayout(modes);
}

Layout quack::layout::filter(const Layout &layout) {
  std::vector<int64_t> shapes = layout.getShape().leaves();
  std::vector<int64_t> strides = layout.getStride().leaves();
  for (size_t i = 0; i < shapes.size(); ++i)
    if (strides[i] == 0)
      shapes[i] = 1;
  return coalesce(fromLeaves(shapes, strides));
}
