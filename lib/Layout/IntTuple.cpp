//===- IntTuple.cpp - Nested integer tuples -------------------------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#include "quack/Layout/IntTuple.h"
#include "Detail.h"

#include <algorithm>
#include <cassert>
#include <limits>

using namespace quack::layout;

IntTuple IntTuple::tuple(std::vector<IntTuple> elements) {
  IntTuple result;
  result.leaf = false;
  result.elements = std::move(elements);
  return result;
}

int64_t IntTuple::value() const {
  assert(leaf && "value() of a tuple");
  return leafValue;
}

int IntTuple::depth() const {
  if (leaf)
    return 0;
  int deepest = 0;
  for (const IntTuple &e : elements)
    deepest = std::max(deepest, e.depth());
  return deepest + 1;
}

const IntTuple &IntTuple::operator[](size_t i) const {
  if (leaf) {
    assert(i == 0 && "leaf has only element 0");
    return *this;
  }
  assert(i < elements.size() && "tuple index out of range");
  return elements[i];
}

static void collectLeaves(const IntTuple &t, std::vector<int64_t> &out) {
  if (t.isLeaf()) {
    out.push_back(t.value());
    return;
  }
  for (const IntTuple &e : t.getElements())
    collectLeaves(e, out);
}

std::vector<int64_t> IntTuple::leaves() const {
  std::vector<int64_t> out;
  collectLeaves(*this, out);
  return out;
}

size_t IntTuple::numLeaves() const {
  if (leaf)
    return 1;
  size_t n = 0;
  for (const IntTuple &e : elements)
    n += e.numLeaves();
  return n;
}

std::string IntTuple::str() const {
  if (leaf)
    return std::to_string(leafValue);
  std::string s = "(";
  for (size_t i = 0; i < elements.size(); ++i) {
    if (i)
      s += ",";
    s += elements[i].str();
  }
  return s + ")";
}

bool IntTuple::operator==(const IntTuple &other) const {
  if (leaf != other.leaf)
    return false;
  if (leaf)
    return leafValue == other.leafValue;
  return elements == other.elements;
}

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

namespace {
/// Recursive-descent parser over CuTe tuple notation.
class TupleParser {
public:
  TupleParser(std::string_view text, size_t columnOffset)
      : text(text), columnOffset(columnOffset) {}

  Result<IntTuple> parseAll() {
    Result<IntTuple> t = parse(0);
    if (!t)
      return t;
    skipSpace();
    if (pos != text.size())
      return fail("unexpected " + describe() + " after the tuple");
    return t;
  }

  /// Parses one tuple starting at `start`; on success `start` is moved past
  /// it (and past trailing whitespace).
  Result<IntTuple> parsePrefix(size_t &start) {
    pos = start;
    Result<IntTuple> t = parse(0);
    skipSpace();
    start = pos;
    return t;
  }

private:
  static constexpr int kMaxDepth = 64;

  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                                 text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }

  std::string describe() const {
    if (pos >= text.size())
      return "end of input";
    char c = text[pos];
    if (c >= 0x20 && c < 0x7f)
      return std::string("'") + c + "'";
    return "character code " + std::to_string(static_cast<unsigned char>(c));
  }

  Error fail(const std::string &message) const {
    return Error{"column " + std::to_string(columnOffset + pos + 1) + ": " +
                 message};
  }

  Result<IntTuple> parse(int depth) {
    skipSpace();
    if (depth > kMaxDepth)
      return fail("tuple nesting is deeper than " + std::to_string(kMaxDepth));
    if (pos < text.size() && text[pos] == '(') {
      ++pos;
      std::vector<IntTuple> elements;
      skipSpace();
      if (pos < text.size() && text[pos] == ')')
        return fail("empty tuple '()' is not allowed");
      while (true) {
        Result<IntTuple> e = parse(depth + 1);
        if (!e)
          return e;
        elements.push_back(std::move(*e));
        skipSpace();
        if (pos < text.size() && text[pos] == ',') {
          ++pos;
          continue;
        }
        if (pos < text.size() && text[pos] == ')') {
          ++pos;
          return IntTuple::tuple(std::move(elements));
        }
        return fail("expected ',' or ')' but found " + describe());
      }
    }
    return parseInteger();
  }

  Result<IntTuple> parseInteger() {
    size_t start = pos;
    bool negative = false;
    if (pos < text.size() && (text[pos] == '-' || text[pos] == '+')) {
      negative = text[pos] == '-';
      ++pos;
    }
    if (pos >= text.size() || text[pos] < '0' || text[pos] > '9') {
      pos = start;
      return fail("expected an integer or '(' but found " + describe());
    }
    // Accumulate as a negative number so that INT64_MIN is representable.
    int64_t value = 0;
    const int64_t lowest = std::numeric_limits<int64_t>::min();
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      int digit = text[pos] - '0';
      if (value < (lowest + digit) / 10) {
        pos = start;
        return fail("integer literal does not fit in 64 bits");
      }
      value = value * 10 - digit;
      ++pos;
    }
    if (!negative) {
      if (value == lowest) {
        pos = start;
        return fail("integer literal does not fit in 64 bits");
      }
      value = -value;
    }
    return IntTuple(value);
  }

  std::string_view text;
  size_t columnOffset;
  size_t pos = 0;
};
} // namespace

