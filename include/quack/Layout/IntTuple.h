//===- IntTuple.h - Nested integer tuples -----------------------*- C++ -*-===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//
//
// IntTuple is the building block of CuTe-style layouts: either an integer
// (a leaf) or a tuple of IntTuples, written `3`, `(2,4)` or `(2,(3,4))`.
// Shapes, strides and coordinates are all IntTuples.
//
// Coordinates are colexicographic: the leftmost mode varies fastest, so in
// shape (2,3) the integer 1 is the coordinate (1,0) and 2 is (0,1).
//
//===----------------------------------------------------------------------===//

#ifndef QUACK_LAYOUT_INTTUPLE_H
#define QUACK_LAYOUT_INTTUPLE_H

#include "quack/Layout/Result.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace quack {
namespace layout {

/// A nested tuple of 64-bit integers.
class IntTuple {
public:
  /// The leaf 0.
  IntTuple() = default;
  /// A leaf holding `value` (any integer type converts implicitly).
  template <typename IntT,
            typename = std::enable_if_t<std::is_integral<IntT>::value>>
  IntTuple(IntT value) : leafValue(static_cast<int64_t>(value)) {}

  /// A tuple of the given elements. An empty tuple is allowed here but is
  /// rejected by the parser and by Layout::get.
  static IntTuple tuple(std::vector<IntTuple> elements);

  /// True for an integer, false for a tuple.
  bool isLeaf() const { return leaf; }
  /// The integer of a leaf; only valid for leaves.
  int64_t value() const;
  /// Number of top-level elements; 1 for a leaf (as in CuTe).
  size_t rank() const { return leaf ? 1 : elements.size(); }
  /// Nesting depth: 0 for a leaf, 1 for a flat tuple, ...
  int depth() const;
  /// The i-th top-level element. For a leaf, element 0 is the leaf itself.
  const IntTuple &operator[](size_t i) const;
  /// The top-level elements of a tuple (empty for a leaf).
  const std::vector<IntTuple> &getElements() const { return elements; }

  /// The leaves in left-to-right order.
  std::vector<int64_t> leaves() const;
  /// Number of leaves.
  size_t numLeaves() const;

  /// Prints in CuTe notation, e.g. `(2,(3,4))`.
  std::string str() const;

  bool operator==(const IntTuple &other) const;
  bool operator!=(const IntTuple &other) const { return !(*this == other); }

private:
  int64_t leafValue = 0;
  bool leaf = true;
  std::vector<IntTuple> elements;
};

/// Parses CuTe notation: an integer (optionally negative) or a parenthesized,
/// comma-separated list of IntTuples. Whitespace is ignored. Errors name the
/// column (1-based) where the text went wrong.
Result<IntTuple> parseIntTuple(std::string_view text);

/// Product of all leaves (the size of a shape).
int64_t product(const IntTuple &t);
/// Sum of all leaves.
int64_t sum(const IntTuple &t);
/// For a tuple, the product of each top-level element, e.g. ((2,3),4) ->
/// (6,4); a leaf is returned unchanged.
IntTuple productEach(const IntTuple &t);
/// The leaves as a flat tuple; a leaf is returned unchanged.
IntTuple flatten(const IntTuple &t);
/// True when `a` and `b` have the same tree structure (leaf values ignored).
bool congruent(const IntTuple &a, const IntTuple &b);
/// True when `a` is a leaf or has the same top-level structure as `b`,
/// recursively: a leaf of `a` may stand for a whole subtree of `b`. This is
/// the condition for `a` to be a coordinate of a layout of shape `b`.
bool weaklyCongruent(const IntTuple &a, const IntTuple &b);
/// Builds a tuple with the same structure as `shape` from leaf values given
/// in left-to-right order. `leafValues` must have shape.numLeaves() entries.
IntTuple unflatten(const IntTuple &shape,
                   const std::vector<int64_t> &leafValues);

/// Column-major (colexicographic) compact strides of `shape`: the exclusive
/// prefix products of its leaves, e.g. (2,(3,4)) -> (1,(2,6)).
IntTuple compactColMajor(const IntTuple &shape, int64_t start = 1);
/// Row-major compact strides of `shape` (the rightmost leaf has stride 1),
/// e.g. (2,(3,4)) -> (12,(4,1)).
/// For both: when the product of the leaves overflows int64_t, the strides
/// past the overflow are 0 (no undefined behaviour); Layout::get rejects
/// such a shape.
IntTuple compactRowMajor(const IntTuple &shape, int64_t start = 1);

/// Converts a linear index into a coordinate of `shape` (CuTe idx2crd). For a
/// tuple shape every leaf is reduced modulo its extent; for a leaf shape the
/// index is returned unchanged.
IntTuple idx2crd(int64_t index, const IntTuple &shape);
/// Converts a coordinate of `shape` into its colexicographic linear index.
/// The coordinate must be weakly congruent to `shape`; an integer coordinate
/// for a tuple shape is returned unchanged.
Result<int64_t> crd2idx(const IntTuple &coord, const IntTuple &shape);

} // namespace layout
} // namespace quack

#endif // QUACK_LAYOUT_INTTUPLE_H
