//===- CompileFuzzer.cpp - fuzz compile() from .qk to PTX ------------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//
//
// Input: a .qk description. Bindings are picked as in quack-fuzz-qk and the
// description is compiled through every pass to PTX (offline: ptxas is not
// run). Crashes, sanitizer reports and a failure without an error diagnostic
// are bugs. Each run takes tens of milliseconds: run it for longer than the
// front-end fuzzer.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "quack/Compiler/Compiler.h"

#include "llvm/Support/MemoryBuffer.h"

using namespace quack;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 8192)
    return 0;
  static std::unique_ptr<mlir::MLIRContext> ctx = [] {
    auto c = createContext();
    c->disableMultithreading();
    return c;
  }();
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);

  std::optional<qk::File> file;
  {
    llvm::SourceMgr sm;
    unsigned id = sm.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(text, "fuzz.qk"), llvm::SMLoc());
    fuzz::DiagnosticCounter diags(ctx.get());
    file = parseKernelFile(sm, id, ctx.get());
  }
  if (!file || file->kernels.empty())
    return 0;

  CompileOptions options;
  options.emit = Stage::PTX;
  options.bindings = fuzz::pickBindings(*file, fuzz::hashBytes(data, size));
  // Several kernels need a choice for the llvm and ptx stages.
  options.kernel = file->kernels[fuzz::hashBytes(data, size) %
                                 file->kernels.size()]
                       .name;
  llvm::SourceMgr sm;
  unsigned id = sm.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, "fuzz.qk"), llvm::SMLoc());
  fuzz::DiagnosticCounter diags(ctx.get());
  mlir::FailureOr<Artifacts> result = compile(sm, id, *ctx, options);
  fuzz::checkReported(mlir::failed(result), diags, "compile");
  return 0;
}
