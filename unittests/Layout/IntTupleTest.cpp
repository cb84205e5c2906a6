//===- IntTupleTest.cpp - Tests for nested integer tuples -----------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#include "quack/Layout/IntTuple.h"

#include "gtest/gtest.h"

using namespace quack::layout;

namespace {

IntTuple T(const char *text) {
  Result<IntTuple> r = parseIntTuple(text);
  EXPECT_TRUE(r.ok()) << text << ": " << r.error();
  return r.ok() ? *r : IntTuple();
}

TEST(IntTuple, ParseAndPrintRoundTrip) {
  for (const char *text :
       {"8", "-3", "(2,3)", "(2,(3,4))", "((1,2),(3,(4,5)),6)"})
    EXPECT_EQ(T(text).str(), text);
  // Whitespace is ignored and a leading '+' is accepted.
  EXPECT_EQ(T(" ( 2 , ( 3 ,4 ) ) ").str(), "(2,(3,4))");
  EXPECT_EQ(T("+7").str(), "7");
}

TEST(IntTuple, RankDepthAndLeaves) {
  IntTuple t = T("(2,(3,4),5)");
  EXPECT_FALSE(t.isLeaf());
  EXPECT_EQ(t.rank(), 3u);
  EXPECT_EQ(t.depth(), 2);
  EXPECT_EQ(t.numLeaves(), 4u);
  EXPECT_EQ(t.leaves(), (std::vector<int64_t>{2, 3, 4, 5}));
  EXPECT_EQ(t[1].str(), "(3,4)");
  IntTuple leaf = 7;
  EXPECT_TRUE(leaf.isLeaf());
  EXPECT_EQ(leaf.rank(), 1u);
  EXPECT_EQ(leaf.depth(), 0);
  EXPECT_EQ(leaf[0].value(), 7);
}

TEST(IntTuple, ProductSumFlattenProductEach) {
  IntTuple t = T("((2,3),4,(1,(5,2)))");
  EXPECT_EQ(product(t), 240);
  EXPECT_EQ(sum(t), 17);
  EXPECT_EQ(flatten(t).str(), "(2,3,4,1,5,2)");
  EXPECT_EQ(productEach(t).str(), "(6,4,10)");
  EXPECT_EQ(flatten(IntTuple(5)).str(), "5");
}

TEST(IntTuple, Congruence) {
  EXPECT_TRUE(congruent(T("(2,(3,4))"), T("(1,(2,6))")));
  EXPECT_FALSE(congruent(T("(2,(3,4))"), T("(1,2)")));
  EXPECT_FALSE(congruent(T("(2,3)"), T("(1,2,3)")));
  EXPECT_TRUE(congruent(T("5"), T("1")));
  EXPECT_TRUE(weaklyCongruent(T("7"), T("(2,(3,4))")));
  EXPECT_TRUE(weaklyCongruent(T("(1,5)"), T("(2,(3,4))")));
  EXPECT_FALSE(weaklyCongruent(T("((1,2),5)"), T("(2,(3,4))")));
}

TEST(IntTuple, CompactStrides) {
  EXPECT_EQ(compactColMajor(T("(2,(3,4))")).str(), "(1,(2,6))");
  EXPECT_EQ(compactRowMajor(T("(2,(3,4))")).str(), "(12,(4,1))");
  EXPECT_EQ(compactColMajor(T("8")).str(), "1");
  EXPECT_EQ(unflatten(T("(2,(3,4))"), {7, 8, 9}).str(), "(7,(8,9))");
}

TEST(IntTuple, Idx2CrdIsColexicographic) {
  IntTuple shape = T("(2,3)");
  EXPECT_EQ(idx2crd(0, shape).str(), "(0,0)");
  EXPECT_EQ(idx2crd(1, shape).str(), "(1,0)");
  EXPECT_EQ(idx2crd(2, shape).str(), "(0,1)");
  EXPECT_EQ(idx2crd(5, shape).str(), "(1,2)");
  EXPECT_EQ(idx2crd(17, T("(2,(3,4))")).str(), "(1,(2,2))");
  // An integral shape returns the index itself.
  EXPECT_EQ(idx2crd(9, IntTuple(4)).str(), "9");
}

TEST(IntTuple, Crd2IdxInvertsIdx2Crd) {
  IntTuple shape = T("((2,3),(1,4),5)");
  for (int64_t i = 0; i < product(shape); ++i) {
    Result<int64_t> back = crd2idx(idx2crd(i, shape), shape);
    ASSERT_TRUE(back.ok()) << back.error();
    EXPECT_EQ(*back, i);
  }
  // Mixed-depth coordinates: (1, 5) in shape (2,(3,4)) is (1,(2,1)).
  EXPECT_EQ(*crd2idx(T("(1,5)"), T("(2,(3,4))")), 11);
  EXPECT_FALSE(crd2idx(T("(1,2,3)"), T("(2,3)")).ok());
}

TEST(IntTuple, ParseErrorsNameTheColumn) {
  struct Case {
    const char *text;
    const char *error;
  } cases[] = {
      {"", "column 1: expected an integer or '(' but found end of input"},
      {"(2,3", "column 5: expected ',' or ')' but found end of input"},
      {"(2;3)", "column 3: expected ',' or ')' but found ';'"},
      {"(2,,3)", "column 4: expected an integer or '(' but found ','"},
      {"()", "column 2: empty tuple '()' is not allowed"},
      {"(2,3))", "column 6: unexpected ')' after the tuple"},
      {"x", "column 1: expected an integer or '(' but found 'x'"},
      {"-", "column 1: expected an integer or '(' but found '-'"},
      {"9223372036854775808",
       "column 1: integer literal does not fit in 64 bits"},
  };
  for (const Case &c : cases) {
    Result<IntTuple> r = parseIntTuple(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.error(), c.error) << c.text;
  }
  EXPECT_EQ(T("-9223372036854775808").str(), "-9223372036854775808");
}

TEST(IntTuple, DeepNestingIsAnErrorNotACrash) {
  std::string text(200, '(');
  Result<IntTuple> r = parseIntTuple(text);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().find("nesting is deeper than"), std::string::npos);
}

} // namespace
