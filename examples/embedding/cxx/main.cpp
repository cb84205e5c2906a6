//===- main.cpp - embed quack's dialects and pipelines in a C++ tool ------===//
//
// Part of the quack project.
//
// Usage: quack-embed-cxx INPUT.mlir [PIPELINE]
//
// What a host compiler does with quack's C++ libraries: register quack's
// dialects in its own registry, build its own PassManager from quack's
// pipeline function (or parse a textual pipeline that names quack's
// registered pipelines), run it and print the result. It then compiles a
// broken description through the facade to show structured diagnostics.
//
//===----------------------------------------------------------------------===//

#include "quack/Compiler/Compiler.h"
#include "quack/InitAll.h"
#include "quack/Pipelines/Pipelines.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  if (argc < 2) {
    llvm::errs() << "usage: " << argv[0] << " INPUT.mlir [PIPELINE]\n";
    return 2;
  }

  // 1. The host's own context, with quack's dialects in it.
  mlir::DialectRegistry registry;
  quack::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(argv[1], &context);
  if (!module)
    return 1;

  // 2. The host's own pass manager, filled by quack.
  // Anchored on builtin.module, the op the parsed input gives.
  mlir::PassManager pm(&context, mlir::ModuleOp::getOperationName());
  if (argc > 2) {
    // By name, as quack-opt does: the registry must know quack's pipelines.
    // PIPELINE lists what runs on the module, e.g.
    // 'quack-to-nvvm-pipeline{threads-per-row=32}' (no builtin.module()).
    quack::registerAllPasses();
    if (mlir::failed(mlir::parsePassPipeline(argv[2], pm, llvm::errs())))
      return 1;
  } else {
    quack::PipelineOptions options;
    options.arch = "sm_90";
    quack::buildQuackToNVVMPipeline(pm, options);
  }
  llvm::outs() << "pipeline: ";
  pm.printAsTextualPipeline(llvm::outs());
  llvm::outs() << "\n";
  if (mlir::failed(pm.run(*module)))
    return 1;
  module->print(llvm::outs());
  llvm::outs() << "\n";

  // 3. The facade: a self-contained compile, diagnostics as records.
  quack::CompileOptions options;
  options.emit = quack::Stage::Quack;
  std::vector<quack::Diagnostic> diagnostics;
  auto result = quack::compileSource(
      "kernel k<N>(x: f32[M, N]) -> (y: f32[M, N]) {\n  y = x +\n}\n",
      "broken.qk", options, &diagnostics);
  llvm::outs() << "broken.qk: " << (mlir::failed(result) ? "failed" : "ok")
               << ", " << diagnostics.size() << " diagnostic(s)\n";
  for (const quack::Diagnostic &diag : diagnostics)
    llvm::outs() << "  " << quack::severityName(diag.severity) << " at "
                 << diag.file << ":" << diag.line << ":" << diag.column << ": "
                 << diag.message << "\n";
  return 0;
}
