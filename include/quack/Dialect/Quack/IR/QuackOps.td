//===- QuackOps.td - quack operations ----------------------*- tablegen -*-===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#ifndef QUACK_DIALECT_QUACK_IR_QUACKOPS_TD
#define QUACK_DIALECT_QUACK_IR_QUACKOPS_TD

include "quack/Dialect/Quack/IR/QuackDialect.td"
include "quack/Dialect/Quack/IR/QuackAttrs.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/FunctionInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

class Quack_Op<string mnemonic, list<Trait> traits = []>
    : Op<Quack_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Row level
//===----------------------------------------------------------------------===//

def Quack_KernelOp : Quack_Op<"kernel", [
    FunctionOpInterface, IsolatedFromAbove
  ]> {
  let summary = "a kernel written for one row of its 2-D arguments";
  let description = [{
    A `quack.kernel` is the row-level form of a kernel description. Its body
    runs once for every row index `0 <= row < M`, where the number of rows `M`
    is only known at launch. Its arguments are:

    - matrices `memref<?xNxT, strided<[?, 1]>>`: one row per kernel instance,
      the row stride is a runtime value, the last dimension is unit-stride;
    - row vectors `memref<NxT>`: the same `N` elements for every row (weights);
    - per-row vectors `memref<?xT>`: one element per row;
    - scalars (`f32`, `i32`, `i64`).

    Every argument carries a `quack.role` (`input` or `output`) and a
    `quack.name` (its name in the description). All matrices and row vectors
    share the same `N`. The body ends with `quack.return`.

    ```mlir
    quack.kernel @scale(%x: memref<?x8xf32, strided<[?, 1]>> {quack.role = "input", quack.name = "x"},
                        %y: memref<?x8xf32, strided<[?, 1]>> {quack.role = "output", quack.name = "y"}) {
      %v = quack.load %x : memref<?x8xf32, strided<[?, 1]>> -> vector<8xf32>
      %two = arith.constant dense<2.0> : vector<8xf32>
      %r = arith.mulf %v, %two : vector<8xf32>
      quack.store %r, %y : vector<8xf32>, memref<?x8xf32, strided<[?, 1]>>
      quack.return
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// FunctionOpInterface hooks.
    ::mlir::Region *getCallableRegion() { return &getBody(); }
    ::llvm::ArrayRef<::mlir::Type> getArgumentTypes() {
      return getFunctionType().getInputs();
    }
    ::llvm::ArrayRef<::mlir::Type> getResultTypes() {
      return getFunctionType().getResults();
    }
    /// The reduced length shared by every matrix and row vector argument, or
    /// std::nullopt when the kernel has none.
    std::optional<int64_t> getRowLength();
    /// The role of argument `index` (input unless stated).
    ArgRole getArgRole(unsigned index);
    /// The description name of argument `index` (`arg<index>` unless stated).
    std::string getArgName(unsigned index);
  }];
}

def Quack_ReturnOp : Quack_Op<"return", [
    Pure, HasParent<"KernelOp">, Terminator, ReturnLike
  ]> {
  let summary = "ends a quack.kernel";
  let description = [{
    Terminates the body of a `quack.kernel`. Kernels return nothing: their
    results are written to output arguments with `quack.store`.

    ```mlir
    quack.return
    ```
  }];
  let assemblyFormat = "attr-dict";
}

def Quack_LoadOp : Quack_Op<"load", [MemoryEffects<[MemRead]>]> {
  let summary = "reads the current row of a kernel argument";
  let description = [{
    Reads the part of a kernel argument that belongs to the current row:

    - a matrix `memref<?xNxT, strided<[?, 1]>>` gives the row as `vector<NxT>`;
    - a row vector `memref<NxT>` gives all of it as `vector<NxT>`;
    - a per-row vector `memref<?xT>` gives the row's element as `T`.

    ```mlir
    %row = quack.load %x : memref<?x4096xbf16, strided<[?, 1]>> -> vector<4096xbf16>
    %w   = quack.load %w : memref<4096xbf16> -> vector<4096xbf16>
    %t   = quack.load %target : memref<?xi64> -> i64
    ```
  }];
  let arguments = (ins AnyMemRef:$source);
  let results = (outs AnyType:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `->` type($result)";
  let hasVerifier = 1;
}

def Quack_StoreOp : Quack_Op<"store", [MemoryEffects<[MemWrite]>]> {
  let summary = "writes the current row of an output argument";
  let description = [{
    The counterpart of `quack.load`: writes a `vector<NxT>` to the current row
    of a matrix, or a scalar `T` to the current row's element of a per-row
    vector. Row vectors (`memref<NxT>`) are shared by all rows and cannot be
    stored to.

    ```mlir
    quack.store %y, %out : vector<4096xbf16>, memref<?x4096xbf16, strided<[?, 1]>>
    quack.store %r, %rstd : f32, memref<?xf32>
    ```
  }];
  let arguments = (ins AnyType:$value, AnyMemRef:$dest);
  let assemblyFormat =
      "$value `,` $dest attr-dict `:` type($value) `,` type($dest)";
  let hasVerifier = 1;
}

def Quack_ReduceOp : Quack_Op<"reduce", [Pure]> {
  let summary = "reduces a row to a per-row scalar";
  let description = [{
    Combines all `N` elements of a row with `add`, `max` or `min`. At the row
    level the reduction has no scope: the lowering decides how the row is
    spread over threads, warps, CTAs and clusters and reduces across all of
    them. The order of combination depends only on `N` and the configuration,
    never on the number of rows, so per-row results are batch-invariant.

    ```mlir
    %s = quack.reduce <add> %sq : vector<4096xf32> -> f32
    ```
  }];
  let arguments = (ins Quack_CombiningKindAttr:$kind, VectorOfRank<[1]>:$input);
  let results = (outs AnyTypeOf<[AnyFloat, AnySignlessInteger]>:$result);
  let assemblyFormat =
      "$kind $input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Quack_GatherOp : Quack_Op<"gather", [MemoryEffects<[MemRead]>]> {
  let summary = "reads one element of the current row at a per-row index";
  let description = [{
    Reads element `index` of the current row of a matrix: `x[row, index]`,
    one element per row (cross-entropy reads the logit of the target class
    this way). An index outside `[0, N)` reads nothing and gives NaN for
    float element types and 0 for integers, so a bad index never touches
    memory the kernel does not own.

    ```mlir
    %xt = quack.gather %x[%t] : memref<?x4096xbf16, strided<[?, 1]>>, i64 -> bf16
    ```
  }];
  let arguments = (ins AnyMemRef:$source, AnySignlessInteger:$index);
  let results = (outs AnyType:$result);
  let assemblyFormat = "$source `[` $index `]` attr-dict `:` type($source) "
                       "`,` type($index) `->` type($result)";
  let hasVerifier = 1;
}

def Quack_ColumnOp : Quack_Op<"column", [Pure]> {
  let summary = "the column index of every element of a row";
  let description = [{
    A row whose element `j` is `j`. Comparing it with a per-row index builds
    one-hot rows (the cross-entropy gradient) without any memory traffic.

    ```mlir
    %cols = quack.column : vector<4096xi64>
    %hot  = arith.cmpi eq, %cols, %tb : vector<4096xi64>
    ```
  }];
  let results = (outs VectorOfRankAndType<[1], [AnySignlessInteger]>:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

def Quack_LogSumExpOp : Quack_Op<"logsumexp", [Pure]> {
  let summary = "log(sum(exp(x))) of a row, computed stably";
  let description = [{
    `m + log(sum(exp(x - m)))` with `m = max(x)`: the log-partition function
    of softmax and cross-entropy, stated as one operation so that the
    lowering, not a pattern match, decides how to compute the (max, sum)
    pair (two dependent reductions over the row held in registers, or one
    online exchange of the pair). A row that is all `-inf` gives `-inf`, as
    `torch.logsumexp` does, not `NaN`.

    ```mlir
    %lse = quack.logsumexp %x : vector<4096xf32> -> f32
    ```
  }];
  let arguments = (ins VectorOfRankAndType<[1], [F32]>:$input);
  let results = (outs F32:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Quack_MomentsOp : Quack_Op<"moments", [Pure]> {
  let summary = "the sum of a row and the sum of its squared deviations";
  let description = [{
    `sum` is `sum(x)` and `m2` is `sum((x - mean)^2)` with `mean = sum / N`:
    the two dependent reductions of a variance, stated as one operation so
    that the lowering can compute them in one exchange between threads.
    Each thread takes the count, sum and squared deviations from its own
    mean of its elements (two passes over its registers), and the triples
    combine with Chan, Golub and LeVeque's update, which, like the two
    passes, never subtracts `sum(x)^2 / N` from `sum(x^2)`. The order of
    combination depends only on `N` and the configuration.
    quack-fuse-moments forms it from the two reductions.

    ```mlir
    %s, %m2 = quack.moments %x : vector<4096xf32> -> f32, f32
    ```
  }];
  let arguments = (ins VectorOfRankAndType<[1], [F32]>:$input);
  let results = (outs F32:$sum, F32:$m2);
  let assemblyFormat =
      "$input attr-dict `:` type($input) `->` type($sum) `,` type($m2)";
}

def Quack_ArgMaxOp : Quack_Op<"argmax", [Pure]> {
  let summary = "the column of a row's largest element";
  let description = [{
    The index in `[0, N)` of the row's largest element: the first one when
    several are equal, and the first NaN when there is one (NaN counts as
    larger than every number, as in `torch.argmax`). A row of all `-inf`
    gives 0. Like `quack.logsumexp` it is a reduction with a pair as its
    state (value, column), combined across threads in one exchange, in an
    order that depends only on `N` and the configuration.

    ```mlir
    %i = quack.argmax %x : vector<4096xf32> -> i64
    ```
  }];
  let arguments = (ins VectorOfRankAndType<[1], [F32]>:$input);
  let results = (outs I64:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
}

def Quack_SumRowsOp : Quack_Op<"sum_rows", [MemoryEffects<[MemWrite]>]> {
  let summary = "sums a row value over all rows into a row-vector output";
  let description = [{
    Adds the current row's `vector<Nxf32>` into a row-vector output
    `memref<NxT>`: after the kernel, element `j` of the output holds the sum
    over every row `0 <= row < M` of element `j` of the value, rounded once
    to `T`. It is how weight and bias gradients (`dw`, `db`) are written.
    The lowering keeps f32 partial sums per CTA over a persistent grid, writes
    them to a workspace and sums the workspace in a fixed order in a second
    kernel, so the result is deterministic for a given device; `M = 0` gives
    zeros. The destination must be an output argument of the kernel, and
    each output is summed into by exactly one `quack.sum_rows`.

    ```mlir
    quack.sum_rows %g, %dw : vector<4096xf32>, memref<4096xbf16>
    ```
  }];
  let arguments = (ins VectorOfRankAndType<[1], [F32]>:$value,
                       AnyMemRef:$dest);
  let assemblyFormat =
      "$value `,` $dest attr-dict `:` type($value) `,` type($dest)";
  let hasVerifier = 1;
}

include "quack/Dialect/Quack/IR/QuackLayoutOps.td"
include "quack/Dialect/Quack/IR/QuackClusterOps.td"
include "quack/Dialect/Quack/IR/QuackThreadOps.td"
include "quack/Dialect/Quack/IR/QuackStageOps.td"

#endif // QUACK_DIALECT_QUACK_IR_QUACKOPS_TD
