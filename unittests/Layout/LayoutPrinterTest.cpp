//===- LayoutPrinterTest.cpp - Tests for layout pictures ------------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#include "quack/Layout/LayoutPrinter.h"
#include "quack/Layout/TVLayout.h"

#include "TestUtils.h"

using namespace quack::layout;
using namespace quack::layout::test;

namespace {

size_t count(const std::string &haystack, const std::string &needle) {
  size_t n = 0;
  for (size_t pos = haystack.find(needle); pos != std::string::npos;
       pos = haystack.find(needle, pos + 1))
    ++n;
  return n;
}

TEST(PrintLayout, RowMajorGrid) {
  Result<std::string> s = printLayout(L("(2,3):(3,1)"));
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_EQ(*s, "(2,3):(3,1)\n"
                "    0   1   2\n"
                "  +---+---+---+\n"
                "0 | 0 | 1 | 2 |\n"
                "  +---+---+---+\n"
                "1 | 3 | 4 | 5 |\n"
                "  +---+---+---+\n");
}

TEST(PrintLayout, NestedModesAndWideCells) {
  Result<std::string> s = printLayout(L("(2,(2,2)):(4,(1,16))"));
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_EQ(*s, "(2,(2,2)):(4,(1,16))\n"
                "     0    1    2    3\n"
                "  +----+----+----+----+\n"
                "0 |  0 |  1 | 16 | 17 |\n"
                "  +----+----+----+----+\n"
                "1 |  4 |  5 | 20 | 21 |\n"
                "  +----+----+----+----+\n");
}

TEST(PrintLayout, Rank1IsOneRowAndRank3IsAnError) {
  Result<std::string> s = printLayout(L("4:2"));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, "4:2\n"
                "    0   1   2   3\n"
                "  +---+---+---+---+\n"
                "0 | 0 | 2 | 4 | 6 |\n"
                "  +---+---+---+---+\n");
  Result<std::string> bad = printLayout(L("(2,2,2):(1,2,4)"));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error(), "printLayout: can only draw rank-1 or rank-2 "
                         "layouts, got (2,2,2):(1,2,4)");
  EXPECT_FALSE(printLayout(L("(4096,4096):(1,4096)")).ok());
}

TEST(PrintLayout, Swizzled) {
  SwizzledLayout s = composition(*Swizzle::get(1, 0, 1), L("(2,2):(2,1)"));
  Result<std::string> text = printLayout(s);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "Sw<1,0,1> o 0 o (2,2):(2,1)\n"
                   "    0   1\n"
                   "  +---+---+\n"
                   "0 | 0 | 1 |\n"
                   "  +---+---+\n"
                   "1 | 3 | 2 |\n"
                   "  +---+---+\n");
}

TEST(PrintTVLayout, RowPartition) {
  RowPartition c;
  c.numCols = 8;
  c.threadsPerRow = 2;
  c.vecSize = 2;
  c.rowsPerCta = 2;
  Result<RowTVLayout> r = makeRowTVLayout(c);
  ASSERT_TRUE(r.ok());
  Result<std::string> s = printTVLayout(r->tv, r->tile);
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_EQ(*s,
            "((2,2,1),(2,2)):((2,8,0),(1,4)) over (2,8):(8,1)\n"
            "       0      1      2      3      4      5      6      7\n"
            "  +------+------+------+------+------+------+------+------+\n"
            "0 | T0V0 | T0V1 | T1V0 | T1V1 | T0V2 | T0V3 | T1V2 | T1V3 |\n"
            "  +------+------+------+------+------+------+------+------+\n"
            "1 | T2V0 | T2V1 | T3V0 | T3V1 | T2V2 | T2V3 | T3V2 | T3V3 |\n"
            "  +------+------+------+------+------+------+------+------+\n");
}

TEST(PrintTVLayout, UnownedCellsAndErrors) {
  // Two threads with one value each cover half of a 2x2 tile.
  Result<std::string> s = printTVLayout(L("(2,1):(1,0)"), L("(2,2):(1,2)"));
  ASSERT_TRUE(s.ok()) << s.error();
  EXPECT_EQ(*s, "(2,1):(1,0) over (2,2):(1,2)\n"
                "       0      1\n"
                "  +------+------+\n"
                "0 | T0V0 |    . |\n"
                "  +------+------+\n"
                "1 | T1V0 |    . |\n"
                "  +------+------+\n");
  EXPECT_EQ(count(*s, "T0V0"), 1u);
  EXPECT_EQ(count(*s, "T1V0"), 1u);
  EXPECT_EQ(count(*s, " . "), 2u);
  EXPECT_FALSE(printTVLayout(L("(2,1):(1,0)"), L("4:1")).ok());
  EXPECT_FALSE(printTVLayout(L("8:1"), L("(2,4):(1,2)")).ok());
}

TEST(LayoutSvg, DeterministicGridOfRectangles) {
  Result<std::string> a = layoutToSvg(L("(2,3):(3,1)"));
  Result<std::string> b = layoutToSvg(L("(2,3):(3,1)"));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(a->rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_EQ(count(*a, "<rect "), 6u);
  EXPECT_NE(a->find("<title>(2,3):(3,1)</title>"), std::string::npos);
  EXPECT_NE(a->find(">5</text>"), std::string::npos);
  EXPECT_EQ(a->substr(a->size() - 7), "</svg>\n");
  EXPECT_FALSE(layoutToSvg(L("(2,2,2):(1,2,4)")).ok());
}

TEST(LayoutSvg, TVColouredByThread) {
  RowPartition c;
  c.numCols = 16;
  c.threadsPerRow = 2;
  c.vecSize = 4;
  c.rowsPerCta = 2;
  Result<RowTVLayout> r = makeRowTVLayout(c);
  ASSERT_TRUE(r.ok());
  Result<std::string> svg = tvLayoutToSvg(r->tv, r->tile);
  ASSERT_TRUE(svg.ok()) << svg.error();
  EXPECT_EQ(count(*svg, "<rect "), 32u);
  EXPECT_EQ(count(*svg, ">T0V"), 8u);
  EXPECT_EQ(count(*svg, ">T3V7<"), 1u);
  // Thread 0's eight cells share its colour; thread 1 has another colour.
  EXPECT_EQ(count(*svg, "fill=\"#afafff\""), 8u);
  EXPECT_EQ(count(*svg, "fill=\"#afffaf\""), 8u);
}

} // namespace