Result<IntTuple> quack::layout::parseIntTuple(std::string_view text) {
  return TupleParser(text, 0).parseAll();
}

Result<IntTuple>
quack::layout::detail::parseIntTuplePrefix(std::string_view text, size_t &pos) {
  return TupleParser(text, 0).parsePrefix(pos);
}

//===----------------------------------------------------------------------===//
// Tuple algorithms
//===----------------------------------------------------------------------===//

int64_t quack::layout::product(const IntTuple &t) {
  if (t.isLeaf())
    return t.value();
  int64_t p = 1;
  for (const IntTuple &e : t.getElements())
    p *= product(e);
  return p;
}

int64_t quack::layout::sum(const IntTuple &t) {
  if (t.isLeaf())
    return t.value();
  int64_t s = 0;
  for (const IntTuple &e : t.getElements())
    s += sum(e);
  return s;
}

IntTuple quack::layout::productEach(const IntTuple &t) {
  if (t.isLeaf())
    return t;
  std::vector<IntTuple> out;
  for (const IntTuple &e : t.getElements())
    out.push_back(product(e));
  return IntTuple::tuple(std::move(out));
}

IntTuple quack::layout::flatten(const IntTuple &t) {
  if (t.isLeaf())
    return t;
  std::vector<IntTuple> out;
  for (int64_t v : t.leaves())
    out.push_back(v);
  return IntTuple::tuple(std::move(out));
}

bool quack::layout::congruent(const IntTuple &a, const IntTuple &b) {
  if (a.isLeaf() || b.isLeaf())
    return a.isLeaf() && b.isLeaf();
  if (a.rank() != b.rank())
    return false;
  for (size_t i = 0; i < a.rank(); ++i)
    if (!congruent(a[i], b[i]))
      return false;
  return true;
}

bool quack::layout::weaklyCongruent(const IntTuple &a, const IntTuple &b) {
  if (a.isLeaf())
    return true;
  if (b.isLeaf() || a.rank() != b.rank())
    return false;
  for (size_t i = 0; i < a.rank(); ++i)
    if (!weaklyCongruent(a[i], b[i]))
      return false;
  return true;
}

static IntTuple unflattenImpl(const IntTuple &shape,
                              const std::vector<int64_t> &values,
                              size_t &next) {
  if (shape.isLeaf())
    return values[next++];
  std::vector<IntTuple> out;
  for (const IntTuple &e : shape.getElements())
    out.push_back(unflattenImpl(e, values, next));
  return IntTuple::tuple(std::move(out));
}

IntTuple quack::layout::unflatten(const IntTuple &shape,
                                  const std::vector<int64_t> &leafValues) {
  assert(leafValues.size() == shape.numLeaves() && "leaf count mismatch");
  size_t next = 0;
  return unflattenImpl(shape, leafValues, next);
}

// The running products use checked arithmetic: the shape may come from a
// user and be too large (its strides then hold 0 past the overflow, and
// Layout::get rejects the layout because its size overflows as well).
IntTuple quack::layout::compactColMajor(const IntTuple &shape, int64_t start) {
  std::vector<int64_t> strides;
  detail::CheckedMath math;
  int64_t running = start;
  for (int64_t s : shape.leaves()) {
    strides.push_back(running);
    running = math.mul(running, s);
  }
  return unflatten(shape, strides);
}

IntTuple quack::layout::compactRowMajor(const IntTuple &shape, int64_t start) {
  std::vector<int64_t> extents = shape.leaves();
  std::vector<int64_t> strides(extents.size());
  detail::CheckedMath math;
  int64_t running = start;
  for (size_t i = extents.size(); i-- > 0;) {
    strides[i] = running;
    running = math.mul(running, extents[i]);
  }
  return unflatten(shape, strides);
}

static IntTuple idx2crdImpl(int64_t index, const IntTuple &shape,
                            const IntTuple &colStride) {
  if (shape.isLeaf()) {
    int64_t extent = shape.value();
    int64_t c = index / colStride.value();
    return extent > 0 ? c % extent : c;
  }
  std::vector<IntTuple> out;
  for (size_t i = 0; i < shape.rank(); ++i)
    out.push_back(idx2crdImpl(index, shape[i], colStride[i]));
  return IntTuple::tuple(std::move(out));
}

IntTuple quack::layout::idx2crd(int64_t index, const IntTuple &shape) {
  if (shape.isLeaf())
    return index;
  return idx2crdImpl(index, shape, compactColMajor(shape));
}

Result<int64_t> quack::layout::crd2idx(const IntTuple &coord,
                                       const IntTuple &shape) {
  if (coord.isLeaf())
    return coord.value();
  if (shape.isLeaf() || coord.rank() != shape.rank())
    return Error{"coordinate " + coord.str() + " does not match shape " +
                 shape.str()};
  int64_t index = 0, scale = 1;
  for (size_t i = 0; i < coord.rank(); ++i) {
    Result<int64_t> sub = crd2idx(coord[i], shape[i]);
    if (!sub)
      return Error{"coordinate " + coord.str() + " does not match shape " +
                   shape.str()};
    index += *sub * scale;
    scale *= product(shape[i]);
  }
  return index;
}
