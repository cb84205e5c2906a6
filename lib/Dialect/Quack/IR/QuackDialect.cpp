//===- QuackDialect.cpp - quack dialect registration ------------------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#include "quack/Dialect/Quack/IR/QuackDialect.h"
#include "quack/Dialect/Quack/IR/QuackOps.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::quack;

#include "quack/Dialect/Quack/IR/QuackOpsDialect.cpp.inc"
#include "quack/Dialect/Quack/IR/QuackEnums.cpp.inc"

void QuackDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "quack/Dialect/Quack/IR/QuackOps.cpp.inc"
      >();
  registerAttributes();
}
