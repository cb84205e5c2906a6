//===- PTX.h - LLVM IR, PTX and cubins from gpu.module kernels ----*- C++ -*-===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#ifndef QUACK_TARGET_PTX_H
#define QUACK_TARGET_PTX_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Support/LLVM.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <optional>
#include <string>

namespace quack {

/// What ptxas reports about one kernel entry.
struct ResourceReport {
  std::string kernel;
  int64_t registers = 0;
  int64_t stackBytes = 0;
  int64_t spillStoreBytes = 0;
  int64_t spillLoadBytes = 0;
  int64_t sharedBytes = 0;
  int64_t constantBytes = 0;
};

/// A cubin and what ptxas said while making it.
struct Cubin {
  std::string binary;
  std::vector<ResourceReport> reports;
  /// ptxas' verbose output, as printed.
  std::string log;
};

/// The PTX ISA feature string used for `arch` (e.g. "+ptx86").
std::string ptxFeaturesFor(llvm::StringRef arch);

/// Translates a gpu.module whose body is in the LLVM and NVVM dialects to an
/// LLVM module for the NVPTX target and optimizes it at -O3. Errors are
/// emitted on `gpuModule`.
mlir::FailureOr<std::unique_ptr<llvm::Module>>
translateToLLVMIR(mlir::gpu::GPUModuleOp gpuModule,
                  llvm::LLVMContext &context, llvm::StringRef arch);

/// Runs LLVM's NVPTX backend on `module`. With `fuseMulAdd`, multiplies
/// and adds may become fma (rounded once) and are not marked `.rn`, so that
/// ptxas may contract them too; without, each is rounded on its own.
llvm::Expected<std::string> emitPTX(llvm::Module &module, llvm::StringRef arch,
                                    bool fuseMulAdd = false);

/// Finds ptxas: `explicitPath` when given, else $QUACK_PTXAS, else PATH,
/// else the CUDA Toolkit's default location.
llvm::Expected<std::string> findPtxas(llvm::StringRef explicitPath);

/// What `ptxas --version` says of itself: its release and build lines
/// joined by "; " (e.g. "Cuda compilation tools, release 13.0, V13.0.88;
/// Build cuda_13.0.r13.0/compiler.36424714_0").
llvm::Expected<std::string> ptxasVersion(llvm::StringRef ptxasPath);

/// Assembles `ptx` into a cubin for `arch` with ptxas, keeping its resource
/// report.
llvm::Expected<Cubin> assemblePTX(llvm::StringRef ptx, llvm::StringRef arch,
                                  llvm::StringRef ptxasPath);

/// `ptx` with `.minnctapersm ctas` after each entry's `.maxntid`: the same
/// code, with registers capped so that `ctas` CTAs fit on an SM. None where
/// the PTX cannot be bounded so: it has no `.maxntid`, or already has
/// `.minnctapersm` or `.maxnreg`.
std::optional<std::string> withMinCtasPerSm(llvm::StringRef ptx,
                                            int64_t ctas);

/// Parses ptxas' `-v` output into one report per kernel entry.
std::vector<ResourceReport> parsePtxasReport(llvm::StringRef log);

} // namespace quack

#endif // QUACK_TARGET_PTX_H
