//===- SharedMemory.cpp - checks of ops that name shared memory -----------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#include "SharedMemory.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;

LogicalResult quack::detail::verifySharedGlobal(Operation *op,
                                                SymbolTableCollection &tables,
                                                FlatSymbolRefAttr smem,
                                                int64_t bytes,
                                                bool allowDynamic) {
  Operation *table = SymbolTable::getNearestSymbolTable(op->getParentOp());
  if (!table)
    return op->emitOpError("is not inside a symbol table");
  auto global = tables.lookupSymbolIn<LLVM::GlobalOp>(table, smem.getAttr());
  if (!global)
    return op->emitOpError("'") << smem.getValue()
                                << "' is not an llvm.mlir.global";
  // The global's attributes are read untyped: symbol uses may be verified
  // before the global itself, so they may not have the types its accessors
  // assume.
  Attribute spaceAttr =
      global->getInherentAttr(global.getAddrSpaceAttrName())
          .value_or(Attribute());
  std::optional<int64_t> space = 0; // The default: generic memory.
  if (spaceAttr) {
    auto integer = dyn_cast<IntegerAttr>(spaceAttr);
    space = integer ? std::optional<int64_t>(integer.getInt()) : std::nullopt;
  }
  if (space != 3)
    return op->emitOpError("'") << smem.getValue()
                                << "' is not in shared memory (address space "
                                << (space ? std::to_string(*space)
                                          : std::string("unknown"))
                                << ", expected 3)";
  auto type = dyn_cast_if_present<TypeAttr>(
      global->getInherentAttr(global.getGlobalTypeAttrName()).value_or(
          Attribute()));
  auto array = type ? dyn_cast<LLVM::LLVMArrayType>(type.getValue())
                    : LLVM::LLVMArrayType();
  if (!array || !array.getElementType().isInteger(8))
    return op->emitOpError("'") << smem.getValue()
                                << "' is not an array of i8";
  if (allowDynamic && array.getNumElements() == 0)
    return success();
  if (static_cast<int64_t>(array.getNumElements()) < bytes)
    return op->emitOpError("needs ")
           << bytes << " bytes of '" << smem.getValue() << "', which has "
           << array.getNumElements();
  return success();
}
