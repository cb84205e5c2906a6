//===- Frontend.h - the .qk kernel description language -----------*- C++ -*-===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#ifndef QUACK_FRONTEND_FRONTEND_H
#define QUACK_FRONTEND_FRONTEND_H

#include "quack/Frontend/AST.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/SourceMgr.h"

#include <map>
#include <optional>
#include <string>

namespace quack {

/// Compile-time bindings, `-D NAME=VALUE`.
using Bindings = std::map<std::string, std::string>;

/// Parses buffer `bufferId` of `sourceMgr`. Errors are emitted as MLIR
/// diagnostics with file:line:col locations; returns std::nullopt on error.
std::optional<qk::File> parseKernelFile(llvm::SourceMgr &sourceMgr,
                                        unsigned bufferId,
                                        mlir::MLIRContext *context);

/// Parses a .qk buffer and builds row-level quack IR for its kernels (only
/// `onlyKernel` when non-empty), binding compile-time parameters from
/// `bindings`. A binding that no selected kernel declares, or a parameter
/// left unbound, is an error.
mlir::OwningOpRef<mlir::ModuleOp>
importKernelSource(llvm::SourceMgr &sourceMgr, unsigned bufferId,
                   mlir::MLIRContext *context, const Bindings &bindings,
                   llvm::StringRef onlyKernel = "");

} // namespace quack

#endif // QUACK_FRONTEND_FRONTEND_H
