//===- QkFuzzer.cpp - fuzz the .qk front end -------------------------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//
//
// Input: a .qk description. It is parsed; when it parses, every compile-time
// parameter is bound (T=bf16, N=64, ... picked from a hash of the input) and
// row-level quack IR is built and verified. Crashes, sanitizer reports, a
// failure without an error diagnostic and IR that fails the verifier after a
// successful import are bugs.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "quack/Dialect/Quack/IR/QuackDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace quack;

static mlir::MLIRContext &context() {
  static mlir::MLIRContext *ctx = [] {
    mlir::DialectRegistry registry;
    registry.insert<mlir::quack::QuackDialect, mlir::arith::ArithDialect,
                    mlir::func::FuncDialect, mlir::math::MathDialect,
                    mlir::vector::VectorDialect>();
    auto *c = new mlir::MLIRContext(registry,
                                    mlir::MLIRContext::Threading::DISABLED);
    c->printOpOnDiagnostic(false);
    c->loadAllAvailableDialects();
    return c;
  }();
  return *ctx;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 16384)
    return 0;
  mlir::MLIRContext &ctx = context();
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);

  std::optional<qk::File> file;
  {
    llvm::SourceMgr sm;
    unsigned id = sm.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(text, "fuzz.qk"), llvm::SMLoc());
    fuzz::DiagnosticCounter diags(&ctx);
    file = parseKernelFile(sm, id, &ctx);
    fuzz::checkReported(!file, diags, "parseKernelFile");
  }
  if (!file)
    return 0;

  Bindings bindings = fuzz::pickBindings(*file, fuzz::hashBytes(data, size));
  llvm::SourceMgr sm;
  unsigned id = sm.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, "fuzz.qk"), llvm::SMLoc());
  fuzz::DiagnosticCounter diags(&ctx);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      importKernelSource(sm, id, &ctx, bindings);
  fuzz::checkReported(!module, diags, "importKernelSource");
  if (module && mlir::failed(mlir::verify(*module))) {
    std::fprintf(stderr, "fuzzer: imported IR fails the verifier\n");
    std::abort();
  }
  return 0;
}
