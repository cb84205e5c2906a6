//===- JsonTest.cpp - Tests of the runtime's JSON reader ------------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#include "quack/Runtime/Json.h"

#include "gtest/gtest.h"

using namespace quack::json;

namespace {

Value parseOk(const std::string &text) {
  Value v;
  std::string error;
  EXPECT_TRUE(parse(text, v, error)) << error;
  return v;
}

std::string parseError(const std::string &text) {
  Value v;
  std::string error;
  EXPECT_FALSE(parse(text, v, error)) << "accepted: " << text;
  return error;
}

TEST(JsonTest, Scalars) {
  EXPECT_TRUE(parseOk("null").isNull());
  EXPECT_TRUE(parseOk(" true ").getBool());
  EXPECT_FALSE(parseOk("false").getBool());
  Value i = parseOk("-42");
  ASSERT_TRUE(i.isInteger());
  EXPECT_EQ(i.getInteger(), -42);
  Value big = parseOk("9223372036854775807");
  ASSERT_TRUE(big.isInteger());
  EXPECT_EQ(big.getInteger(), INT64_MAX);
  // Too large for int64: still a number, no longer an integer.
  Value huge = parseOk("92233720368547758070");
  EXPECT_TRUE(huge.isNumber());
  EXPECT_FALSE(huge.isInteger());
  Value d = parseOk("1.5e-6");
  EXPECT_FALSE(d.isInteger());
  EXPECT_DOUBLE_EQ(d.getNumber(), 1.5e-6);
  EXPECT_FALSE(parseOk("1.0").isInteger());
}

TEST(JsonTest, Strings) {
  EXPECT_EQ(parseOk(R"("a\"b\\c\/d\n")").getString(), "a\"b\\c/d\n");
  EXPECT_EQ(parseOk(R"("\u00e9")").getString(), "\xc3\xa9");
  EXPECT_EQ(parseOk(R"("\u2026")").getString(), "\xe2\x80\xa6");
  // A surrogate pair: U+1F986.
  EXPECT_EQ(parseOk(R"("\ud83e\udd86")").getString(), "\xf0\x9f\xa6\x86");
  // Raw UTF-8 passes through.
  EXPECT_EQ(parseOk("\"5f1c\xe2\x80\xa6\"").getString(), "5f1c\xe2\x80\xa6");
}

TEST(JsonTest, ObjectsAndArrays) {
  Value v = parseOk(R"({"b": [1, 2, {"c": null}], "a": {}, "e": []})");
  ASSERT_TRUE(v.isObject());
  ASSERT_EQ(v.getObject().size(), 3u);
  // Keys keep file order.
  EXPECT_EQ(v.getObject()[0].first, "b");
  EXPECT_EQ(v.getObject()[1].first, "a");
  const Value *b = v.get("b");
  ASSERT_TRUE(b && b->isArray());
  ASSERT_EQ(b->getArray().size(), 3u);
  EXPECT_EQ(b->getArray()[1].getInteger(), 2);
  EXPECT_TRUE(b->getArray()[2].get("c")->isNull());
  EXPECT_TRUE(v.get("a")->isObject());
  EXPECT_EQ(v.get("missing"), nullptr);
  EXPECT_EQ(b->get("x"), nullptr);
}

TEST(JsonTest, Errors) {
  EXPECT_NE(parseError("").find("unexpected end of input"), std::string::npos);
  EXPECT_NE(parseError("{\"a\": 1,}").find("expected a string key"),
            std::string::npos);
  EXPECT_NE(parseError("[1 2]").find("expected ',' or ']'"), std::string::npos);
  EXPECT_NE(parseError("{\"a\" 1}").find("expected ':'"), std::string::npos);
  EXPECT_NE(parseError("\"abc").find("unterminated string"), std::string::npos);
  EXPECT_NE(parseError("tru").find("invalid literal"), std::string::npos);
  EXPECT_NE(parseError("01").find("trailing"), std::string::npos);
  EXPECT_NE(parseError("1.").find("digits after"), std::string::npos);
  EXPECT_NE(parseError("1e999").find("out of range"), std::string::npos);
  EXPECT_NE(parseError("\"\\x\"").find("invalid escape"), std::string::npos);
  EXPECT_NE(parseError("\"\\ud83e\"").find("surrogate"), std::string::npos);
  EXPECT_NE(parseError("\"a\nb\"").find("control character"),
            std::string::npos);
  EXPECT_NE(parseError("{} {}").find("trailing"), std::string::npos);
  EXPECT_NE(parseError("NaN").find("expected a value"), std::string::npos);
}

TEST(JsonTest, ErrorPosition) {
  std::string error = parseError("{\n  \"a\": [1,\n  ]\n}");
  EXPECT_NE(error.find("line 3, column 3"), std::string::npos) << error;
}

TEST(JsonTest, DeepNestingIsRefused) {
  std::string deep(100000, '[');
  EXPECT_NE(parseError(deep).find("nesting too deep"), std::string::npos);
}

} // namespace
