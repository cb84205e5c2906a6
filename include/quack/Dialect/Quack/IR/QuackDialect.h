//===- QuackDialect.h - quack dialect -----------------------------*- C++ -*-===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#ifndef QUACK_DIALECT_QUACK_IR_QUACKDIALECT_H
#define QUACK_DIALECT_QUACK_IR_QUACKDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Dialect.h"

#include "quack/Dialect/Quack/IR/QuackOpsDialect.h.inc"

#endif // QUACK_DIALECT_QUACK_IR_QUACKDIALECT_H
