//===- Swizzle.cpp - CuTe-style swizzle functors --------------------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#include "quack/Layout/Swizzle.h"

#include <cstdlib>

using namespace quack::layout;

Result<Swizzle> Swizzle::get(int bits, int base, int shift) {
  if (bits < 0 || base < 0)
    return Error{"swizzle: bits and base must be non-negative, got Sw<" +
                 std::to_string(bits) + "," + std::to_string(base) + "," +
                 std::to_string(shift) + ">"};
  if (std::abs(shift) < bits)
    return Error{"swizzle: |shift| must be at least bits so that the XOR "
                 "source and target bits do not overlap, got Sw<" +
                 std::to_string(bits) + "," + std::to_string(base) + "," +
                 std::to_string(shift) + ">"};
  if (bits + base + std::abs(shift) > 62)
    return Error{"swizzle: Sw<" + std::to_string(bits) + "," +
                 std::to_string(base) + "," + std::to_string(shift) +
                 "> does not fit in 62 bits"};
  return Swizzle(bits, base, shift);
}

int64_t Swizzle::operator()(int64_t offset) const {
  if (bits == 0)
    return offset;
  int64_t mask = (int64_t(1) << bits) - 1;
  if (shift >= 0) {
    int64_t yyy = offset & (mask << (base + shift));
    return offset ^ (yyy >> shift);
  }
  int64_t yyy = offset & (mask << base);
  return offset ^ (yyy << -shift);
}

std::string Swizzle::str() const {
  return "Sw<" + std::to_string(bits) + "," + std::to_string(base) + "," +
         std::to_string(shift) + ">";
}

std::string SwizzledLayout::str() const {
  return swizzle.str() + " o " + std::to_string(offset) + " o " + layout.str();
}

SwizzledLayout quack::layout::composition(const Swizzle &swizzle,
                                          const Layout &layout) {
  return SwizzledLayout{swizzle, 0, layout};
}

Result<SwizzledLayout> quack::layout::composition(const SwizzledLayout &a,
                                                  const Layout &b) {
  Result<Layout> inner = composition(a.layout, b);
  if (!inner)
    return Error{inner.error()};
  return SwizzledLayout{a.swizzle, a.offset, std::move(*inner)};
}

Result<Swizzle> quack::layout::parseSwizzle(std::string_view text) {
  // Sw<B,M,S> with optional spaces around the numbers.
  size_t pos = 0;
  auto skip = [&] {
    while (pos < text.size() && text[pos] == ' ')
      ++pos;
  };
  auto fail = [&](const std::string &what) {
    return Error{"column " + std::to_string(pos + 1) + ": " + what};
  };
  auto expect = [&](char c) {
    skip();
    if (pos < text.size() && text[pos] == c) {
      ++pos;
      return true;
    }
    return false;
  };
  skip();
  if (text.substr(pos, 2) != "Sw")
    return fail("expected 'Sw<B,M,S>'");
  pos += 2;
  if (!expect('<'))
    return fail("expected '<'");
  int fields[3];
  for (int i = 0; i < 3; ++i) {
    skip();
    bool negative = pos < text.size() && text[pos] == '-';
    if (negative)
      ++pos;
    if (pos >= text.size() || text[pos] < '0' || text[pos] > '9')
      return fail("expected an integer");
    int v = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      v = v * 10 + (text[pos] - '0');
      if (v > 1000)
        return fail("swizzle field is too large");
      ++pos;
    }
    fields[i] = negative ? -v : v;
    if (i < 2 && !expect(','))
      return fail("expected ','");
  }
  if (!expect('>'))
    return fail("expected '>'");
  skip();
  if (pos != text.size())
    return fail("unexpected text after the swizzle");
  return Swizzle::get(fields[0], fields[1], fields[2]);
}
