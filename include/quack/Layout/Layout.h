//===- Layout.h - CuTe-style layouts and their algebra ----------*- C++ -*-===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//
//
// A Layout is a pair of congruent IntTuples, shape:stride, e.g.
// `(2,(3,4)):(1,(2,6))`. It is a function from coordinates to integer indices:
// a coordinate of the shape maps to the inner product of its leaves with the
// stride leaves. An integer i in [0, size) is first turned into a coordinate
// colexicographically (leftmost mode fastest).
//
// The algebra follows CuTe's definitions (see CuTe's "Layout Algebra" notes):
// coalesce, composition, complement, right/left inverse, logical, zipped,
// tiled and flat divides, and logical, blocked and raked products. Operations
// that can fail return Result<Layout> with a message instead of asserting.
//
// Example: the 4x8 row-major matrix and its 2x4 tiles.
//
//   Layout a = Layout::rowMajor(IntTuple::tuple({4, 8}));   // (4,8):(8,1)
//   Result<Layout> z = zippedDivide(a, Tiler{Layout(2, 1), Layout(4, 1)});
//   // z->str() == "((2,4),(2,2)):((8,1),(16,4))"
//
//===----------------------------------------------------------------------===//

#ifndef QUACK_LAYOUT_LAYOUT_H
#define QUACK_LAYOUT_LAYOUT_H

#include "quack/Layout/IntTuple.h"
#include "quack/Layout/Result.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace quack {
namespace layout {

/// A hierarchical shape:stride layout with static integers.
class Layout {
public:
  /// The trivial layout 1:0.
  Layout() : shape(1), stride(0) {}
  /// A layout from congruent `shape` and `stride`. Precondition (asserted):
  /// the two are congruent and every shape leaf is positive. Use get() for a
  /// checked construction from untrusted values.
  Layout(IntTuple shape, IntTuple stride);

  /// Checked construction: fails when shape and stride are not congruent,
  /// when a shape leaf is not positive, when a tuple is empty, or when the
  /// size or index range overflows 64-bit integers.
  static Result<Layout> get(IntTuple shape, IntTuple stride);
  /// The compact column-major (colexicographic) layout of `shape`.
  static Layout columnMajor(const IntTuple &shape);
  /// The compact row-major layout of `shape`.
  static Layout rowMajor(const IntTuple &shape);

  const IntTuple &getShape() const { return shape; }
  const IntTuple &getStride() const { return stride; }

  /// Number of top-level modes (1 for an integral shape).
  size_t rank() const { return shape.rank(); }
  /// Nesting depth of the shape (0 for an integral shape).
  int depth() const { return shape.depth(); }
  /// Size of the domain: the product of the shape.
  int64_t size() const { return product(shape); }
  /// Size of the codomain: one past the largest index, L(size-1)+1 for
  /// non-negative strides (in general, one past the largest index minus the
  /// smallest one).
  int64_t cosize() const;
  /// The i-th top-level mode as a layout; mode 0 of an integral layout is the
  /// layout itself. Precondition: i < rank().
  Layout mode(size_t i) const;
  /// All top-level modes.
  std::vector<Layout> modes() const;

  /// Evaluates the layout at the integer coordinate `index` (CuTe semantics:
  /// the index is split colexicographically, and the last mode of each tuple
  /// takes the remaining quotient, so the layout extends linearly past its
  /// size along its last mode).
  int64_t operator()(int64_t index) const;
  /// Rank-2 convenience: evaluates at coordinate (c0, c1), each an integer
  /// coordinate within its mode. Precondition: rank() == 2.
  int64_t operator()(int64_t c0, int64_t c1) const;
  /// Evaluates at a (possibly hierarchical) coordinate weakly congruent to
  /// the shape, e.g. `(1,(2,0))` or `(1,5)` for shape (2,(3,4)). Fails when
  /// the coordinate does not fit the shape's structure.
  Result<int64_t> evaluate(const IntTuple &coord) const;
  /// The natural (hierarchical) coordinate of integer `index`: CuTe's
  /// idx2crd applied to the shape.
  IntTuple coordinate(int64_t index) const;

  /// Prints in CuTe notation, `shape:stride`.
  std::string str() const;

