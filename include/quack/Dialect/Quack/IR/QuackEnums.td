//===- QuackEnums.td - quack enums and enum attributes ------*- tablegen -*-===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#ifndef QUACK_DIALECT_QUACK_IR_QUACKENUMS_TD
#define QUACK_DIALECT_QUACK_IR_QUACKENUMS_TD

include "quack/Dialect/Quack/IR/QuackDialect.td"
include "mlir/IR/EnumAttr.td"

def Quack_CombiningKind : I32EnumAttr<"CombiningKind",
    "how a reduction combines two values", [
      I32EnumAttrCase<"Add", 0, "add">,
      I32EnumAttrCase<"Max", 1, "max">,
      I32EnumAttrCase<"Min", 2, "min">
    ]> {
  let cppNamespace = "::mlir::quack";
  let genSpecializedAttr = 0;
}

def Quack_CombiningKindAttr : EnumAttr<Quack_Dialect, Quack_CombiningKind,
                                       "combining_kind"> {
  let assemblyFormat = "`<` $value `>`";
}

def Quack_ReduceScope : I32EnumAttr<"ReduceScope",
    "the threads a quack.allreduce combines values across", [
      I32EnumAttrCase<"Warp", 0, "warp">,
      I32EnumAttrCase<"Block", 1, "block">
    ]> {
  let cppNamespace = "::mlir::quack";
  let genSpecializedAttr = 0;
}

def Quack_ReduceScopeAttr : EnumAttr<Quack_Dialect, Quack_ReduceScope,
                                     "reduce_scope"> {
  let assemblyFormat = "`<` $value `>`";
}

def Quack_ReductionTerm : I32EnumAttr<"ReductionTerm",
    "one reduction of the values a quack.allreduce combines", [
      I32EnumAttrCase<"Add", 0, "add">,
      I32EnumAttrCase<"Max", 1, "max">,
      I32EnumAttrCase<"Min", 2, "min">,
      I32EnumAttrCase<"LogSumExp", 3, "logsumexp">,
      I32EnumAttrCase<"ArgMax", 4, "argmax">,
      I32EnumAttrCase<"Moments", 5, "moments">
    ]> {
  let cppNamespace = "::mlir::quack";
  let genSpecializedAttr = 0;
}

def Quack_CopyAtom : I32EnumAttr<"CopyAtom",
    "the instruction family of a quack.copy", [
      I32EnumAttrCase<"Vector", 0, "vector">,
      I32EnumAttrCase<"Bulk", 1, "bulk">,
      I32EnumAttrCase<"Tensor", 2, "tensor">
    ]> {
  let cppNamespace = "::mlir::quack";
  let genSpecializedAttr = 0;
}

def Quack_CopyAtomAttr : EnumAttr<Quack_Dialect, Quack_CopyAtom, "copy_atom"> {
  let assemblyFormat = "`<` $value `>`";
}

def Quack_ArgRole : I32EnumAttr<"ArgRole", "how a kernel uses an argument", [
      I32EnumAttrCase<"Input", 0, "input">,
      I32EnumAttrCase<"Output", 1, "output">
    ]> {
  let cppNamespace = "::mlir::quack";
}

#endif // QUACK_DIALECT_QUACK_IR_QUACKENUMS_TD
