//===- LayoutTest.cpp - Tests for layouts, evaluation and coalesce --------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#include "TestUtils.h"

using namespace quack::layout;
using namespace quack::layout::test;

namespace {

TEST(Layout, ParseAndPrint) {
  EXPECT_EQ(L("8:1").str(), "8:1");
  EXPECT_EQ(L("(2,(3,4)):(1,(2,6))").str(), "(2,(3,4)):(1,(2,6))");
  EXPECT_EQ(L(" ( 4 , 2 ) : ( 2 , 1 ) ").str(), "(4,2):(2,1)");
  // A bare shape gets compact column-major strides.
  EXPECT_EQ(L("(2,(3,4))").str(), "(2,(3,4)):(1,(2,6))");
  // Negative strides parse and evaluate.
  EXPECT_EQ(L("4:-1")(3), -3);
}

TEST(Layout, ParseErrors) {
  struct Case {
    const char *text;
    const char *error;
  } cases[] = {
      {"(2,3):(1)",
       "invalid layout: shape (2,3) and stride (1) are not congruent"},
      {"(2,(3,4)):(1,2,6)", "invalid layout: shape (2,(3,4)) and stride "
                            "(1,2,6) are not congruent"},
      {"(2,0):(1,2)",
       "invalid layout: shape (2,0) has a non-positive extent 0"},
      {"-4:1", "invalid layout: shape -4 has a non-positive extent -4"},
      {"(2,3):", "invalid layout stride: column 7: expected an integer or "
                 "'(' but found end of input"},
      {"(2,3):(1,2):", "invalid layout: column 12: unexpected ':' after the "
                       "stride"},
      {"(2,3 :(1,2)",
       "invalid layout shape: column 6: expected ',' or ')' but found ':'"},
      {"(2,3)x(1,2)", "invalid layout: column 6: expected ':' after the "
                      "shape but found 'x'"},
      {"(a,3):(1,2)", "invalid layout shape: column 2: expected an integer "
                      "or '(' but found 'a'"},
  };
  for (const Case &c : cases) {
    Result<Layout> r = parseLayout(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.error(), c.error) << c.text;
  }
}

TEST(Layout, ParseRejectsOverflowingLayouts) {
  Result<Layout> r = parseLayout("(4294967296,4294967296):(1,4294967296)");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("overflows 64 bits"), std::string::npos);
  EXPECT_FALSE(parseLayout("2:9223372036854775807").ok());
}

TEST(Layout, CheckedConstruction) {
  EXPECT_TRUE(Layout::get(IntTuple::tuple({2, 3}), IntTuple::tuple({1, 2})));
  EXPECT_FALSE(Layout::get(IntTuple::tuple({2, 3}), 1));
  EXPECT_FALSE(Layout::get(IntTuple::tuple({}), IntTuple::tuple({})));
  EXPECT_EQ(Layout::columnMajor(IntTuple::tuple({2, 3, 4})).str(),
            "(2,3,4):(1,2,6)");
  EXPECT_EQ(Layout::rowMajor(IntTuple::tuple({2, 3, 4})).str(),
            "(2,3,4):(12,4,1)");
  EXPECT_EQ(Layout().str(), "1:0");
}

TEST(Layout, SizeCosizeRankDepth) {
  Layout a = L("(2,(3,4)):(1,(2,6))");
  EXPECT_EQ(a.size(), 24);
  EXPECT_EQ(a.cosize(), 24);
  EXPECT_EQ(a.rank(), 2u);
  EXPECT_EQ(a.depth(), 2);
  Layout b = L("8:2");
  EXPECT_EQ(b.size(), 8);
  EXPECT_EQ(b.cosize(), 15);
  EXPECT_EQ(b.rank(), 1u);
  EXPECT_EQ(b.depth(), 0);
  Layout c = L("(4,3,2):(0,1,3)"); // Broadcast mode of stride 0.
  EXPECT_EQ(c.size(), 24);
  EXPECT_EQ(c.cosize(), 6);
  EXPECT_EQ(c.rank(), 3u);
  EXPECT_EQ(L("(4,2):(-1,4)").cosize(), 8);
}

TEST(Layout, Rank1Evaluation) {
  Layout a = L("6:3");
  for (int64_t i = 0; i < 6; ++i)
    EXPECT_EQ(a(i), 3 * i);
  EXPECT_EQ(*a.evaluate(5), 15);
  EXPECT_EQ(L("5:0")(4), 0);
}

TEST(Layout, Rank2ColumnAndRowMajor) {
  Layout col = L("(4,3):(1,4)");
  Layout row = L("(4,3):(3,1)");
  for (int64_t m = 0; m < 4; ++m)
    for (int64_t n = 0; n < 3; ++n) {
      EXPECT_EQ(col(m, n), m + 4 * n);
      EXPECT_EQ(row(m, n), 3 * m + n);
      // The integer coordinate m + 4n is the same element.
      EXPECT_EQ(row(m + 4 * n), row(m, n));
    }
}

TEST(Layout, Rank3AndNestedEvaluation) {
  // The CuTe tutorial layout (2,(2,2)):(4,(1,2)) is not compact.
  Layout a = L("(2,(2,2)):(4,(1,2))");
  std::vector<int64_t> expected = {0, 4, 1, 5, 2, 6, 3, 7};
  for (int64_t i = 0; i < 8; ++i)
    EXPECT_EQ(a(i), expected[i]);
  EXPECT_EQ(*a.evaluate(parseIntTuple("(1,(1,1))").value()), 7);
  // A mode given by its integer coordinate: (1, 2) == (1, (0, 1)).
  EXPECT_EQ(*a.evaluate(parseIntTuple("(1,2)").value()), 6);
  Layout b = L("(2,3,4):(12,4,1)");
  EXPECT_EQ(*b.evaluate(parseIntTuple("(1,2,3)").value()), 23);
  EXPECT_EQ(b(1 + 2 * 2 + 3 * 6), 23);
}

