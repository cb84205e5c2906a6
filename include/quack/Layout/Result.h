//===- Result.h - Value-or-error result for the layout library --*- C++ -*-===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//
//
// A small Expected-like type. The layout library never throws and never
// asserts on user input: every operation that can fail (parsing, an
// inadmissible composition, a layout that has no complement, ...) returns a
// Result holding either the value or an error message.
//
//===----------------------------------------------------------------------===//

#ifndef QUACK_LAYOUT_RESULT_H
#define QUACK_LAYOUT_RESULT_H

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace quack {
namespace layout {

/// An error message produced by the layout library.
struct Error {
  std::string message;
};

/// Holds either a value of type T or an Error. Test with ok() (or the bool
/// conversion) before reading value().
template <typename T> class Result {
public:
  /// Wraps a value.
  Result(T value) : storage(std::in_place_index<0>, std::move(value)) {}
  /// Wraps an error.
  Result(Error error) : storage(std::in_place_index<1>, std::move(error)) {}

  /// True when this holds a value.
  bool ok() const { return storage.index() == 0; }
  explicit operator bool() const { return ok(); }

  /// The value; only valid when ok().
  const T &value() const & {
    assert(ok() && "Result holds an error");
    return std::get<0>(storage);
  }
  T &value() & {
    assert(ok() && "Result holds an error");
    return std::get<0>(storage);
  }
  T &&value() && {
    assert(ok() && "Result holds an error");
    return std::get<0>(std::move(storage));
  }
  const T &operator*() const & { return value(); }
  T &operator*() & { return value(); }
  const T *operator->() const { return &value(); }
  T *operator->() { return &value(); }

  /// The error message; empty when ok().
  const std::string &error() const {
    static const std::string empty;
    return ok() ? empty : std::get<1>(storage).message;
  }

  /// The value when ok(), otherwise `fallback`.
  T valueOr(T fallback) const { return ok() ? value() : std::move(fallback); }

private:
  std::variant<T, Error> storage;
};

} // namespace layout
} // namespace quack

#endif // QUACK_LAYOUT_RESULT_H
