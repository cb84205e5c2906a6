//===- QuackAttrs.td - quack attributes --------------------*- tablegen -*-===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//
//
// Every attribute of the quack dialect. The enum attributes live in
// QuackEnums.td, which this file includes, so that one TableGen run generates
// all attribute classes (QuackAttrs.h.inc) and enums (QuackEnums.h.inc).
//
//===----------------------------------------------------------------------===//

#ifndef QUACK_DIALECT_QUACK_IR_QUACKATTRS_TD
#define QUACK_DIALECT_QUACK_IR_QUACKATTRS_TD

include "quack/Dialect/Quack/IR/QuackDialect.td"
include "quack/Dialect/Quack/IR/QuackEnums.td"
include "mlir/IR/AttrTypeBase.td"

class Quack_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Quack_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

/// A nested integer tuple of the layout library, stored by value.
def Quack_IntTupleParameter : AttrParameter<"::quack::layout::IntTuple",
    "a nested integer tuple", "const ::quack::layout::IntTuple &"> {
  let printer = [{ $_printer << $_self.str() }];
}

//===----------------------------------------------------------------------===//
// Layouts
//===----------------------------------------------------------------------===//

def Quack_LayoutAttr : Quack_Attr<"Layout", "layout"> {
  let summary = "a hierarchical shape:stride layout";
  let description = [{
    A layout is a function from the coordinates of a nested shape to integer
    offsets, written `shape:stride` in CuTe notation: both are nested integer
    tuples of the same structure, and a coordinate maps to the sum of its
    leaves times the matching stride leaves. An integer index `i` in
    `[0, size)` is first split into a coordinate colexicographically (the
    leftmost mode varies fastest).

    `#quack.layout<(2,(3,4)):(1,(2,6))>` is the compact column-major layout
    of shape `(2,(3,4))`. A bare shape, `#quack.layout<(4,8)>`, gets the
    compact column-major strides and prints as `(4,8):(1,4)`. The layout may
    also be given as a string, `#quack.layout<"(4,8):(8,1)">`, which is read
    by the layout library's parser (its errors give the column in the string).

    The row-major 2x4 tile `#quack.layout<(2,4):(4,1)>` sends coordinate
    (m, n) to offset `4 * m + n`:

    ```
           n=0 n=1 n=2 n=3
      m=0    0   1   2   3
      m=1    4   5   6   7
    ```

    The shape's extents are positive, shape and stride are congruent, and the
    size and offset range fit in 64 bits. `getLayout()` returns the layout as
    a `::quack::layout::Layout` for the layout algebra.
  }];
  let parameters = (ins Quack_IntTupleParameter:$shape,
                        Quack_IntTupleParameter:$stride);
  let builders = [
    AttrBuilder<(ins "const ::quack::layout::Layout &":$layout), [{
      return $_get($_ctxt, layout.getShape(), layout.getStride());
    }]>
  ];
  let genVerifyDecl = 1;
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = [{
    /// The layout (shape and stride) as a value of the layout library.
    ::quack::layout::Layout getLayout() const;
  }];
}

def Quack_TVLayoutAttr : Quack_Attr<"TVLayout", "tv_layout"> {
  let summary = "a thread-value layout over a tile";
  let description = [{
    Says which thread holds which element of a tile, and in which of its
    values (registers). `tv` is a rank-2 layout (thread, value) -> element
    offset; `tile` is the layout of the tile, (m, n) -> element offset. Each
    offset that `tv` produces lies in the tile's codomain `[0, cosize(tile))`.

    Two threads that split the columns of a row-major 2x4 tile, each holding
    two consecutive elements of each row (TtVv: thread t, value v):

    ```
           n=0  n=1  n=2  n=3
      m=0  T0V0 T0V1 T1V0 T1V1
      m=1  T0V2 T0V3 T1V2 T1V3
    ```

    ```mlir
    #quack.tv_layout<(2,(2,2)):(2,(1,4)), tile = (2,4):(4,1)>
    ```

    Thread t, value (v0, v1) is at offset `2 * t + v0 + 4 * v1`.
  }];
  let parameters = (ins "::mlir::quack::LayoutAttr":$tv,
                        "::mlir::quack::LayoutAttr":$tile);
  let genVerifyDecl = 1;
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = [{
    /// The (thread, value) -> offset layout.
    ::quack::layout::Layout getTvLayout() const {
      return getTv().getLayout();
    }
    /// The (m, n) -> offset layout of the tile.
    ::quack::layout::Layout getTileLayout() const {
      return getTile().getLayout();
    }
    /// Number of threads: the size of mode 0 of `tv`.
    int64_t getNumThreads() const { return getTvLayout().mode(0).size(); }
    /// Number of values per thread: the size of mode 1 of `tv`.
    int64_t getNumValues() const { return getTvLayout().mode(1).size(); }
  }];
}

#endif // QUACK_DIALECT_QUACK_IR_QUACKATTRS_TD
