//===- LayoutAlgebraTest.cpp - Tests for the layout algebra ---------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//
//
// Expected values come from the definitions (CuTe's layout algebra notes and
// their worked examples); the property tests check the defining equations by
// brute force.
//
//===----------------------------------------------------------------------===//

#include "quack/Layout/Swizzle.h"

#include "TestUtils.h"

#include <algorithm>

using namespace quack::layout;
using namespace quack::layout::test;

namespace {

//===----------------------------------------------------------------------===//
// Composition
//===----------------------------------------------------------------------===//

TEST(Composition, WorkedExample) {
  // (6,2):(8,2) o (4,3):(3,1) = ((2,2),3):((24,2),8).
  Layout a = L("(6,2):(8,2)"), b = L("(4,3):(3,1)");
  Result<Layout> r = composition(a, b);
  EXPECT_EQ(S(r), "((2,2),3):((24,2),8)");
  std::vector<int64_t> expected = {0, 24, 2, 26, 8, 32, 10, 34, 16, 40, 18, 42};
  for (int64_t i = 0; i < 12; ++i)
    EXPECT_EQ((*r)(i), expected[i]);
}

TEST(Composition, ReshapeIntoMatrices) {
  EXPECT_EQ(S(composition(L("20:2"), L("(5,4):(4,1)"))), "(5,4):(8,2)");
  EXPECT_EQ(S(composition(L("(10,2):(16,4)"), L("(5,4):(1,5)"))),
            "(5,(2,2)):(16,(80,4))");
  // Divide out 9 = 3 * 3 from (3,6,2,8), then mod out 16:
  // (3,6,2,8):(w,x,y,z) o 16:9 = (1,2,2,4):(9w,3x,y,z).
  EXPECT_EQ(S(composition(L("(3,6,2,8):(1,4,32,100)"), L("16:9"))),
            "(2,2,4):(12,32,100)");
}

TEST(Composition, IntegralLeftOperand) {
  EXPECT_EQ(S(composition(L("8:3"), L("4:2"))), "4:6");
  EXPECT_EQ(S(composition(L("8:3"), L("(2,2):(1,4)"))), "(2,2):(3,12)");
}

TEST(Composition, StrideZeroAndUnitModes) {
  // A broadcast operand on the right stays a broadcast.
  EXPECT_EQ(S(composition(L("(4,2):(2,1)"), L("(4,3):(1,0)"))), "(4,3):(2,0)");
  // A stride-0 mode of A is skipped over by a stride that divides past it.
  EXPECT_EQ(S(composition(L("(4,2):(0,1)"), L("2:4"))), "2:1");
  EXPECT_EQ(S(composition(L("(4,2):(2,1)"), L("(1,8):(5,1)"))),
            "(1,(4,2)):(0,(2,1))");
}

TEST(Composition, ByModeTiler) {
  Layout a = L("(12,(4,8)):(59,(13,1))");
  EXPECT_EQ(S(composition(a, Tiler{L("3:4"), L("8:2")})),
            "(3,(2,4)):(236,(26,1))");
  // A shape as tiler means stride-1 layouts.
  EXPECT_EQ(S(composition(a, Tiler{L("3:1"), L("8:1")})),
            "(3,(4,2)):(59,(13,1))");
  // Modes beyond the tiler are kept.
  EXPECT_EQ(S(composition(L("(4,6,2):(1,4,24)"), Tiler{L("2:2")})),
            "(2,6,2):(2,4,24)");
  Result<Layout> tooMany = composition(L("8:1"), Tiler{L("2:1"), L("2:1")});
  ASSERT_FALSE(tooMany.ok());
  EXPECT_EQ(tooMany.error(),
            "composition: tiler has 2 modes but layout 8:1 has rank 1");
}

TEST(Composition, InadmissibleStrideIsAnError) {
  // Taking every 3rd element of a 4x3 row-major matrix walks across rows.
  Result<Layout> r = composition(L("(4,3):(3,1)"), L("2:3"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(),
            "composition is not admissible (stride divisibility condition): "
            "remaining stride 3 and extent 4 of the left operand do not "
            "divide one another for (4,3):(3,1) o 2:3");
}

TEST(Composition, InadmissibleShapeIsAnError) {
  Result<Layout> r = composition(L("(4,3):(3,1)"), L("6:1"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(),
            "composition is not admissible (shape divisibility condition): "
            "remaining size 6 and extent 4 of the strided left operand do "
            "not divide one another for (4,3):(3,1) o 6:1");
  // The error surfaces from inside a by-mode composition too.
  EXPECT_FALSE(
      composition(L("(2,(4,3)):(12,(3,1))"), Tiler{L("2:1"), L("6:1")}).ok());
  EXPECT_FALSE(composition(L("8:1"), L("4:-1")).ok());
}

TEST(Composition, MatchesFunctionalCompositionOnRandomLayouts) {
  Rng rng(2024);
  int checked = 0;
  for (int iter = 0; iter < 4000; ++iter) {
    Layout a = randomLayout(rng, 4), b = randomLayout(rng, 3);
    // The definition covers B's image inside A's domain.
    if (b.cosize() > a.size())
      continue;
    Result<Layout> r = composition(a, b);
    if (!r)
      continue;
    ++checked;
    ASSERT_EQ(r->size(), b.size()) << a.str() << " o " << b.str();
    // R is compatible with B: mode by mode, the sizes agree.
    if (!b.getShape().isLeaf()) {
      ASSERT_EQ(r->rank(), b.rank()) << a.str() << " o " << b.str();
      for (size_t m = 0; m < b.rank(); ++m)
        ASSERT_EQ(r->mode(m).size(), b.mode(m).size());
    }
    for (int64_t i = 0; i < b.size(); ++i)
      ASSERT_EQ((*r)(i), a(b(i)))
          << a.str() << " o " << b.str() << " = " << r->str() << " at " << i;
  }
  EXPECT_GT(checked, 1000);
}

TEST(Composition, Associativity) {
  Layout a = L("(4,(2,8)):(16,(1,2))"), b = L("(8,8):(8,1)"),
         c = L("(2,4):(4,1)");
  Result<Layout> ab = composition(a, b), bc = composition(b, c);
  ASSERT_TRUE(ab && bc);
  Result<Layout> left = composition(*ab, c), right = composition(a, *bc);
  ASSERT_TRUE(left && right);
  for (int64_t i = 0; i < c.size(); ++i)
    EXPECT_EQ((*left)(i), (*right)(i));
}

//===----------------------------------------------------------------------===//
// Complement
//===----------------------------------------------------------------------===//

TEST(Complement, DocumentedExamples) {
  EXPECT_EQ(S(complement(L("4:1"), 24)), "6:4");
  EXPECT_EQ(S(complement(L("6:4"), 24)), "4:1");
  EXPECT_EQ(S(complement(L("(4,6):(1,4)"), 24)), "1:0");
  EXPECT_EQ(S(complement(L("4:2"), 24)), "(2,3):(1,8)");
  EXPECT_EQ(S(complement(L("(2,4):(1,6)"), 24)), "3:2");
  EXPECT_EQ(S(complement(L("(2,2):(1,6)"), 24)), "(3,2):(2,12)");
}

TEST(Complement, DefaultBoundAndStrideZero) {
  // Default bound: cosize(layout).
  EXPECT_EQ(S(complement(L("(2,2):(1,6)"))), "3:2");
  // Stride-0 modes contribute nothing to the image.
  EXPECT_EQ(S(complement(L("(4,3):(1,0)"), 8)), "2:4");
  // The bound is rounded up to a multiple of the covered span.
  EXPECT_EQ(S(complement(L("4:1"), 10)), "3:4");
}

TEST(Complement, Errors) {
  Result<Layout> overlap = complement(L("(2,2):(1,1)"), 8);
  ASSERT_FALSE(overlap.ok());
  EXPECT_EQ(overlap.error(),
            "complement: (2,2):(1,1) has no complement: mode 2:1 has a stride "
            "that is not a multiple of the span 2 of the smaller modes (the "
            "modes overlap or leave an irregular gap)");
  EXPECT_FALSE(complement(L("(2,3):(1,3)"), 24).ok()); // 3 not multiple of 2
  EXPECT_FALSE(complement(L("4:1"), 0).ok());
  EXPECT_FALSE(complement(L("4:-1"), 8).ok());
}

TEST(Complement, PostconditionsOnRandomLayouts) {
  Rng rng(99);
  int checked = 0;
  for (int iter = 0; iter < 2000; ++iter) {
    Layout a = randomLayout(rng, 4);
    int64_t bound = a.cosize() * (1 + rng(3)) + rng(5);
    Result<Layout> r = complement(a, bound);
    if (!r)
      continue;
    ++checked;
    std::set<int64_t> image;
    for (int64_t i = 0; i < a.size(); ++i)
      image.insert(a(i));
    // R is ordered: strictly increasing.
    for (int64_t i = 1; i < r->size(); ++i)
      ASSERT_LT((*r)(i - 1), (*r)(i)) << a.str() << " -> " << r->str();
    // Disjoint codomains, apart from the shared origin.
    for (int64_t i = 1; i < r->size(); ++i)
      ASSERT_EQ(image.count((*r)(i)), 0u) << a.str() << " -> " << r->str();
    // (A, R) covers at least the bound and is injective when A is.
    Layout joint = makeLayout({a, *r});
    EXPECT_GE(joint.cosize(), bound) << a.str() << " -> " << r->str();
    if (isInjective(a)) {
      EXPECT_TRUE(isInjective(joint)) << a.str() << " -> " << r->str();
    }
  }
  EXPECT_GT(checked, 500);
}

//===----------------------------------------------------------------------===//
// Inverses
//===----------------------------------------------------------------------===//

TEST(RightInverse, Examples) {
  EXPECT_EQ(rightInverse(L("(4,(2,3)):(2,(1,8))")).str(), "(2,4,3):(4,1,8)");
  EXPECT_EQ(rightInverse(L("(4,3):(3,1)")).str(), "(3,4):(4,1)");
  EXPECT_EQ(rightInverse(L("8:1")).str(), "8:1");
  // Nothing at index 1: only the trivial inverse exists.
  EXPECT_EQ(rightInverse(L("4:2")).str(), "1:0");
  // Only the contiguous prefix [0, 4) is reachable.
  EXPECT_EQ(rightInverse(L("(4,2):(1,8)")).str(), "4:1");
  EXPECT_EQ(rightInverse(L("(2,4):(0,1)")).str(), "4:2");
}

TEST(RightInverse, PropertyOnRandomLayouts) {
  Rng rng(5);
  for (int iter = 0; iter < 1000; ++iter) {
    Layout a = randomLayout(rng, 4);
    Layout r = rightInverse(a);
    for (int64_t i = 0; i < r.size(); ++i)
      ASSERT_EQ(a(r(i)), i) << a.str() << " inverse " << r.str();
  }
  // For a bijection the right inverse covers everything.
  Layout bij = L("((2,3),(2,4)):((1,16),(2,4))");
  Layout inv = rightInverse(bij);
  EXPECT_EQ(inv.size(), bij.size());
  for (int64_t i = 0; i < bij.size(); ++i)
    EXPECT_EQ(inv(bij(i)), i);
}

TEST(LeftInverse, ExamplesAndProperty) {
  EXPECT_EQ(S(leftInverse(L("(4,2):(2,1)"))), "(2,4):(4,1)");
  for (const char *text : {"4:2", "(2,3):(3,1)", "(2,(2,3)):(6,(1,12))",
                           "(4,2):(1,8)", "(3,(2,2)):(4,(1,2))"}) {
    Layout a = L(text);
    Result<Layout> inv = leftInverse(a);
    ASSERT_TRUE(inv.ok()) << text << ": " << inv.error();
    for (int64_t i = 0; i < a.size(); ++i)
      EXPECT_EQ((*inv)(a(i)), i) << text;
  }
}

TEST(LeftInverse, NonInjectiveIsAnError) {
  Result<Layout> r = leftInverse(L("(4,2):(1,0)"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(),
            "leftInverse: (4,2):(1,0) is not injective (a mode of stride 0)");
  EXPECT_FALSE(leftInverse(L("(2,2):(1,1)")).ok());
}

//===----------------------------------------------------------------------===//
// Divides
//===----------------------------------------------------------------------===//

TEST(LogicalDivide, OneDimensional) {
  EXPECT_EQ(S(logicalDivide(L("(4,2,3):(2,1,8)"), L("4:2"))),
            "((2,2),(2,3)):((4,1),(2,8))");
  EXPECT_EQ(S(logicalDivide(L("24:1"), L("4:1"))), "(4,6):(1,4)");
  // Elements of a tile laid out with a stride: tile = 4:3 of 24.
  EXPECT_EQ(S(logicalDivide(L("24:1"), L("4:3"))), "(4,(3,2)):(3,(1,12))");
}

TEST(LogicalDivide, TwoDimensionalByMode) {
  Layout a = L("(9,(4,8)):(59,(13,1))");
  Result<Layout> r = logicalDivide(a, Tiler{L("3:3"), L("(2,4):(1,8)")});
  EXPECT_EQ(S(r), "((3,3),((2,4),(2,2))):((177,59),((13,2),(26,1)))");
  // Mode 0 of each mode is the tile: the same as composition with the tiler.
  Result<Layout> tile = composition(a, Tiler{L("3:3"), L("(2,4):(1,8)")});
  EXPECT_EQ(S(tile), "(3,(2,4)):(177,(13,2))");
}

TEST(LogicalDivide, ElementsArePermutedNotLost) {
  Rng rng(11);
  for (int iter = 0; iter < 300; ++iter) {
    Layout a = Layout::columnMajor(randomLayout(rng, 3).getShape());
    Layout tiler = Layout(1 + rng(a.size()), 1);
    if (a.size() % tiler.size() != 0)
      continue;
    Result<Layout> d = logicalDivide(a, tiler);
    if (!d)
      continue;
    ASSERT_EQ(d->size(), a.size());
    std::vector<int64_t> seen;
    for (int64_t i = 0; i < d->size(); ++i)
      seen.push_back((*d)(i));
    std::sort(seen.begin(), seen.end());
    for (int64_t i = 0; i < a.size(); ++i)
      ASSERT_EQ(seen[i], i) << a.str() << " / " << tiler.str();
  }
}

TEST(ZippedTiledFlatDivide, Shapes) {
  Layout a = L("(9,(4,8)):(59,(13,1))");
  Tiler t{L("3:3"), L("(2,4):(1,8)")};
  EXPECT_EQ(S(zippedDivide(a, t)),
            "((3,(2,4)),(3,(2,2))):((177,(13,2)),(59,(26,1)))");
  EXPECT_EQ(S(tiledDivide(a, t)),
            "((3,(2,4)),3,(2,2)):((177,(13,2)),59,(26,1))");
  EXPECT_EQ(S(flatDivide(a, t)), "(3,(2,4),3,(2,2)):(177,(13,2),59,(26,1))");
  // Mode 0 of the zipped divide is the composition with the tiler.
  EXPECT_EQ(zippedDivide(a, t)->mode(0), *composition(a, t));
}

TEST(ZippedDivide, RowMajorMatrixIntoTiles) {
  Layout a = Layout::rowMajor(IntTuple::tuple({4, 8}));
  Result<Layout> z = zippedDivide(a, Tiler{L("2:1"), L("4:1")});
  EXPECT_EQ(S(z), "((2,4),(2,2)):((8,1),(16,4))");
  // Tile (1, 1) starts at row 2, column 4.
  EXPECT_EQ(*z->evaluate(parseIntTuple("(0,(1,1))").value()), 2 * 8 + 4);
  // Untiled modes go to the rest.
  EXPECT_EQ(S(zippedDivide(L("(4,8,3):(1,4,32)"), Tiler{L("2:1")})),
            "((2),(2,8,3)):((1),(2,4,32))");
  EXPECT_EQ(S(zippedDivide(L("24:1"), L("4:2"))), "(4,(2,3)):(2,(1,8))");
}

//===----------------------------------------------------------------------===//
// Products
//===----------------------------------------------------------------------===//

TEST(LogicalProduct, OneDimensional) {
  EXPECT_EQ(S(logicalProduct(L("(2,2):(4,1)"), L("6:1"))),
            "((2,2),(2,3)):((4,1),(2,8))");
  // B = (4,2):(2,1) reorders the 8 repetitions of A.
  EXPECT_EQ(S(logicalProduct(L("(2,2):(4,1)"), L("(4,2):(2,1)"))),
            "((2,2),(4,2)):((4,1),(8,2))");
  EXPECT_EQ(S(logicalProduct(L("4:1"), L("3:1"))), "(4,3):(1,4)");
}

TEST(LogicalProduct, IsInjectiveAndRepeatsA) {
  Layout a = L("(2,5):(5,1)"), b = L("(3,4):(1,3)");
  Result<Layout> p = logicalProduct(a, b);
  ASSERT_TRUE(p.ok()) << p.error();
  EXPECT_EQ(p->mode(0), a);
  EXPECT_TRUE(isInjective(*p));
  EXPECT_EQ(p->size(), a.size() * b.size());
}

TEST(LogicalProduct, ByModeAndZippedTiled) {
  Layout a = L("(2,5):(5,1)");
  Tiler t{L("3:5"), L("4:6")};
  EXPECT_EQ(S(logicalProduct(a, t)), "((2,3),(5,4)):((5,10),(1,30))");
  EXPECT_EQ(S(zippedProduct(a, t)), "((2,5),(3,4)):((5,1),(10,30))");
  EXPECT_EQ(S(tiledProduct(a, t)), "((2,5),3,4):((5,1),10,30)");
}

TEST(BlockedProduct, DocumentedExample) {
  // A 2x5 row-major block tiled by a 3x4 column-major arrangement.
  Result<Layout> r = blockedProduct(L("(2,5):(5,1)"), L("(3,4):(1,3)"));
  EXPECT_EQ(S(r), "(6,(5,4)):(5,(1,30))");
  // Element (r, c) is element (r % 2, c % 5) of block (r / 2, c / 5).
  for (int64_t row = 0; row < 6; ++row)
    for (int64_t col = 0; col < 20; ++col)
      EXPECT_EQ((*r)(row, col),
                (row % 2) * 5 + col % 5 + 10 * ((row / 2) + 3 * (col / 5)));
}

TEST(RakedProduct, DocumentedExample) {
  Result<Layout> r = rakedProduct(L("(2,5):(5,1)"), L("(3,4):(1,3)"));
  EXPECT_EQ(S(r), "((3,2),(4,5)):((10,5),(30,1))");
  // Element (r, c) is element (r / 3, c / 4) of block (r % 3, c % 4).
  for (int64_t row = 0; row < 6; ++row)
    for (int64_t col = 0; col < 20; ++col)
      EXPECT_EQ((*r)(row, col),
                (row / 3) * 5 + col / 4 + 10 * ((row % 3) + 3 * (col % 4)));
}

TEST(BlockedProduct, MixedRanksArePadded) {
  // A rank-1 block against a rank-2 arrangement: the block is (4, 1).
  EXPECT_EQ(S(blockedProduct(L("4:1"), L("(2,3):(1,2)"))), "(8,3):(1,8)");
  EXPECT_EQ(S(blockedProduct(L("4:1"), L("3:1"))), "12:1");
  EXPECT_EQ(S(rakedProduct(L("4:1"), L("3:1"))), "(3,4):(4,1)");
}

//===----------------------------------------------------------------------===//
// Swizzle
//===----------------------------------------------------------------------===//

TEST(Swizzle, Functor) {
  Swizzle sw = *Swizzle::get(2, 0, 3);
  // Bits 3..4 are XOR-ed into bits 0..1.
  EXPECT_EQ(sw(0), 0);
  EXPECT_EQ(sw(8), 9);
  EXPECT_EQ(sw(16), 18);
  EXPECT_EQ(sw(24 + 1), 24 + 2);
  EXPECT_EQ(sw.str(), "Sw<2,0,3>");
  Swizzle sw333 = *Swizzle::get(3, 3, 3);
  // Rows of 64 16-bit elements in chunks of 8: row 1 XORs the chunk with 1.
  EXPECT_EQ(sw333(64), 64 + 8);
  EXPECT_EQ(sw333(128 + 5), 128 + 16 + 5);
  Swizzle sw343 = *Swizzle::get(3, 4, 3);
  EXPECT_EQ(sw343(64), 64);
  EXPECT_EQ(sw343(128), 128 + 16);
  Swizzle left = *Swizzle::get(2, 4, -3);
  // A negative shift moves bits 4..5 up into bits 7..8.
  EXPECT_EQ(left(16), 16 + 128);
  // A swizzle is a bijection on each aligned block of 2^(B+M+S).
  std::set<int64_t> image;
  for (int64_t i = 0; i < 1024; ++i)
    image.insert(sw343(i));
  EXPECT_EQ(image.size(), 1024u);
  EXPECT_EQ(*image.rbegin(), 1023);
}

TEST(Swizzle, ComposedWithLayout) {
  Layout smem = L("(8,64):(64,1)");
  SwizzledLayout s = composition(*Swizzle::get(3, 3, 3), smem);
  EXPECT_EQ(s.str(), "Sw<3,3,3> o 0 o (8,64):(64,1)");
  // The 16-byte chunks of row r move to chunk (c / 8) ^ r.
  for (int64_t r = 0; r < 8; ++r)
    for (int64_t c = 0; c < 64; ++c)
      EXPECT_EQ(s(r, c), r * 64 + (((c / 8) ^ r) * 8) + c % 8);
  // (sw o L) o B == sw o (L o B).
  Result<SwizzledLayout> t = composition(s, L("(8,8):(8,1)"));
  ASSERT_TRUE(t.ok()) << t.error();
  for (int64_t i = 0; i < 64; ++i)
    EXPECT_EQ((*t)(i), s(L("(8,8):(8,1)")(i)));
}

TEST(Swizzle, ParseAndErrors) {
  Result<Swizzle> p = parseSwizzle("Sw<3,4,3>");
  ASSERT_TRUE(p.ok()) << p.error();
  EXPECT_EQ(*p, *Swizzle::get(3, 4, 3));
  Result<Swizzle> bad = Swizzle::get(3, 4, 2);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error(), "swizzle: |shift| must be at least bits so that the "
                         "XOR source and target bits do not overlap, got "
                         "Sw<3,4,2>");
  EXPECT_EQ(parseSwizzle("Sw<3,4>").error(), "column 7: expected ','");
  EXPECT_FALSE(parseSwizzle("Sw<-1,4,3>").ok());
  EXPECT_FALSE(parseSwizzle("Swizzle").ok());
}

} // namespace

namespace {

TEST(Composition, NestedRightOperandKeepsItsStructure) {
  // B = ((2,2),4):((1,8),2) picks 2x2 sub-blocks of a 4x4 row-major matrix.
  Layout a = L("(4,4):(4,1)");
  Result<Layout> r = composition(a, L("((2,2),4):((1,8),2)"));
  ASSERT_TRUE(r.ok()) << r.error();
  // Each leaf of B becomes a mode of the same size; the leaf 4:2 walks two
  // rows of two elements, so it refines into (2,2).
  EXPECT_EQ(S(r), "((2,2),(2,2)):((4,2),(8,1))");
  for (int64_t i = 0; i < 16; ++i)
    EXPECT_EQ((*r)(i), a(L("((2,2),4):((1,8),2)")(i)));
}

TEST(WithShape, ReshapesTheDomain) {
  EXPECT_EQ(S(withShape(L("24:2"), parseIntTuple("(4,(2,3))").value())),
            "(4,(2,3)):(2,(8,16))");
  EXPECT_EQ(S(withShape(L("(4,6):(6,1)"), parseIntTuple("(2,12)").value())),
            "(2,(2,6)):(6,(12,1))");
  EXPECT_FALSE(
      withShape(L("(4,6):(6,1)"), parseIntTuple("(3,8)").value()).ok());
}

TEST(TiledDivide, Rank3WithAPartialTiler) {
  // A 8x6x2 column-major tensor tiled by <4:1, 3:1>; mode 2 is untouched.
  Layout a = Layout::columnMajor(parseIntTuple("(8,6,2)").value());
  Result<Layout> r = tiledDivide(a, Tiler{L("4:1"), L("3:1")});
  EXPECT_EQ(S(r), "((4,3),2,2,2):((1,8),4,24,48)");
  // Tile (1, 1) of the first batch starts at row 4, column 3.
  EXPECT_EQ(*r->evaluate(parseIntTuple("(0,1,1,0)").value()), 4 + 8 * 3);
}

TEST(LogicalProduct, PropertiesOnRandomLayouts) {
  Rng rng(77);
  int checked = 0;
  for (int iter = 0; iter < 1000; ++iter) {
    Layout a = randomLayout(rng, 3), b = randomLayout(rng, 2);
    if (!isInjective(a) || !isInjective(b))
      continue;
    Result<Layout> p = logicalProduct(a, b);
    if (!p)
      continue;
    ++checked;
    EXPECT_EQ(p->mode(0), a);
    EXPECT_EQ(p->size(), a.size() * b.size());
    // Each repetition of A is a translate of A, and they never overlap.
    EXPECT_TRUE(isInjective(*p))
        << a.str() << " x " << b.str() << " = " << p->str();
  }
  EXPECT_GT(checked, 100);
}

} // namespace
