//===- quack-opt.cpp - quack optimizer driver -------------------------------===//
//
// Part of the quack project.
//
// An mlir-opt style tool: every quack dialect, pass and pipeline, plus the
// upstream dialects and passes that the pipelines use.
//
//===----------------------------------------------------------------------===//

#include "quack/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  quack::registerAllDialects(registry);
  quack::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "quack optimizer driver\n", registry));
}
