//===- Json.h - A small JSON reader for kernel metadata ---------*- C++ -*-===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A small, self-contained JSON value and parser. The runtime reads kernel
/// metadata and bundle indexes with it, so that it depends on no LLVM/MLIR
/// library. It accepts RFC 8259 JSON; objects keep their keys in file order.
///
//===----------------------------------------------------------------------===//

#ifndef QUACK_RUNTIME_JSON_H
#define QUACK_RUNTIME_JSON_H

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace quack {
namespace json {

/// A parsed JSON value. Numbers keep both their double value and, when the
/// literal is an integer that fits, its exact 64-bit integer value.
class Value {
public:
  enum class Kind { Null, Bool, Number, String, Array, Object };
  using Member = std::pair<std::string, Value>;

  Value() = default;
  static Value makeBool(bool b);
  static Value makeNumber(double d);
  static Value makeInteger(int64_t i);
  static Value makeString(std::string s);
  static Value makeArray(std::vector<Value> elements);
  static Value makeObject(std::vector<Member> members);

  Kind getKind() const { return kind; }
  bool isNull() const { return kind == Kind::Null; }
  bool isBool() const { return kind == Kind::Bool; }
  bool isNumber() const { return kind == Kind::Number; }
  bool isString() const { return kind == Kind::String; }
  bool isArray() const { return kind == Kind::Array; }
  bool isObject() const { return kind == Kind::Object; }
  /// True for a number whose literal was an integer representable in int64.
  bool isInteger() const { return kind == Kind::Number && integral; }

  bool getBool() const { return boolValue; }
  double getNumber() const { return number; }
  int64_t getInteger() const { return integer; }
  const std::string &getString() const { return string; }
  const std::vector<Value> &getArray() const { return elements; }
  const std::vector<Member> &getObject() const { return members; }

  /// Returns the member named \p key of an object, or null if this is not an
  /// object or has no such member.
  const Value *get(const std::string &key) const;

  /// Returns a short name of the kind ("object", "string", ...), for messages.
  static const char *kindName(Kind kind);

private:
  Kind kind = Kind::Null;
  bool boolValue = false;
  bool integral = false;
  double number = 0.0;
  int64_t integer = 0;
  std::string string;
  std::vector<Value> elements;
  std::vector<Member> members;
};

/// Parses \p text as one JSON document. On failure returns false and sets
/// \p error to a message with the line and column of the problem.
bool parse(const std::string &text, Value &result, std::string &error);

} // namespace json
} // namespace quack

#endif // QUACK_RUNTIME_JSON_H