  /// Structural equality of shape and stride (not functional equality).
  bool operator==(const Layout &other) const {
    return shape == other.shape && stride == other.stride;
  }
  bool operator!=(const Layout &other) const { return !(*this == other); }

private:
  IntTuple shape;
  IntTuple stride;
};

/// A tuple of layouts applied mode by mode (CuTe's `Tiler`, `<A, B, ...>`).
using Tiler = std::vector<Layout>;

/// Parses `shape:stride` in CuTe notation, e.g. "(2,(3,4)):(1,(2,6))" or
/// "8:1". A bare shape such as "(4,8)" gets compact column-major strides.
Result<Layout> parseLayout(std::string_view text);

/// Concatenation: the layout whose top-level modes are `modes`
/// (CuTe's make_layout(L0, L1, ...)). A single mode is returned unchanged.
Layout makeLayout(const std::vector<Layout> &modes);
/// Flattens shape and stride to depth <= 1 (same function).
Layout flatten(const Layout &layout);
/// The simplest layout with the same function on [0, size): modes of size 1
/// are dropped and neighbours s0:d0, s1:s0*d0 merge into s0*s1:d0. The
/// result has depth <= 1; an all-trivial layout becomes 1:0.
Layout coalesce(const Layout &layout);
/// Coalesces at the leaves of `profile`: where `profile` has a leaf, the
/// corresponding sub-layout is coalesced as a whole; where it has a tuple,
/// the recursion continues. Fails when `profile` does not fit the layout.
Result<Layout> coalesce(const Layout &layout, const IntTuple &profile);
/// Coalesces each top-level mode separately; the rank is preserved.
Layout coalesceByMode(const Layout &layout);
/// Removes modes of size 1 and modes of stride 0 from the coalesced layout
/// (CuTe's filter), keeping the image set of the layout.
Layout filter(const Layout &layout);

/// Functional composition R = A o B (CuTe's), compatible with B's shape:
/// each leaf mode of B becomes a coalesced mode of R. B is processed mode by
/// mode (left distributivity, R = (A o B0, A o B1, ...)), and for a leaf
/// mode s:d of B, (A o s:d)(j) == A(j * d) for j in [0, s) whenever j * d
/// lies in A's domain [0, size(A)) (beyond it A is extended along the last
/// mode of coalesce(A)). So R(i) == A(B(i)) when B is a single leaf, or
/// when the images of B's modes add up without crossing a mode boundary of
/// A; not in general: for A = B = (2,2):(1,1), R = (2,2):(1,1) and R(3) = 2,
/// but A(B(3)) = A(2) = 1 (CuTe gives the same R). Each
/// integral mode s:d of B must satisfy CuTe's admissibility conditions
/// against the coalesced A: the stride divisibility condition (d "divides
/// out" of A's leading extents: each extent divides what is left of d or is
/// divisible by it) and the shape divisibility condition (s "mods out" the
/// same way). Fails with a message naming the condition otherwise. Negative
/// strides are not supported here.
Result<Layout> composition(const Layout &a, const Layout &b);
/// By-mode composition: tiler[i] is composed with mode i of `a`; modes of
/// `a` beyond the tiler are kept. Fails when the tiler has more elements than
/// `a` has modes.
Result<Layout> composition(const Layout &a, const Tiler &tiler);

/// CuTe's complement of `layout` with respect to `cosizeHi`: the ordered
/// layout R (strides positive and increasing) whose image is disjoint from
/// that of `layout` and such that (layout, R) covers [0, cosizeHi) rounded up
/// to a multiple of cosize(layout). Fails when the (stride-sorted) modes of
/// `layout` overlap or leave gaps that are not a multiple of the span below
/// (d_i not divisible by s_{i-1} * d_{i-1}), or when a stride is negative.
Result<Layout> complement(const Layout &layout, int64_t cosizeHi);
/// complement(layout, cosize(layout)).
Result<Layout> complement(const Layout &layout);

/// A right inverse R of L: L(R(i)) == i for all i in [0, size(R)), where
/// size(R) is the largest contiguous range [0, n) that L reaches with unit
/// stride progression. Always exists (possibly 1:0).
Layout rightInverse(const Layout &layout);
/// A left inverse R of an injective L: R(L(i)) == i for all i in [0,
/// size(L)). Fails when L is not injective or has no complement.
Result<Layout> leftInverse(const Layout &layout);

/// A o (B, complement(B, size(A))): mode 0 is the tile B picks out of A,
/// mode 1 iterates over the tiles.
Result<Layout> logicalDivide(const Layout &a, const Layout &b);
/// By-mode logical divide: ((Tile0,Rest0), (Tile1,Rest1), ..., L, ...).
Result<Layout> logicalDivide(const Layout &a, const Tiler &tiler);
/// ((Tile0,Tile1,...), (Rest0,Rest1,...,L,...)). With a single layout B this
/// equals logicalDivide(a, b).
Result<Layout> zippedDivide(const Layout &a, const Tiler &tiler);
Result<Layout> zippedDivide(const Layout &a, const Layout &b);
/// ((Tile0,Tile1,...), Rest0, Rest1, ..., L, ...).
Result<Layout> tiledDivide(const Layout &a, const Tiler &tiler);
/// (Tile0, Tile1, ..., Rest0, Rest1, ..., L, ...).
Result<Layout> flatDivide(const Layout &a, const Tiler &tiler);

/// (A, complement(A, size(A)*cosize(B)) o B): A repeated in the pattern B.
Result<Layout> logicalProduct(const Layout &a, const Layout &b);
/// By-mode logical product: ((A0,B0'), (A1,B1'), ...).
Result<Layout> logicalProduct(const Layout &a, const Tiler &tiler);
/// ((A0,A1,...), (B0',B1',...)) from the by-mode product.
Result<Layout> zippedProduct(const Layout &a, const Tiler &tiler);
/// ((A0,A1,...), B0', B1', ...) from the by-mode product.
Result<Layout> tiledProduct(const Layout &a, const Tiler &tiler);
/// Rank-sensitive product: both operands are padded to the same rank with
/// 1:0 modes, the 1-D logical product is taken, and like modes are zipped as
/// (A_i, B_i') and coalesced: A is a contiguous block repeated by B.
Result<Layout> blockedProduct(const Layout &a, const Layout &b);
/// Like blockedProduct but zips (B_i', A_i): A's elements are interleaved
/// ("raked", a cyclic distribution) across B's repetitions.
Result<Layout> rakedProduct(const Layout &a, const Layout &b);

/// Reinterprets the domain of `layout` with `shape` (same size or smaller):
/// composition(layout, columnMajor(shape)).
Result<Layout> withShape(const Layout &layout, const IntTuple &shape);

} // namespace layout
} // namespace quack

#endif // QUACK_LAYOUT_LAYOUT_H
