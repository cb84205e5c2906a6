//===- InitAll.h - register every quack dialect and pass ----------*- C++ -*-===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#ifndef QUACK_INITALL_H
#define QUACK_INITALL_H

namespace mlir {
class DialectRegistry;
class MLIRContext;
} // namespace mlir

namespace quack {

/// Registers the quack dialect and every upstream dialect the pipelines use,
/// with their translation and inliner interfaces.
void registerAllDialects(mlir::DialectRegistry &registry);

/// Registers the quack passes and pipelines and the upstream passes the
/// pipelines use.
void registerAllPasses();

} // namespace quack

#endif // QUACK_INITALL_H
