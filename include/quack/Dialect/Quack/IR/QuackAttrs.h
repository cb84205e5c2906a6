//===- QuackAttrs.h - quack attributes --------------------------*- C++ -*-===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//
//
// The quack enums and attributes (#quack.combining_kind, #quack.layout,
// #quack.tv_layout). Layout attributes hold values of the plain C++ layout
// library, which is why the hashing of IntTuple is declared here.
//
//===----------------------------------------------------------------------===//

#ifndef QUACK_DIALECT_QUACK_IR_QUACKATTRS_H
#define QUACK_DIALECT_QUACK_IR_QUACKATTRS_H

#include "quack/Dialect/Quack/IR/QuackDialect.h"
#include "quack/Layout/Layout.h"

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/Hashing.h"

namespace quack {
namespace layout {
/// Hashes the structure and the leaves of `tuple` (for attribute storage).
llvm::hash_code hash_value(const IntTuple &tuple);
} // namespace layout
} // namespace quack

#include "quack/Dialect/Quack/IR/QuackEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "quack/Dialect/Quack/IR/QuackAttrs.h.inc"

#endif // QUACK_DIALECT_QUACK_IR_QUACKATTRS_H
