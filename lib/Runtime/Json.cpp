//===- Json.cpp - A small JSON reader for kernel metadata -----------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#include "quack/Runtime/Json.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <locale>
#include <sstream>

using namespace quack;
using namespace quack::json;

Value Value::makeBool(bool b) {
  Value v;
  v.kind = Kind::Bool;
  v.boolValue = b;
  return v;
}

Value Value::makeNumber(double d) {
  Value v;
  v.kind = Kind::Number;
  v.number = d;
  return v;
}

Value Value::makeInteger(int64_t i) {
  Value v;
  v.kind = Kind::Number;
  v.number = static_cast<double>(i);
  v.integer = i;
  v.integral = true;
  return v;
}

Value Value::makeString(std::string s) {
  Value v;
  v.kind = Kind::String;
  v.string = std::move(s);
  return v;
}

Value Value::makeArray(std::vector<Value> elements) {
  Value v;
  v.kind = Kind::Array;
  v.elements = std::move(elements);
  return v;
}

Value Value::makeObject(std::vector<Member> members) {
  Value v;
  v.kind = Kind::Object;
  v.members = std::move(members);
  return v;
}

const Value *Value::get(const std::string &key) const {
  if (kind != Kind::Object)
    return nullptr;
  // Later duplicates win, as in most JSON readers.
  const Value *found = nullptr;
  for (const Member &m : members)
    if (m.first == key)
      found = &m.second;
  return found;
}

const char *Value::kindName(Kind kind) {
  switch (kind) {
  case Kind::Null:
    return "null";
  case Kind::Bool:
    return "boolean";
  case Kind::Number:
    return "number";
  case Kind::String:
    return "string";
  case Kind::Array:
    return "array";
  case Kind::Object:
    return "object";
  }
  return "unknown";
}

namespace {
/// A recursive-descent parser over one in-memory document.
class Parser {
public:
  explicit Parser(const std::string &text) : text(text) {}

  bool parseDocument(Value &result, std::string &error) {
    skipWhitespace();
    if (!parseValue(result, /*depth=*/0))
      return fail(error);
    skipWhitespace();
    if (pos != text.size()) {
      setError("unexpected trailing characters after the JSON value");
      return fail(error);
    }
    return true;
  }

private:
  /// Nesting deeper than this is refused rather than risking the stack.
  static constexpr int maxDepth = 256;

  const std::string &text;
  size_t pos = 0;
  std::string message;
  size_t errorPos = 0;

