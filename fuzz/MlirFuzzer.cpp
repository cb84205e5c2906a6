//===- MlirFuzzer.cpp - fuzz quack dialect parsing and verification --------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//
//
// Input: MLIR text using the quack dialect (and the upstream dialects its
// tests use). It is parsed and verified; a module that verifies is printed
// (custom and generic form) and the custom form parsed again. Crashes,
// sanitizer reports, a failure without an error diagnostic and a printed
// module that does not parse back are bugs.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "quack/Dialect/Quack/IR/QuackDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

static mlir::MLIRContext &context() {
  static mlir::MLIRContext *ctx = [] {
    mlir::DialectRegistry registry;
    registry.insert<mlir::quack::QuackDialect, mlir::arith::ArithDialect,
                    mlir::cf::ControlFlowDialect, mlir::func::FuncDialect,
                    mlir::gpu::GPUDialect, mlir::LLVM::LLVMDialect,
                    mlir::math::MathDialect, mlir::memref::MemRefDialect,
                    mlir::scf::SCFDialect, mlir::vector::VectorDialect>();
    auto *c = new mlir::MLIRContext(registry,
                                    mlir::MLIRContext::Threading::DISABLED);
    c->printOpOnDiagnostic(false);
    c->loadAllAvailableDialects();
    return c;
  }();
  return *ctx;
}

/// Only inputs that mention the quack dialect are interesting; the rest
/// would fuzz upstream MLIR's parser.
static bool mentionsQuack(llvm::StringRef text) {
  return text.contains("quack");
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 16384)
    return 0;
  // MLIR's lexer needs a NUL-terminated buffer, as every MLIR tool gives it
  // (a MemoryBuffer from a file); libFuzzer's data is not one.
  std::string owned(reinterpret_cast<const char *>(data), size);
  llvm::StringRef text(owned);
  if (!mentionsQuack(text))
    return 0;
  mlir::MLIRContext &ctx = context();
  mlir::ParserConfig config(&ctx);

  std::string custom;
  {
    quack::fuzz::DiagnosticCounter diags(&ctx);
    mlir::OwningOpRef<mlir::ModuleOp> module =
        mlir::parseSourceString<mlir::ModuleOp>(text, config, "fuzz.mlir");
    quack::fuzz::checkReported(!module, diags, "parse + verify");
    if (!module)
      return 0;
    llvm::raw_string_ostream os(custom);
    module->print(os);
    std::string generic;
    llvm::raw_string_ostream gos(generic);
    module->print(gos, mlir::OpPrintingFlags().printGenericOpForm());
  }
  quack::fuzz::DiagnosticCounter diags(&ctx);
  mlir::OwningOpRef<mlir::ModuleOp> again =
      mlir::parseSourceString<mlir::ModuleOp>(custom, config, "printed.mlir");
  if (!again) {
    std::fprintf(stderr, "fuzzer: printed module does not parse back:\n%s\n",
                 custom.c_str());
    std::abort();
  }
  return 0;
}
