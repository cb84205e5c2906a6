//===- Passes.h - quack dialect passes ----------------------------*- C++ -*-===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#ifndef QUACK_DIALECT_QUACK_TRANSFORMS_PASSES_H
#define QUACK_DIALECT_QUACK_TRANSFORMS_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::quack {

#define GEN_PASS_DECL
#include "quack/Dialect/Quack/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "quack/Dialect/Quack/Transforms/Passes.h.inc"

} // namespace mlir::quack

#endif // QUACK_DIALECT_QUACK_TRANSFORMS_PASSES_H
