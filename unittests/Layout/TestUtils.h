//===- TestUtils.h - Helpers for the layout unit tests ----------*- C++ -*-===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#ifndef QUACK_UNITTESTS_LAYOUT_TESTUTILS_H
#define QUACK_UNITTESTS_LAYOUT_TESTUTILS_H

#include "quack/Layout/Layout.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <set>
#include <string>

namespace quack {
namespace layout {
namespace test {

/// Parses a layout that the test knows to be valid.
inline Layout L(const char *text) {
  Result<Layout> r = parseLayout(text);
  EXPECT_TRUE(r.ok()) << text << ": " << r.error();
  return r.ok() ? *r : Layout();
}

/// The printed form of a result, or "error: <message>".
inline std::string S(const Result<Layout> &r) {
  return r.ok() ? r->str() : "error: " + r.error();
}

/// True when `layout` maps [0, size) to distinct indices.
inline bool isInjective(const Layout &layout) {
  std::set<int64_t> seen;
  for (int64_t i = 0; i < layout.size(); ++i)
    if (!seen.insert(layout(i)).second)
      return false;
  return true;
}

/// A deterministic pseudo-random generator (64-bit LCG).
class Rng {
public:
  explicit Rng(uint64_t seed) : state(seed) {}
  int64_t operator()(int64_t n) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int64_t>((state >> 33) % static_cast<uint64_t>(n));
  }

private:
  uint64_t state;
};

/// A random flat layout of 1..maxModes modes with extents in {1,2,3,4,6,8}
/// and strides that are 0, compact, or compact times a small factor.
inline Layout randomLayout(Rng &rng, int maxModes) {
  static const int64_t extents[] = {1, 2, 3, 4, 6, 8};
  int modes = 1 + static_cast<int>(rng(maxModes));
  std::vector<IntTuple> shape, stride;
  int64_t span = 1;
  for (int i = 0; i < modes; ++i) {
    int64_t e = extents[rng(6)];
    int64_t kind = rng(4);
    int64_t d = kind == 0 ? 0 : kind == 1 ? span : span * (1 + rng(3));
    shape.push_back(e);
    stride.push_back(d);
    span = (d ? d : span) * e;
  }
  if (modes == 1)
    return Layout(shape[0], stride[0]);
  return Layout(IntTuple::tuple(shape), IntTuple::tuple(stride));
}

} // namespace test
} // namespace layout
} // namespace quack

#endif // QUACK_UNITTESTS_LAYOUT_TESTUTILS_H
