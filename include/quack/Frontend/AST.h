//===- AST.h - syntax tree of the .qk description language --------*- C++ -*-===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#ifndef QUACK_FRONTEND_AST_H
#define QUACK_FRONTEND_AST_H

#include "llvm/Support/SMLoc.h"

#include <memory>
#include <string>
#include <vector>

namespace quack::qk {

/// An expression of the description language.
struct Expr {
  enum class Kind { Number, Name, Unary, Binary, Call };
  Kind kind;
  llvm::SMLoc loc;
  double number = 0;             // Number
  std::string name;              // Name, Call (callee)
  char op = 0;                   // Unary ('-'), Binary ('+', '-', '*', '/')
  std::vector<std::unique_ptr<Expr>> operands; // Unary, Binary, Call

  Expr(Kind kind, llvm::SMLoc loc) : kind(kind), loc(loc) {}
};

/// A type as written: an element type name and an optional shape.
struct TypeRef {
  std::string element;
  llvm::SMLoc elementLoc;
  struct Dim {
    std::string name; // empty when `value` is a literal
    long long value = 0;
    llvm::SMLoc loc;
  };
  std::vector<Dim> shape;
};

/// A kernel argument (input or output).
struct Param {
  std::string name;
  llvm::SMLoc loc;
  TypeRef type;
  bool isOutput = false;
};

/// `name = expr`.
struct Assign {
  std::string target;
  llvm::SMLoc loc;
  std::unique_ptr<Expr> value;
};

/// A compile-time parameter of a kernel (`<T, N>`).
struct GenericParam {
  std::string name;
  llvm::SMLoc loc;
};

/// `kernel name<params>(inputs) -> (outputs) { body }`.
struct Kernel {
  std::string name;
  llvm::SMLoc loc;
  std::vector<GenericParam> generics;
  std::vector<Param> params; // inputs, then outputs
  std::vector<Assign> body;
};

/// A whole .qk file.
struct File {
  std::vector<Kernel> kernels;
};

} // namespace quack::qk

#endif // QUACK_FRONTEND_AST_H
