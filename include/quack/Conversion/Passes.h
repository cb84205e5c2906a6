//===- Passes.h - quack conversion passes -------------------------*- C++ -*-===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#ifndef QUACK_CONVERSION_PASSES_H
#define QUACK_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::quack {

#define GEN_PASS_DECL
#include "quack/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "quack/Conversion/Passes.h.inc"

} // namespace mlir::quack

#endif // QUACK_CONVERSION_PASSES_H