  bool fail(std::string &error) {
    size_t line = 1, column = 1;
    for (size_t i = 0; i < errorPos && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    error = "JSON parse error at line " + std::to_string(line) + ", column " +
            std::to_string(column) + ": " + message;
    return false;
  }

  bool setError(const std::string &msg) {
    if (message.empty()) {
      message = msg;
      errorPos = pos;
    }
    return false;
  }

  bool atEnd() const { return pos >= text.size(); }
  char peek() const { return atEnd() ? '\0' : text[pos]; }

  void skipWhitespace() {
    while (!atEnd()) {
      char c = text[pos];
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
        break;
      ++pos;
    }
  }

  bool consumeLiteral(const char *literal) {
    size_t len = std::strlen(literal);
    if (text.compare(pos, len, literal) != 0)
      return setError(std::string("invalid literal, expected '") + literal +
                      "'");
    pos += len;
    return true;
  }

  bool parseValue(Value &result, int depth) {
    if (depth > maxDepth)
      return setError("nesting too deep");
    if (atEnd())
      return setError("unexpected end of input, expected a value");
    switch (peek()) {
    case '{':
      return parseObject(result, depth);
    case '[':
      return parseArray(result, depth);
    case '"': {
      std::string s;
      if (!parseString(s))
        return false;
      result = Value::makeString(std::move(s));
      return true;
    }
    case 't':
      if (!consumeLiteral("true"))
        return false;
      result = Value::makeBool(true);
      return true;
    case 'f':
      if (!consumeLiteral("false"))
        return false;
      result = Value::makeBool(false);
      return true;
    case 'n':
      if (!consumeLiteral("null"))
        return false;
      result = Value();
      return true;
    default:
      return parseNumber(result);
    }
  }

  bool parseObject(Value &result, int depth) {
    ++pos; // '{'
    std::vector<Value::Member> members;
    skipWhitespace();
    if (peek() == '}') {
      ++pos;
      result = Value::makeObject(std::move(members));
      return true;
    }
    while (true) {
      skipWhitespace();
      if (peek() != '"')
        return setError("expected a string key in object");
      std::string key;
      if (!parseString(key))
        return false;
      skipWhitespace();
      if (peek() != ':')
        return setError("expected ':' after object key");
      ++pos;
      skipWhitespace();
      Value v;
      if (!parseValue(v, depth + 1))
        return false;
      members.emplace_back(std::move(key), std::move(v));
      skipWhitespace();
      if (peek() == ',') {
        ++pos;
        continue;
      }
      if (peek() == '}') {
        ++pos;
        break;
      }
      return setError("expected ',' or '}' in object");
    }
    result = Value::makeObject(std::move(members));
    return true;
  }

  bool parseArray(Value &result, int depth) {
    ++pos; // '['
    std::vector<Value> elements;
    skipWhitespace();
    if (peek() == ']') {
      ++pos;
      result = Value::makeArray(std::move(elements));
      return true;
    }
    while (true) {
      skipWhitespace();
      Value v;
      if (!parseValue(v, depth + 1))
        return false;
      elements.push_back(std::move(v));
      skipWhitespace();
      if (peek() == ',') {
        ++pos;
        continue;
      }
      if (peek() == ']') {
        ++pos;
        break;
      }
      return setError("expected ',' or ']' in array");
    }
    result = Value::makeArray(std::move(elements));
    return true;
  }

  static void appendUtf8(std::string &out, uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  bool parseHex4(uint32_t &cp) {
    if (pos + 4 > text.size())
      return setError("truncated \\u escape");
    cp = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text[pos++];
      cp <<= 4;
      if (c >= '0' && c <= '9')
        cp |= c - '0';
      else if (c >= 'a' && c <= 'f')
        cp |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        cp |= c - 'A' + 10;
      else
        return setError("invalid hex digit in \\u escape");
    }
    return true;
  }

  bool parseString(std::string &out) {
    ++pos; // '"'
    while (true) {
      if (atEnd())
        return setError("unterminated string");
      char c = text[pos];
      if (c == '"') {
        ++pos;
        return true;
      }
      if (static_cast<unsigned char>(c) < 0x20)
        return setError("control character in string");
      if (c != '\\') {
        out += c;
        ++pos;
        continue;
      }
      ++pos;
      if (atEnd())
        return setError("unterminated escape in string");
      char e = text[pos++];
      switch (e) {
      case '"':
      case '\\':
      case '/':
        out += e;
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        uint32_t cp;
        if (!parseHex4(cp))
          return false;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          // A high surrogate must be followed by an escaped low surrogate.
          if (text.compare(pos, 2, "\\u") != 0)
            return setError("unpaired surrogate in \\u escape");
          pos += 2;
          uint32_t low;
          if (!parseHex4(low))
            return false;
          if (low < 0xDC00 || low > 0xDFFF)
            return setError("invalid low surrogate in \\u escape");
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          return setError("unpaired surrogate in \\u escape");
        }
        appendUtf8(out, cp);
        break;
      }
      default:
        --pos;
        return setError(std::string("invalid escape '\\") + e + "'");
      }
    }
  }

  bool parseNumber(Value &result) {
    size_t start = pos;
    bool isInt = true;
    if (peek() == '-')
      ++pos;
    if (peek() == '0') {
      ++pos;
    } else if (peek() >= '1' && peek() <= '9') {
      while (peek() >= '0' && peek() <= '9')
        ++pos;
    } else {
      pos = start;
      return setError("unexpected character, expected a value");
    }
    if (peek() == '.') {
      isInt = false;
      ++pos;
      if (!(peek() >= '0' && peek() <= '9'))
        return setError("expected digits after '.'");
      while (peek() >= '0' && peek() <= '9')
        ++pos;
    }
    if (peek() == 'e' || peek() == 'E') {
      isInt = false;
      ++pos;
      if (peek() == '+' || peek() == '-')
        ++pos;
      if (!(peek() >= '0' && peek() <= '9'))
        return setError("expected digits in exponent");
      while (peek() >= '0' && peek() <= '9')
        ++pos;
    }
    std::string literal = text.substr(start, pos - start);
    if (isInt) {
      errno = 0;
      char *end = nullptr;
      long long i = std::strtoll(literal.c_str(), &end, 10);
      if (errno == 0 && end && *end == '\0') {
        result = Value::makeInteger(static_cast<int64_t>(i));
        return true;
      }
    }
    // Parse in the classic locale: the process locale may use a ',' decimal.
    std::istringstream stream(literal);
    stream.imbue(std::locale::classic());
    double d = 0.0;
    stream >> d;
    if (stream.fail() || !std::isfinite(d)) {
      pos = start;
      return setError("number out of range");
    }
    result = Value::makeNumber(d);
    return true;
  }
};
} // namespace

bool json::parse(const std::string &text, Value &result, std::string &error) {
  Parser parser(text);
  Value v;
  if (!parser.parseDocument(v, error))
    return false;
  result = std::move(v);
  return true;
}
