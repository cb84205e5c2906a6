//===- Detail.h - Internal helpers of the layout library --------*- C++ -*-===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//
//
// Helpers shared by the layout library's sources; not part of its interface.
//
//===----------------------------------------------------------------------===//

#ifndef QUACK_LIB_LAYOUT_DETAIL_H
#define QUACK_LIB_LAYOUT_DETAIL_H

#include "quack/Layout/IntTuple.h"

#include <cstdint>
#include <string_view>

namespace quack {
namespace layout {
namespace detail {

/// Parses the IntTuple that starts at `pos` in `text` (after optional
/// whitespace) and moves `pos` past it and past trailing whitespace. Error
/// columns are 1-based positions in `text`.
Result<IntTuple> parseIntTuplePrefix(std::string_view text, size_t &pos);

/// 64-bit arithmetic that records overflow instead of wrapping.
struct CheckedMath {
  bool overflow = false;

  int64_t mul(int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r)) {
      overflow = true;
      return 0;
    }
    return r;
  }
  int64_t add(int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_add_overflow(a, b, &r)) {
      overflow = true;
      return 0;
    }
    return r;
  }
};

} // namespace detail
} // namespace layout
} // namespace quack

#endif // QUACK_LIB_LAYOUT_DETAIL_H
