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

def Quack_ArgRole : I32EnumAttr<"ArgRole", "how a kernel uses an argument", [
      I32EnumAttrCase<"Input", 0, "input">,
      I32EnumAttrCase<"Output", 1, "output">
    ]> {
  let cppNamespace = "::mlir::quack";
}

#endif // QUACK_DIALECT_QUACK_IR_QUACKENUMS_TD
