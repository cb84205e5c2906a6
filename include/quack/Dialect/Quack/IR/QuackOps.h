//===- QuackOps.h - quack operations ------------------------------*- C++ -*-===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#ifndef QUACK_DIALECT_QUACK_IR_QUACKOPS_H
#define QUACK_DIALECT_QUACK_IR_QUACKOPS_H

#include "quack/Dialect/Quack/IR/QuackDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "quack/Dialect/Quack/IR/QuackAttrs.h"

#define GET_OP_CLASSES
#include "quack/Dialect/Quack/IR/QuackOps.h.inc"

namespace mlir::quack {

/// The kinds of kernel arguments at the row level.
enum class ArgKind { Matrix, Row, PerRow, Scalar, Invalid };

/// Classifies a row-level kernel argument type.
ArgKind classifyArgType(Type type);

/// Whether `op` is a quack.load of a row-level argument of `kind` (a row of
/// a matrix, a row vector such as a weight, a per-row value).
inline bool isLoadOf(Operation *op, ArgKind kind) {
  auto load = dyn_cast<LoadOp>(op);
  return load && classifyArgType(load.getSource().getType()) == kind;
}

/// The 32-bit values one row's reduction `op` exchanges between threads: 1
/// for quack.reduce, 2 for the pairs of quack.logsumexp and quack.argmax, 3
/// for the triple of quack.moments; 0 when `op` reduces no row.
int64_t getExchangedValues(Operation *op);

/// Whether `op` reduces a row (exchanges values between threads).
inline bool isRowReduction(Operation *op) {
  return getExchangedValues(op) != 0;
}

/// Whether `op` writes memory: a row or per-row store, a sum over rows.
inline bool writesMemory(Operation *op) { return isa<StoreOp, SumRowsOp>(op); }

/// Whether `op` reads memory: a load or a gather.
inline bool readsMemory(Operation *op) { return isa<LoadOp, GatherOp>(op); }

/// Name of the argument attribute holding an argument's role.
inline constexpr llvm::StringLiteral kRoleAttrName = "quack.role";
/// Name of the argument attribute holding an argument's description name.
inline constexpr llvm::StringLiteral kNameAttrName = "quack.name";

} // namespace mlir::quack

#endif // QUACK_DIALECT_QUACK_IR_QUACKOPS_H
