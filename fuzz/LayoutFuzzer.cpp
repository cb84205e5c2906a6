//===- LayoutFuzzer.cpp - fuzz the layout parser and algebra ---------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//
//
// Input: layout text in CuTe notation (`(2,(3,4)):(1,(2,6))`, `(4,8)`), or
// `Sw<B,M,S>` for a swizzle. A parsed layout of bounded size goes through the
// algebra (coalesce, filter, complement, composition with itself, right and
// left inverse, printing), and each result is checked against the property
// that defines it, element by element. The library must never crash, and
// every operation must either fail with a message or satisfy its definition.
//
//===----------------------------------------------------------------------===//

#include "quack/Layout/Layout.h"
#include "quack/Layout/LayoutPrinter.h"
#include "quack/Layout/Swizzle.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

using namespace quack::layout;

namespace {

/// Sizes beyond these are parsed and rejected only: the element-wise checks
/// below are quadratic at worst and must stay fast.
constexpr int64_t kMaxSize = 1 << 12;
constexpr int64_t kMaxCosize = 1 << 20;

[[noreturn]] void fail(const char *what, const Layout &l, const Layout &r,
                       int64_t i) {
  std::fprintf(stderr, "layout fuzzer: %s broken for %s (result %s) at %lld\n",
               what, l.str().c_str(), r.str().c_str(), (long long)i);
  std::abort();
}

bool hasNegativeStride(const Layout &l) {
  for (int64_t d : l.getStride().leaves())
    if (d < 0)
      return true;
  return false;
}

void checkLayout(const Layout &l) {
  int64_t size = l.size();
  if (size > kMaxSize || l.cosize() > kMaxCosize)
    return;
  bool negative = hasNegativeStride(l);
  // Printing and coordinates never fail on a valid layout.
  (void)l.str();
  (void)printLayout(l);
  for (int64_t i = 0; i < size; ++i) {
    IntTuple c = l.coordinate(i);
    Result<int64_t> v = l.evaluate(c);
    if (!v || *v != l(i))
      fail("evaluate(coordinate(i))", l, l, i);
  }

  // coalesce: same function on [0, size).
  Layout c = coalesce(l);
  if (c.size() != size)
    fail("coalesce size", l, c, -1);
  for (int64_t i = 0; i < size; ++i)
    if (c(i) != l(i))
      fail("coalesce", l, c, i);
  Layout byMode = coalesceByMode(l);
  if (byMode.rank() != l.rank())
    fail("coalesceByMode rank", l, byMode, -1);
  for (int64_t i = 0; i < size; ++i)
    if (byMode(i) != l(i))
      fail("coalesceByMode", l, byMode, i);
  (void)filter(l);

  if (negative)
    return; // The remaining operations document no support for these.

  // complement of an injective l: (l, r) is injective as well.
  std::vector<char> image(l.cosize() + 1, 0);
  bool injective = true;
  for (int64_t i = 0; i < size && injective; ++i) {
    int64_t v = l(i);
    injective = v >= 0 && v < (int64_t)image.size() && !image[v];
    if (injective)
      image[v] = 1;
  }
  Result<Layout> comp = complement(l);
  if (injective && comp && comp->size() <= kMaxSize &&
      size * comp->size() <= kMaxSize &&
      makeLayout({l, *comp}).cosize() <= kMaxCosize) {
    Layout joint = makeLayout({l, *comp});
    std::vector<char> seen(joint.cosize() + 1, 0);
    for (int64_t i = 0; i < joint.size(); ++i) {
      int64_t v = joint(i);
      if (v < 0 || v >= (int64_t)seen.size() || seen[v])
        fail("complement (image overlap)", l, *comp, i);
      seen[v] = 1;
    }
  }
  (void)complement(l, 2 * l.cosize());

  // composition with itself. B = l is composed mode by mode and the images
  // of the modes are added, so R(i) == l(l(i)) needs more than admissibility
  // (a sum of two modes' images can cross a mode boundary of l, e.g.
  // (216,4):(4,3)). What must hold: R has l's size, and for every leaf mode
  // s:d of l, (l o s:d)(j) == l(j * d) where j * d lies in l's domain.
  Result<Layout> self = composition(l, l);
  if (self && self->size() != size)
    fail("composition size", l, *self, -1);
  if (self) {
    Layout flat = flatten(l);
    for (const Layout &leaf : flat.modes()) {
      Result<Layout> part = composition(l, leaf);
      if (!part)
        fail("composition of a leaf mode (whole one admissible)", l, leaf, -1);
      int64_t d = leaf.getStride().value();
      for (int64_t j = 0; j < leaf.size(); ++j)
        if (j * d < size && (*part)(j) != l(j * d))
          fail("composition", l, *part, j);
    }
  }

  // rightInverse: l(r(i)) == i on [0, size(r)).
  Layout right = rightInverse(l);
  if (right.size() > size)
    fail("rightInverse size", l, right, -1);
  for (int64_t i = 0; i < right.size(); ++i) {
    int64_t j = right(i);
    if (j < 0 || j >= size || l(j) != i)
      fail("rightInverse", l, right, i);
  }

  // leftInverse: r(l(i)) == i for injective l.
  Result<Layout> left = leftInverse(l);
  if (left && left->cosize() <= kMaxCosize) {
    for (int64_t i = 0; i < size; ++i)
      if ((*left)(l(i)) != i)
        fail("leftInverse", l, *left, i);
  }

  // A few divides and products of l with its own coalesced form.
  (void)logicalDivide(l, Layout(2, 1));
  (void)zippedDivide(l, Tiler{Layout(2, 1)});
  if (size <= 64) {
    (void)logicalProduct(l, Layout(2, 1));
    (void)blockedProduct(l, c);
    (void)rakedProduct(l, c);
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 4096)
    return 0;
  std::string_view text(reinterpret_cast<const char *>(data), size);
  if (text.substr(0, 3) == "Sw<") {
    Result<Swizzle> sw = parseSwizzle(text);
    if (sw) {
      (void)sw->str();
      for (int64_t i = 0; i < 4096; i += 7)
        (void)(*sw)(i);
    }
    return 0;
  }
  Result<Layout> l = parseLayout(text);
  if (!l) {
    if (l.error().empty()) {
      std::fprintf(stderr, "layout fuzzer: parse failed without a message\n");
      std::abort();
    }
    return 0;
  }
  checkLayout(*l);
  return 0;
}
