//===- QuackDialect.td - quack dialect definition ----------*- tablegen -*-===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#ifndef QUACK_DIALECT_QUACK_IR_QUACKDIALECT_TD
#define QUACK_DIALECT_QUACK_IR_QUACKDIALECT_TD

include "mlir/IR/OpBase.td"

def Quack_Dialect : Dialect {
  let name = "quack";
  let cppNamespace = "::mlir::quack";
  let summary = "Row kernels, layouts and cooperative reductions";
  let description = [{
    The quack dialect describes memory-bound kernels that work on the rows of
    a 2-D tensor: norms, softmax, cross-entropy and their backward passes.

    At the *row level* a `quack.kernel` is written for one row. Values that
    span the reduced dimension are `vector<N x T>` values; per-row scalars are
    plain scalars. Elementwise math is written with the upstream `arith` and
    `math` dialects on those vectors; `quack.load`, `quack.store` and
    `quack.reduce` are the operations that know about rows. The number of rows
    `M` and the row strides stay runtime values; `N` and the element types
    are compile-time facts.

    The lowering distributes each row over the threads of a CTA (or a cluster
    of CTAs), with 128-bit accesses, and lowers reductions to warp shuffles,
    shared memory and distributed shared memory.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::vector::VectorDialect"
  ];
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let extraClassDeclaration = [{
    /// Registers the attributes (defined in QuackAttrs.cpp).
    void registerAttributes();
  }];
}

#endif // QUACK_DIALECT_QUACK_IR_QUACKDIALECT_TD
