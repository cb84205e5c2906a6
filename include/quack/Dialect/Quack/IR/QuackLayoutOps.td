//===- QuackLayoutOps.td - quack layout operations ---------*- tablegen -*-===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//
//
// Small pure operations over #quack.layout attributes. They fold to
// constants whenever their operands are constants, so the layout algebra runs
// at compile time. This file is included at the end of QuackOps.td (it uses
// Quack_Op) and is generated with the other operations.
//
//===----------------------------------------------------------------------===//

#ifndef QUACK_DIALECT_QUACK_IR_QUACKLAYOUTOPS_TD
#define QUACK_DIALECT_QUACK_IR_QUACKLAYOUTOPS_TD

include "quack/Dialect/Quack/IR/QuackAttrs.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Quack_LayoutSizeOp : Quack_Op<"layout.size", [Pure]> {
  let summary = "the size of a layout's domain";
  let description = [{
    The number of coordinates of the layout: the product of its shape. Always
    folds to a constant.

    ```mlir
    %n = quack.layout.size #quack.layout<(2,(3,4)):(1,(2,6))>  // 24
    ```
  }];
  let arguments = (ins Quack_LayoutAttr:$layout);
  let results = (outs Index:$result);
  let assemblyFormat = "qualified($layout) attr-dict";
  let hasFolder = 1;
}

def Quack_LayoutCosizeOp : Quack_Op<"layout.cosize", [Pure]> {
  let summary = "the size of a layout's codomain";
  let description = [{
    One past the largest offset the layout produces (for layouts with negative
    strides, the width of the offset range). Always folds to a constant.

    ```mlir
    %n = quack.layout.cosize #quack.layout<(4,2):(2,16)>  // 23
    ```
  }];
  let arguments = (ins Quack_LayoutAttr:$layout);
  let results = (outs Index:$result);
  let assemblyFormat = "qualified($layout) attr-dict";
  let hasFolder = 1;
}

def Quack_LayoutApplyOp : Quack_Op<"layout.apply", [Pure]> {
  let summary = "the offset of a coordinate under a layout";
  let description = [{
    Evaluates the layout at one linear index, or at one integer coordinate per
    top-level mode. A linear index is split colexicographically over the
    shape; as in CuTe, an index past the size continues along the last mode.

    ```mlir
    // (i, j) -> 8 * i + j
    %o = quack.layout.apply #quack.layout<(4,8):(8,1)> [%i, %j]
    // i -> offset of the i-th element (column-major enumeration)
    %p = quack.layout.apply #quack.layout<(4,8):(8,1)> [%i]
    ```

    Folds to a constant when every coordinate is a constant within its mode
    (a linear index within `[0, size)`), and to the index itself for an
    identity layout `n:1`.
  }];
  let arguments = (ins Quack_LayoutAttr:$layout, Variadic<Index>:$coords);
  let results = (outs Index:$result);
  let assemblyFormat = "qualified($layout) ` ` `[` $coords `]` attr-dict";
  let hasFolder = 1;
  let hasVerifier = 1;
}

#endif // QUACK_DIALECT_QUACK_IR_QUACKLAYOUTOPS_TD
