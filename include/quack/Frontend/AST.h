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
  enum class Kind { Number, Name, Unary, Binary, Compare, Call, Index };
  Kind kind;
  llvm::SMLoc loc;
  double number = 0;             // Number
  bool isInteger = false;        // Number written without '.' or exponent
  std::string name;              // Name, Call (callee), Index (the tensor)
  char op = 0;                   // Unary ('-'), Binary ('+', '-', '*', '/')
  std::string compare;           // Compare: "<", "<=", ">", ">=", "==", "!="
  std::vector<std::unique_ptr<Expr>> operands; // Unary, Binary, Compare,
                                               // Call, Index (the index)

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

/// A compile-time condition: `FLAG` or `!FLAG`.
struct Condition {
  std::string flag; // empty: always
  bool negated = false;
  llvm::SMLoc loc;
};

/// A kernel argument (input or output), present when `condition` holds.
struct Param {
  std::string name;
  llvm::SMLoc loc;
  TypeRef type;
  bool isOutput = false;
  Condition condition;
};

/// A statement: `name = expr`, or `if FLAG { ... } else { ... }` chosen at
/// compile time.
struct Stmt {
  // Assignment.
  std::string target;
  llvm::SMLoc loc;
  std::unique_ptr<Expr> value;
  // Compile-time branch (when `condition.flag` is not empty).
  Condition condition;
  std::vector<Stmt> thenBody, elseBody;
};
using Assign = Stmt;

/// A compile-time parameter of a kernel (`<T, N, RESIDUAL: bool>`).
struct GenericParam {
  std::string name;
  llvm::SMLoc loc;
  bool isFlag = false;
};

/// `kernel name<params>(inputs) -> (outputs) { body }`.
struct Kernel {
  std::string name;
  llvm::SMLoc loc;
  std::vector<GenericParam> generics;
  std::vector<Param> params; // inputs, then outputs
  std::vector<Stmt> body;
};

/// A whole .qk file.
struct File {
  std::vector<Kernel> kernels;
};

} // namespace quack::qk

#endif // QUACK_FRONTEND_AST_H
