//===- Swizzle.h - CuTe-style swizzle functors ------------------*- C++ -*-===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//
//
// Swizzle<B,M,S> permutes offsets by XOR-ing B bits taken from position
// M+S (the "row" bits) into position M (the "column" bits):
//
//   yyy = offset & (((1 << B) - 1) << (M + S))
//   swizzle(offset) = offset ^ (yyy >> S)
//
// (a negative S shifts the other way). The low M bits, the unit that stays
// contiguous, are never touched. Composed with a layout it gives the usual
// bank-conflict-free shared-memory layouts: Sw<3,3,3> o (8,64):(64,1) for
// rows of 64 16-bit elements, for example, moves 16-byte chunk c of row r to
// chunk c ^ r.
//
//===----------------------------------------------------------------------===//

#ifndef QUACK_LAYOUT_SWIZZLE_H
#define QUACK_LAYOUT_SWIZZLE_H

#include "quack/Layout/Layout.h"
#include "quack/Layout/Result.h"

#include <cstdint>
#include <string>

namespace quack {
namespace layout {

/// The swizzle functor Sw<bits, base, shift>.
class Swizzle {
public:
  /// The identity swizzle Sw<0,0,0>.
  Swizzle() = default;
  /// Checked construction: needs bits >= 0, base >= 0, |shift| >= bits (the
  /// two bit fields must not overlap) and all fields inside 62 bits.
  static Result<Swizzle> get(int bits, int base, int shift);

  int getBits() const { return bits; }
  int getBase() const { return base; }
  int getShift() const { return shift; }

  /// Applies the swizzle to a non-negative offset.
  int64_t operator()(int64_t offset) const;
  /// Prints as `Sw<B,M,S>`.
  std::string str() const;

  bool operator==(const Swizzle &other) const {
    return bits == other.bits && base == other.base && shift == other.shift;
  }

private:
  Swizzle(int bits, int base, int shift)
      : bits(bits), base(base), shift(shift) {}
  int bits = 0, base = 0, shift = 0;
};

/// A swizzle applied after a layout (and an offset): i -> sw(offset + L(i)).
/// CuTe's ComposedLayout<Swizzle, Offset, Layout>.
struct SwizzledLayout {
  Swizzle swizzle;
  int64_t offset = 0;
  Layout layout;

  /// Evaluates at integer coordinate `index`.
  int64_t operator()(int64_t index) const {
    return swizzle(offset + layout(index));
  }
  /// Evaluates at a rank-2 coordinate.
  int64_t operator()(int64_t c0, int64_t c1) const {
    return swizzle(offset + layout(c0, c1));
  }
  int64_t size() const { return layout.size(); }
  /// Prints as `Sw<B,M,S> o offset o shape:stride`.
  std::string str() const;
};

/// sw o layout.
SwizzledLayout composition(const Swizzle &swizzle, const Layout &layout);
/// (sw o L) o B == sw o (L o B); fails when L o B is not admissible.
Result<SwizzledLayout> composition(const SwizzledLayout &a, const Layout &b);
/// Parses `Sw<B,M,S>`.
Result<Swizzle> parseSwizzle(std::string_view text);

} // namespace layout
} // namespace quack

#endif // QUACK_LAYOUT_SWIZZLE_H