TEST(Layout, EvaluateRejectsBadCoordinates) {
  Layout a = L("(2,(3,4)):(1,(2,6))");
  Result<int64_t> r = a.evaluate(parseIntTuple("(1,2,3)").value());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), "coordinate (1,2,3) does not match shape (2,(3,4))");
  r = a.evaluate(parseIntTuple("(2,0)").value());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), "coordinate 2 is out of range for extent 2 of mode 2");
  EXPECT_FALSE(a.evaluate(24).ok());
  EXPECT_FALSE(a.evaluate(-1).ok());
  EXPECT_FALSE(L("4:1").evaluate(parseIntTuple("(1,1)").value()).ok());
}

TEST(Layout, CoordinateIsIdx2Crd) {
  Layout a = L("(2,(3,4)):(12,(1,3))");
  EXPECT_EQ(a.coordinate(0).str(), "(0,(0,0))");
  EXPECT_EQ(a.coordinate(7).str(), "(1,(0,1))");
  for (int64_t i = 0; i < a.size(); ++i)
    EXPECT_EQ(*a.evaluate(a.coordinate(i)), a(i));
}

TEST(Layout, IntegerIndexExtendsAlongTheLastMode) {
  // CuTe: the last mode takes the remaining quotient, so (4,2):(1,4) maps
  // 9 to 1 + 2 * 4.
  EXPECT_EQ(L("(4,2):(1,4)")(9), 9);
  EXPECT_EQ(L("(4,2):(2,1)")(9), 2 + 2);
}

TEST(Layout, ModesAndConcatenation) {
  Layout a = L("(2,(3,4)):(1,(2,6))");
  EXPECT_EQ(a.mode(0).str(), "2:1");
  EXPECT_EQ(a.mode(1).str(), "(3,4):(2,6)");
  EXPECT_EQ(makeLayout(a.modes()), a);
  EXPECT_EQ(makeLayout({L("2:1"), L("(3,4):(2,6)"), L("5:0")}).str(),
            "(2,(3,4),5):(1,(2,6),0)");
  EXPECT_EQ(L("8:1").mode(0).str(), "8:1");
  EXPECT_EQ(flatten(a).str(), "(2,3,4):(1,2,6)");
}

TEST(Coalesce, DocumentedExamples) {
  EXPECT_EQ(coalesce(L("(2,(1,6)):(1,(6,2))")).str(), "12:1");
  EXPECT_EQ(coalesce(L("(2,4):(1,2)")).str(), "8:1");
  EXPECT_EQ(coalesce(L("(2,4):(4,1)")).str(), "(2,4):(4,1)");
  EXPECT_EQ(coalesce(L("(1,1):(3,5)")).str(), "1:0");
  EXPECT_EQ(coalesce(L("(4,1,3):(2,7,9)")).str(), "(4,3):(2,9)");
  EXPECT_EQ(coalesce(L("(4,1,3):(2,7,8)")).str(), "12:2");
  // Stride-0 modes merge with each other.
  EXPECT_EQ(coalesce(L("(2,3):(0,0)")).str(), "6:0");
}

TEST(Coalesce, ByModeAndProfile) {
  Layout a = L("(2,(1,6)):(1,(6,2))");
  EXPECT_EQ(coalesceByMode(a).str(), "(2,6):(1,2)");
  EXPECT_EQ(S(coalesce(a, parseIntTuple("(1,1)").value())), "(2,6):(1,2)");
  Layout b = L("((2,2),(3,(1,2))):((1,2),(4,(7,12)))");
  EXPECT_EQ(S(coalesce(b, parseIntTuple("(1,(1,1))").value())),
            "(4,(3,2)):(1,(4,12))");
  EXPECT_FALSE(coalesce(L("8:1"), parseIntTuple("(1,1)").value()).ok());
}

TEST(Coalesce, PreservesTheFunctionOnRandomLayouts) {
  Rng rng(7);
  for (int iter = 0; iter < 500; ++iter) {
    Layout a = randomLayout(rng, 5);
    Layout c = coalesce(a);
    ASSERT_EQ(c.size(), a.size()) << a.str();
    EXPECT_LE(c.depth(), 1) << a.str();
    for (int64_t i = 0; i < a.size(); ++i)
      ASSERT_EQ(c(i), a(i)) << a.str() << " vs " << c.str() << " at " << i;
  }
}

TEST(Filter, DropsStrideZeroAndUnitModes) {
  EXPECT_EQ(filter(L("(2,3,2):(1,0,2)")).str(), "4:1");
  EXPECT_EQ(filter(L("(4,1,3):(0,5,0)")).str(), "1:0");
  EXPECT_EQ(filter(L("(3,2):(2,7)")).str(), "(3,2):(2,7)");
}

} // namespace

namespace {

TEST(Layout, ParseNeverCrashesOnGarbage) {
  // Random texts over the layout alphabet: each either parses into a valid
  // layout that prints back to an equivalent text, or returns an error.
  const char alphabet[] = "()(),,::0123456789- x";
  Rng rng(31);
  int parsed = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::string text;
    int64_t length = 1 + rng(14);
    for (int64_t i = 0; i < length; ++i)
      text += alphabet[rng(sizeof(alphabet) - 1)];
    Result<Layout> r = parseLayout(text);
    if (!r) {
      EXPECT_FALSE(r.error().empty());
      continue;
    }
    ++parsed;
    Result<Layout> again = parseLayout(r->str());
    ASSERT_TRUE(again.ok()) << text;
    EXPECT_EQ(*again, *r) << text;
  }
  EXPECT_GT(parsed, 0);
}

} // namespace
